"""A real-size memory file through a night with the embedded student (issue 21): `CLAUDE.md` is a pointer to a
14.7 KB `AGENTS.md`; every replay used to fail with "does not fit the context window" at the fixed 4096."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from skillgrad.skill.learned import LEARNED_START
from skillgrad.sleep.night import run_night
from skillgrad.sleep.settings import SleepSettings

REAL = Path(__file__).parent / "fixtures" / "memory" / "CLAUDE_real_size.md"


@pytest.mark.slow
def test_a_real_size_memory_file_is_followed_fitted_and_replayed(tmp_path: Path, gguf_path: Path):
    project = tmp_path / "p"
    project.mkdir()
    (project / "CLAUDE.md").write_text("@AGENTS.md\n")
    (project / "AGENTS.md").write_text(REAL.read_text())
    tasks = project / "tasks.jsonl"
    asks = {"Which command installs the dependencies?": "train", "How do I run one test file?": "train",
            "Which command runs the linter?": "val", "How do I start the dev server?": "val",
            "Apply the database migrations.": "test"}
    rows = [{"task_id": f"t{i}", "task": q, "split": s,
             "judge": {"kind": "rule", "checks": [{"op": "contains", "arg": "pnpm"}]}}
            for i, (q, s) in enumerate(asks.items())]
    tasks.write_text("".join(json.dumps(r) + "\n" for r in rows))
    role = {"provider": "local", "model": str(gguf_path), "threads": 1}
    s = SleepSettings(project=str(project), student=role, teacher=role, task_max_tokens=8, memory_max_tokens=400,
                      budget={"max_calls": 4})
    r = asyncio.run(run_night(s, tasks_file=tasks))
    night = Path(r["night_dir"])
    mem = json.loads((night / "night.json").read_text())["memory"]
    assert mem["home"] == str((project / "AGENTS.md").resolve())  # the learned block goes where the text lives
    assert mem["tokens_before"] > 4000 and mem["tokens_after"] <= 400 and "## Glossary" in mem["dropped_sections"]
    seen = (night / "live" / "memory_as_read.md").read_text()
    assert LEARNED_START in seen and "@AGENTS.md" not in seen and "## Glossary" not in seen
    events = [json.loads(x) for x in (night / "events.jsonl").read_text().splitlines()]
    calls = [e for e in events if e["event"] == "llm_call"]
    failed = [e.get("error", "") for e in calls if not e.get("ok") and "BudgetExceeded" not in e.get("error", "")]
    assert sum(bool(e.get("ok")) and e.get("role") == "student" for e in calls) >= 2 and not failed, failed
    assert not any("does not fit" in json.dumps(e) for e in events)
    assert (project / "AGENTS.md").read_text() == REAL.read_text()  # nothing live changed
