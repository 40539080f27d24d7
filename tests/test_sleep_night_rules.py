"""Night decisions that need few or no model calls: leak refusal, too few tasks, and a hard call budget."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from skillgrad.sleep.night import run_night
from skillgrad.sleep.settings import SleepSettings

SKILL = "# Team\n\nHand rule.\n"


def _project(tmp_path: Path, rows: list[dict]) -> tuple[Path, Path]:
    project = tmp_path / "p"
    project.mkdir()
    (project / "SKILL.md").write_text(SKILL, encoding="utf-8")
    tasks = project / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return project, tasks


def _row(i: int, split: str | None = None, text: str | None = None) -> dict:
    r = {"task_id": f"t{i}", "task": text or f"Give me the status of job {i}.",
         "judge": {"kind": "rule", "checks": [{"op": "regex", "arg": "^DONE:"}]}}
    return {**r, "split": split} if split else r


def _write(project: Path, rows: list[dict]) -> Path:
    path = project / "tasks2.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _settings(project: Path, **kw) -> SleepSettings:
    return SleepSettings(project=str(project), skill=str(project / "SKILL.md"), evolve_memory=False, **kw)


def test_a_night_whose_held_out_tasks_leak_into_training_refuses(tmp_path: Path):
    project, tasks = _project(tmp_path, [_row(1, "train", "Same task"), _row(2, "val", "same  TASK"),
                                         _row(3, "train")])
    r = asyncio.run(run_night(_settings(project), tasks_file=tasks))
    assert r["status"] == "refused" and "t2" in r["message"]
    para = [_row(1, "train", "Give me the status of job 3."), _row(2, "val", "Rename the billing service"),
            _row(4, "test", "what's the status of job 9, please?")]  # a paraphrase in the held-out
    r = asyncio.run(run_night(_settings(project),
                              tasks_file=_write(project, para), fresh=True))
    assert r["status"] == "refused" and "t4" in r["message"] and "paraphrase" in r["message"]
    assert not any(p.name[0].isdigit() for p in (project / ".skillgrad" / "sleep").iterdir())  # nothing staged
    assert (project / "SKILL.md").read_text(encoding="utf-8") == SKILL


def test_a_night_without_held_out_tasks_proposes_nothing(tmp_path: Path):
    project, tasks = _project(tmp_path, [_row(1, "train")])
    r = asyncio.run(run_night(_settings(project), tasks_file=tasks))
    assert r["status"] == "nothing_to_learn"


@pytest.mark.slow
def test_the_nights_call_budget_is_enforced(tmp_path: Path, gguf_path: Path):
    names = ["nightly backup", "login service", "billing export", "search index", "mail queue", "cache warmer",
             "report builder", "image resizer"]
    project, tasks = _project(tmp_path, [_row(i, ["train", "val", "test", "test"][i % 4],
                                              f"Give me the status of the {n}.") for i, n in enumerate(names)])
    role = {"provider": "local", "model": str(gguf_path), "threads": 1}
    s = _settings(project, student=role, teacher=role, task_max_tokens=8, budget={"max_calls": 2})
    r = asyncio.run(run_night(s, tasks_file=tasks))
    assert r["status"] == "stopped" and "nothing proposed" in r["message"]
    events = [json.loads(x) for x in (Path(r["night_dir"]) / "events.jsonl").read_text().splitlines()]
    assert sum(e["event"] == "llm_call" and e.get("ok") and not e.get("cached") for e in events) <= 2
