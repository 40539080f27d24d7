"""SkillOpt's side: its own trainer (`skillopt-train` from the peers venv) through its OpenAI-compatible route.

SkillOpt 0.2.0 reaches OpenAI-compatible servers through its `azure_openai` backend with the auth mode
`openai_compatible` (per-role endpoints `model.optimizer_azure_openai_endpoint` / `target_...`). It has no
adapter for skillgrad's environments, so every task's items are written in the SearchQA item format its
`searchqa` adapter reads (split_dir with train/val/test JSON: id, question, context, answers); the SearchQA task
is that format already. The config file is written here from the documented keys (the wheel ships no configs).

The PyPI 0.2.0 wheel also ships no prompt files (its pyproject declares no package data; the source tree has
them), so its trainer stops at the first prompt it loads. That is reported as an explained error with the
trainer's own last lines; nothing of SkillOpt's is copied or patched here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from h2h.serve import Proxy

MISSING_PROMPTS = ("SkillOpt 0.2.0 from PyPI ships no prompt files (no package data in its wheel or sdist): "
                   "its trainer aborts on the first prompt it loads")


NO_ADAPTER = ("SkillOpt 0.2.0 has no adapter for rubric-judged tasks (its environments are its paper benchmarks; "
              "h2h/skillopt_rules.py adds one for rule-judged skills only)")
RULES_LAUNCHER = Path(__file__).with_name("skillopt_rules.py")


def adapter_for(env_name: str, splits: Any) -> str | None:
    """SkillOpt's environment for a task: `searchqa` for question/answer items (its exact-match scorer judges
    them as the task does), h2h/skillopt_rules.py's for rule-judged suite skills, None for rubric-judged ones."""
    if env_name != "tasks":
        return "searchqa"
    judges = [it.meta.get("judge", {}) for s in ("train", "val", "test") for it in getattr(splits, s)]
    return "skillgrad_rules" if all(j.get("kind") == "rule" for j in judges) else None


