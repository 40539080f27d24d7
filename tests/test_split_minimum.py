"""Too-small splits are refused before any model call with one line (exit 2): a gate deciding on 0 validation
items, or a requested test split that came out empty, used to "decide" on 0.0 vs 0.0 and exit 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli_support import DEMO_YAML, assert_one_line_error, run_cli

from skillgrad.envs.base import Item, Splits
from skillgrad.envs.splits import check_split_sizes
from skillgrad.errors import DataError


def _tasks(path: Path, n: int, **fields: str) -> Path:
    path.write_text("".join(json.dumps({"task_id": f"s{i}", "task": f"Give me the status of job {i}.", **fields,
                                        "judge": {"kind": "rule", "checks": [{"op": "regex", "arg": "^DONE:"}]}})
                            + "\n" for i in range(n)), encoding="utf-8")
    return path


def _train(tmp_path: Path, tasks: Path, ratio: str, *extra: str):  # type: ignore[no-untyped-def]
    (tmp_path / "SKILL.md").write_text("# Status\n", encoding="utf-8")
    return run_cli(["train", "-c", DEMO_YAML, "-o", "env.name=tasks", "-o", f"env.tasks_file={tasks}",
                    "-o", f"env.skill_init={tmp_path / 'SKILL.md'}", "-o", f"env.split_ratio={ratio}",
                    "-o", "model.student.n_threads=1", "-o", "model.teacher.n_threads=1", *extra,
                    "--out", str(tmp_path / "run")], tmp_path)


def test_the_old_docs_example_is_refused(tmp_path: Path) -> None:
    """Two tasks at 6:4:0 (the docs' example before): no validation item at all."""
    r = _train(tmp_path, _tasks(tmp_path / "t.jsonl", 2), "6:4:0")
    assert_one_line_error(r, "the gate needs at least 3", "evaluation.min_val_items", "env.split_ratio")
    assert not (tmp_path / "run").exists()  # nothing half-made left behind


def test_an_empty_requested_test_split_is_refused(tmp_path: Path) -> None:
    r = _train(tmp_path, _tasks(tmp_path / "t.jsonl", 4, split="val"), "1:1:1")
    assert_one_line_error(r, "test split is empty", "evaluation.eval_test=false")


def test_the_limits() -> None:
    items = [Item(id=str(i), inputs={}) for i in range(3)]
    assert check_split_sizes(Splits(items, items, []), min_val=3, eval_test=True, split_ratio="6:4:0")
    assert check_split_sizes(Splits(items, items, []), min_val=3, eval_test=False, split_ratio="2:1:7")
    with pytest.raises(DataError, match="has 2 item"):
        check_split_sizes(Splits(items, items[:2], items), min_val=3, eval_test=True, split_ratio="2:1:7")
    assert check_split_sizes(Splits(items, items[:1], items), min_val=1, eval_test=True, split_ratio="2:1:7")
