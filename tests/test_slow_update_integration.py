"""Two epochs on `facts` with the embedded model, slow update and meta skill on (SkillOpt's defaults), through
the real `skillgrad train` command: the run completes (the epoch-2 slow update used to die with SIGSEGV in
llama.cpp's grammar), and a SIGKILL inside the epoch-2 slow update followed by the same command finishes with
zero repeated provider calls and the same best_skill.md as the uninterrupted run.

`gradient.max_edit_chars=600` (the default) gives the slow update and meta skill a 1,800-character field,
the size that crashed; tiny splits (3 items) keep each run to about a minute on an idle 2-core machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from train_helpers import events, provider_keys

from skillgrad.config.loader import packaged_config_path
from skillgrad.engine.stages.rollout import rollout
from skillgrad.skill import ensure_appendix, hide_empty_regions, set_region

OPTIONS = ["env.n_facts=10", "env.limit=3", "train.batch_size=3", "train.num_epochs=2", "env.workers=1",
           "gradient.max_edit_chars=600", "optimizer.use_slow_update=true", "optimizer.use_meta_skill=true",
           "optimizer.slow_update_samples=2", "evaluation.eval_test=false",
           "evaluation.edit_credit=false", "model.teacher.n_threads=1", "model.student.n_threads=1",
           "train.stop_at_ceiling=false"]  # the epoch-2 slow update must run even when epoch 1 reaches 1.0
ARGS = ["--config", str(packaged_config_path("demo.yaml")), "--log-format", "jsonl",
        *[x for o in OPTIONS for x in ("-o", o)]]
TIMEOUT = 800  # under the suite's 900 s pytest-timeout; about a minute per run on an idle machine


def train_cmd(run_dir: Path) -> list[str]:
    return [sys.executable, "-m", "skillgrad.cli", "train", *ARGS, "--out", str(run_dir)]


def test_the_student_never_reads_an_empty_block() -> None:
    skill = "# Skill\n\nAnswer from the fact sheet.\n"
    placeholder = set_region(skill, "SLOW_UPDATE", "")
    assert "SLOW_UPDATE_START" in placeholder and hide_empty_regions(placeholder) == skill
    with_appendix = ensure_appendix(placeholder)  # a heading is content: kept
    assert hide_empty_regions(with_appendix) == ensure_appendix(skill)
    full = set_region(with_appendix, "SLOW_UPDATE", "Check the unit.")
    assert hide_empty_regions(full) == full


def test_rollout_hands_the_student_view_to_the_environment() -> None:
    import asyncio

    from skillgrad.envs.base import Trajectory

    seen: list[str] = []

    class Recorder:
        name = "recorder"

        async def run_task(self, item, skill, student, **kw):  # type: ignore[no-untyped-def]
            seen.append(skill)
            return Trajectory(item_id=item.id, hard=1.0, soft=1.0)

    from skillgrad.envs.base import Item

    skill = set_region("# Skill\n\nBe brief.\n", "SLOW_UPDATE", "")
    asyncio.run(rollout(Recorder(), [Item(id="a", inputs={"question": "q"}, gold="x")], skill, None,  # type: ignore[arg-type]
                        workers=1, timeout_s=10, temperature=0.0, feedback=False))
    assert seen == ["# Skill\n\nBe brief.\n"]


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory, gguf_path: Path) -> Path:
    run_dir = tmp_path_factory.mktemp("slow") / "clean"
    done = subprocess.run(train_cmd(run_dir), capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, f"rc={done.returncode}\n{done.stderr[-3000:]}"
    return run_dir


@pytest.mark.slow
def test_two_epochs_with_slow_update_and_meta_skill_complete(clean_run: Path) -> None:
    summary = json.loads((clean_run / "summary.json").read_text())
    assert summary["status"] == "completed"
    for rel in ("slow_update/epoch_01/slow_result.json", "slow_update/epoch_02/slow_result.json",
                "meta_skill/epoch_01/meta_skill_result.json", "meta_skill/epoch_02/meta_skill_result.json"):
        assert (clean_run / rel).exists(), rel
    slow = json.loads((clean_run / "slow_update/epoch_02/slow_result.json").read_text())
    # the teacher call really happened under the grammar: a parsed reply or a recorded rejection
    assert slow["reply"]["stage"] == "slow_update"
    assert slow["reply"]["ok"] or slow["reply"]["error"]
    meta = json.loads((clean_run / "meta_skill/epoch_02/meta_skill_result.json").read_text())
    assert meta["action"] == "skip_last_epoch"  # no step follows to use its answer (issue 31)
    stages = {e["stage"] for e in events(clean_run) if e["event"] == "stage_end"}
    assert "slow_update" in stages
    calls = [e for e in events(clean_run) if e["event"] == "llm_call" and e["stage"] == "slow_update"
             and e["role"] == "teacher"]
    assert calls, "the epoch-2 slow update made no teacher call"
    # the epoch-1 placeholder was re-scored without the student reading its bare markers
    convs = list((clean_run / "slow_update/epoch_01/selection_eval/predictions").glob("*/conversation.json"))
    assert convs and not any("SLOW_UPDATE_START" in c.read_text() for c in convs)


def _inside_slow_update(evs: list[dict]) -> bool:
    start = next((i for i, e in enumerate(evs) if e["event"] == "stage_start" and e.get("stage") == "slow_update"
                  and e.get("epoch") == 2), None)
    return start is not None and any(e["event"] == "llm_call" for e in evs[start:])


@pytest.mark.slow
def test_sigkill_inside_the_slow_update_then_rerun(clean_run: Path, tmp_path: Path) -> None:
    killed = tmp_path / "killed"
    proc = subprocess.Popen(train_cmd(killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + TIMEOUT
    # watch the run's event log: once the epoch-2 slow update has started and made a model call, SIGKILL
    while proc.poll() is None and time.monotonic() < deadline:
        if (killed / "events.jsonl").exists() and _inside_slow_update(events(killed)):
            os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.05)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the run finished before the epoch-2 slow update"
    assert not (killed / "slow_update/epoch_02/slow_result.json").exists()

    rerun = subprocess.run(train_cmd(killed), capture_output=True, text=True, timeout=TIMEOUT)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    repeated = [k for k, n in Counter(provider_keys(killed)).items() if n > 1]
    assert repeated == [], f"{len(repeated)} provider calls were made twice"
    assert [s["resumed"] for s in events(killed) if s["event"] == "run_start"] == [False, True]
    assert json.loads((killed / "summary.json").read_text())["status"] == "completed"
    assert (killed / "slow_update/epoch_02/slow_result.json").exists()
    assert (killed / "best_skill.md").read_text() == (clean_run / "best_skill.md").read_text()
