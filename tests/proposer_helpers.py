"""Shared by the proposer tests: the demonstrate stage as the small-student strategy runs it (the default when the
probe did not run), and a contract-aware shortcut for the repairs of one reply."""

from __future__ import annotations

from typing import Any

from skillgrad.engine.proposers.result import DemoResult
from skillgrad.engine.proposers.sources import SMALL_STUDENT, Strategy, propose_examples


async def demonstrate(*args: Any, strategy: Strategy = SMALL_STUDENT, corrections: int | None = None,
                      **kw: Any) -> DemoResult:
    return await propose_examples(*args, strategy=strategy, n_corrections=corrections, **kw)
