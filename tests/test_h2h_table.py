"""The head-to-head table (benchmarks/h2h/table.py): every system's row, and skillgrad's score paired with each
system's over (seed, test item)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from h2h.table import paired_vs_skillgrad, render  # noqa: E402


def _row(system: str, seed: int, scores: list[float], teacher: int = 0) -> dict:
    per = {f"t{i}": v for i, v in enumerate(scores)}
    return {"system": system, "seed": seed, "before": 0.0, "after": sum(scores) / len(scores), "per_item": per,
            "wall_s": 10.0, "steps": 0, "step_windows": [], "version": "x",
            "usage": {"calls": teacher, "tokens": 100 * teacher, "failed_calls": 0, "teacher_calls": teacher}}


def test_each_system_is_paired_with_skillgrad_over_seeds_and_items() -> None:
    rows = [_row("skillgrad", 0, [1, 1, 0, 0], 8), _row("skillgrad", 1, [1, 1, 1, 0], 8),
            _row("dspy-labeled", 0, [1, 0, 0, 0]), _row("dspy-labeled", 1, [1, 0, 0, 0]),
            {"system": "skillopt", "seed": 0, "before": 0.0, "error": "no prompts", "wall_s": 1.0, "version": "y",
             "usage": {"calls": 0, "tokens": 0, "failed_calls": 0}}]
    assert paired_vs_skillgrad(rows, "dspy-labeled").startswith("+37.5 [")  # (1 + 2) / 8 pairs
    assert paired_vs_skillgrad(rows, "skillopt") == "n/a"
    table = render("report:iso-date", rows, 4)
    lines = {ln.split("|")[1].strip(): ln for ln in table.splitlines() if ln.startswith("| ") and "---" not in ln}
    assert {"skillgrad", "dspy-labeled", "skillopt"} <= set(lines)
    assert "+37.5" in lines["dspy-labeled"] and "| 8 |" in lines["skillgrad"] and "no prompts" in lines["skillopt"]


def test_the_docs_table_pairs_every_system_with_the_best_baseline() -> None:
    from h2h.table import best_baseline, compact

    rows = [_row("skillgrad", 0, [1, 0, 0, 0], 8), _row("skillgrad", 1, [1, 1, 0, 0], 8),
            _row("fewshot", 0, [1, 1, 1, 0]), _row("fewshot", 1, [1, 1, 0, 0]),
            _row("initial", 0, [0, 0, 0, 0]), _row("initial", 1, [0, 0, 0, 0]),
            _row("skillgrad-analysts-only", 0, [1, 1, 1, 1], 8),  # an ablation is never the baseline
            {"system": "gepa", "seed": 0, "before": 0.0, "error": "boom", "wall_s": 1.0, "version": "g",
             "usage": {"calls": 3, "tokens": 0, "failed_calls": 0}}]
    assert best_baseline(rows) == "fewshot"
    table = compact(rows)
    lines = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[2:-1]]
             for ln in table.splitlines() if ln.startswith("| ") and "---" not in ln}
    assert lines["system"][4] == "x - best baseline (fewshot), paired [95%]"
    # skillgrad 3/8 vs fewshot 5/8 over the same (seed, item) pairs; its gain over seeds 25 and 50 points
    assert lines["skillgrad"][1].startswith("0.0 -> 37.5 [") and lines["skillgrad"][2].startswith("+37.5 [")
    assert lines["skillgrad"][4].startswith("-25.0 [") and lines["fewshot"][4] == "—"
    assert lines["fewshot"][3].startswith("-25.0 [") and lines["initial"][3].startswith("+37.5 [")
    assert lines["skillgrad-analysts-only"][4].startswith("+25.0 [")  # paired on seed 0 only
    assert "gepa" not in lines and "No held-out result: gepa" in table
