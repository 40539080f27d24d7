"""benchmarks/h2h/run_skillgrad.py: the best skill of a skillgrad run the budget stopped, from its saved state."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from h2h.run_skillgrad import best_of_run  # noqa: E402

from skillgrad.engine.state import RunState

INITIAL, FEWSHOT = "# Skill\n", "# Skill\n\n## Examples\nQ: Who founded Zorblax?\nA: Ayla Mbeki\n"


def _run_dir(tmp_path: Path, state: RunState) -> Path:
    (tmp_path / "best_skill.md").write_text(INITIAL)  # what a new run writes first (engine/context.py)
    (tmp_path / "runtime_state.json").write_text(json.dumps(state.to_json()))
    return tmp_path


def test_a_budget_stop_after_a_step_zero_best_reads_the_state(tmp_path: Path) -> None:
    # the few-shot start's candidate won the gate at step 0, then the budget stopped the run before step 1
    state = replace(RunState(initial_skill=INITIAL, current_skill=FEWSHOT, best_skill=FEWSHOT, best_score=0.8),
                    best_origin="reference_list")
    run_dir = _run_dir(tmp_path, state)
    assert best_of_run(run_dir, 4) == (FEWSHOT, True)
    assert best_of_run(run_dir, 0) == (INITIAL, False)  # a finished run wrote its best itself


def test_a_stop_whose_best_skill_md_is_current_changes_nothing(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path, RunState(initial_skill=INITIAL, current_skill=INITIAL, best_skill=INITIAL))
    assert best_of_run(run_dir, 4) == (INITIAL, False)
    (run_dir / "runtime_state.json").unlink()
    assert best_of_run(run_dir, 4) == (INITIAL, False)
