"""Why a run learned nothing, in words, with counts by reason and the next step to take.

A run whose best skill is still the skill it started from (the initial skill, or the few-shot baseline it was
told to start from) ended either because nothing was proposed or because every proposal was refused. Where
that happened is spread over the step records (actions, apply summaries), the analysts' patch files and each
step's `patches/demonstrations.json`; a user who trained 0 % -> 0 % saw none of it. This module reads them
back and says which refusal dominated and what to do about it: seed a worked example by hand, use a stronger
teacher (handoff or an API model), or loosen a check. "Verified" only ever means "passes your checks".
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

SEED_DOC = "docs/optimizer.md section 3: one passing reply under `## Examples` in the initial skill"
TEACHER_DOC = "a stronger teacher: `model.teacher` through handoff or an API model (docs/guide/providers.md)"
STARTS = ("initial_skill", "fewshot_baseline")  # a best skill with such an origin is where the run started
_PATCH_FILE = re.compile(r"^(?:minibatch|deep)_(?:fail|succ)_\d+\.json$")

# reason -> what it counts, in words (singular, plural)
REASONS: dict[str, tuple[str, str]] = {
    "examples_refused_by_checks": ("worked example your checks failed", "worked examples your checks failed"),
    "repairs_failed": ("repair of a failed student reply that still failed your checks",
                       "repairs of failed student replies that still failed your checks"),
    "examples_filtered": ("worked example the optimizer's own filters refused",
                          "worked examples the optimizer's own filters refused (too long, copying the checker, "
                          "repeats, stock openings)"),
    "teacher_unparsed": ("teacher reply that did not parse", "teacher replies that did not parse"),
    "edits_refused_by_guard": ("edit the guard refused for copying checker text",
                               "edits the guard refused for copying checker text"),
    "edits_skipped": ("edit the update could not apply", "edits the update could not apply"),
    "gate_rejected": ("candidate the gate rejected (not better on validation)",
                      "candidates the gate rejected (not better on validation)"),
    "gate_blocked": ("candidate blocked for degenerate replies", "candidates blocked for degenerate replies"),
    "steps_nothing_proposed": ("step that proposed nothing", "steps that proposed nothing"),
    "steps_all_passed": ("step whose training tasks all passed (nothing to learn from)",
                         "steps whose training tasks all passed (nothing to learn from)"),
}


def _n(n: int, key: str) -> str:
    return f"{n} {REASONS[key][n != 1]}"


def _demonstration_counts(store: Any, step: int) -> Counter[str]:
    out: Counter[str] = Counter()
    demos = store.read_json(f"steps/step_{step:04d}/patches/demonstrations.json", default=None)
    if not isinstance(demos, dict):
        return out
    for d in demos.get("log", []):
        if not isinstance(d, dict) or d.get("verified"):
            continue
        score, why = d.get("score"), str(d.get("why", ""))
        if why == "no repair to try":  # no example was proposed: the student's reply had no form to put right
            continue
        if why.startswith("no usable reply"):
            out["teacher_unparsed"] += 1
        elif isinstance(score, int | float) and score < 1.0 - 1e-9:  # scored by the environment and failed
            # the optimizer's own attempt to put the student's failed reply into form is no example a writer gave
            out["repairs_failed" if d.get("source") == "own_reply_repair" else "examples_refused_by_checks"] += 1
        else:
            out["examples_filtered"] += 1
    return out


def _unparsed_patches(store: Any, step: int) -> int:
    folder = store.root / f"steps/step_{step:04d}/patches"
    if not folder.is_dir():
        return 0
    n = 0
    for f in sorted(folder.iterdir()):
        if _PATCH_FILE.match(f.name):
            p = store.read_json(f"steps/step_{step:04d}/patches/{f.name}", default=None)
            n += isinstance(p, dict) and not (p.get("reply") or {}).get("ok", True)
    return n


def refusal_counts(store: Any, history: list[dict[str, Any]]) -> dict[str, int]:
    """Counts by reason (REASONS) over every step of the run; reasons that never happened are left out."""
    c: Counter[str] = Counter()
    for h in history:
        g, action = h.get("step"), str(h.get("action", ""))
        if not isinstance(g, int):
            continue
        if action == "skip_no_patches":
            c["steps_all_passed" if h.get("rollout_hard") == 1 else "steps_nothing_proposed"] += 1
        elif action == "reject":
            c["gate_rejected"] += 1
        elif action == "blocked":
            c["gate_blocked"] += 1
        applied = h.get("edit_apply_summary") or {}
        refused = int(applied.get("refused_checker_text") or 0) + int(applied.get("refused_no_content") or 0)
        c["edits_refused_by_guard"] += refused
        c["edits_skipped"] += max(0, int(applied.get("skipped") or 0) - refused) + int(applied.get("errors") or 0)
        c.update(_demonstration_counts(store, g))
        c["teacher_unparsed"] += _unparsed_patches(store, g)
    return {k: c[k] for k in REASONS if c[k]}


def _next_step(counts: dict[str, int]) -> str:
    examples = sum(counts.get(k, 0) for k in ("examples_refused_by_checks", "repairs_failed", "examples_filtered"))
    if counts.get("teacher_unparsed", 0) >= max(1, examples):
        return f"use {TEACHER_DOC}; or seed one example by hand ({SEED_DOC})"
    if examples:
        return (f"seed one worked example by hand ({SEED_DOC}); or use {TEACHER_DOC}; or loosen the check that "
                "refuses them if it asks more than you need")
    if counts.get("edits_refused_by_guard"):
        return ("reword the check so that a rule need not quote it, or set optimizer.allow_checker_text=true if "
                f"copying it is what you want; or seed one example by hand ({SEED_DOC})")
    if counts.get("gate_rejected") or counts.get("gate_blocked"):
        return ("more validation items or more steps (a gate on few items refuses small gains), or "
                f"seed one example by hand ({SEED_DOC})")
    if counts.get("steps_all_passed") and len(counts) == 1:
        return "nothing to learn on these tasks: add training tasks the skill fails"
    return f"seed one worked example by hand ({SEED_DOC}); or use {TEACHER_DOC}"


def explain_no_learning(store: Any, history: list[dict[str, Any]], state: Any) -> dict[str, Any] | None:
    """None when the run changed its best skill; else what was refused, how often, and what to do."""
    if getattr(state, "best_origin", "initial_skill") not in STARTS:
        return None
    if not history:
        return {"summary": "no training step ran", "counts": {},
                "next_step": "raise the budget or resume the run (skillgrad resume <run dir>)"}
    counts = refusal_counts(store, history)
    start = "the few-shot baseline" if state.best_origin == "fewshot_baseline" else "the initial skill"
    parts = [_n(n, k) for k, n in sorted(counts.items(), key=lambda kv: -kv[1])]
    proposed = any(k not in ("steps_nothing_proposed", "steps_all_passed") for k in counts)
    steps = f"{len(history)} step{'s' if len(history) != 1 else ''}"
    head = (f"learned nothing in {steps}: every proposal was refused" if proposed
            else f"learned nothing in {steps}: no candidate was proposed")
    return {"summary": f"{head}; the best skill is still {start}" + (f" ({'; '.join(parts)})" if parts else ""),
            "counts": counts, "next_step": _next_step(counts),
            "note": "a verified example only passed your checks; it can still be wrong in ways they do not test"}

