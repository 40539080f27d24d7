"""Report section "Honest gains": test scores with intervals, which gate rule decided each step, what edit
credit dropped, the sealed test statement, and what the gain is made of (held-out replies before and after,
edits refused for copying checker text, candidates blocked for degenerate replies). Reads summary.json and the
step records only."""

from __future__ import annotations

from typing import Any

from skillgrad.runs.report_data import RunData
from skillgrad.runs.report_render import Block, Heading, Para, Table


def _pct(v: Any) -> str:
    return f"{100 * float(v):.1f}%" if isinstance(v, int | float) else "—"


def _pts(v: Any) -> str:
    return f"{100 * float(v):+.1f}" if isinstance(v, int | float) else "—"


def honest_blocks(data: RunData, records: list[dict[str, Any]]) -> list[Block]:
    iv = data.summary_get("test_intervals") or {}
    rule = data.summary_get("gate_test")
    credit_steps = [r for r in records if r.get("edit_credit")]
    gated = [r for r in records if r.get("gate_rule")]
    samples = data.summary_get("sample_replies") or []
    guarded = (data.summary_get("refused_checker_text") or 0) + (data.summary_get("degenerate_blocked") or 0) \
        + len(data.summary_get("guard_waived") or [])
    if not (iv or rule or credit_steps or gated or samples or guarded):
        return []
    out: list[Block] = [Heading(2, "Honest gains", "honest")]
    if iv:
        rows = []
        for name in ("initial", "best", "final"):
            m = iv.get(name)
            if m:
                rows.append([f"{name} skill", _pct(m.get("mean")), f"{_pct(m.get('ci_low'))} .. {_pct(m.get('ci_high'))}",
                             str(m.get("n", "—"))])
        out += [Heading(3, "Test split with 95% bootstrap intervals (over items)"),
                Table(["skill", "hard", "interval", "n"], rows)]
        prow = []
        for name in ("best", "final"):
            p = iv.get(f"{name}_vs_initial")
            if p:
                prow.append([f"{name} − initial", _pts(p.get("mean_diff")),
                             f"{_pts(p.get('ci_low'))} .. {_pts(p.get('ci_high'))}", f"{p.get('p_mcnemar', 1):.3f}",
                             f"{p.get('gained', 0)} / {p.get('lost', 0)}"])
        if prow:
            out += [Table(["paired difference", "points", "95% interval", "McNemar p", "items gained / lost"], prow)]
    sealed = data.summary_get("sealed_test")
    if isinstance(sealed, dict) and sealed.get("statement"):
        out.append(Para(str(sealed["statement"]), muted=not sealed.get("sealed")))
    if gated:
        rows = []
        for r in gated:
            g = r["gate_rule"]
            p = g.get("p_value")
            rows.append([str(r.get("step")), str(r.get("action")), str(g.get("decided_by")),
                         "—" if p is None else f"{p:.3f}", str(g.get("reason", ""))])
        out += [Heading(3, f"Gate decisions (rule: {rule or 'strict'})"),
                Table(["step", "action", "decided by", "p", "reason"], rows)]
    final = data.summary_get("final_edit_credit")
    if credit_steps or final:
        rows = []
        for r in credit_steps:
            c = r["edit_credit"]
            rows.append([f"step {r.get('step')}", str(c.get("units")), str(c.get("dropped")),
                         f"{_pct(c.get('score_before_credit'))} -> {_pct(c.get('score_after_credit'))}",
                         "; ".join(c.get("dropped_text") or []) or "—"])
        if isinstance(final, dict) and final:
            rows.append(["run end (best_skill.md)", str(final.get("units")), str(final.get("dropped")),
                         f"{_pct(final.get('score_before_credit'))} -> {_pct(final.get('score_after_credit'))}",
                         "; ".join(final.get("dropped_text") or []) or "—"])
        out += [Heading(3, "Edit credit (units whose removal did not lower the selection score are dropped)"),
                Table(["when", "units", "dropped", "selection score", "dropped lines"], rows)]
    return out + _gain_blocks(samples, data)


def _short(text: Any, n: int = 160) -> str:
    t = " ".join(str(text or "").split())
    return t if len(t) <= n else t[: n - 1] + "…"


def _gain_blocks(samples: list[dict[str, Any]], data: RunData) -> list[Block]:
    """Held-out replies before and after (gains first), and the Goodhart guard's counts."""
    out: list[Block] = []
    if samples:
        rows = [[str(s.get("item_id")), _short(s.get("question"), 80),
                 f"{_pct(s['before'].get('hard'))}: {_short(s['before'].get('reply'))}",
                 f"{_pct(s['after'].get('hard'))}: {_short(s['after'].get('reply'))}"] for s in samples]
        out += [Heading(3, "What the gain is made of: held-out replies before and after"),
                Table(["item", "task", "initial skill", "best skill"], rows)]
    refused, blocked = data.summary_get("refused_checker_text") or 0, data.summary_get("degenerate_blocked") or 0
    if refused or blocked:
        kinds = data.summary_get("degenerate_by_kind") or {}
        named = f" (skills named degenerate, by rule: {', '.join(f'{k} {n}' for k, n in kinds.items())})" if kinds else ""
        out.append(Para(f"Goodhart guard: {refused} edit(s) refused for copying a checker's or the prompt's text; "
                        f"{blocked} candidate(s) blocked for degenerate replies{named}."))
    for w in data.summary_get("guard_waived") or []:  # a gold few-shot start the guard flagged: judged on its score
        out.append(Para(f"Goodhart guard waived for `{w.get('origin')}` (its examples are all gold answers; "
                        f"{w.get('action')}): {w.get('reason')}."))
    return out
