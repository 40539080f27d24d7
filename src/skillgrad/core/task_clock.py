"""The task clock: a task's own working time, which its timeout (`env.exec_timeout`) measures.

Time a task spends queued for a model (behind the embedded model's lock, for a concurrency slot, a rate limit or
a retry's backoff) depends on the other tasks in flight, the worker count and the machine's load, not on the
task: a timeout that counted it scored the same skill 100 % with 4 workers and a 25 s limit, 10 % with 4 workers
and 4 s, 90 % with 1 worker and 4 s. The executor starts one clock per task (`running`); whatever makes a
call wait reports the wait (`queued`, or `begin_wait` where the wait ends on another thread) and the clock
stands still meanwhile. Outside a task (a teacher call) there is no clock and a wait reports nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_CURRENT: ContextVar[TaskClock | None] = ContextVar("skillgrad_task_clock", default=None)


class TaskClock:
    """Wall time since the start, less the time some wait was open (thread-safe: the embedded model's thread
    ends its waits)."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._lock = threading.Lock()
        self._start = now()
        self._queued = 0.0  # closed wait intervals
        self._open = 0  # waits open now (a task may wait for two calls at once: the clock stops once)
        self._since = 0.0

    def pause(self) -> None:
        with self._lock:
            if self._open == 0:
                self._since = self._now()
            self._open += 1

    def resume(self) -> None:
        with self._lock:
            self._open -= 1
            if self._open == 0:
                self._queued += self._now() - self._since

    def queued_s(self) -> float:
        with self._lock:
            return self._queued + (self._now() - self._since if self._open else 0.0)

    def work_s(self) -> float:
        """Seconds the task has worked: wall time less the time it was queued."""
        with self._lock:
            now = self._now()
            return now - self._start - self._queued - (now - self._since if self._open else 0.0)


class Wait:
    """One open wait; `end` closes it once, from whichever thread comes first (the model thread when the call
    gets the model, the caller when the call is cancelled while still queued)."""

    def __init__(self, clock: TaskClock | None) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        if clock is not None:
            clock.pause()

    def end(self) -> None:
        with self._lock:
            clock, self._clock = self._clock, None
        if clock is not None:
            clock.resume()


def current() -> TaskClock | None:
    """The running task's clock (None outside a task)."""
    return _CURRENT.get()


def begin_wait() -> Wait:
    """A wait of the running task, to end with `Wait.end` (a no-op outside a task)."""
    return Wait(_CURRENT.get())


@contextmanager
def queued() -> Iterator[None]:
    """The running task's clock stands still inside this block (a no-op outside a task)."""
    wait = begin_wait()
    try:
        yield
    finally:
        wait.end()


@contextmanager
def running(clock: TaskClock) -> Iterator[TaskClock]:
    """Make `clock` the running task's clock (asyncio tasks created inside inherit it)."""
    token = _CURRENT.set(clock)
    try:
        yield clock
    finally:
        _CURRENT.reset(token)
