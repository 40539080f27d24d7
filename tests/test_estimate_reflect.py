"""`skillgrad estimate` (the real trainer against counting models) counts deep reflect (probe turns and a patch
call per probed trajectory, every step) and meta reflect (one review call per epoch) when they are on."""

from __future__ import annotations

from pathlib import Path

from skillgrad.config.loader import load_config, packaged_config_path
from skillgrad.engine.estimate import estimate_run
from skillgrad.engine.stages.deep_reflect import MAX_TURNS

# demo: 10 train items in one batch per step, 6 selection items; two epochs = 2 steps
BASE = ["env.n_facts=10", "evaluation.sel_env_num=6", "train.num_epochs=2", "evaluation.edit_credit=false"]


def _calls(overrides: list[str]) -> dict[tuple[str, str], int]:
    est = estimate_run(load_config(packaged_config_path("demo.yaml"), [*BASE, *overrides]))
    assert est["total"]["calls"] == sum(r["calls"] for r in est["rows"])
    return {(r["stage"], r["role"]): r["calls"] for r in est["rows"]}


def test_deep_and_meta_reflect_rows_follow_the_loop(gguf_path: Path) -> None:
    off = _calls([])
    assert not {k for k in off if k[0].startswith(("deep_reflect", "meta_reflect"))}
    on = _calls(["gradient.use_deep_reflect=true", "gradient.deep_reflect_failures=3",
                 "gradient.deep_reflect_successes=2", "gradient.failure_only=false", "optimizer.use_meta_reflect=true"])
    # every train task fails in the forecast: 3 probed failures per step, each up to MAX_TURNS turns and a patch call
    assert 2 * 3 <= on[("deep_reflect", "teacher")] <= 2 * 3 * (MAX_TURNS + 1)
    assert on[("meta_reflect", "teacher")] == 2  # one review per epoch
    assert on[("reflect", "teacher")] == off[("reflect", "teacher")]  # deep reflect adds to the analysts, no less
    few = _calls(["gradient.use_deep_reflect=true", "gradient.deep_reflect_failures=40", "train.batch_size=4"])
    steps = 2 * 3  # ceil(10 / 4) steps per epoch
    assert steps * 2 <= few[("deep_reflect", "teacher")] <= steps * 4 * (MAX_TURNS + 1)  # never more than the batch
