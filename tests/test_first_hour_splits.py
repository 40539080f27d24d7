"""Split-size errors give advice that applies: when every item's split is named by the data (each task's "split",
a split_dir, examples given as trainset/valset), env.split_ratio changes nothing, so the error does not recommend
it, nor does the error about an empty test split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillgrad.config.schema import EnvSection
from skillgrad.envs.base import Item, Splits
from skillgrad.envs.registry import create_env
from skillgrad.envs.splits import check_split_sizes
from skillgrad.errors import DataError

TASK = {"task": "Say hi.", "judge": {"kind": "rule", "checks": [{"op": "regex", "arg": "hi"}]}}


def tasks_env(tmp_path: Path, splits: list[str | None]) -> Splits:
    path = tmp_path / "tasks.jsonl"
    rows = [{**TASK, "task_id": f"t{i}", **({"split": s} if s else {})} for i, s in enumerate(splits)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(path)})).load_splits()


def test_pinned_tasks_get_advice_about_their_split_not_the_ratio(tmp_path: Path) -> None:
    splits = tasks_env(tmp_path, ["train", "train", "val", "val", "test"])
    assert splits.pinned
    with pytest.raises(DataError) as e:
        check_split_sizes(splits, min_val=3, eval_test=True, split_ratio="2:1:7")
    assert "split_ratio" not in str(e.value)
    assert 'the validation split has 2 item(s); the gate needs at least 3' in str(e.value)
    assert '"split": "val"' in str(e.value)


def test_unpinned_tasks_still_hear_about_the_ratio(tmp_path: Path) -> None:
    splits = tasks_env(tmp_path, ["train", None, None, None])
    assert not splits.pinned
    with pytest.raises(DataError, match=r"larger validation share in env.split_ratio \(now '2:1:7'\)"):
        check_split_sizes(splits, min_val=3, eval_test=True, split_ratio="2:1:7")


def test_pinned_splits_without_a_test_split_name_the_split_not_the_ratio() -> None:
    val = [Item(id=f"v{i}", inputs={"question": "q"}) for i in range(3)]
    pinned = Splits([Item(id="t", inputs={"question": "q"})], val, [], pinned=True)
    with pytest.raises(DataError) as e:
        check_split_sizes(pinned, min_val=3, eval_test=True, split_ratio="2:1:7")
    assert "split_ratio" not in str(e.value) and "evaluation.eval_test=false" in str(e.value)
    assert check_split_sizes(pinned, min_val=3, eval_test=False, split_ratio="2:1:7") is pinned
