"""benchmarks/report_suite.py without a model: the zero-call LabeledFewShot stand-in and the paired table."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import report_suite  # noqa: E402

from skillgrad.envs.tasks import read_tasks  # noqa: E402
from skillgrad.skill.examples import split_examples  # noqa: E402


def test_the_fewshot_stand_in_shows_training_gold_and_never_a_held_out_task(tmp_path: Path) -> None:
    skill = BENCH / "report_suite" / "iso-date"
    text, source = report_suite.fewshot_skill(skill, tmp_path / "no-run", seed=1)
    examples = split_examples(text)[1]
    tasks = {t.task: t for t in read_tasks(skill / "tasks.jsonl")}
    assert len(examples) == report_suite.K_FEWSHOT and "LabeledFewShot" in source
    assert all(tasks[q].split == "train" and tasks[q].judge.reference == a for q, a in examples)
    assert report_suite.labeled_fewshot(skill, 2) != text  # the seed orders the examples
    made = tmp_path / "run" / "baselines"
    made.mkdir(parents=True)
    (made / "fewshot_skill.md").write_text("# the run's own", encoding="utf-8")
    assert report_suite.fewshot_skill(skill, tmp_path / "run", 1) == (
        "# the run's own", "the run's zero-call baseline (engine/baselines.py)")


def test_the_table_pairs_the_trained_skill_with_the_best_baseline_over_seeds() -> None:
    def row(seed: int, initial: list[float], fewshot: list[float], trained: list[float]) -> dict:
        ids = [f"t{i}" for i in range(len(initial))]
        return {"skill": "x", "seed": seed, "trained_run": {"calls": 10, "tokens": 900},
                "scores": {"initial": dict(zip(ids, initial, strict=True)), "fewshot": dict(zip(ids, fewshot, strict=True)),
                           "trained": dict(zip(ids, trained, strict=True)), "analysts only": "not available: no such key"}}

    rows = [row(0, [0, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0]), row(1, [0, 1, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0])]
    lines = report_suite.table(rows, ["initial", "fewshot", "trained", "analysts only"])
    cells = [c.strip() for c in lines[-1].split("|")[1:-1]]
    assert cells[0] == "x" and cells[1] == "2"
    assert cells[2].startswith("0.12") and cells[3].startswith("0.38") and cells[4].startswith("0.62")
    assert cells[5].startswith("— (not available") and cells[6] == "fewshot"
    assert cells[7].startswith("+0.25")  # (3 - 2 + 2 - 1) / 8 paired over (seed, task)
