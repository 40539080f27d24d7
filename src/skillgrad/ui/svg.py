"""The report's plots (runs/report_plots.py) drawn as inline SVG: the same series, colours and styles,
so the dashboard can redraw them as a live run moves without rasterising anything."""

from __future__ import annotations

from html import escape
from typing import Any

from skillgrad.runs.report_data import as_float, as_int, epoch_boundaries
from skillgrad.runs.report_plots import action_color

W, H, L, R, T, B = 640, 260, 48, 150, 26, 34  # size and margins (legend on the right)


def _frame(title: str, xs: list[float], ymax: float, ylabel: str) -> tuple[list[str], Any, Any]:
    x0, x1 = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    ymax = max(ymax, 1.0)
    pw, ph = W - L - R, H - T - B

    def sx(x: float) -> float:
        return round(L + (x - x0) / (x1 - x0) * pw, 1)

    def sy(y: float) -> float:
        return round(T + ph - y / ymax * ph, 1)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" class="plot" role="img" '
           f'aria-label="{escape(title)}">',
           f'<text x="{W / 2 - R / 2}" y="16" text-anchor="middle" class="ptitle">{escape(title)}</text>']
    for i in range(5):
        y = ymax * i / 4
        out.append(f'<line x1="{L}" x2="{W - R}" y1="{sy(y)}" y2="{sy(y)}" class="grid"/>'
                   f'<text x="{L - 4}" y="{sy(y) + 4}" text-anchor="end" class="tick">{y:.2f}</text>')
    span = int(x1 - x0)
    stride = max(1, span // 10)
    for x in range(int(x0), int(x1) + 1, stride):
        out.append(f'<text x="{sx(x)}" y="{H - B + 14}" text-anchor="middle" class="tick">{x}</text>')
    out.append(f'<text x="{L + pw / 2}" y="{H - 4}" text-anchor="middle" class="tick">step</text>'
               f'<text x="12" y="{T + ph / 2}" transform="rotate(-90 12 {T + ph / 2})" text-anchor="middle" '
               f'class="tick">{escape(ylabel)}</text>')
    return out, sx, sy


def _legend(out: list[str], items: list[tuple[str, str, str]]) -> None:
    for i, (label, color, kind) in enumerate(items):
        y = T + 8 + i * 16
        x = W - R + 10
        if kind == "dot":
            out.append(f'<circle cx="{x + 8}" cy="{y - 4}" r="4" fill="{color}" stroke="#000"/>')
        else:
            dash = ' stroke-dasharray="5 3"' if kind == "dash" else ""
            out.append(f'<line x1="{x}" x2="{x + 16}" y1="{y - 4}" y2="{y - 4}" stroke="{color}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{x + 20}" y="{y}" class="tick">{escape(label)}</text>')


def _epoch_lines(out: list[str], records: list[dict[str, Any]], sx: Any) -> None:
    for x in epoch_boundaries(records):
        out.append(f'<line x1="{sx(x)}" x2="{sx(x)}" y1="{T}" y2="{H - B}" class="epoch"/>')


def _steps_path(pts: list[tuple[int, float]], sx: Any, sy: Any) -> str:
    d = ""
    for i, (x, y) in enumerate(pts):
        d += f"M{sx(x)},{sy(y)}" if i == 0 else f"H{sx(x)}V{sy(y)}"
    return d


def validation_svg(records: list[dict[str, Any]], baseline: float | None) -> str:
    """Candidate gate score per step (colour = gate action) with the current and best skill's score."""
    cand = [(s, v, str(r.get("action") or "")) for r in records
            if (s := as_int(r.get("step"))) is not None and (v := as_float(r.get("candidate_gate_score"))) is not None]
    cur = [(s, v) for r in records if (s := as_int(r.get("step"))) is not None
           and (v := as_float(r.get("current_score"))) is not None]
    best = [(s, v) for r in records if (s := as_int(r.get("step"))) is not None
            and (v := as_float(r.get("best_score"))) is not None]
    if baseline is not None:
        cur.insert(0, (0, baseline))
        best.insert(0, (0, baseline))
    if not (cand or cur or best):
        return '<p class="muted">No validation scores yet.</p>'
    xs = [float(p[0]) for p in (*cand, *cur, *best)]
    ymax = max([float(p[1]) for p in (*cand, *cur, *best)] + [1.0])
    out, sx, sy = _frame("Validation: candidate gate score per step", xs, ymax, "validation (gate metric)")
    _epoch_lines(out, records, sx)
    if cur:
        out.append(f'<path d="{_steps_path(cur, sx, sy)}" fill="none" stroke="#1565c0" stroke-width="2"/>')
    if best:
        out.append(f'<path d="{_steps_path(best, sx, sy)}" fill="none" stroke="#2e7d32" stroke-width="2" '
                   'stroke-dasharray="5 3"/>')
    for s, v, action in cand:
        out.append(f'<circle cx="{sx(s)}" cy="{sy(v)}" r="4.5" fill="{action_color(action)}" stroke="#000">'
                   f'<title>step {s}: {escape(action)} {v:.3f}</title></circle>')
    actions = list(dict.fromkeys(c[2] for c in cand))
    _legend(out, [("current", "#1565c0", "line"), ("best", "#2e7d32", "dash")]
            + [(a or "?", action_color(a), "dot") for a in actions])
    return "".join(out) + "</svg>"


def train_svg(records: list[dict[str, Any]]) -> str:
    series = []
    for key, label, color, dash in (("rollout_hard", "rollout hard", "#1f77b4", False),
                                    ("rollout_soft", "rollout soft", "#ff7f0e", True)):
        pts = [(s, v) for r in records if (s := as_int(r.get("step"))) is not None
               and (v := as_float(r.get(key))) is not None]
        if pts:
            series.append((label, color, dash, pts))
    if not series:
        return '<p class="muted">No train rollouts yet.</p>'
    xs = [float(p[0]) for _, _, _, pts in series for p in pts]
    ymax = max([p[1] for _, _, _, pts in series for p in pts] + [1.0])
    out, sx, sy = _frame("Train rollout score per step", xs, ymax, "train score")
    _epoch_lines(out, records, sx)
    for _label, color, dash, pts in series:
        d = " ".join(f"{'M' if i == 0 else 'L'}{sx(x)},{sy(y)}" for i, (x, y) in enumerate(pts))
        dash_attr = ' stroke-dasharray="5 3"' if dash else ""
        out.append(f'<path d="{d}" fill="none" stroke="{color}" stroke-width="2"{dash_attr}/>')
        for x, y in pts:
            out.append(f'<circle cx="{sx(x)}" cy="{sy(y)}" r="3" fill="{color}"/>')
    _legend(out, [(label, color, "dash" if dash else "line") for label, color, dash, _ in series])
    return "".join(out) + "</svg>"


def test_svg(scores: dict[str, dict[str, float | None]]) -> str:
    labels = [k for k in ("initial", "best", "final") if k in scores]
    values = [v for k in labels for v in scores[k].values() if v is not None]
    if not values:
        return '<p class="muted">No test scores yet (the test split is scored at the end of a run).</p>'
    ymax = max(values + [1.0])
    w, h, left, top, bottom = 420, 240, 44, 26, 30
    ph = h - top - bottom
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" class="plot" role="img" '
           'aria-label="Test scores">',
           f'<text x="{w / 2}" y="16" text-anchor="middle" class="ptitle">Test: initial vs best vs final skill</text>']
    slot = (w - left - 10) / max(len(labels), 1)
    for i, label in enumerate(labels):
        for j, (metric, color) in enumerate((("hard", "#1565c0"), ("soft", "#90caf9"))):
            v = scores[label].get(metric)
            bh = (v or 0.0) / ymax * ph
            x = left + i * slot + slot * (0.15 + 0.35 * j)
            out.append(f'<rect x="{x:.1f}" y="{top + ph - bh:.1f}" width="{slot * 0.33:.1f}" height="{bh:.1f}" '
                       f'fill="{color}"><title>{label} {metric}</title></rect>'
                       f'<text x="{x + slot * 0.165:.1f}" y="{top + ph - bh - 3:.1f}" text-anchor="middle" '
                       f'class="tick">{"n/a" if v is None else f"{v:.3f}"}</text>')
        out.append(f'<text x="{left + i * slot + slot / 2:.1f}" y="{h - 10}" text-anchor="middle" '
                   f'class="tick">{label}</text>')
    return "".join(out) + "</svg>"