def write_data(splits: Any, dest: Path) -> Path:
    from skillgrad.envs.tasks.checks import Check, reply_cap

    for name in ("train", "val", "test"):
        items = [] if name == "test" else getattr(splits, name)  # the test split stays with the harness
        rows = [{"id": it.id, "question": it.inputs.get("question", str(it.inputs)),
                 "context": it.inputs.get("context", ""),
                 "answers": it.gold if isinstance(it.gold, list) else [str(it.gold)]} for it in items]
        for row, it in zip(rows, items, strict=True):
            if "judge" in it.meta:  # a rule-judged suite item: its checks and the reply cap skillgrad gives it
                checks = it.meta["judge"]["checks"]
                row.update(checks=checks, max_tokens=reply_cap([Check.model_validate(c) for c in checks]))
        (dest / name).mkdir(parents=True, exist_ok=True)
        (dest / name / "items.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return dest


def write_config(dest: Path, proxy: Proxy, *, env: str, data: Path, initial_skill: str, n_train: int, batch: int, epochs: int, seed: int,
                 edit_budget: int, teacher_cap: int, student_cap: int, teacher_model: str = "smollm2") -> Path:
    skill_init = dest / "initial_skill.md"  # the same initial skill every system starts from
    skill_init.write_text(initial_skill, encoding="utf-8")
    cfg = {
        "model": {"backend": "azure_openai", "optimizer": teacher_model, "target": "smollm2",
                  "optimizer_backend": "openai_chat", "target_backend": "openai_chat", "reasoning_effort": "",
                  "azure_openai_auth_mode": "openai_compatible",
                  "optimizer_azure_openai_endpoint": proxy.url("skillopt", "teacher"),
                  "target_azure_openai_endpoint": proxy.url("skillopt", "student"),
                  "optimizer_azure_openai_auth_mode": "openai_compatible",
                  "target_azure_openai_auth_mode": "openai_compatible",
                  "azure_openai_api_key": "no-key-local"},
        "train": {"num_epochs": epochs, "train_size": n_train, "batch_size": batch, "accumulation": 1,
                  "seed": seed},
        # its documented defaults, with the edit budget matched to skillgrad's and one analyst worker
        "gradient": {"minibatch_size": 8, "merge_batch_size": 8, "analyst_workers": 1, "failure_only": False},
        "optimizer": {"learning_rate": edit_budget, "min_learning_rate": min(2, edit_budget),
                      "lr_scheduler": "cosine", "skill_update_mode": "patch", "use_slow_update": epochs > 1,
                      "use_meta_skill": epochs > 1},
        "evaluation": {"use_gate": True, "sel_env_num": 0, "test_env_num": 0, "eval_test": False},
        "env": {"name": env, "skill_init": str(skill_init), "split_mode": "split_dir", "split_dir": str(data),
                "max_turns": 1, "max_completion_tokens": max(teacher_cap, student_cap), "workers": 1,
                "out_root": str(dest / "run")},
    }
    path = dest / "skillopt.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def exceptions_of(output: str, run_dir: Path) -> dict[str, Any]:
    """What SkillOpt caught and carried on past: tracebacks it printed (e.g. an analyst call that failed after its
    retries) and rollouts it scored 0 because the call raised (`fail_reason` "error: ...")."""
    samples = [ln.strip() for ln in output.splitlines() if ln.startswith(("RuntimeError", "Error", "Exception"))
               or "Error: " in ln[:60]]
    failed_rollouts = 0
    for res in run_dir.rglob("results.jsonl"):
        for line in res.read_text(encoding="utf-8").splitlines():
            if line.strip() and str(json.loads(line).get("fail_reason", "")).startswith("error"):
                failed_rollouts += 1
                samples.append(f"{res.parent.name}: {json.loads(line)['fail_reason'][:160]}")
    return {"exceptions": output.count("Traceback (most recent call last)") + failed_rollouts,
            "exception_samples": samples[:5]}


STEP_START = re.compile(r"^\s*\[STEP \d+/\d+\]")  # its trainer's step header
STEP_END = re.compile(r"^\s*(\[STEP \d+ done\]|\[skip\])")  # a finished step, or one with no usable patch


def run_streamed(cmd: list[str], cwd: Path, timeout_s: float) -> tuple[int, str, str, list[list[float]]]:
    """Run SkillOpt's trainer, reading its output as it comes so each step's start and end get a wall-clock
    time (its log has none): the windows that split the request log into steps and the rest."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: list[str] = []
    windows: list[list[float]] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            now = time.time()
            if windows and len(windows[-1]) == 1 and (STEP_END.match(line) or STEP_START.match(line)):
                windows[-1].append(now)
            if STEP_START.match(line):
                windows.append([now])

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    stderr_chunks: list[str] = []
    err_reader = threading.Thread(target=lambda: stderr_chunks.append(proc.stderr.read() if proc.stderr else ""),
                                  daemon=True)
    err_reader.start()
    try:
        rc = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        rc = -9
        stderr_chunks.append(f"timed out after {timeout_s:.0f} s")
    reader.join(timeout=10)
    err_reader.join(timeout=10)
    end = time.time()
    if windows and len(windows[-1]) == 1:  # a step the run ended inside
        windows[-1].append(end)
    return rc, "".join(lines), "".join(stderr_chunks), windows


def run(peers_python: Path, config: Path, out: Path, timeout_s: float) -> dict[str, Any]:
    rules = yaml.safe_load(config.read_text())["env"]["name"] == "skillgrad_rules"
    train = [str(peers_python), str(RULES_LAUNCHER)] if rules else [str(peers_python.parent / "skillopt-train")]
    cmd = [*train, "--config", str(config.resolve())]
    (out / "command.json").write_text(json.dumps(cmd, indent=1))
    t0 = time.monotonic()
    rc, stdout, stderr, windows = run_streamed(cmd, out, timeout_s)
    wall = time.monotonic() - t0
    (out / "stdout.log").write_text(stdout + "\n--- stderr ---\n" + stderr)
    best = out / "run" / "best_skill.md"
    if rc == 0 and best.is_file():
        summary = json.loads((out / "run" / "summary.json").read_text()) if (out / "run" / "summary.json").is_file() else {}
        return {"wall_s": wall, "skill": best.read_text(encoding="utf-8"), "steps": summary.get("total_steps", 0),
                "step_windows": windows, **exceptions_of(stdout + stderr, out / "run")}
    text = stderr + stdout
    lines = [ln.strip() for ln in (stderr.strip() or stdout.strip()).splitlines() if ln.strip()]
    last = (lines[-1] if lines else "no output")[-300:]  # the exception line of its traceback
    if "Prompt '" in text and "not found" in text:
        return {"wall_s": wall, "error": f"{MISSING_PROMPTS} ({last})"}
    return {"wall_s": wall, "error": f"skillopt-train exited {rc}: {last}"}
