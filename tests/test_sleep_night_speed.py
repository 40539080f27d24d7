"""A night's speed settings with the embedded model (benchmarks/sleep_sessions.py measures the minutes).

The teacher runs at a smaller context than the student: the trainer then renders compact evidence for it
(question, answer, what was expected; never every replay's whole prompt with the memory file in it), and the
two roles get separate llama.cpp instances, so teacher calls do not evict the student's cached prompt prefix.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from skillgrad.core.events import EventLog
from skillgrad.envs.tasks.records import TaskRecord, write_tasks
from skillgrad.models.factory import build_models
from skillgrad.sleep.night import TEACHER_CONTEXT, engine_config, open_night
from skillgrad.sleep.settings import SleepSettings


def test_embedded_teacher_reads_compact_evidence_on_its_own_instance(tmp_path: Path) -> None:
    night = open_night(tmp_path, fresh=True)
    tasks = night.root / "tasks.jsonl"
    write_tasks(tasks, [TaskRecord.model_validate({"task_id": "t", "task": "q", "judge": {
        "kind": "rule", "checks": [{"op": "contains", "arg": "pnpm"}]}})])
    skill = tmp_path / "SKILL.md"
    skill.write_text("# Skill\n")
    cfg = engine_config(SleepSettings(project=str(tmp_path)), night, run_dir=night.root, tasks_file=tasks,
                        skill_file=skill, memory_file=None, target="skill", n_train=1)
    assert cfg.model.student.n_ctx == 8192  # SmolLM2-135M's own context: the memory file fits
    assert cfg.model.teacher.n_ctx == TEACHER_CONTEXT == 4096
    assert cfg.gradient.minibatch_size == 4  # one analyst call reads up to four failures
    models = build_models(cfg, cache_path=None, emit=EventLog(night.root / "events.jsonl"))
    try:
        # the trainer renders compact evidence for a teacher whose window is 4096 tokens or less
        assert models.teacher.context_window <= 4096 < models.student.context_window
    finally:
        asyncio.run(models.aclose())
