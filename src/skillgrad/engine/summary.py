"""summary.json: SkillOpt's fields, with the gate score named as such, the real version and every skip kind."""

from __future__ import annotations

from collections import Counter
from typing import Any

from skillgrad import __version__
from skillgrad.engine.baselines import baseline_summary
from skillgrad.engine.goodhart import degenerate_kind
from skillgrad.engine.state import RunState
from skillgrad.skill import skill_hash


def epoch_stats(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for e in sorted({h.get("epoch", 0) for h in history}):
        hs = [h for h in history if h.get("epoch") == e]
        out.append({"epoch": e, "steps": len(hs),
                    "accepts": sum("accept" in h.get("action", "") for h in hs),
                    "rejects": sum(h.get("action") == "reject" for h in hs),
                    "skips": sum(h.get("action", "").startswith("skip") for h in hs),
                    "best_score_at_epoch_end": hs[-1].get("best_score"),
                    "current_score_at_epoch_end": hs[-1].get("current_score")})
    return out


def build_summary(state: RunState, history: list[dict[str, Any]], tests: dict[str, Any], *, status: str,
                  stopped: str | None, reason: str, run: dict[str, Any]) -> dict[str, Any]:
    actions = [h.get("action", "") for h in history]
    skips: dict[str, int] = {}
    for a in actions:
        if a.startswith("skip"):
            skips[a] = skips.get(a, 0) + 1
    final_sel = state.sel_cache.get(skill_hash(state.current_skill), [None, None])

    def t(name: str, key: str) -> float | None:
        return tests.get(name, {}).get(key)

    env_errors = {"rollout": sum(int(h.get("rollout_env_errors") or 0) for h in history),
                  "test": sum(int(v.get("n_env_errors") or 0) for v in tests.values())}
    # tasks that ended in an error (timeout, crash, provider failure; exec/pool.py), per split: outside every mean
    errors = {"train": env_errors["rollout"], "val": sum(int(h.get("selection_errors") or 0) for h in history),
              "test": env_errors["test"]}

    def delta(name: str) -> float | None:
        a, b = t(name, "hard"), t("initial", "hard")
        return a - b if a is not None and b is not None else None

    return {
        "version": f"skillgrad-{__version__}",
        "status": status,
        "stopped": stopped,
        "stop_reason": reason or None,
        "env": run.get("env"),
        "teacher": run.get("teacher"),
        "student": run.get("student"),
        "gate_metric": run.get("gate_metric"),
        "baseline_selection_hard": state.baseline_hard,
        "baseline_selection_gate_score": state.baseline_score,
        "best_selection_gate_score": state.best_score,
        "final_selection_hard": final_sel[0],
        "final_selection_soft": final_sel[1],
        "best_step": state.best_step,
        "current_origin": state.current_origin,
        "best_origin": state.best_origin,
        "total_steps": len(history),
        "planned_steps": run.get("planned_steps"),
        "early_stop": run.get("early_stop"),  # why fewer steps ran than planned (trainer._at_ceiling), if so
        "total_accepts": sum("accept" in a for a in actions),
        "total_rejects": sum(a == "reject" for a in actions),
        "total_skips": skips,
        "epoch_stats": epoch_stats(history),
        "env_errors": env_errors,  # tasks the environment crashed on: not counted as the model's failures
        "total_env_errors": sum(env_errors.values()),
        "errors": errors,
        "total_errors": sum(errors.values()),
        "baseline_test_hard": t("initial", "hard"), "baseline_test_soft": t("initial", "soft"),
        "test_hard": t("best", "hard"), "test_soft": t("best", "soft"),
        "final_test_hard": t("final", "hard"), "final_test_soft": t("final", "soft"),
        "test_delta_hard": delta("best"),
        "final_test_delta_hard": delta("final"),
        "test_by_task_type": {k: v.get("by_task_type") for k, v in tests.items()},
        "n_test": tests.get("best", {}).get("n"),
        "total_wall_time_s": run.get("total_wall_time_s"),
        "token_summary": run.get("token_summary"),
        "cache": run.get("cache"),
        # honest gains: which gate rule ran, the edits credit dropped, intervals, the sealed test split
        "gate_test": run.get("gate_test"),
        "gate_rule_rejects": sum((h.get("gate_rule") or {}).get("passed") is False for h in history),
        "edit_credit_dropped": sum(int((h.get("edit_credit") or {}).get("dropped", 0)) for h in history),
        "final_edit_credit": run.get("final_edit_credit") or None,
        "test_intervals": run.get("test_intervals"),
        # the zero-call baselines on the same held-out items, and the gain over the better one (engine/baselines.py)
        **baseline_summary(tests, run.get("test_intervals"), run.get("fewshot")),
        # a run whose best skill is where it started: what was refused, how often, and the next step
        "no_learning": run.get("no_learning"),
        # the Goodhart guard (engine/goodhart.py): edits refused for copying checker or prompt text, candidates
        # blocked for degenerate replies, and a few held-out replies before and after (what a gain is made of)
        "refused_checker_text": sum(int((h.get("edit_apply_summary") or {}).get("refused_checker_text") or 0)
                                    for h in history),
        "degenerate_blocked": sum(j.get("action") == "blocked" for j in getattr(state, "judgements", [])),
        # every skill whose selection replies the guard named degenerate, by the rule that fired
        "degenerate_by_kind": dict(Counter(degenerate_kind(r) for r in getattr(state, "sel_degenerate", {}).values())),
        # candidates the guard flagged and was waived for (a gold few-shot start, engine/baselines.py guard_waiver)
        "guard_waived": [{"origin": j.get("origin"), "action": j.get("action"), "reason": j["guard_waived"]}
                         for j in getattr(state, "judgements", []) if j.get("guard_waived")],
        "sample_replies": run.get("sample_replies") or [],
        "sealed_test": run.get("sealed_test"),
        # worked examples (engine/proposers/) and the student probe that ordered them
        "student_probe": run.get("student_probe"),
        "proposer_strategy": run.get("proposer_strategy"),  # which proposers ran (engine/proposers/sources.py)
        "demonstrations": {k: sum(int(h.get(f"n_{k}") or 0) for h in history)
                           for k in ("demonstrations", "demonstrations_rejected", "examples_applied")},
    }
