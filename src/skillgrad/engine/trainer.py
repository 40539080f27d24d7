"""The training loop: rollout -> reflect -> aggregate -> select -> update -> gate, per step; epoch-end slow
update and meta skill; run-end promotion and test scoring.

Stages are functions that return values; this class sequences them, hands their results to the run
store, and checkpoints after every stage so that a killed run continues from the last completed stage
(and replays finished LLM calls from the cache).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from skillgrad import __version__
from skillgrad.config.schema import Config
from skillgrad.engine.buffer import BufferEntry, StepBuffer, failure_patterns, summarize_edit
from skillgrad.engine.credit import credit_accepted_step, credit_best
from skillgrad.engine.epoch import Pair, filter_pairs, make_pairs, meta_skill_memory, slow_update_guidance
from skillgrad.engine.gate import decide, gate_score
from skillgrad.engine.gate_rule import apply_gate_rule
from skillgrad.engine.goodhart import junk_text, sample_replies
from skillgrad.engine.intervals import final_test_intervals
from skillgrad.engine.meta_reflect import run_meta_reflect
from skillgrad.engine.modes import MODES
from skillgrad.engine.prompts import PromptLibrary
from skillgrad.engine.schedule import EditBudgetSchedule
from skillgrad.engine.schemas import AppendixConsolidation
from skillgrad.engine.sealed import open_test, seal_test, sealed_statement
from skillgrad.engine.stages.aggregate import MergeResult, aggregate
from skillgrad.engine.stages.deep_reflect import Probe, deep_reflect
from skillgrad.engine.stages.reflect import RawPatch, reflect
from skillgrad.engine.stages.rollout import RolloutResult, rollout
from skillgrad.engine.stages.select import SelectResult, decide_autonomous_budget, select
from skillgrad.engine.stages.update import UpdateResult, guard_for, update
from skillgrad.engine.state import RunState
from skillgrad.engine.summary import build_summary
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import Environment, Item, Splits, Trajectory
from skillgrad.envs.splits import check_split_sizes
from skillgrad.envs.trajectory import trim_trajectory
from skillgrad.errors import AnswersNeeded, BudgetExceeded, EnvironmentFailure, SkillgradError
from skillgrad.exec.base import Executor
from skillgrad.models.factory import Models
from skillgrad.runs.events import EventSink
from skillgrad.runs.store import RunStore
from skillgrad.skill import (
    add_appendix_notes,
    appendix_notes,
    ensure_appendix,
    get_region,
    replace_appendix_notes,
    semantic_density,
    set_region,
    skill_hash,
)


class Trainer:
    def __init__(
        self, cfg: Config, env: Environment, models: Models, store: RunStore, emit: EventSink,
        *, teacher_max_tokens: int = 1024, teacher_temperature: float = 0.0, executor: Executor | None = None,
    ) -> None:
        self.cfg, self.env, self.models, self.store, self.emit = cfg, env, models, store, emit
        self.mode = MODES[cfg.optimizer.skill_update_mode]
        dirs = [Path(cfg.prompts.dir)] if cfg.prompts.dir else []
        self.prompts = PromptLibrary(dirs + list(env.prompt_dirs()))
        self.teacher = TeacherCall(models.teacher, self.prompts, max_tokens=teacher_max_tokens,
                                   temperature=teacher_temperature, max_prompt_tokens=cfg.gradient.max_prompt_tokens)
        self.state = RunState()
        self.buffer = StepBuffer(cfg.optimizer.buffer_scope)
        self.history: list[dict[str, Any]] = []
        self._t0 = time.monotonic()
        self._compact = int(getattr(models.teacher, "context_window", 8192)) <= 4096

    # ------------------------------------------------------------------ run
    async def run(self) -> dict[str, Any]:
        # data problems stop here, before any model call; test items stay sealed until the run-end test stage
        ev = self.cfg.evaluation
        splits = seal_test(check_split_sizes(self.env.load_splits(), min_val=ev.min_val_items, eval_test=ev.eval_test,
                                             split_ratio=self.cfg.env.split_ratio), ev.sealed_test)
        self._splits = splits  # for stages that re-score the current skill (appendix notes)
        check = getattr(self.env, "check_student", None)
        if check is not None:
            check(self.models.student)
        self._load_or_init_state(splits)
        self.emit("run_start", version=__version__, env=self.cfg.env.name, teacher=self.models.teacher.name,
                  student=self.models.student.name, resumed=self.state.last_completed_step > 0 or self.state.baseline_done,
                  n_train=len(splits.train), n_val=len(splits.val), n_test=len(splits.test))
        try:
            await self._train(splits)
            summary = await self._finish(splits)
        except SkillgradError as e:
            if not isinstance(e, BudgetExceeded):
                if isinstance(e, EnvironmentFailure):  # resumable: completed stages stay, crashed tasks re-run
                    self._save_state()
                    self._write_summary(splits, status="failed", reason=str(e))
                # handoff: not a failure, the run waits for its prompt files to be answered
                status = "answers_needed" if isinstance(e, AnswersNeeded) else "failed"
                self.emit("run_end", status=status, error=str(e), seconds=self._elapsed())
                raise
            self.state.stopped = "budget"
            self._save_state()
            summary = self._write_summary(splits, status="stopped", stopped="budget", reason=str(e))
            self.emit("run_end", status="stopped", stopped="budget", reason=str(e), seconds=self._elapsed())
            return summary
        self.emit("run_end", status="completed", seconds=self._elapsed())
        return summary

    async def _train(self, splits: Splits) -> None:
        cfg = self.cfg
        per_step = cfg.train.batch_size * cfg.train.accumulation
        train_size = cfg.train.train_size or len(splits.train)
        steps_per_epoch = max(1, math.ceil(train_size / per_step))
        total = cfg.train.num_epochs * steps_per_epoch
        self.schedule = EditBudgetSchedule(cfg.optimizer.lr_scheduler, cfg.optimizer.learning_rate,
                                           cfg.optimizer.min_learning_rate, total)
        self.total_steps = total
        if not self.state.baseline_done:
            await self._baseline(splits)
        for epoch in range(1, cfg.train.num_epochs + 1):
            if epoch > self.buffer.epoch:  # not again for an epoch a resumed run is already in
                self.buffer.start_epoch(epoch)
            batches = self._plan_epoch(splits.train[:train_size], epoch, per_step, steps_per_epoch)
            for k, batch in enumerate(batches, start=1):
                g = (epoch - 1) * steps_per_epoch + k
                if g <= self.state.last_completed_step:
                    continue
                await self._step(g, epoch, k, batch, splits, seed=cfg.train.seed + epoch * 1000 + k)
            if epoch not in self.state.epochs_done:
                await self._epoch_end(epoch, splits)

    def _plan_epoch(self, train: list[Item], epoch: int, per_step: int, n_steps: int) -> list[list[Item]]:
        order = list(train)
        random.Random(self.cfg.train.seed + epoch * 1000).shuffle(order)
        batches = [order[i * per_step : (i + 1) * per_step] for i in range(n_steps)]
        for i, b in enumerate(batches):  # refill an empty trailing batch from a reshuffle
            if not b:
                extra = list(train)
                random.Random(self.cfg.train.seed + epoch * 1000 + i + 1).shuffle(extra)
                batches[i] = extra[:per_step]
        return batches

    # ------------------------------------------------------------------ state
    def _load_or_init_state(self, splits: Splits) -> None:
        saved = self.store.read_json("runtime_state.json")
        if saved:
            self.state = RunState.from_json(saved)
            self.buffer = StepBuffer.from_json(self.state.buffer) if self.state.buffer else self.buffer
            self.history = self.store.read_json("history.json", []) or []
            if hasattr(self.models.meter, "restore") and self.state.meter:
                self.models.meter.restore(self.state.meter)
            if hasattr(self.models.budget, "restore") and self.state.budget:
                self.models.budget.restore(self.state.budget)
            self.state.stopped = None
            return
        initial = self._initial_skill()
        if self.cfg.optimizer.use_skill_aware_reflection:
            initial = ensure_appendix(initial)
        self.state = RunState(initial_skill=initial, current_skill=initial, best_skill=initial)
        self.store.save_skill_version(0, initial)
        self.store.write_text("best_skill.md", initial)
        self._save_state()

    def _initial_skill(self) -> str:
        return self.env.initial_skill()

    def _elapsed(self) -> float:
        return round(self.state.elapsed_s + (time.monotonic() - self._t0), 3)

    def _save_state(self) -> None:
        self.state.buffer = self.buffer.to_json()
        if hasattr(self.models.meter, "summary"):
            self.state.meter = self.models.meter.summary()
        if hasattr(self.models.budget, "snapshot"):
            self.state.budget = self.models.budget.snapshot()
        elapsed = self._elapsed()
        data = self.state.to_json()
        data["elapsed_s"] = elapsed
        self.store.write_json("runtime_state.json", data)

    # ------------------------------------------------------------------ helpers
    async def _stage(self, name: str, step: int, epoch: int, fn: Callable[[], Awaitable[T]],
                     counts: Callable[[T], dict[str, Any]] | None = None) -> T:
        before = self._meter_totals()
        t0 = time.monotonic()
        self.emit("stage_start", stage=name, step=step, epoch=epoch)
        result = await fn()
        after = self._meter_totals()
        self.emit("stage_end", stage=name, step=step, epoch=epoch, seconds=round(time.monotonic() - t0, 3),
                  counts=counts(result) if counts else {},
                  **{k: (None if after[k] is None or before[k] is None else round(after[k] - before[k], 6))
                     for k in after})
        return result

    def _meter_totals(self) -> dict[str, Any]:
        s = self.models.meter.summary() if hasattr(self.models.meter, "summary") else {}
        tot = s.get("total", {}) if isinstance(s, dict) else {}
        return {"calls": tot.get("calls", 0), "prompt_tokens": tot.get("prompt_tokens", 0),
                "completion_tokens": tot.get("completion_tokens", 0), "cost": tot.get("cost", 0.0)}

    async def _reuse(self, rel: str, compute: Callable[[], Awaitable[T]], load: Callable[[dict], T],
                     dump: Callable[[T], Any]) -> T:
        """Stage-level checkpoint: load the stage's saved result, or compute and save it atomically."""
        saved = self.store.read_json(rel)
        if saved is not None:
            return load(saved)
        result = await compute()
        self.store.write_json(rel, dump(result))
        return result

    def _progress(self, stage: str, total: int) -> Callable[[Trajectory], None]:
        done = [0]

        def on_done(t: Trajectory) -> None:
            done[0] += 1
            self.emit("task_done", stage=stage, done=done[0], total=total, item=t.item_id, hard=t.hard,
                      **({"env_error": t.env_error} if t.env_error else {}))
        return on_done

    async def _run_items(self, rel: str, items: list[Item], skill: str, *, stage: str, train: bool,
                         sample: int = 0) -> RolloutResult:
        log = self.store.results(rel)
        existing = log.load()
        progress = self._progress(stage, len(items))

        def trim(t: Trajectory) -> Trajectory:
            # what the teacher will read, cut to env.max_trajectory_tokens; the trim is recorded in t.trimmed
            return trim_trajectory(t, self.cfg.env.max_trajectory_tokens, self.teacher.count)

        def on_done(t: Trajectory) -> None:
            if t.item_id not in existing or existing[t.item_id].env_error:  # env errors are re-run
                log.append(trim(t))
            progress(t)

        ev = self.cfg.evaluation
        res = await rollout(
            self.env, items, skill, self.models.student, workers=self.cfg.env.workers,
            timeout_s=self.cfg.env.exec_timeout, temperature=ev.train_temperature if train else ev.eval_temperature,
            feedback=train, existing=existing, on_done=on_done, sample=sample, executor=self.executor,
        )
        return RolloutResult([trim(t) for t in res.trajectories])

    def _val_items(self, splits: Splits) -> list[Item]:
        n = self.cfg.evaluation.sel_env_num
        return splits.val[:n] if n else list(splits.val)

    def _score(self, hard: float, soft: float, skill: str) -> float:
        ev = self.cfg.evaluation
        bonus = ev.semantic_density_weight * semantic_density(skill, ev.leading_words) if ev.use_semantic_density else 0.0
        return gate_score(hard, soft, ev.gate_metric, ev.gate_mixed_weight, bonus)

    async def _evaluate(self, rel: str, skill: str, splits: Splits, *, stage: str) -> tuple[float, float, float]:
        """Selection-split score of a skill, cached by skill hash (same items, same order, temperature 0)."""
        h = skill_hash(skill)
        if h in self.state.sel_cache:
            hard, soft = self.state.sel_cache[h]
            self.emit("selection_cache_hit", stage=stage, skill_hash=h)
        else:
            res = await self._run_items(rel, self._val_items(splits), skill, stage=stage, train=False)
            hard, soft = res.hard, res.soft
            self.state.sel_cache[h] = [hard, soft]
            self.state.sel_items[h] = {t.item_id: [t.hard, t.soft] for t in res.trajectories}  # gate_test
        return hard, soft, self._score(hard, soft, skill)

    # ------------------------------------------------------------------ baseline
    async def _baseline(self, splits: Splits) -> None:
        skill = self.state.current_skill
        hard, soft, score = await self._stage(
            "baseline", 0, 0, lambda: self._evaluate("selection_eval_baseline", skill, splits, stage="baseline"))
        self.state.current_score = self.state.best_score = score
        self.state.baseline_score, self.state.baseline_hard, self.state.baseline_soft = score, hard, soft
        self.state.baseline_done = True
        self.emit("gate", step=0, epoch=0, action="baseline", candidate_score=score, current_score=score,
                  best_score=score, selection_hard=hard, selection_soft=soft)
        self._save_state()

    # ------------------------------------------------------------------ one step
    async def _step(self, g: int, epoch: int, k: int, batch: list[Item], splits: Splits, *, seed: int) -> None:
        cfg, st = self.cfg, self.state
        d = f"steps/step_{g:04d}"
        t_start = time.monotonic()
        timing: dict[str, float] = {}
        skill = st.current_skill
        buffer_text = self.buffer.render()
        meta_text = st.meta_skill if cfg.optimizer.use_meta_skill else ""
        record: dict[str, Any] = {"step": g, "epoch": epoch, "step_in_epoch": k, "batch_seed": seed}

        t = time.monotonic()
        ro = await self._stage("rollout", g, epoch,
                               lambda: self._run_items(f"{d}/rollout", batch, skill, stage="rollout", train=True),
                               lambda r: {"n": r.n, "n_fail": r.n_fail, "hard": r.hard})
        timing["rollout_s"] = time.monotonic() - t
        record.update(rollout_hard=ro.hard, rollout_soft=ro.soft, rollout_n=ro.n, rollout_env_errors=ro.n_env_errors,
                      accumulation_batches=[{"batch_idx": 0, "batch_seed": seed, "n_envs": ro.n, "hard": ro.hard,
                                             "soft": ro.soft}])

        budget = self._analyst_budget(st.lr_steps + 1)
        t = time.monotonic()
        patches = await self._stage("reflect", g, epoch, lambda: self._reuse(
            f"{d}/patches/reflect.json",
            lambda: reflect(ro.trajectories, skill, self.teacher, mode=self.mode,
                            minibatch_size=cfg.gradient.minibatch_size, workers=cfg.gradient.analyst_workers,
                            seed=seed, budget=budget, max_chars=cfg.gradient.max_edit_chars,
                            failure_only=cfg.gradient.failure_only, buffer_text=buffer_text, meta_text=meta_text,
                            skill_aware=cfg.optimizer.use_skill_aware_reflection,
                            appendix_source=cfg.optimizer.skill_aware_appendix_source, compact=self._compact,
                            sample=epoch - 1),
            lambda s: [RawPatch.from_json(x) for x in s], lambda r: [p.to_json() for p in r]),
            lambda r: {"calls": len(r), "ok": sum(p.ok for p in r), "items": sum(len(p.items) for p in r)})
        if cfg.gradient.use_deep_reflect:  # more patches, from multi-turn probing of a few chosen trajectories
            probes = await self._stage("deep_reflect", g, epoch, lambda: self._reuse(
                f"{d}/patches/deep_reflect.json",
                lambda: deep_reflect(ro.trajectories, skill, self.teacher, mode=self.mode,
                                     n_failures=cfg.gradient.deep_reflect_failures,
                                     n_successes=0 if cfg.gradient.failure_only else cfg.gradient.deep_reflect_successes,
                                     seed=seed, budget=budget, max_chars=cfg.gradient.max_edit_chars,
                                     workers=cfg.gradient.analyst_workers, buffer_text=buffer_text,
                                     meta_text=meta_text, compact=self._compact, sample=epoch - 1),
                lambda s: [Probe.from_json(x) for x in s], lambda r: [p.to_json() for p in r]),
                lambda r: {"probed": len(r), "turns": sum(len(p.turns) for p in r)})
            patches = patches + [p.patch for p in probes if p.patch is not None]
        timing["reflect_s"] = time.monotonic() - t
        self._record_patches(d, g, epoch, patches)
        fail_p = [p.items for p in patches if p.source_type == "failure" and p.items]
        succ_p = [p.items for p in patches if p.source_type == "success" and p.items]
        notes = [n for p in patches for n in p.appendix_notes]
        record.update(n_patches=len(fail_p) + len(succ_p), n_failure_patches=len(fail_p),
                      n_success_patches=len(succ_p))
        analyst_summaries = [{"failure_summary": p.failure_summary} for p in patches if p.source_type == "failure"]
        if not fail_p and not succ_p:
            await self._finish_step(g, epoch, "skip_no_patches", record, ro, analyst_summaries, [], None, notes,
                                    timing, t_start)
            return

        t = time.monotonic()
        merged = await self._stage("aggregate", g, epoch, lambda: self._reuse(
            f"{d}/merged_patch.json",
            lambda: aggregate(fail_p, succ_p, skill, self.teacher, mode=self.mode,
                              merge_batch_size=cfg.gradient.merge_batch_size, merge_mode=cfg.gradient.merge_mode,
                              meta_text=meta_text, max_items=max(16, 2 * cfg.optimizer.learning_rate),
                              max_chars=cfg.gradient.max_edit_chars),
            MergeResult.from_json, lambda r: r.to_json()),
            lambda r: {"items": len(r.items), "fallbacks": len(r.fallbacks)})
        timing["aggregate_s"] = time.monotonic() - t
        for fb in merged.fallbacks:
            self.emit("merge_fallback", step=g, epoch=epoch, **fb)
        record.update(n_edits_merged=len(merged.items),
                      support_counts=[int(i.get("support_count", 1)) for i in merged.items])

        t = time.monotonic()
        sel = await self._stage("select", g, epoch, lambda: self._reuse(
            f"{d}/ranked_edits.json", lambda: self._select(merged.items, skill, ro, buffer_text, meta_text),
            SelectResult.from_json, lambda r: r.to_json()),
            lambda r: {"selected": len(r.selected), "budget": r.budget, "ranked": r.ranked})
        timing["select_s"] = time.monotonic() - t
        if sel.lr_decision is not None:
            self.store.write_json(f"{d}/lr_decision.json", sel.lr_decision)
        if sel.fallback:
            self.emit("ranking_fallback", step=g, epoch=epoch, reason=sel.fallback)
        if self.mode.name != "full_rewrite_minibatch":
            st.lr_steps += 1
        record.update(n_edits_ranked=len(sel.selected), edit_budget=sel.budget,
                      lr_control_mode=cfg.optimizer.lr_control_mode, lr_decision=sel.lr_decision)

        t = time.monotonic()
        upd = await self._stage("update", g, epoch, lambda: self._reuse(
            f"{d}/update_result.json",
            lambda: update(skill, sel.selected, self.teacher, mode=self.mode,
                           lenient_anchors=cfg.optimizer.lenient_anchors, buffer_text=buffer_text,
                           rewrite_max_tokens=cfg.model.rewrite_max_completion_tokens
                           if self.teacher.max_tokens > 4096 else None,
                           rewrite_reasoning_effort=cfg.model.rewrite_reasoning_effort,
                           guard=guard_for([*self._splits.train, *self._splits.val], self.teacher.prompts),
                           allow_checker_text=cfg.evaluation.allow_checker_text),
            UpdateResult.from_json, lambda r: r.to_json()),
            lambda r: {"applied": r.report.get("applied", 0), "candidate": r.candidate is not None})
        timing["update_s"] = time.monotonic() - t
        if upd.report:
            self.store.write_json(f"{d}/edit_apply_report.json", upd.report)
            record["edit_apply_summary"] = {k: upd.report.get(k, 0) for k in ("total", "applied", "skipped", "errors",
                                                                              "refused_checker_text")}
        if upd.rewrite is not None:
            name = "rewrite_result.json" if self.mode.name == "rewrite_from_suggestions" else "full_rewrite_result.json"
            self.store.write_json(f"{d}/{name}", upd.rewrite)
            record["rewrite_change_summary"] = (upd.rewrite.get("parsed") or upd.rewrite).get("change_summary")
        if upd.candidate is None or upd.candidate == skill:
            action = "skip_no_rewrite" if self.mode.name != "patch" else "skip_no_edits"
            await self._finish_step(g, epoch, action, record, ro, analyst_summaries, sel.selected, None, notes,
                                    timing, t_start)
            return
        cand = upd.candidate
        self.store.write_text(f"{d}/candidate_skill.md", cand)
        record.update(candidate_hash=skill_hash(cand), candidate_skill_len=len(cand))

        t = time.monotonic()
        hard, soft, score = await self._stage("gate", g, epoch,
                                              lambda: self._evaluate(f"{d}/selection_eval", cand, splits, stage="gate"))
        timing["evaluate_s"] = time.monotonic() - t
        dec, rule = await apply_gate_rule(self, d, cand, decide(score, st.current_score, st.best_score,
                                                                use_gate=cfg.evaluation.use_gate))
        record.update(selection_hard=hard, selection_soft=soft, gate_metric=cfg.evaluation.gate_metric,
                      candidate_gate_score=score, score_before=st.current_score, gate_rule=rule)
        self.emit("gate", step=g, epoch=epoch, action=dec.action, candidate_score=score, score_before=st.current_score,
                  current_score=dec.current_score, best_score=dec.best_score, selection_hard=hard,
                  selection_soft=soft, decided_by=rule["decided_by"], p_value=rule.get("p_value"),
                  reason=rule.get("reason"))
        if dec.accepted and cfg.evaluation.edit_credit:  # drop the edits that rode along (engine/credit.py)
            cand, score, dec, record["edit_credit"] = await credit_accepted_step(self, d, g, epoch, skill, cand,
                                                                                 score, dec)
        if dec.accepted:
            st.current_skill, st.current_score, st.current_origin = cand, dec.current_score, f"step_{g:04d}"
        if dec.is_new_best:
            st.best_skill, st.best_score, st.best_step, st.best_origin = cand, dec.best_score, g, f"step_{g:04d}"
        await self._finish_step(g, epoch, dec.action, record, ro, analyst_summaries, sel.selected, score, notes,
                                timing, t_start)

    def _analyst_budget(self, select_index: int) -> int:
        """The analysts' per-minibatch cap follows the schedule (SkillOpt uses the unscheduled max)."""
        if self.cfg.compat.skillopt_analyst_budget or self.mode.name == "full_rewrite_minibatch":
            return self.cfg.optimizer.learning_rate
        return max(1, self.schedule.lr_at(select_index))

    async def _select(self, items: list[dict[str, Any]], skill: str, ro: RolloutResult, buffer_text: str,
                      meta_text: str) -> SelectResult:
        opt = self.cfg.optimizer
        if self.mode.name == "full_rewrite_minibatch":
            return await select(items, skill, self.teacher, mode=self.mode, budget=None)
        decision = None
        if opt.lr_control_mode == "autonomous":
            decision = await decide_autonomous_budget(items, skill, self.teacher, rollout_n=ro.n,
                                                      rollout_hard=ro.hard, rollout_soft=ro.soft,
                                                      buffer_text=buffer_text, meta_text=meta_text)
            budget = int(decision["learning_rate"])
        else:
            budget = self.schedule.lr_at(self.state.lr_steps + 1)
        return await select(items, skill, self.teacher, mode=self.mode, budget=budget, meta_text=meta_text,
                            buffer_text=buffer_text, lr_decision=decision)

    def _record_patches(self, d: str, g: int, epoch: int, patches: list[RawPatch]) -> None:
        counters: dict[str, int] = {}
        for p in patches:  # minibatch_fail_000.json ..., deep_fail_000.json ... (deep reflect's patches)
            kind = ("deep_" if p.origin == "deep" else "minibatch_") + ("fail" if p.source_type == "failure" else "succ")
            counters[kind] = counters.get(kind, -1) + 1
            file = f"{d}/patches/{kind}_{counters[kind]:03d}.json"
            self.store.write_json(file, p.to_json())
            if not p.ok:
                self.emit("teacher_output_rejected", stage="reflect", step=g, epoch=epoch,
                          reason=p.reply.get("error"), file=file)

    async def _finish_step(self, g: int, epoch: int, action: str, record: dict[str, Any], ro: RolloutResult,
                           analyst_summaries: list[dict[str, Any]], selected: list[dict[str, Any]],
                           cand_score: float | None, notes: list[str], timing: dict[str, float],
                           t_start: float) -> None:
        st = self.state
        d = f"steps/step_{g:04d}"
        patterns = failure_patterns([(t.item_id, t.fail_reason or "failed") for t in ro.trajectories if t.failed],
                                    analyst_summaries)
        entry = BufferEntry(step=g, epoch=epoch, action=action, n_total=ro.n, n_fail=ro.n_fail,
                            failure_patterns=patterns)
        if "reject" in action:
            entry.rejected_edits = [summarize_edit(i) for i in selected]
            entry.score_before, entry.score_after = record.get("score_before"), cand_score
        self.buffer.add(entry)
        self.store.write_json(f"{d}/trajectory_digest.json", entry.model_dump(mode="json"))
        if notes and self.cfg.optimizer.use_skill_aware_reflection:
            await self._flush_appendix(d, record, notes)
        if action.startswith("skip"):
            self.emit("step_skipped", step=g, epoch=epoch, action=action)
        record.update(action=action, current_score=st.current_score, best_score=st.best_score,
                      best_step=st.best_step, current_origin=st.current_origin, best_origin=st.best_origin,
                      skill_len=len(st.current_skill), timing={k: round(v, 3) for k, v in timing.items()},
                      wall_time_s=round(time.monotonic() - t_start, 3))
        self.history = [h for h in self.history if h.get("step") != g] + [record]
        self.store.write_json(f"{d}/step_record.json", record)
        self.store.write_json("history.json", self.history)
        self.store.save_skill_version(g, st.current_skill)
        self.store.write_text("best_skill.md", st.best_skill)
        st.last_completed_step = g
        self._save_state()

    async def _flush_appendix(self, d: str, record: dict[str, Any], notes: list[str]) -> None:
        """Skill-aware reflection: execution-lapse notes go into the APPENDIX of current (unvalidated)."""
        st = self.state
        before = st.current_skill
        st.current_skill, added = add_appendix_notes(st.current_skill, notes)
        all_notes = appendix_notes(st.current_skill)
        consolidated = 0
        thr = self.cfg.optimizer.skill_aware_consolidate_threshold
        if thr and len(all_notes) > thr:
            reply = await self.teacher.ask("appendix_consolidate", AppendixConsolidation, stage="appendix",
                                           values={"notes": "\n".join(f"- {n}" for n in all_notes)})
            if reply.parsed is not None:
                new = [n for n in reply.parsed.appendix_notes if n.strip()]  # type: ignore[attr-defined]
                if new and len(new) < len(all_notes):
                    st.current_skill = replace_appendix_notes(st.current_skill, new)
                    consolidated = len(all_notes) - len(new)
        if st.current_skill != before:  # a different skill: its own score, never the old one's
            hard, soft, st.current_score = await self._evaluate(f"{d}/appendix_eval", st.current_skill,
                                                                self._splits, stage="appendix")
            self.emit("gate", step=record["step"], epoch=record["epoch"], action="rescore", stage="appendix",
                      candidate_score=st.current_score, current_score=st.current_score,
                      best_score=st.best_score, selection_hard=hard, selection_soft=soft)
            record.update(appendix_rescore={"selection_hard": hard, "selection_soft": soft,
                                            "gate_score": st.current_score})
        self.store.write_json(f"{d}/appendix_notes.json", {"proposed": notes, "added": added,
                                                            "consolidated": consolidated})
        record.update(n_execution_lapse_notes=len(notes), n_appendix_notes_added=len(added),
                      n_appendix_notes_total=len(appendix_notes(st.current_skill)),
                      n_appendix_notes_consolidated=consolidated)

    # ------------------------------------------------------------------ epoch end
    async def _epoch_end(self, epoch: int, splits: Splits) -> None:
        opt, st = self.cfg.optimizer, self.state
        if opt.use_meta_reflect:  # review the epoch's steps; a gated higher-level edit of the skill
            await run_meta_reflect(self, epoch, splits)
        epoch_last_skill = st.current_skill
        prev_skill = st.epoch_end_skills.get(str(epoch - 1))
        pairs: list[Pair] | None = None
        if opt.use_slow_update:
            pairs = await self._slow_update(epoch, splits, prev_skill)
        if opt.use_meta_skill:
            await self._meta_skill(epoch, splits, prev_skill, epoch_last_skill, pairs)
        st.epoch_end_skills[str(epoch)] = st.current_skill
        st.epochs_done.append(epoch)
        self.store.save_skill_version(st.last_completed_step, st.current_skill)
        self.store.write_text("best_skill.md", st.best_skill)
        self._save_state()

    async def _pairs(self, epoch: int, splits: Splits, prev_skill: str, curr_skill: str, kind: str) -> list[Pair]:
        opt = self.cfg.optimizer
        base = f"{kind}/epoch_{epoch:02d}"
        pool = list(splits.train)
        random.Random(self.cfg.train.seed + epoch * 2000).shuffle(pool)
        n = min(opt.slow_update_samples, len(pool))
        items = pool[:n]
        prev = await self._run_items(f"{base}/rollout_prev", items, prev_skill, stage=kind, train=False)
        curr = await self._run_items(f"{base}/rollout_curr", items, curr_skill, stage=kind, train=False)
        pairs = make_pairs(prev.trajectories, curr.trajectories)
        if opt.longitudinal_pair_policy == "changed":
            rest = pool[n:]
            while len(filter_pairs(pairs, "changed")) < opt.slow_update_samples and rest:
                need = opt.slow_update_samples - len(filter_pairs(pairs, "changed"))
                chunk, rest = rest[:need], rest[need:]
                p2 = await self._run_items(f"{base}/topup_prev", chunk, prev_skill, stage=kind, train=False)
                c2 = await self._run_items(f"{base}/topup_curr", chunk, curr_skill, stage=kind, train=False)
                pairs += make_pairs(p2.trajectories, c2.trajectories)
        kept = filter_pairs(pairs, opt.longitudinal_pair_policy)
        self.store.write_json(f"{base}/comparison_pairs.json", [p.to_json() for p in kept])
        if len(kept) != len(pairs):
            self.store.write_json(f"{base}/comparison_pairs_all.json", [p.to_json() for p in pairs])
        return kept

    async def _slow_update(self, epoch: int, splits: Splits, prev_skill: str | None) -> list[Pair] | None:
        st, opt = self.state, self.cfg.optimizer
        base = f"slow_update/epoch_{epoch:02d}"
        if prev_skill is None:  # epoch 1: an empty placeholder block, re-scored (never a made-up score)
            result = self.store.read_json(f"{base}/slow_result.json") or {"action": "placeholder",
                                                                          "slow_update_content": ""}
            self.store.write_json(f"{base}/slow_result.json", result)
            st.current_skill = set_region(st.current_skill, "SLOW_UPDATE", "")
            st.current_origin = f"slow_update_placeholder_epoch_{epoch:02d}"
            await self._rescore_current(f"{base}/selection_eval", splits)
            return None

        async def compute() -> dict[str, Any]:
            pairs = await self._pairs(epoch, splits, prev_skill, st.current_skill, "slow_update")
            text = await slow_update_guidance(self.teacher, pairs, prev_skill, st.current_skill,
                                              get_region(st.current_skill, "SLOW_UPDATE") or "",
                                              max_chars=max(self.cfg.gradient.max_edit_chars * 3, 600))
            return {"slow_update_content": text.content, "counts": text.counts, "reply": text.reply,
                    "pairs": [p.to_json() for p in pairs]}

        result = await self.ctx.checkpointed("slow_update", st.last_completed_step, epoch, f"{base}/slow_result.json",
                                             compute, lambda d: d, lambda d: d)
        pairs = [Pair.from_json(p) for p in result.get("pairs", [])]
        content = result.get("slow_update_content")
        if not content:
            self.emit("slow_update", epoch=epoch, action="no_content")
            return pairs
        junk = junk_text(content)  # `"..."` or a bare timestamp must not be force-accepted into the skill
        if junk:
            self.emit("slow_update", epoch=epoch, action="refused_junk", reason=junk)
            self.store.write_json(f"{base}/slow_action.json", {"action": "refused_junk", "reason": junk})
            return pairs
        cand = set_region(st.current_skill, "SLOW_UPDATE", content)
        self.store.write_text(f"{base}/candidate_skill.md", cand)
        hard, soft, score = await self._evaluate(f"{base}/selection_eval", cand, splits, stage="slow_update")
        if opt.slow_update_gate_with_selection:
            dec = decide(score, st.current_score, st.best_score, use_gate=True)
            action = dec.action
            if dec.accepted:
                st.current_skill, st.current_score = cand, dec.current_score
                st.current_origin = f"slow_update_epoch_{epoch:02d}"
            if dec.is_new_best:
                st.best_skill, st.best_score, st.best_origin = cand, dec.best_score, f"slow_update_epoch_{epoch:02d}"
                st.best_step = st.last_completed_step
        else:  # force-accepted into current, with its real score
            action = "force_accept"
            st.current_skill, st.current_score = cand, score
            st.current_origin = f"slow_update_epoch_{epoch:02d}"
        self.emit("gate", step=st.last_completed_step, epoch=epoch, action=action, stage="slow_update",
                  candidate_score=score, current_score=st.current_score, best_score=st.best_score,
                  selection_hard=hard, selection_soft=soft)
        self.store.write_json(f"{base}/slow_action.json", {"action": action, "selection_hard": hard,
                                                           "selection_soft": soft, "gate_score": score,
                                                           "candidate_hash": skill_hash(cand)})
        return pairs

    async def _rescore_current(self, rel: str, splits: Splits) -> None:
        _, _, score = await self._evaluate(rel, self.state.current_skill, splits, stage="slow_update")
        self.state.current_score = score

    async def _meta_skill(self, epoch: int, splits: Splits, prev_skill: str | None, epoch_last_skill: str,
                          pairs: list[Pair] | None) -> None:
        base = f"meta_skill/epoch_{epoch:02d}"
        if prev_skill is None:
            self.store.write_json(f"{base}/meta_skill_result.json", {"action": "skip_first_epoch"})
            return

        async def compute() -> dict[str, Any]:
            ps = pairs if pairs is not None else await self._pairs(epoch, splits, prev_skill, epoch_last_skill,
                                                                   "meta_skill")
            text = await meta_skill_memory(self.teacher, ps, prev_skill, epoch_last_skill, self.state.meta_skill,
                                           max_chars=max(self.cfg.gradient.max_edit_chars * 3, 600))
            return {"action": "updated" if text.content else "no_content", "meta_skill_content": text.content,
                    "reply": text.reply}

        result = await self._stage("meta_skill", self.state.last_completed_step, epoch,
                                   lambda: self._reuse(f"{base}/meta_skill_result.json", compute, lambda d: d,
                                                       lambda d: d))
        if result.get("meta_skill_content"):
            self.state.meta_skill = result["meta_skill_content"]

    # ------------------------------------------------------------------ run end
    async def _finish(self, splits: Splits) -> dict[str, Any]:
        st, ev = self.state, self.cfg.evaluation
        if not st.finished:
            if skill_hash(st.current_skill) != skill_hash(st.best_skill):
                hard, soft, score = await self._stage(
                    "final_validation", st.last_completed_step, 0,
                    lambda: self._evaluate("final_selection_eval", st.current_skill, splits, stage="final_validation"))
                promoted = score > st.best_score
                if promoted:
                    st.best_skill, st.best_score = st.current_skill, score
                    st.best_origin = st.current_origin
                self.emit("final_promotion", promoted=promoted, final_score=score, best_score=st.best_score)
            if self.cfg.evaluation.edit_credit:  # every line of best_skill.md must earn its place
                self.state.final_edit_credit = await credit_best(self)
            self.store.write_text("best_skill.md", st.best_skill)
            st.finished = True
            self._save_state()
        tests: dict[str, Any] = {}
        per_item: dict[str, dict[str, float]] = {}
        replies: dict[str, list[Trajectory]] = {}
        if ev.eval_test and splits.test:
            test = open_test(splits)  # the only read of the sealed test split
            items = test[: ev.test_env_num] if ev.test_env_num else test
            runs = [("initial", "test_eval_baseline", st.initial_skill), ("best", "test_eval", st.best_skill),
                    ("final", "test_eval_final", st.current_skill)]
            seen: dict[str, dict[str, Any]] = {}
            for name, rel, skill in runs:
                h = skill_hash(skill)
                if h in seen:
                    tests[name] = seen[h]
                else:
                    res = await self._test_run(rel, items, skill, f"test_{name}")
                    per_item[h] = {t.item_id: t.hard for t in res.trajectories}
                    replies[h] = res.trajectories
                    tests[name] = seen[h] = {"hard": res.hard, "soft": res.soft, "n": res.n,
                                             "n_env_errors": res.n_env_errors, "by_task_type": res.by_task_type()}
                    self.store.write_json(f"{rel}/summary.json", tests[name])
                self.emit("eval", split="test", skill=name, hard=tests[name]["hard"], soft=tests[name]["soft"],
                          n=tests[name]["n"])
                per_item[name] = per_item.get(h, {})
        self._test_intervals = final_test_intervals({k: v for k, v in per_item.items() if k in tests})
        self._sample_replies = sample_replies(replies.get(skill_hash(st.initial_skill), []),
                                              replies.get(skill_hash(st.best_skill), []))
        self._save_state()
        return self._write_summary(splits, status="completed", tests=tests)

    async def _test_run(self, rel: str, items: list[Item], skill: str, stage: str) -> RolloutResult:
        return await self._stage(stage, self.state.last_completed_step, 0,
                                 lambda: self._run_items(rel, items, skill, stage=stage, train=False))

    def _write_summary(self, splits: Splits, *, status: str, stopped: str | None = None, reason: str = "",
                       tests: dict[str, Any] | None = None) -> dict[str, Any]:
        summary = build_summary(
            self.state, self.history, tests or {}, status=status, stopped=stopped, reason=reason,
            run={"env": self.cfg.env.name, "teacher": self.models.teacher.name, "student": self.models.student.name,
                 "gate_metric": self.cfg.evaluation.gate_metric, "planned_steps": getattr(self, "total_steps", None),
                 "total_wall_time_s": self._elapsed(), "token_summary": self.models.meter.summary(),
                 "cache": self.models.cache.stats() if self.models.cache is not None else None,
                 "gate_test": self.cfg.evaluation.gate_test, "test_intervals": getattr(self, "_test_intervals", None),
                 "sample_replies": getattr(self, "_sample_replies", None),
                 "sealed_test": sealed_statement(splits, scored=bool(tests)),
                 "final_edit_credit": self.state.final_edit_credit},
        )
        self.store.write_json("summary.json", summary)
        return summary
