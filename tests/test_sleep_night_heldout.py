"""Held-out across nights with the embedded student (issue 18 item 2): a night with too few held-out tasks
stages nothing, says how many more it needs and keeps the change pending; the next night trains on its own
tasks as well (issue 32: a pending change never freezes learning), scores the pending change on its new held-out
tasks, pools them with the first night's, and the gate decides on all six."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from handoff_answerer import answer_all

from skillgrad.errors import AnswersNeeded
from skillgrad.sleep.night import run_night
from skillgrad.sleep.settings import SleepSettings

DONE = {"kind": "rule", "checks": [{"op": "regex", "arg": "^DONE:"}]}


def _tasks(path: Path, held_out: list[str]) -> Path:
    rows = [{"task_id": f"job{i}", "task": f"Give me the status of job {i}.", "split": s, "judge": DONE}
            for i, s in enumerate(["train", "train", "train", "val", "val"])]
    rows += [{"task_id": f"h-{name.split()[-1]}", "task": f"Give me the status of the {name}.", "split": "test",
              "judge": DONE} for name in held_out]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _night(s: SleepSettings, tasks: Path) -> dict:
    for _ in range(12):
        try:
            return asyncio.run(run_night(s, tasks_file=tasks))
        except AnswersNeeded:
            nights = sorted((Path(s.project) / ".skillgrad" / "sleep" / "nights").iterdir())
            assert answer_all(nights[-1] / "handoff") > 0
    pytest.fail("the night did not finish in 12 rounds")


@pytest.mark.slow
def test_evidence_for_a_pending_change_accumulates_across_nights(tmp_path: Path, gguf_path: Path):
    project = tmp_path / "p"
    project.mkdir()
    (project / "SKILL.md").write_text("# Status replies\n\nKeep replies short.\n")
    s = SleepSettings(project=str(project), skill=str(project / "SKILL.md"), evolve_memory=False,
                      student={"provider": "local", "model": str(gguf_path), "threads": 1},
                      teacher={"provider": "handoff"}, task_max_tokens=10, learning_rate=1, min_heldout=5)
    first = _night(s, _tasks(tmp_path / "n1.jsonl", ["mail queue", "nightly backup", "login service"]))
    assert first["status"] == "pending" and "2 more" in first["message"], first
    pending = json.loads((project / ".skillgrad" / "sleep" / "pending.json").read_text())["skill"]
    assert len(pending["results"]) == 3 and "DONE:" in pending["block"]
    assert not [p for p in (project / ".skillgrad" / "sleep").iterdir() if p.name[0].isdigit()]  # nothing staged

    second = _night(s, _tasks(tmp_path / "n2.jsonl", ["search index", "cache warmer", "image resizer"]))
    night = Path(second["night_dir"])
    events = [json.loads(x) for x in (night / "events.jsonl").read_text().splitlines()]
    assert [e["prior"] for e in events if e["event"] == "sleep_pending"] == [3]
    assert any(e["event"] == "sleep_consolidate" for e in events)  # a pending change never freezes learning
    skill = second["targets"]["skill"]
    earlier = skill if skill.get("pending_since") else skill["earlier_pending"]
    assert earlier["n_heldout"] == 6 and earlier["enough"], skill  # decided on the pooled six
    assert [e for e in events if e["event"] == "sleep_pending_decision"][0]["enough"]
    assert second["status"] in ("staged", "no_improvement", "pending"), second
