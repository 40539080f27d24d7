"""The run context: what a stage or an extension (edit credit, the gate rule, meta reflect, the slow update,
the candidate pipeline) may use of a running training run, so that none of them reaches into the Trainer.

It holds the run's parts (config, environment, models, store, events, teacher, splits) and its mutable state
(`RunState`, the step buffer, the step history), and offers the few operations they need: score a skill on
the selection split, run items through the student, run a named stage (timed, evented, metered), and
checkpoint a stage's result in the run directory so a resumed run reuses it instead of computing it again.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from skillgrad.config.schema import Config
from skillgrad.core.atomic import damaged
from skillgrad.core.events import EventSink
from skillgrad.engine.buffer import StepBuffer
from skillgrad.engine.gate import gate_score
from skillgrad.engine.gate.early import ItemStop, StopRule, early_record, stop_group
from skillgrad.engine.goodhart import degenerate_replies
from skillgrad.engine.stages.rollout import RolloutResult, check_env_errors
from skillgrad.engine.state import RunState
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import Environment, Item, Splits, Trajectory
from skillgrad.envs.trajectory import trim_trajectory
from skillgrad.exec.base import Executor
from skillgrad.exec.pool import LocalPool
from skillgrad.models.factory import Models
from skillgrad.runs.store import RunStore
from skillgrad.skill import hide_empty_regions, semantic_density, skill_hash

T = TypeVar("T")

# The trainer stage the running task belongs to. Stages run side by side (reflect beside deep reflect and
# demonstrate), so "the newest stage_start" misattributes calls; an asyncio task carries its own value.
CURRENT_STAGE: ContextVar[str | None] = ContextVar("skillgrad_trainer_stage", default=None)

# a stage's wall time goes into the step record's `timing` under SkillOpt's key names
_TIMING_KEYS = {"gate": "evaluate_s", "deep_reflect": "reflect_s"}


@dataclass
class Scored:
    """A skill's selection-split score: hard and soft means and the gate score built from them."""

    hard: float
    soft: float
    score: float
    degenerate: str | None = None  # why its replies look like gaming the scorer (engine/goodhart.py), if so
    n_items: int = 0  # selection items
    n_scored: int = 0  # of them scored (fewer only when the gate stopped early)
    n_errors: int = 0  # of them ended in an error (exec/pool.py): outside the means and the per-item tests
    # the gate stopped scoring it (engine/gate/early.py): hard, soft and score are then upper bounds, not its score
    early_stop: dict[str, Any] | None = None


