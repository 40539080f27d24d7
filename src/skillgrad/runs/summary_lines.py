"""Two parts of summary.json in words, for every face that shows a run (the CLI's result, the report, the
dashboard): the zero-call baselines with the gain over the better one (engine/baselines.py), and why a run
learned nothing (engine/no_learning.py). Reads the summary dict only, so the report can use it too."""

from __future__ import annotations

from typing import Any

BASELINE_NAMES = {"initial": "initial skill", "fewshot": "few-shot baseline (zero teacher calls)"}


def _pct(v: Any) -> str:
    return f"{100 * v:.1f}%" if isinstance(v, int | float) else "-"


def baseline_lines(summary: dict[str, Any]) -> list[str]:
    """One line per baseline (score, items, interval), then the gain line."""
    lines = []
    for name, b in (summary.get("baselines") or {}).items():
        if not isinstance(b, dict):
            continue
        label = BASELINE_NAMES.get(name, name)
        if b.get("score") is None:
            lines.append(f"{label}: {b.get('why') or 'not scored'}")
            continue
        iv = b.get("interval") or [None, None]
        extra = f", {b['examples']} examples {b.get('sources') or ''}".rstrip() if b.get("examples") else ""
        lines.append(f"{label}: {_pct(b['score'])} of {b.get('n')} held-out items"
                     + (f" (95% interval {_pct(iv[0])} .. {_pct(iv[1])})" if iv[0] is not None else "") + extra)
    return [*lines, *([gain] if (gain := gain_line(summary)) else [])]


def gain_line(summary: dict[str, Any]) -> str:
    """The best skill's held-out gain over the best baseline, with its paired interval ('' when not scored)."""
    g = summary.get("gain_over_best_baseline")
    if not isinstance(g, dict) or g.get("delta") is None:
        return ""
    iv = g.get("interval") or [None, None]
    return (f"trained vs the best baseline ({BASELINE_NAMES.get(g.get('over', ''), g.get('over'))}): "
            f"{100 * g['delta']:+.1f} points"
            + (f" (paired 95% interval {100 * iv[0]:+.1f} .. {100 * iv[1]:+.1f} over {g.get('n')} items)"
               if iv[0] is not None else ""))


def no_learning_line(summary: dict[str, Any]) -> str:
    """Why the run learned nothing, and the next step, as one line ('' when it learned something)."""
    nl = summary.get("no_learning")
    if not isinstance(nl, dict):
        return ""
    return f"{nl.get('summary')}. Next: {nl.get('next_step')}."
