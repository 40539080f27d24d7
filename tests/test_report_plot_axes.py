"""Step axes of the report's plots show whole steps, also for a run of one step."""

from __future__ import annotations

from typing import Any

import pytest

from skillgrad.runs import report_plots


@pytest.mark.parametrize("steps", [1, 2, 12])
@pytest.mark.parametrize("plot", ["plot_train", "plot_validation", "plot_timeline"])
def test_step_ticks_are_integers(monkeypatch: pytest.MonkeyPatch, plot: str, steps: int) -> None:
    ticks: list[float] = []
    real = report_plots._png

    def capture(fig: Any) -> bytes:
        fig.canvas.draw()
        lo, hi = fig.axes[0].get_xlim()
        ticks.extend(t for t in fig.axes[0].get_xticks() if lo <= t <= hi)
        return real(fig)

    monkeypatch.setattr(report_plots, "_png", capture)
    recs = [{"step": s, "epoch": 1, "rollout_hard": 0.2, "rollout_soft": 0.3, "candidate_gate_score": 0.4,
             "current_score": 0.4, "best_score": 0.4, "action": "accept"} for s in range(1, steps + 1)]
    args = (recs, 0.1) if plot == "plot_validation" else (recs,)
    assert getattr(report_plots, plot)(*args) is not None
    assert ticks and all(float(t).is_integer() for t in ticks), ticks
