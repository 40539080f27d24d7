"""A full training step through the `openai` provider against a real OpenAI-compatible server on loopback
(`python -m llama_cpp.server` with the bundled model), and a planted API key that never reaches disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from train_helpers import events, tiny_config

from skillgrad.engine.session import open_run, train_sync

pytestmark = pytest.mark.slow

PLANTED = "sk-planted-secret-0123456789abcdef"


def test_training_step_through_openai_server(tmp_path: Path, llama_server: str, monkeypatch) -> None:
    monkeypatch.setenv("SKILLGRAD_TEST_KEY", PLANTED)
    cfg = tiny_config(
        "model.backend=openai",
        f"model.teacher.base_url={llama_server}", "model.teacher.model=smollm2",
        "model.teacher.api_key_env=SKILLGRAD_TEST_KEY",
        f"model.student.base_url={llama_server}", "model.student.model=smollm2",
        f"model.student.api_key={PLANTED}",
        # two test items: the test split runs the selection split's code path (three skills x 5 items took a third
        # of this test's time)
        "train.train_size=5", "evaluation.sel_env_num=5", "evaluation.test_env_num=2",
        "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false",
        epochs=1,
    )
    run_dir = tmp_path / "run"
    summary = train_sync(open_run(cfg, run_dir))
    assert summary["status"] == "completed"
    assert summary["total_steps"] == 1
    evs = events(run_dir)
    calls = [e for e in evs if e["event"] == "llm_call"]
    assert {c["provider"] for c in calls} == {"openai"}
    assert {c["role"] for c in calls} == {"teacher", "student"}
    assert any(c["stage"] == "reflect" and c["ok"] for c in calls)
    history = json.loads((run_dir / "history.json").read_text())
    assert history[0]["rollout_n"] == 5
    # the key was used for real requests but is nowhere in the run directory
    for f in run_dir.rglob("*"):
        if f.is_file():
            assert PLANTED.encode() not in f.read_bytes(), f
