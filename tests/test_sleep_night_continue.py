"""A night stopped by its call budget is continued, not restarted, by a rerun with a raised budget
(`skillgrad sleep run --max-calls N`): same night folder, finished calls replay from the cache, and it ends."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillgrad.cli import app
from skillgrad.errors import RunStopped
from skillgrad.sleep.night import Night, budget_raised, open_night

SKILL = "# Team\n\nHand rule.\n"


def _project(tmp_path: Path, gguf: Path) -> tuple[Path, Path, Path]:
    project = tmp_path / "p"
    project.mkdir()
    (project / "SKILL.md").write_text(SKILL, encoding="utf-8")
    tasks = project / "tasks.jsonl"
    names = ["nightly backup", "login service", "billing export", "search index", "mail queue", "cache warmer"]
    tasks.write_text("".join(json.dumps({
        "task_id": f"t{i}", "task": f"Give me the status of the {name}.", "split": ["train", "val", "test"][i % 3],
        "judge": {"kind": "rule", "checks": [{"op": "regex", "arg": "^DONE:"}]}}) + "\n" for i, name in enumerate(names)),
        encoding="utf-8")
    role = {"provider": "local", "model": str(gguf), "threads": 1}
    config = tmp_path / "sleep.yaml"
    config.write_text(json.dumps({"skill": str(project / "SKILL.md"), "evolve_memory": False, "student": role,
                                  "teacher": {**role, "max_tokens": 48}, "task_max_tokens": 8,
                                  "min_heldout": 2}), encoding="utf-8")
    return project, tasks, config


def _run(project: Path, tasks: Path, config: Path, *extra: str) -> dict:
    r = CliRunner().invoke(app, ["sleep", "run", "--project", str(project), "--config", str(config),
                                 "--tasks-file", str(tasks), "--json", *extra])
    # a night its budget stopped raises RunStopped after printing its result (exit 4 through skillgrad.cli.main)
    assert r.exit_code == 0 or isinstance(r.exception, RunStopped), r.output
    return json.loads(r.stdout)


def _calls(night: Path) -> list[dict]:
    events = [json.loads(x) for x in (night / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    return [e for e in events if e["event"] == "llm_call" and e.get("ok")]


def test_only_a_raised_limit_continues_a_stopped_night():
    assert budget_raised({"max_calls": 9, "max_usd": 0.0}, {"max_calls": 3, "max_usd": 0.0})
    assert budget_raised({"max_calls": 0}, {"max_calls": 3})  # 0 lifts the limit
    assert not budget_raised({"max_calls": 3, "max_usd": 0.0}, {"max_calls": 3, "max_usd": 0.0})
    assert not budget_raised({"max_calls": 2}, {"max_calls": 3})
    assert not budget_raised({"max_calls": 3}, {})  # a night from before budgets were recorded


def test_the_same_budget_starts_a_new_night_and_a_raised_one_continues(tmp_path: Path):
    stopped = open_night(tmp_path)
    stopped.save(status="stopped", budget={"max_calls": 4, "max_tokens": 400000})
    new = open_night(tmp_path, budget={"max_calls": 4, "max_tokens": 400000})
    assert new.root != stopped.root and new.status == "mining"
    shutil.rmtree(new.root)
    assert open_night(tmp_path, budget={"max_calls": 4, "max_tokens": 0}).root == stopped.root
    newer = open_night(tmp_path, fresh=True)
    newer.save(status="staged")  # only the newest night is ever continued
    assert open_night(tmp_path, budget={"max_calls": 40}).root not in (stopped.root, newer.root)
    assert Night(stopped.root).status == "stopped"


@pytest.mark.slow
def test_a_stopped_night_continues_with_a_raised_budget_and_completes(tmp_path: Path, gguf_path: Path):
    project, tasks, config = _project(tmp_path, gguf_path)
    first = _run(project, tasks, config, "--max-calls", "4")
    night = Path(first["night_dir"])
    assert first["status"] == "stopped" and "--max-calls" in first["message"], first
    paid_first = [e for e in _calls(night) if not e.get("cached")]
    assert 0 < len(paid_first) <= 4

    # a raised limit continues the stopped night from its run dir and cache instead of starting over
    again = _run(project, tasks, config, "--max-calls", "500")
    assert again["night_dir"] == str(night), again
    assert again["status"] in ("staged", "no_improvement"), again  # 2 held-out tasks decide (min_heldout 2)
    assert again["targets"]["skill"]["status"] == "completed"
    calls = _calls(night)
    paid_keys = [e["key"] for e in calls if not e.get("cached")]
    assert paid_keys[:len(paid_first)] == [e["key"] for e in paid_first]
    assert len(set(paid_keys)) == len(paid_keys), "a finished call was paid for twice"
    events = [json.loads(x) for x in (night / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [e["resumed"] for e in events if e["event"] == "sleep_consolidate"] == [False, True]  # same run dir
    assert json.loads((night / "night.json").read_text())["status"] == again["status"]
    assert (project / "SKILL.md").read_text(encoding="utf-8") == SKILL