@dataclass
class RunContext:
    cfg: Config
    env: Environment
    models: Models
    store: RunStore
    emit: EventSink
    teacher: TeacherCall
    executor: Executor | None = None  # where rollouts run (exec/); None = the local pool
    splits: Splits = field(default_factory=lambda: Splits([], [], []))
    state: RunState = field(default_factory=RunState)
    buffer: StepBuffer = field(default_factory=StepBuffer)
    history: list[dict[str, Any]] = field(default_factory=list)
    timing: dict[str, float] = field(default_factory=dict)  # stage seconds of the current step
    started: float = field(default_factory=time.monotonic)  # this process's start, for elapsed time

    # ------------------------------------------------------------------ run state (runtime_state.json)
    def elapsed(self) -> float:
        """Wall seconds of the run over all its processes."""
        return round(self.state.elapsed_s + (time.monotonic() - self.started), 3)

    def load_state(self) -> bool:
        """Continue a run from runtime_state.json (state, buffer, history, meter, budget); False if new."""
        saved = self.store.read_json("runtime_state.json")
        if saved is not None and not isinstance(saved, dict):
            raise damaged(self.store.root / "runtime_state.json", f"a JSON {type(saved).__name__}, not an object")
        if not saved:
            return False
        self.state = RunState.from_json(saved, str(self.store.root / "runtime_state.json"))
        self.buffer = StepBuffer.from_json(self.state.buffer) if self.state.buffer else self.buffer
        self.history = self.store.load_history()
        if hasattr(self.models.meter, "restore") and self.state.meter:
            self.models.meter.restore(self.state.meter)
        if hasattr(self.models.budget, "restore") and self.state.budget:
            self.models.budget.restore(self.state.budget)
        self.state.stopped = None
        return True

    def init_state(self, initial: str) -> None:
        """A new run: the initial skill is current and best (skills/skill_v0000.md, best_skill.md)."""
        self.state = RunState(initial_skill=initial, current_skill=initial, best_skill=initial)
        self.store.save_skill_version(0, initial)
        self.store.write_text("best_skill.md", initial)
        self.save_state()

    def save_state(self) -> None:
        """The checkpoint every stage boundary ends with: one atomic write of runtime_state.json."""
        self.state.buffer = self.buffer.to_json()
        if hasattr(self.models.meter, "summary"):
            self.state.meter = self.models.meter.summary()
        if hasattr(self.models.budget, "snapshot"):
            self.state.budget = self.models.budget.snapshot()
        data = self.state.to_json()
        data["elapsed_s"] = self.elapsed()
        self.store.write_json("runtime_state.json", data)

    # ------------------------------------------------------------------ stages and checkpoints
    async def stage(self, name: str, step: int, epoch: int, fn: Callable[[], Awaitable[T]],
                    counts: Callable[[T], dict[str, Any]] | None = None) -> T:
        """Run one named stage: stage_start/stage_end events with its seconds, counts and metered usage."""
        before = self._meter_totals()
        t0 = time.monotonic()
        self.emit("stage_start", stage=name, step=step, epoch=epoch)
        token = CURRENT_STAGE.set(name)
        try:
            result = await fn()
        finally:
            CURRENT_STAGE.reset(token)
        after = self._meter_totals()
        seconds = time.monotonic() - t0
        key = _TIMING_KEYS.get(name, f"{name}_s")
        self.timing[key] = self.timing.get(key, 0.0) + seconds
        self.emit("stage_end", stage=name, step=step, epoch=epoch, seconds=round(seconds, 3),
                  counts=counts(result) if counts else {},
                  **{k: (None if after[k] is None or before[k] is None else round(after[k] - before[k], 6))
                     for k in after})
        return result

    async def checkpoint(self, rel: str, compute: Callable[[], Awaitable[T]], load: Callable[[Any], T],
                         dump: Callable[[T], Any]) -> T:
        """Stage-level checkpoint: load the stage's saved result, or compute and save it atomically."""
        saved = self.store.read_json(rel)
        if saved is not None:
            return load(saved)
        result = await compute()
        self.store.write_json(rel, dump(result))
        return result

    async def checkpointed(self, name: str, step: int, epoch: int, rel: str, compute: Callable[[], Awaitable[T]],
                           load: Callable[[Any], T], dump: Callable[[T], Any],
                           counts: Callable[[T], dict[str, Any]] | None = None) -> T:
        """A stage whose result is saved in `rel`: reused from there on resume (a `stage_reused` event instead
        of stage_start/stage_end, so a resumed run shows which stages it did not run again), computed otherwise."""
        saved = self.store.read_json(rel)
        if saved is not None:
            self.emit("stage_reused", stage=name, step=step, epoch=epoch, file=rel)
            return load(saved)
        return await self.stage(name, step, epoch, lambda: self.checkpoint(rel, compute, load, dump), counts)

    def _meter_totals(self) -> dict[str, Any]:
        s = self.models.meter.summary() if hasattr(self.models.meter, "summary") else {}
        tot = s.get("total", {}) if isinstance(s, dict) else {}
        return {"calls": tot.get("calls", 0), "prompt_tokens": tot.get("prompt_tokens", 0),
                "completion_tokens": tot.get("completion_tokens", 0), "cost": tot.get("cost", 0.0)}

    # ------------------------------------------------------------------ rollouts and scores
    def _progress(self, stage: str, total: int) -> Callable[[Trajectory], None]:
        done = [0]

        def on_done(t: Trajectory) -> None:
            done[0] += 1
            self.emit("task_done", stage=stage, done=done[0], total=total, item=t.item_id, hard=t.hard,
                      **({"env_error": t.env_error} if t.env_error else {}))
        return on_done

    async def run_items(self, rel: str, items: list[Item], skill: str, *, stage: str, train: bool,
                        sample: int = 0, stop: ItemStop | None = None) -> RolloutResult:
        """Run `items` with `skill`; every trajectory is appended to `rel`/results.jsonl (reused on resume).

        With `stop` (the gate's early stop), no further item is started once the items scored so far settle the
        verdict (saved ones of a resumed run included); the result then holds only the items scored, and
        `capped` is the score the skill could reach at most."""
        log = self.store.results(rel)
        existing = log.load()
        progress = self._progress(stage, len(items))
        done: dict[str, Trajectory] = {k: t for k, t in existing.items() if not t.env_error}  # reused as they are

        def trim(t: Trajectory) -> Trajectory:
            # what the teacher will read, cut to env.max_trajectory_tokens; the trim is recorded in t.trimmed
            return trim_trajectory(t, self.cfg.env.max_trajectory_tokens, self.teacher.count)

        def capped() -> tuple[float, float, float] | None:
            # an environment crash is no verdict on the skill: counted at full marks like an item not yet run;
            # with every item scored there is nothing left to save (the measured score is then the record)
            if stop is None or all(it.id in done for it in items):
                return None
            per = [None if (t := done.get(it.id)) is None or t.env_error else (t.hard, t.soft) for it in items]
            return stop.settled(per)

        def partial(cap: tuple[float, float, float]) -> RolloutResult:
            return RolloutResult([trim(done[it.id]) for it in items if it.id in done], capped=cap)

        if (cap := capped()) is not None:  # a resumed run whose saved items already settle it
            return partial(cap)

        def on_done(t: Trajectory) -> None:
            if t.item_id not in existing or existing[t.item_id].env_error:  # env errors are re-run
                log.append(trim(t))
            progress(t)

        ev = self.cfg.evaluation
        # With an early stop the items run in groups (a quarter of them each, in launch order) and the stop is looked
        # at after each group, never as calls come back: which items run (and so the calls, tokens and the record)
        # does not depend on the worker count or on which call finished first.
        # A handoff student answers each group in a round of its own: one group, so a gate costs the user's agent one
        # round rather than four (the stop saves nothing there that the agent has not already been asked).
        rounds = str(getattr(self.models.student, "name", "")).startswith("handoff")
        order = stop.launch_order(items) if stop is not None else items
        size = stop_group(len(order)) if stop is not None and not rounds else max(1, len(order))
        got: dict[str, Trajectory] = {}
        executor, env_name = self.executor or LocalPool(), getattr(self.env, "name", type(self.env).__name__)
        with log.saving():  # results are written off the event loop; on disk when the rollout ends
            for start in range(0, len(order), size):
                trajs = await executor.run(
                    self.env, order[start:start + size], hide_empty_regions(skill), self.models.student,
                    workers=self.cfg.env.workers, timeout_s=self.cfg.env.exec_timeout,
                    temperature=ev.train_temperature if train else ev.eval_temperature, feedback=train,
                    existing=existing, on_done=on_done, sample=sample)
                got.update((t.item_id, t) for t in trajs)
                done.update((t.item_id, t) for t in trajs)
                if (cap := capped()) is not None:
                    check_env_errors(RolloutResult(list(got.values())), env_name)  # on all run, not one group
                    return partial(cap)
        # back in item order: the means are summed in that order
        res = RolloutResult([trim(got[it.id]) for it in items if it.id in got])
        check_env_errors(res, env_name)
        return res

    def val_items(self) -> list[Item]:
        """The selection split: the validation items the gate scores on (never the test split)."""
        n = self.cfg.evaluation.sel_env_num
        return self.splits.val[:n] if n else list(self.splits.val)

    def score(self, hard: float, soft: float, skill: str) -> float:
        ev = self.cfg.evaluation
        bonus = ev.semantic_density_weight * semantic_density(skill, ev.leading_words) if ev.use_semantic_density else 0.0
        return gate_score(hard, soft, ev.gate_metric, ev.gate_mixed_weight, bonus)

    def stop_rule(self, skill: str, incumbent: float, *, ties_lose: bool, incumbent_skill: str = "") -> StopRule | None:
        """The gate's early stop for `skill` against an incumbent score (`evaluation.gate_early_stop`); the items
        `incumbent_skill` failed on the selection split are started first."""
        ev = self.cfg.evaluation
        if not ev.gate_early_stop:
            return None
        bonus = ev.semantic_density_weight * semantic_density(skill, ev.leading_words) if ev.use_semantic_density else 0.0
        per = self.state.sel_items.get(skill_hash(incumbent_skill), {}) if incumbent_skill else {}
        failed = frozenset(k for k, v in per.items() if v and v[0] < 1.0)
        return StopRule(incumbent, ties_lose, ev.gate_metric, ev.gate_mixed_weight, bonus, failed)

    async def evaluate(self, rel: str, skill: str, *, stage: str, stop: StopRule | None = None) -> Scored:
        """Selection-split score of a skill, cached by skill hash (same items, same order, temperature 0).

        With `stop`, scoring ends once the skill can no longer pass (engine/gate/early.py): the result is then
        an upper bound (`early_stop` says so, and `{rel}/early_stop.json`); it is never cached as the score."""
        h = skill_hash(skill)
        n = len(self.val_items())
        if h in self.state.sel_cache:
            hard, soft = self.state.sel_cache[h]
            self.emit("selection_cache_hit", stage=stage, skill_hash=h)
        else:
            res = await self.run_items(rel, self.val_items(), skill, stage=stage, train=False, stop=stop)
            if res.capped is not None and stop is not None:
                rec = early_record(stop, res.n, n, res.capped)
                self.store.write_json(f"{rel}/early_stop.json", rec)
                return Scored(*res.capped, n_items=n, n_scored=res.n, early_stop=rec)
            hard, soft = res.hard, res.soft
            self.state.sel_cache[h] = [hard, soft]
            self.state.sel_items[h] = {t.item_id: [t.hard, t.soft] for t in res.scored}  # gate_test (errors out)
            reason = degenerate_replies(res.trajectories)
            if reason:
                self.state.sel_degenerate[h] = reason
        errors = n - len(self.state.sel_items.get(h, {})) if h in self.state.sel_items else 0
        return Scored(hard, soft, self.score(hard, soft, skill), self.state.sel_degenerate.get(h), n_items=n,
                      n_scored=n, n_errors=errors)
