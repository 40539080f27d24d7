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
    """The test items, guarded: every read before `open_test` is counted (the summary's `read_before_run_end`
    is that count, not a promise) and, when `strict` (evaluation.sealed_test), raises."""

    def __init__(self, items: list[Item], *, strict: bool = True) -> None:
        super().__init__(items)
        self.opened = False
        self.strict = strict
        self.early_reads = 0

    def _check(self) -> None:
        if self.opened:
            return
        self.early_reads += 1
        if self.strict:
            raise SealedSplitError("a stage read the sealed test split before the run-end test stage "
                                   "(evaluation.sealed_test): only the final test scoring may read test items")

    def __getitem__(self, i: SupportsIndex | slice) -> Any:
        self._check()
        return super().__getitem__(i)

    def __iter__(self) -> Iterator[Item]:
        self._check()
        return super().__iter__()

    def __reversed__(self) -> Iterator[Item]:
        self._check()
        return super().__reversed__()

    def __contains__(self, x: object) -> bool:
        self._check()
        return super().__contains__(x)

    def __eq__(self, other: object) -> bool:
        self._check()
        return super().__eq__(other)

    def __ne__(self, other: object) -> bool:
        self._check()
        return super().__ne__(other)

    __hash__ = None  # type: ignore[assignment]  # a list: unhashable

    def __add__(self, other: Any) -> Any:
        self._check()
        return list(super().__iter__()) + list(other)

    def __radd__(self, other: Any) -> Any:  # `[...] + sealed`: Python asks the subclass first
        self._check()
        return list(other) + list(super().__iter__())

    def __mul__(self, n: SupportsIndex) -> Any:
        self._check()
        return super().__mul__(n)

    __rmul__ = __mul__

    def __repr__(self) -> str:  # a log line or a debugger shows the size, never the items
        return f"<{'opened' if self.opened else 'sealed'} test split: {len(self)} items>"

    def __reduce_ex__(self, protocol: SupportsIndex) -> Any:  # copy / pickle read the items
        self._check()
        return super().__reduce_ex__(protocol)

    def index(self, *args: Any) -> int:  # type: ignore[override]
        self._check()
        return super().index(*args)

    def count(self, x: Any) -> int:
        self._check()
        return super().count(x)

    def copy(self) -> list[Item]:
        self._check()
        return super().copy()


def seal_test(splits: Splits, sealed: bool = True) -> Splits:
    """Guard the test split: reads before the run-end test stage raise (`sealed`) or are only counted."""
    if isinstance(splits.test, SealedItems):
        return splits
    return Splits(train=splits.train, val=splits.val, test=SealedItems(list(splits.test), strict=sealed))


def open_test(splits: Splits) -> list[Item]:
    """The run-end test stage's one way in: opens the seal and returns the items."""
    if isinstance(splits.test, SealedItems):
        splits.test.opened = True
    return list(splits.test)


def sealed_statement(splits: Splits, *, scored: bool) -> dict[str, Any]:
    test = splits.test
    sealed = isinstance(test, SealedItems) and test.strict
    early = test.early_reads if isinstance(test, SealedItems) else None
    if sealed:
        statement = ("The test split was sealed: no training, gate, credit or epoch stage could read it; "
                     "it was scored once, at run end." if not early else
                     f"The test split was sealed, yet a stage tried to read it {early} time(s) before run end "
                     "(each attempt was refused).")
    else:
        statement = ("evaluation.sealed_test is off: the test split was not guarded; "
                     + (f"stages read it {early} time(s) before run end." if early else
                        "no stage read it before run end."))
    return {"sealed": sealed, "n": len(test), "read_before_run_end": bool(early), "early_reads": early or 0,
            "scored_at_run_end": scored, "statement": statement}
