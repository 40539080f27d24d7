"""Cancelled requests an HTTP provider may still bill.

A call cancelled after its request reached an HTTP backend (a sibling's failure, a budget stop, Ctrl-C) was
read by the server, which may bill its prompt whether or not we wait for the reply. The innermost layer notes
the prompt tokens (and their price) of such a request; the budget then counts the call and those tokens instead
of releasing its reservation, and the meter records it as `cancelled` with them. The local model and the agent
CLIs are not wrapped: a cancelled local call stays free, and one cancelled before it was sent (waiting for a
concurrency slot or a retry) is free everywhere.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from skillgrad.models.base import Completion, Handler, Request

# (prompt tokens, their USD or None when unpriced) of a request
PromptBill = Callable[[Request], tuple[int, float | None]]


class CancelledBills:
    """Per client: the requests cancelled while an HTTP provider had them, by request object."""

    def __init__(self, bill: PromptBill) -> None:
        self._bill = bill
        self._noted: dict[int, tuple[int, float | None]] = {}

    def wrap(self, inner: Handler) -> Handler:
        async def noted(req: Request) -> Completion:
            try:
                return await inner(req)
            except asyncio.CancelledError:
                self._noted[id(req)] = self._bill(req)
                raise

        return noted

    def peek(self, req: Request) -> tuple[int, float | None] | None:
        """The budget's look (it unwinds first); the meter takes the note with `pop`."""
        return self._noted.get(id(req))

    def pop(self, req: Request) -> tuple[int, float | None] | None:
        return self._noted.pop(id(req), None)
