"""`skillgrad compare runA runB`: the command-line face of engine/compare.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from skillgrad.engine.compare import RUN_DIRS, compare_runs
from skillgrad.errors import UsageError


def compare_cmd(
    run_a: Annotated[Path, typer.Argument(help="Run directory (or eval --out directory) A: the reference.")],
    run_b: Annotated[Path, typer.Argument(help="Run directory (or eval --out directory) B.")],
    skill: Annotated[str, typer.Option("--skill", help="Which run-end test results: best, final or initial.")] = "best",
    split: Annotated[str, typer.Option("--split", help="For eval directories: which split.")] = "test",
    confidence: Annotated[float, typer.Option("--confidence", help="Interval coverage.")] = 0.95,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Paired per-item comparison of two runs: mean difference B - A with a bootstrap interval, flipped items.

    Example: skillgrad compare runs/demo-seed1 runs/demo-seed2
    """
    if skill not in RUN_DIRS:
        raise UsageError(f"--skill: unknown skill {skill!r}; use best, final or initial")
    if not 0.5 <= confidence < 1:
        raise UsageError(f"--confidence: {confidence} is outside [0.5, 1); try 0.95")
    r = compare_runs(run_a, run_b, skill=skill, split=split, confidence=confidence)
    if as_json:
        typer.echo(json.dumps(r, indent=1))
        return
    # One row per measure: eight side-by-side columns cut their headers in an 80-column terminal or a pipe.
    t = Table(title=f"B - A on {r['n']} shared items")
    t.add_column("measure", no_wrap=True)
    t.add_column("value", no_wrap=True, justify="right")
    for label, value in (("mean A", f"{r['mean_a']:.3f}"), ("mean B", f"{r['mean_b']:.3f}"),
                         ("B - A", f"{r['mean_diff']:+.3f}"),
                         (f"{int(confidence * 100)}% interval", f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]"),
                         ("p (bootstrap, 1-sided)", f"{r['p_bootstrap']:.3f}"), ("p (McNemar)", f"{r['p_mcnemar']:.3f}"),
                         ("A fail -> B pass", str(r["gained"])), ("A pass -> B fail", str(r["lost"]))):
        t.add_row(label, value)
    out = Console()
    out.print(t)
    out.print(f"gained: {', '.join(r['gained_items']) or '-'}", markup=False, highlight=False)
    out.print(f"lost:   {', '.join(r['lost_items']) or '-'}", markup=False, highlight=False)
    if r["only_a"] or r["only_b"]:
        out.print(f"not paired: {r['only_a']} item(s) only in A, {r['only_b']} only in B", markup=False)
