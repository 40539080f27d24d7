"""Kill a training subprocess mid-step (SIGKILL), rerun the same command: it continues from the last
completed stage, makes zero repeated provider calls, and ends with the same best_skill.md as an
uninterrupted run with the same seed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from train_helpers import TINY, events, provider_keys

from skillgrad.config.loader import packaged_config_path

pytestmark = pytest.mark.slow

ARGS = ["--config", str(packaged_config_path("demo.yaml")), "--log-format", "jsonl",
        *[x for o in [*TINY, "train.num_epochs=1", "optimizer.use_slow_update=false",
                      "optimizer.use_meta_skill=false"] for x in ("-o", o)]]


def train_cmd(run_dir: Path) -> list[str]:
    return [sys.executable, "-m", "skillgrad.cli", "train", *ARGS, "--out", str(run_dir)]


def kill_when(run_dir: Path, predicate) -> list[dict]:
    """Start training, SIGKILL it as soon as an event matches `predicate`; return the events seen."""
    proc = subprocess.Popen(train_cmd(run_dir), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    seen = []
    assert proc.stdout is not None
    for line in proc.stdout:
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        seen.append(ev)
        if predicate(ev, seen):
            os.killpg(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the run finished before the kill point"
    return seen


def test_sigkill_mid_step_then_rerun(tmp_path: Path, gguf_path: Path) -> None:
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    # The uninterrupted run goes beside the killed one and its rerun (each process uses one thread): on two
    # cores the test takes the time of the longer chain, not of both.
    reference = subprocess.Popen(train_cmd(clean), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # kill in the middle of step 2's reflection: after its first teacher call completed
    seen = kill_when(killed, lambda e, seen: e.get("event") == "llm_call" and e.get("stage") == "reflect"
                     and any(x.get("event") == "stage_start" and x.get("step") == 2 for x in seen))
    assert any(e.get("event") == "stage_start" and e.get("step") == 2 for e in seen)
    before = provider_keys(killed)
    assert before, "no provider call completed before the kill"

    rerun = subprocess.run(train_cmd(killed), capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    keys = provider_keys(killed)
    repeated = [k for k, n in Counter(keys).items() if n > 1]
    assert repeated == [], f"{len(repeated)} provider calls were made twice"
    starts = [e for e in events(killed) if e["event"] == "run_start"]
    assert [s["resumed"] for s in starts] == [False, True]
    # completed stage files were reused, not recomputed: nothing of step 1 ran in the second process, and the
    # stages of step 2 that finished before the kill were read from their files (stage_reused, not stage_start)
    evs = events(killed)
    second = evs[next(i for i, e in enumerate(evs) if e["event"] == "run_start" and e["resumed"]):]
    assert not [e for e in second if e["event"] in ("stage_start", "stage_reused") and e.get("step") == 1]
    assert not [e for e in second if e["event"] == "stage_start" and e.get("stage") == "baseline"]
    assert ("rollout", 2) in {(e["stage"], e["step"]) for e in second if e["event"] == "stage_start"}
    assert json.loads((killed / "runtime_state.json").read_text())["finished"]

    _, err = reference.communicate(timeout=900)
    assert reference.returncode == 0, err[-2000:]
    assert (killed / "best_skill.md").read_text() == (clean / "best_skill.md").read_text()
    assert json.loads((killed / "history.json").read_text())[-1]["action"] == \
        json.loads((clean / "history.json").read_text())[-1]["action"]


def test_sigkill_in_the_few_shot_start_then_rerun(tmp_path: Path, gguf_path: Path) -> None:
    """The default start (`optimizer.start_from: fewshot`): killed while the gate scores the few-shot skill, the
    rerun reads the saved few-shot skill, repeats no provider call and ends as an uninterrupted run does."""
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    args = [*ARGS, "-o", "optimizer.start_from=fewshot"]
    cmd = [sys.executable, "-m", "skillgrad.cli", "train", *args]
    reference = subprocess.Popen([*cmd, "--out", str(clean)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True)
    proc = subprocess.Popen([*cmd, "--out", str(killed)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, start_new_session=True)
    assert proc.stdout is not None
    inside, calls = False, 0
    for line in proc.stdout:
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        inside = inside or (ev.get("event") == "stage_start" and ev.get("stage") == "fewshot_start")
        calls += inside and ev.get("event") == "llm_call"
        if calls >= 2:
            os.killpg(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the run finished before the few-shot start"

    rerun = subprocess.run([*cmd, "--out", str(killed)], capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    repeated = [k for k, n in Counter(provider_keys(killed)).items() if n > 1]
    assert repeated == [], f"{len(repeated)} provider calls were made twice"
    evs = events(killed)
    starts = [i for i, e in enumerate(evs) if e["event"] == "run_start"]
    assert len(starts) == 2  # (before step 1 ends the rerun counts as a fresh start that reuses the stage files)
    second = evs[starts[1]:]
    assert not [e for e in second if e["event"] == "stage_start" and e.get("stage") == "fewshot_baseline"]
    assert [e["action"] for e in second if e["event"] == "gate" and e.get("stage") == "fewshot_start"]

    _, err = reference.communicate(timeout=900)
    assert reference.returncode == 0, err[-2000:]
    assert (killed / "best_skill.md").read_text() == (clean / "best_skill.md").read_text()
    mine, theirs = (json.loads((d / "history.json").read_text()) for d in (killed, clean))
    assert [h["action"] for h in mine] == [h["action"] for h in theirs]
