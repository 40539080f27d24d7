"""Report section "Baselines": the zero-call baselines scored on the same held-out items as the trained skill, the
gain over the better one with its paired interval, and, for a run whose best skill is where it started, why it
learned nothing and what to do next. Reads summary.json only (runs/summary_lines.py words it)."""

from __future__ import annotations

from skillgrad.runs.report_data import RunData
from skillgrad.runs.report_render import Block, Heading, Para, Table
from skillgrad.runs.summary_lines import BASELINE_NAMES, gain_line


def _pct(v: object) -> str:
    return f"{100 * float(v):.1f}%" if isinstance(v, int | float) else "—"


def baseline_blocks(data: RunData) -> list[Block]:
    out: list[Block] = []
    nl = data.summary_get("no_learning")
    if isinstance(nl, dict):
        out += [Heading(2, "Why nothing was learned", "no-learning"), Para(f"{nl.get('summary')}."),
                Para(f"Next step: {nl.get('next_step')}."), Para(str(nl.get("note") or ""), muted=True)]
    bs = data.summary_get("baselines") or {}
    if not isinstance(bs, dict) or not bs:
        return out
    rows = []
    for name, b in bs.items():
        if not isinstance(b, dict):
            continue
        iv = b.get("interval") or [None, None]
        how = (f"{b.get('examples')} examples ({', '.join(f'{k} {n}' for k, n in (b.get('sources') or {}).items())})"
               if b.get("examples") else str(b.get("why") or "as configured"))
        rows.append([str(BASELINE_NAMES.get(name, name)), _pct(b.get("score")),
                     f"{_pct(iv[0])} .. {_pct(iv[1])}" if iv[0] is not None else "—", str(b.get("n") or "—"), how])
    best = data.summary_get("test_hard")
    rows.append(["trained (best skill)", _pct(best), "", str(data.summary_get("n_test") or "—"), ""])
    out += [Heading(2, "Baselines (same held-out items, zero teacher calls)", "baselines"),
            Table(["skill", "hard", "95% interval", "n", "built from"], rows)]
    if line := gain_line(data.summary or {}):
        out.append(Para(line[:1].upper() + line[1:] + "."))
    return out
