"""`skillgrad estimate` counts deep reflect (probe turns + a patch call per probed trajectory, every step)
and meta reflect (one review call + a gate evaluation of its candidate, every epoch) when they are on."""

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
    probed = 3 + 2  # failures + successes per step (the batch of 10 holds enough of both)
    assert on[("deep_reflect", "teacher")] == 2 * probed * MAX_TURNS
    assert on[("deep_reflect_patch", "teacher")] == 2 * probed
    assert on[("meta_reflect", "teacher")] == 2  # one review per epoch
    assert on[("meta_reflect", "student")] == 2 * 6  # its candidate on the selection items, per epoch
    failures_only = _calls(["gradient.use_deep_reflect=true", "gradient.deep_reflect_failures=3",
                            "gradient.deep_reflect_successes=2", "gradient.failure_only=true"])
    assert failures_only[("deep_reflect_patch", "teacher")] == 2 * 3  # failure_only probes no successes
    few = _calls(["gradient.use_deep_reflect=true", "gradient.deep_reflect_failures=40", "train.batch_size=4"])
    steps = 2 * 3  # ceil(10 / 4) steps per epoch
    assert few[("deep_reflect_patch", "teacher")] == steps * 4  # never more than the batch holds
