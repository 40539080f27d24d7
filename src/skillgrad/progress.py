"""Live progress for the CLI, driven only by events (the trainer never prints).

`RichProgress` shows the current stage, tasks done of total, tokens, cost, elapsed and ETA, and the
last gate decision; `LogProgress` writes plain lines for a log file (one per stage end, and one every
30 s during a long stage); `JsonlProgress` prints every event as one JSON line for scripts and CI.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text


class JsonlProgress:
    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stdout

    def __call__(self, ev: dict[str, Any]) -> None:
        self.stream.write(json.dumps(ev, ensure_ascii=False, default=str) + "\n")
        self.stream.flush()

    def close(self) -> None:
        return None


class Displays:
    """Closes several displays as one."""

    def __init__(self, displays: list[Any]) -> None:
        self.displays = displays

    def close(self) -> None:
        for d in self.displays:
            d.close()


END_TEST_STAGES = ("test_initial", "test_best")  # the run-end test (engine/run_end.py)


class _Tally:
    """What the plain and the live display both count: calls, tokens, items of the stage, steps."""

    def __init__(self) -> None:
        self.t0 = self.stage_t0 = self.step_t0 = time.monotonic()
        self.stage, self.step, self.total_steps = "starting", 0, 0
        self.done = self.total = self.calls = self.cached = self.tokens = 0
        self.steps_here = 0  # steps finished by this process (resumed steps do not count toward the rate)
        self.first_step_t0: float | None = None
        self.threads_note = ""
        self.n_val = self.n_test = 0
        self.item_s: float | None = None  # seconds per task item, from the last rollout (else the baseline)
        self.end_test_started = False

    def update(self, ev: dict[str, Any]) -> None:
        kind = ev.get("event")
        if kind == "run_start":
            self.total_steps = int(ev.get("total_steps") or 0)
            self.threads_note = str(ev.get("threads_note") or "")
            self.n_val, self.n_test = int(ev.get("n_val") or 0), int(ev.get("n_test") or 0)
        elif kind == "stage_end":
            self._time_items(ev)
        elif kind == "stage_start":
            step = int(ev.get("step") or 0)
            if step > self.step:
                self.steps_here += self.step > 0
                self.step_t0 = time.monotonic()
                if self.first_step_t0 is None:
                    self.first_step_t0 = self.step_t0
            self.stage, self.step = str(ev.get("stage")), max(self.step, step)
            self.end_test_started = self.end_test_started or self.stage in END_TEST_STAGES
            self.done = self.total = 0
            self.stage_t0 = time.monotonic()
        elif kind == "task_done":
            self.done, self.total = int(ev.get("done", 0)), int(ev.get("total", 0))
        elif kind == "llm_call":
            self.calls += 1
            self.cached += bool(ev.get("cached"))
            self.tokens += int(ev.get("prompt_tokens") or 0) + int(ev.get("completion_tokens") or 0)

    def stage_eta(self) -> float | None:
        if not self.total or not self.done:
            return None
        spent = time.monotonic() - self.stage_t0
        return spent * (self.total - self.done) / self.done

    def _time_items(self, ev: dict[str, Any]) -> None:
        counts: dict[str, Any] = ev["counts"] if isinstance(ev.get("counts"), dict) else {}
        n = int(counts.get("n") or 0) if ev.get("stage") == "rollout" else \
            self.n_val if ev.get("stage") == "baseline" and self.item_s is None else 0
        seconds = float(ev.get("seconds") or 0)
        if n and seconds > 0:
            self.item_s = seconds / n

    def end_test_eta(self) -> float:
        """The run-end test still to come: the initial and the best skill on the test items, at the measured pace
        of a task item (0 once it has started, or when nothing measured it yet)."""
        if self.end_test_started or not self.n_test or self.item_s is None:
            return 0.0
        return 2 * self.n_test * self.item_s

    def run_eta(self) -> float | None:
        """Remaining steps at the pace of the steps this process finished, plus the run-end test (None until a
        step has finished)."""
        if not self.total_steps or not self.steps_here or self.first_step_t0 is None:
            return None
        per_step = (self.step_t0 - self.first_step_t0) / self.steps_here
        steps = max(0.0, per_step * (self.total_steps - self.step + 1) - (time.monotonic() - self.step_t0))
        return steps + self.end_test_eta()

    def where(self, ev: dict[str, Any] | None = None) -> str:
        """'step 3/8 reflect': the stage running now, or the one `ev` (a stage_end) names: stages overlap (the
        worked examples beside the analysts, the initial skill's test beside the best one's)."""
        stage = str(ev.get("stage")) if ev is not None and ev.get("stage") else self.stage
        step_no = int(ev.get("step") or 0) if ev is not None and ev.get("stage") else self.step
        step = f"step {step_no}/{self.total_steps}" if self.total_steps else f"step {step_no}"
        return f"{step} {stage}" if step_no else stage


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class LogProgress:
    """Plain progress lines for a log file or a pipe: the run's start, each stage's end, a line every
    `interval` seconds while a stage runs, and the run's end. No colour, no cursor movement."""

    def __init__(self, stream: Any = None, interval: float = 30.0) -> None:
        self.stream = stream or sys.stdout
        self.interval = interval
        self.tally = _Tally()
        self._lock = threading.Lock()
        self._last = time.monotonic()
        self._stop = threading.Event()
        self._in_stage = False
        self._ticker = threading.Thread(target=self._tick, name="progress-log", daemon=True)
        self._ticker.start()

    def _write(self, text: str) -> None:
        with self._lock:
            self.stream.write(f"[{_duration(time.monotonic() - self.tally.t0):>7}] {text}\n")
            self.stream.flush()
            self._last = time.monotonic()

    def _counts(self) -> str:
        t = self.tally
        items = f"{t.done}/{t.total} items, " if t.total else ""
        return f"{items}{t.calls} calls ({t.cached} cached), {t.tokens:,} tokens, ETA {_duration(t.run_eta())}"

    def __call__(self, ev: dict[str, Any]) -> None:
        kind = ev.get("event")
        self.tally.update(ev)
        if kind == "run_start":
            note = f"; local model: {self.tally.threads_note}" if self.tally.threads_note else ""
            resumed = "continuing" if ev.get("resumed") else "starting"
            steps = self.tally.total_steps
            self._write(f"{resumed} run: env {ev.get('env')}, {steps} step{'s' if steps != 1 else ''}, teacher "
                        f"{ev.get('teacher')}, student {ev.get('student')}{note}")
        elif kind == "stage_start":
            self._in_stage = True
        elif kind == "stage_end":
            self._in_stage = False
            self._write(f"{self.tally.where(ev)} done in {_duration(float(ev.get('seconds') or 0))}: {self._counts()}")
        elif kind == "gate":
            cand = (f"at most {_f(ev.get('candidate_score_upper_bound'))}, {ev.get('n_scored')}/{ev.get('n_items')} "
                    "items" if ev.get("early_stop") else _f(ev.get("candidate_score")))
            self._write(f"step {ev.get('step')} gate: {ev.get('action')} (candidate {cand}, "
                        f"current {_f(ev.get('current_score'))}, best {_f(ev.get('best_score'))})")
        elif kind == "run_end":
            self._in_stage = False
            # provider calls, as budget.max_calls counts them; cache hits cost nothing and are counted apart
            t = self.tally
            sent = t.calls - t.cached
            cached = f" and {t.cached} answered from the cache" if t.cached else ""
            self._write(f"run {ev.get('status')}" + (f": {ev.get('reason')}" if ev.get("reason") else "")
                        + f" after {sent} provider call{'s' if sent != 1 else ''}{cached}, {t.tokens:,} tokens")

    def _tick(self) -> None:
        while not self._stop.wait(min(1.0, self.interval / 4)):
            if self._in_stage and time.monotonic() - self._last >= self.interval:
                t = self.tally
                self._write(f"{t.where()} running {_duration(time.monotonic() - t.stage_t0)}: {self._counts()}"
                            + (f", stage ETA {_duration(t.stage_eta())}" if t.stage_eta() is not None else ""))

    def close(self) -> None:
        self._stop.set()
        self._ticker.join(timeout=2)


