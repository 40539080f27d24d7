"""skillgrad's side: the CLI trainer on the task's config, both roles routed through the proxy, generic prompts.

Generic prompts only: the environments ship their own analyst prompts (the facts and fewshot-format ones dictate
the edit); `prompts.dir` is searched before them, so pointing it at a copy of skillgrad's packaged prompts
gives every stage the generic template.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from h2h.serve import API_KEY_ENV, Proxy

__all__ = ["API_KEY_ENV", "EMBEDDED", "TeacherRole", "route_overrides", "run", "teacher_role"]

# the stages of one optimisation step (engine/step_stages.py, proposers/stage.py, the trainer's gate); the probe,
# the baseline, epoch-end stages and the final validation are paid outside steps
STEP_STAGES = frozenset({"rollout", "reflect", "deep_reflect", "demonstrate", "aggregate", "select", "update", "gate"})


EMBEDDED = "smollm2"  # the served model's alias (serve.py): the student, and the teacher unless --teacher-url
CAPABLE_WINDOW = 200_000  # an unlisted model behind --teacher-url: a handoff agent's window (models/prices.json)


@dataclass(frozen=True)
class TeacherRole:
    """What skillgrad is told its teacher is. skillgrad treats a teacher named like its student (the same model) or
    with a window of 4,096 tokens or less (engine/teacher.py SMALL_WINDOW) as the small embedded one: short
    prompts, no syntax note, corrections judged by the small-student filters. So a capable teacher behind the proxy
    must carry its own name and window, or skillgrad runs its small-teacher strategy against it."""

    model: str = EMBEDDED
    n_ctx: int = 0  # 0: skillgrad's default for an unlisted model (4,096, the embedded model's)


def teacher_role(url: str, model: str, n_ctx: int = 0) -> TeacherRole:
    """The teacher of `--teacher-url URL --teacher-model MODEL` (none: the embedded model). Its window: `n_ctx` when
    given, else skillgrad's model table's for MODEL, else CAPABLE_WINDOW (the proxy's teacher is not the student)."""
    if not url:
        return TeacherRole()
    from skillgrad.models.prices import Pricing

    return TeacherRole(model, n_ctx or Pricing().context_window("openai", model) or CAPABLE_WINDOW)


def route_overrides(proxy: Proxy, tag: str, teacher_cap: int, teacher: TeacherRole = TeacherRole()) -> list[str]:
    out = []
    for role, model in (("student", EMBEDDED), ("teacher", teacher.model)):
        out += [f"model.{role}.provider=openai", f"model.{role}.base_url={proxy.url(tag, role)}",
                f"model.{role}.model={model}", f"model.{role}.api_key_env={API_KEY_ENV}",
                f"model.{role}.concurrency=1"]
    if teacher.n_ctx:
        out.append(f"model.teacher.n_ctx={teacher.n_ctx}")
    # a capable teacher may be an agent answering a handoff board (minutes a prompt): the client waits as long as
    # the proxy does instead of timing out and sending the request again (a second call in the log)
    return [*out, f"model.teacher.max_tokens={teacher_cap}", "model.teacher.timeout_s=600"]


def generic_prompts_dir(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for f in resources.files("skillgrad.prompts").iterdir():
        if f.name.endswith(".md"):
            (dest / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    return dest


def step_windows(events: Path) -> list[list[float]]:
    """[first stage start, last stage end] of each step, from the run's own events.jsonl (wall-clock `ts`)."""
    spans: dict[int, list[float]] = {}
    if not events.is_file():
        return []
    for line in events.read_text(encoding="utf-8").splitlines():
        ev = json.loads(line) if line.strip() else {}
        if ev.get("event") in ("stage_start", "stage_end") and ev.get("stage") in STEP_STAGES and ev.get("step", 0) >= 1:
            span = spans.setdefault(int(ev["step"]), [ev["ts"], ev["ts"]])
            span[0], span[1] = min(span[0], ev["ts"]), max(span[1], ev["ts"])
    return [spans[g] for g in sorted(spans)]


def best_of_run(run_dir: Path, returncode: int) -> tuple[str, bool]:
    """The run's best skill, and whether best_skill.md lacked it. A budget stop (exit 4) saves the state for
    `skillgrad resume` without the run end that writes best_skill.md; a best adopted before any step (the
    few-shot start's gated candidates) is then only in runtime_state.json (measured 2026-11-27:
    `optimizer.start_from=fewshot` on facts, best_origin reference_list at 0.8 validation, best_skill.md the
    initial skill)."""
    written = (run_dir / "best_skill.md").read_text(encoding="utf-8")
    state_file = run_dir / "runtime_state.json"
    if returncode != 4 or not state_file.is_file():
        return written, False
    best = str(json.loads(state_file.read_text(encoding="utf-8")).get("best_skill") or "")
    return (best, True) if best and best != written else (written, False)


def run(config: Path, overrides: list[str], out: Path, budget: int, budget_tokens: int = 0) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "skillgrad.cli", "train", "-c", str(config),
           *[x for o in overrides for x in ("-o", o)],
           "-o", f"budget.max_calls={budget}", "-o", f"budget.max_tokens={budget_tokens}",
           "-o", "evaluation.eval_test=false",
           "-o", f"prompts.dir={generic_prompts_dir(out / 'generic_prompts')}",
           "--out", str(out / "run"), "--fresh", "--quiet"]
    (out / "command.json").write_text(json.dumps(cmd, indent=1))
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    (out / "stdout.log").write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    best = out / "run" / "best_skill.md"
    summary_file = out / "run" / "summary.json"
    # exit 4 = stopped by budget.max_calls: the run ends there, and its best skill so far is the result
    if proc.returncode not in (0, 4) or not best.is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"wall_s": wall, "error": f"skillgrad train exited {proc.returncode}: {' | '.join(tail)[-400:]}"}
    summary = json.loads(summary_file.read_text()) if summary_file.is_file() else {}
    skill, stale = best_of_run(out / "run", proc.returncode)
    return {"wall_s": wall, "skill": skill, **({"best_skill_md_stale": True} if stale else {}),
            "status": summary.get("status"),
            "stopped": summary.get("stopped"), "exceptions": summary.get("total_env_errors", 0),
            "steps": summary.get("total_steps", 0), "step_windows": step_windows(out / "run" / "events.jsonl")}
