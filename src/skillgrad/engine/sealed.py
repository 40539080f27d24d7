"""The sealed test split (`evaluation.sealed_test`): test items exist from the start of a run, but no stage
can read them before the run-end test stage opens them, so nothing trained, gated or credited on them.

`SealedItems` is a list whose contents raise on every read (indexing, slicing, iteration) until it is
opened; its length stays readable (run_start reports split sizes). Reading it early is a bug in a stage,
so it raises `SealedSplitError`, which is not a SkillgradError: the run stops loudly instead of being
recorded as an ordinary failure.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, SupportsIndex

from skillgrad.envs.base import Item, Splits


class SealedSplitError(RuntimeError):
    pass


class SealedItems(list[Item]):
    def __init__(self, items: list[Item]) -> None:
        super().__init__(items)
        self.opened = False

    def _check(self) -> None:
        if not self.opened:
            raise SealedSplitError("a stage read the sealed test split before the run-end test stage "
                                   "(evaluation.sealed_test): only the final test scoring may read test items")

    def __getitem__(self, i: SupportsIndex | slice) -> Any:
        self._check()
        return super().__getitem__(i)

    def __iter__(self) -> Iterator[Item]:
        self._check()
        return super().__iter__()

    def __contains__(self, x: object) -> bool:
        self._check()
        return super().__contains__(x)

    def copy(self) -> list[Item]:
        self._check()
        return super().copy()


def seal_test(splits: Splits, sealed: bool = True) -> Splits:
    if not sealed or isinstance(splits.test, SealedItems):
        return splits
    return Splits(train=splits.train, val=splits.val, test=SealedItems(list(splits.test)))


def open_test(splits: Splits) -> list[Item]:
    """The run-end test stage's one way in: opens the seal and returns the items."""
    if isinstance(splits.test, SealedItems):
        splits.test.opened = True
    return list(splits.test)


def sealed_statement(splits: Splits, *, scored: bool) -> dict[str, Any]:
    sealed = isinstance(splits.test, SealedItems)
    return {"sealed": sealed, "n": len(splits.test), "read_before_run_end": False if sealed else None,
            "scored_at_run_end": scored,
            "statement": ("The test split was sealed: no training, gate, credit or epoch stage could read it; "
                          "it was scored once, at run end." if sealed else
                          "evaluation.sealed_test is off: the test split was not guarded.")}
