"""Report plots as PNG bytes, drawn with matplotlib's object API on the Agg canvas.

No pyplot: pyplot keeps global figure state and picks a GUI backend, which a library (and two
reports built in one process) must not depend on. Each function returns None when there is
nothing to draw, so a run stopped early simply has fewer plots.
"""

from __future__ import annotations

import io
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from skillgrad.runs.report_data import RunData, as_float, as_int, epoch_boundaries

ACTION_COLORS = {
    "accept_new_best": "#2e7d32",
    "accept": "#81c784",
    "force_accept": "#fb8c00",
    "reject": "#e53935",
}
SKIP_COLOR = "#9e9e9e"


def action_color(action: str) -> str:
    return ACTION_COLORS.get(action, SKIP_COLOR)


def _figure(width: float = 7.5, height: float = 3.4) -> tuple[Figure, Any]:
    # constrained layout also makes room for legends placed outside the axes
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.grid(True, alpha=0.3)
    return fig, ax


def _integer_steps(ax: Any) -> None:
    """Whole-number step ticks, also for a one-step run (MaxNLocator's default wants two integer ticks in
    view and otherwise falls back to 0.945, 0.960, ...)."""
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def _epoch_lines(ax: Any, records: list[dict[str, Any]]) -> None:
    """Dotted vertical lines between epochs, so per-step curves read epoch by epoch."""
    for x in epoch_boundaries(records):
        ax.axvline(x, color="#999", linestyle=":", linewidth=1)


def plot_train(records: list[dict[str, Any]]) -> bytes | None:
    pts = [(as_int(r.get("step")), as_float(r.get("rollout_hard")), as_float(r.get("rollout_soft")))
           for r in records]
    pts = [p for p in pts if p[0] is not None and (p[1] is not None or p[2] is not None)]
    if not pts:
        return None
    fig, ax = _figure()
    for idx, label, style in ((1, "hard", "o-"), (2, "soft", "s--")):
        xs = [p[0] for p in pts if p[idx] is not None]
        ys = [p[idx] for p in pts if p[idx] is not None]
        if xs:
            ax.plot(xs, ys, style, label=f"rollout {label}")
    _epoch_lines(ax, records)
    _integer_steps(ax)
    ax.set_xlabel("step")
    ax.set_ylabel("train score")
    ax.set_title("Train rollout score per step")
    ax.legend(loc="best", fontsize=8)
    return _png(fig)


def plot_validation(records: list[dict[str, Any]], baseline: float | None) -> bytes | None:
    steps = [(as_int(r.get("step")), r) for r in records]
    steps = [(s, r) for s, r in steps if s is not None]
    cand = [(s, as_float(r.get("candidate_gate_score")), str(r.get("action") or "")) for s, r in steps]
    cand = [c for c in cand if c[1] is not None]
    cur = [(s, as_float(r.get("current_score"))) for s, r in steps]
    best = [(s, as_float(r.get("best_score"))) for s, r in steps]
    cur = [c for c in cur if c[1] is not None]
    best = [b for b in best if b[1] is not None]
    if not (cand or cur or best):
        return None
    if baseline is not None:  # both lines start at the baseline score of the initial skill (step 0)
        cur.insert(0, (0, baseline))
        best.insert(0, (0, baseline))
    fig, ax = _figure()
    if cur:
        ax.plot([c[0] for c in cur], [c[1] for c in cur], drawstyle="steps-post", color="#1565c0",
                label="current")
    if best:
        ax.plot([b[0] for b in best], [b[1] for b in best], drawstyle="steps-post", color="#2e7d32",
                linestyle="--", label="best")
    if cand:
        ax.scatter([c[0] for c in cand], [c[1] for c in cand], c=[action_color(c[2]) for c in cand],
                   edgecolors="black", zorder=3, label="candidate (colour = gate action)")
    _epoch_lines(ax, records)
    _integer_steps(ax)
    ax.set_xlabel("step")
    ax.set_ylabel("validation (gate metric)")
    ax.set_title("Validation: candidate gate score per step")
    ax.legend(loc="best", fontsize=8)
    return _png(fig)


def plot_test(scores: dict[str, dict[str, float | None]]) -> bytes | None:
    labels = [k for k in ("initial", "best", "final") if k in scores]
    if not any(v is not None for k in labels for v in scores[k].values()):
        return None
    fig, ax = _figure(6.0, 3.4)
    width = 0.38
    for j, (metric, color) in enumerate((("hard", "#1565c0"), ("soft", "#90caf9"))):
        xs = [i + (j - 0.5) * width for i in range(len(labels))]
        ys = [scores[k].get(metric) for k in labels]
        bars = ax.bar(xs, [y or 0.0 for y in ys], width, label=metric, color=color)
        for bar, y in zip(bars, ys, strict=True):
            text = "n/a" if y is None else f"{y:.3f}"
            ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel("test score")
    ax.set_ylim(0, max(1.0, *(v or 0 for k in labels for v in scores[k].values())) * 1.12)
    ax.set_title("Test: initial vs best vs final skill")
    ax.legend(loc="best", fontsize=8)
    return _png(fig)


def plot_timeline(records: list[dict[str, Any]]) -> bytes | None:
    pts: list[tuple[int, str]] = []
    for r in records:
        step = as_int(r.get("step"))
        if step is not None:
            pts.append((step, str(r.get("action") or "?")))
    if not pts:
        return None
    fig, ax = _figure(7.5, 1.6 + 0.15 * len({p[1] for p in pts}))
    ax.grid(False)
    for step, action in pts:
        ax.barh(0, 0.9, left=step - 0.45, height=0.8, color=action_color(action), edgecolor="white")
    _epoch_lines(ax, records)
    _integer_steps(ax)
    ax.set_yticks([])
    ax.set_xlabel("step")
    ax.set_xlim(min(p[0] for p in pts) - 0.6, max(p[0] for p in pts) + 0.6)
    seen = list(dict.fromkeys(a for _, a in pts))
    handles = [Patch(color=action_color(a), label=a) for a in seen]
    ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False)
    ax.set_title("Gate decisions (accept / reject timeline)")
    return _png(fig)


def plot_all(data: RunData, records: list[dict[str, Any]], baseline: float | None) -> list[tuple[str, str, bytes]]:
    """(file name, caption, png) for every plot that has data; `baseline` = the initial skill's gate score."""
    plots = [
        ("train.png", "Train rollout score per step (hard and soft)", plot_train(records)),
        ("validation.png", "Validation: candidate gate score per step, with the current and best skill's score",
         plot_validation(records, baseline)),
        ("test.png", "Test scores of the initial, best and final skills", plot_test(data.test_scores())),
        ("timeline.png", "Gate decision per step", plot_timeline(records)),
    ]
    return [(name, caption, png) for name, caption, png in plots if png is not None]