class RichProgress:
    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.tally = _Tally()
        self.cost: float | None = 0.0
        self.gates: list[dict[str, Any]] = []
        self.live = Live(self._render(), console=self.console, refresh_per_second=4, transient=False)
        self.live.start()

    def __call__(self, ev: dict[str, Any]) -> None:
        kind = ev.get("event")
        self.tally.update(ev)
        if kind == "llm_call":
            c = ev.get("cost")
            self.cost = None if self.cost is None or (c is None and not ev.get("cached")) else self.cost + (c or 0.0)
        elif kind == "gate":
            self.gates.append(ev)
        elif kind in ("run_end",):
            self.tally.stage = f"finished ({ev.get('status')})"
        self.live.update(self._render())

    def _render(self) -> Group:
        t = self.tally
        line = Text()
        line.append(f"step {t.step}" + (f"/{t.total_steps}" if t.total_steps else "") + " ", style="bold")
        line.append(f"{t.stage}", style="cyan")
        if t.total:
            line.append(f"  {t.done}/{t.total} tasks  stage ETA {_duration(t.stage_eta())}")
        cost = "unknown" if self.cost is None else f"${self.cost:.4f}"
        line.append(f"  | {t.calls} calls ({t.cached} cached), {t.tokens:,} tokens, {cost}, "
                    f"{_duration(time.monotonic() - t.t0)} elapsed, ETA {_duration(t.run_eta())}")
        parts: list[Any] = [line]
        if t.threads_note:
            parts.append(Text(f"local model: {t.threads_note}", style="dim"))
        if self.gates:
            table = Table(box=None, show_header=True, header_style="bold", padding=(0, 1))
            for col in ("step", "epoch", "action", "candidate", "current", "best"):
                table.add_column(col)
            for g in self.gates[-6:]:
                act = str(g.get("action"))
                style = "green" if "accept" in act else ("red" if act == "reject" else "")
                table.add_row(str(g.get("step")), str(g.get("epoch")),
                              Text(act + (" (slow)" if g.get("stage") else ""), style=style),
                              _f(g.get("candidate_score")), _f(g.get("current_score")), _f(g.get("best_score")))
            parts.append(table)
        return Group(*parts)

    def close(self) -> None:
        self.live.stop()


def _f(v: Any) -> str:
    return f"{v:.3f}" if isinstance(v, (int, float)) else "-"
