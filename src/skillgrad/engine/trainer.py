"""The training loop: rollout -> reflect -> aggregate -> select -> update -> gate, per step; epoch-end slow
update and meta skill; run-end promotion and test scoring.

Stages are functions that return values; this class sequences them, hands their results to the run
store, and checkpoints after every stage so that a killed run continues from the last completed stage
(and replays finished LLM calls from the cache).
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from skillgrad import __version__
from skillgrad.config.schema import Config
from skillgrad.core.events import EventSink
from skillgrad.core.gather import gather_all, gather_pair
from skillgrad.engine.appendix import flush_appendix
from skillgrad.engine.budget_plan import (
    PLAN_FILE,
    BudgetPlan,
    affordable,
    plan_start,
    step_calls,
    step_items,
    total,
)
from skillgrad.engine.buffer import BufferEntry, StepBuffer, failure_patterns, summarize_edit
from skillgrad.engine.candidate import Verdict, adopt, judge_candidate
from skillgrad.engine.context import RunContext
from skillgrad.engine.credit import credit_accepted_step, credit_best
from skillgrad.engine.epoch import Pair
from skillgrad.engine.epoch_end import meta_skill_stage, slow_update_stage
from skillgrad.engine.gate_tiebreak import pass_rate, train_tiebreak
from skillgrad.engine.meta_reflect import run_meta_reflect
from skillgrad.engine.modes import MODES
from skillgrad.engine.prompts import PromptLibrary, search_dirs
from skillgrad.engine.refusals import candidate_replies, gate_reason, refused_edits
from skillgrad.engine.run_end import score_test_split
from skillgrad.engine.schedule import EditBudgetSchedule, plan_epoch
from skillgrad.engine.sealed import seal_test, sealed_statement
from skillgrad.engine.stages.reflect import RawPatch
from skillgrad.engine.stages.rollout import RolloutResult
from skillgrad.engine.step_demonstrate import demo_counts, demonstrate_stage
from skillgrad.engine.step_stages import (
    StepInput,
    aggregate_stage,
    deep_reflect_stage,
    record_patches,
    reflect_stage,
    rollout_stage,
    select_stage,
    update_stage,
)
from skillgrad.engine.student_probe import PROBE_FILE, StudentForm, load_or_probe
from skillgrad.engine.summary import build_summary
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import Environment, Item, Splits
from skillgrad.envs.splits import check_split_sizes
from skillgrad.errors import AnswersNeeded, BudgetExceeded, EnvironmentFailure, SkillgradError
from skillgrad.exec.base import Executor
from skillgrad.models.factory import Models
from skillgrad.runs.store import RunStore
from skillgrad.skill import (
    ensure_appendix,
    skill_hash,
)


class Trainer:
    def __init__(
        self, cfg: Config, env: Environment, models: Models, store: RunStore, emit: EventSink,
        *, teacher_max_tokens: int = 1024, teacher_temperature: float = 0.0, executor: Executor | None = None,
    ) -> None:
        self.cfg, self.env, self.models, self.store, self.emit = cfg, env, models, store, emit
        self.mode = MODES[cfg.optimizer.skill_update_mode]
        self.prompts = PromptLibrary(search_dirs(cfg.prompts.dir, list(env.prompt_dirs()),
                                                 use_env_prompts=cfg.prompts.use_env_prompts))
        self.student_form = StudentForm()  # which form the student follows (engine/student_probe.py)
        self.budget_plan = BudgetPlan()  # the start-up and steps sized to a small budget (engine/budget_plan.py)
        self._step_estimate = self._step_extra = 0  # the running step's estimated calls; calls past the estimate
        self.teacher = TeacherCall(models.teacher, self.prompts, max_tokens=teacher_max_tokens,
                                   temperature=teacher_temperature, max_prompt_tokens=cfg.gradient.max_prompt_tokens)
        # what stages and extensions may use of the run (engine/context.py); state, buffer, history live there
        self.ctx = RunContext(cfg, env, models, store, emit, self.teacher, executor,
                              buffer=StepBuffer(cfg.optimizer.buffer_scope))
        self._compact = int(getattr(models.teacher, "context_window", 8192)) <= 4096

    state = property(lambda self: self.ctx.state, lambda self, v: setattr(self.ctx, "state", v))
    buffer = property(lambda self: self.ctx.buffer, lambda self, v: setattr(self.ctx, "buffer", v))
    history = property(lambda self: self.ctx.history, lambda self, v: setattr(self.ctx, "history", v))

    # ------------------------------------------------------------------ run
    async def run(self) -> dict[str, Any]:
        # data problems stop here, before any model call; test items stay sealed until the run-end test stage
        ev = self.cfg.evaluation
        splits = seal_test(check_split_sizes(self.env.load_splits(), min_val=ev.min_val_items, eval_test=ev.eval_test,
                                             split_ratio=self.cfg.env.split_ratio), ev.sealed_test)
        self.ctx.splits = splits
        check = getattr(self.env, "check_student", None)
        if check is not None:
            check(self.models.student)
        self._load_or_init_state(splits)
        self.emit("run_start", version=__version__, env=self.cfg.env.name, teacher=self.models.teacher.name,
                  student=self.models.student.name, resumed=self.state.last_completed_step > 0 or self.state.baseline_done,
                  n_train=len(splits.train), n_val=len(splits.val), n_test=len(splits.test),
                  total_steps=self.cfg.train.num_epochs * self._step_plan(splits)[2], **_thread_fields(self.models))
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
        except (asyncio.CancelledError, KeyboardInterrupt):  # Ctrl-C or SIGTERM: resumable, and not "incomplete"
            self.emit("run_end", status="stopped", stopped="interrupted", seconds=self._elapsed())
            raise
        self.emit("run_end", status="completed", seconds=self._elapsed())
        return summary

    def _step_plan(self, splits: Splits) -> tuple[int, int, int]:
        """(items per step, train items used, steps per epoch)."""
        per_step = self.cfg.train.batch_size * self.cfg.train.accumulation
        train_size = self.cfg.train.train_size or len(splits.train)
        return per_step, train_size, max(1, math.ceil(train_size / per_step))

    async def _train(self, splits: Splits) -> None:
        cfg = self.cfg
        per_step, train_size, steps_per_epoch = self._step_plan(splits)
        total = cfg.train.num_epochs * steps_per_epoch
        self.schedule = EditBudgetSchedule(cfg.optimizer.lr_scheduler, cfg.optimizer.learning_rate,
                                           cfg.optimizer.min_learning_rate, total)
        self.total_steps = total
        self.early_stop: dict[str, Any] | None = None
        self.budget_plan = self._plan_budget(splits, min(per_step, train_size))
        self.student_form = await load_or_probe(self.store, self.emit, self.models.student, self.state.initial_skill,
                                                [str(i.inputs.get("question", "")) for i in splits.train[:3]],
                                                cfg.optimizer.student_probe, n_questions=self.budget_plan.probe_questions,
                                                skipped_why=self.budget_plan.reason)
        if not self.state.baseline_done:
            await self._baseline(splits)
        for epoch in range(1, cfg.train.num_epochs + 1):
            # an epoch with a step done finishes (its epoch-end stages run, also on resume); a later one never starts
            if self.state.last_completed_step <= (epoch - 1) * steps_per_epoch and self._at_ceiling(epoch):
                break
            if epoch > self.buffer.epoch:  # not again for an epoch a resumed run is already in
                self.buffer.start_epoch(epoch)
            batches = plan_epoch(splits.train[:train_size], cfg.train.seed + epoch * 1000, per_step, steps_per_epoch)
            for k, batch in enumerate(batches, start=1):
                g = (epoch - 1) * steps_per_epoch + k
                if g <= self.state.last_completed_step:
                    continue
                if self._at_ceiling(epoch):
                    break
                calls = self.models.budget.calls
                await self._step(g, epoch, k, self._size_step(g, batch), splits, seed=cfg.train.seed + epoch * 1000 + k)
                self._step_extra = max(0, self.models.budget.calls - calls - self._step_estimate)
            if epoch not in self.state.epochs_done:
                await self._epoch_end(epoch, splits)

    def _plan_budget(self, splits: Splits, n_batch: int) -> BudgetPlan:
        """The start-up sized to a small budget (engine/budget_plan.py), saved so that a resumed run keeps it."""
        saved = self.store.read_json(PLAN_FILE)
        plan = BudgetPlan.from_json(saved) if saved is not None else plan_start(
            self.cfg, self.models.budget, n_batch=n_batch, n_val=len(self.ctx.val_items()), n_train=len(splits.train),
            baseline_done=self.state.baseline_done,
            probe_on=self.cfg.optimizer.student_probe != "off" and self.store.read_json(PROBE_FILE) is None)
        if saved is None and plan.limited:
            self.store.write_json(PLAN_FILE, plan.to_json())
            if plan.reason:
                self.emit("budget_plan", **plan.to_json())
        if plan.n_val is not None:
            splits.val = splits.val[:plan.n_val]
        return plan

    def _size_step(self, g: int, batch: list[Item]) -> list[Item]:
        """The step's batch cut to what the budget has left; a step that cannot finish is not started."""
        plan, n_val = self.budget_plan, len(self.ctx.val_items())
        n, why = plan.step_items.get(str(g), len(batch)), ""
        if str(g) not in plan.step_items and not self.store.exists(f"steps/step_{g:04d}"):  # a started step stays whole
            n, why = step_items(self.cfg, self.models.budget, n_batch=len(batch), n_val=n_val, extra=self._step_extra)
        self._step_estimate = total(step_calls(self.cfg, n, n_val))
        if n == 0:
            lim = self.cfg.budget
            kind = "calls" if lim.max_calls else "tokens" if lim.max_tokens else "usd"
            raise BudgetExceeded(f"budget.max_{kind}: step {g} not started, {why}; raise it or resume later",
                                 kind=kind)
        if n < len(batch):
            plan.step_items[str(g)] = n
            self.store.write_json(PLAN_FILE, plan.to_json())
            self.emit("budget_step", step=g, items=n, of=len(batch), reason=why)
        return batch[:n]

    def _at_ceiling(self, epoch: int) -> bool:
        """The best skill scores full marks on every selection item (`train.stop_at_ceiling`): the strict gate
        can accept no better one, so the remaining steps could only spend calls. With `train.tiebreak` a tie
        is decided on training tasks, so the best skill must also pass every one it was run on. Never the test split."""
        ev, st = self.cfg.evaluation, self.state
        if not self.cfg.train.stop_at_ceiling or ev.use_semantic_density or st.best_score < 1.0 - 1e-9:
            return False
        # a tie at 1.0 is still decided on training tasks (against the current skill, which a slow update may have
        # replaced): not over while neither skill is known to pass every one
        if self.cfg.train.tiebreak and max(st.train_hard.get(skill_hash(x), 0.0)
                                                   for x in (st.best_skill, st.current_skill)) < 1.0 - 1e-9:
            return False
        if self.early_stop is None:
            self.early_stop = {"epoch": epoch, "after_step": st.last_completed_step,
                               "best_score": st.best_score, "reason": "the best skill scores 1.0 on every "
                               "selection item" + (" and passes every training task it was last run on"
                                                   if self.cfg.train.tiebreak else "")
                               + "; no candidate can pass the strict gate"}
            self.emit("early_stop", **self.early_stop)
        return True

    # ------------------------------------------------------------------ state (kept in the run context)
    def _load_or_init_state(self, splits: Splits) -> None:
        if not self.ctx.load_state():
            initial = self._initial_skill()
            if self.cfg.optimizer.use_skill_aware_reflection:
                initial = ensure_appendix(initial)
            self.ctx.init_state(initial)

    def _initial_skill(self) -> str:
        return self.env.initial_skill()

    def _elapsed(self) -> float:
        return self.ctx.elapsed()

    def _save_state(self) -> None:
        self.ctx.save_state()

    # ------------------------------------------------------------------ baseline
    async def _baseline(self, splits: Splits) -> None:
        skill = self.state.current_skill
        scored = await self.ctx.stage(
            "baseline", 0, 0, lambda: self.ctx.evaluate("selection_eval_baseline", skill, stage="baseline"))
        hard, soft, score = scored.hard, scored.soft, scored.score
        self.state.current_score = self.state.best_score = score
        self.state.baseline_score, self.state.baseline_hard, self.state.baseline_soft = score, hard, soft
        self.state.baseline_done = True
        self.emit("gate", step=0, epoch=0, action="baseline", candidate_score=score, current_score=score,
                  best_score=score, selection_hard=hard, selection_soft=soft)
        self._save_state()

    # ------------------------------------------------------------------ one step
    async def _step(self, g: int, epoch: int, k: int, batch: list[Item], splits: Splits, *, seed: int) -> None:
        cfg, st, ctx = self.cfg, self.state, self.ctx
        t_start, ctx.timing = time.monotonic(), {}
        meta = "\n\n".join(x for x in (self.student_form.guidance(),
                                        st.meta_skill if cfg.optimizer.use_meta_skill else "") if x)
        s = StepInput(g, epoch, seed, st.current_skill, self.buffer.render(), meta, self.mode, self._compact)
        record: dict[str, Any] = {"step": g, "epoch": epoch, "step_in_epoch": k, "batch_seed": seed}

        ro = await rollout_stage(ctx, s, batch)
        # for the ceiling stop (gate_tiebreak.py); a batch made only of the skill's own example tasks leaves a tie
        # nothing to be decided on, like a batch it passes in full
        rate = pass_rate(ro.trajectories, s.skill)
        st.train_hard[skill_hash(s.skill)] = 1.0 if rate is None else rate
        record.update(rollout_hard=ro.hard, rollout_soft=ro.soft, rollout_n=ro.n, rollout_env_errors=ro.n_env_errors,
                      accumulation_batches=[{"batch_idx": 0, "batch_seed": seed, "n_envs": ro.n, "hard": ro.hard,
                                             "soft": ro.soft}])
        if self._at_ceiling(epoch):  # the rollout showed the skill passing every training task too: done
            return await self._finish_step(g, epoch, "skip_at_ceiling", record, ro, [], [], None, [], t_start)
        budget = self._analyst_budget(st.lr_steps + 1)
        demo_call = demonstrate_stage(ctx, s, ro, batch, self.student_form)  # verified worked examples
        patches: list[RawPatch] = []
        if not self._follows_examples():  # reflect is never skipped: it reads the same rollouts beside demonstrate
            demos, patches = await gather_pair(demo_call, self._analysts(ctx, s, ro, budget))  # (one handoff round)
        elif self._examples_fill_budget((demos := await demo_call).items):
            record["reflect_skipped"] = "verified examples for a student measured to follow them and ignore rules"
        else:
            patches = await self._analysts(ctx, s, ro, budget)
        record_patches(ctx, s, patches)
        fail_p = [p.items for p in patches if p.source_type == "failure" and p.items]
        succ_p = [p.items for p in patches if p.source_type == "success" and p.items]
        notes = [n for p in patches for n in p.appendix_notes]
        record.update(n_patches=len(fail_p) + len(succ_p), n_failure_patches=len(fail_p),
                      n_success_patches=len(succ_p))
        summaries = [{"failure_summary": p.failure_summary} for p in patches if p.source_type == "failure"]
        if not fail_p and not succ_p and not demos.items:
            return await self._finish_step(g, epoch, "skip_no_patches", record, ro, summaries, [], None, notes, t_start)

        merged = await aggregate_stage(ctx, s, fail_p, succ_p)  # no patches (demonstrations only): no teacher call
        for fb in merged.fallbacks:
            self.emit("merge_fallback", step=g, epoch=epoch, **fb)
        record.update(n_edits_merged=len(merged.items),
                      support_counts=[int(i.get("support_count", 1)) for i in merged.items])

        sel = await select_stage(ctx, s, merged.items + demos.items, ro, self.schedule)
        if sel.lr_decision is not None:
            self.store.write_json(f"{s.d}/lr_decision.json", sel.lr_decision)
        if sel.fallback:
            self.emit("ranking_fallback", step=g, epoch=epoch, reason=sel.fallback)
        if self.mode.counts_lr_step:
            st.lr_steps += 1
        record.update(n_edits_ranked=len(sel.selected), edit_budget=sel.budget,
                      lr_control_mode=cfg.optimizer.lr_control_mode, lr_decision=sel.lr_decision)

        upd = await update_stage(ctx, s, sel.selected)
        record.update(demo_counts(demos, upd.report))
        if upd.report:
            self.store.write_json(f"{s.d}/edit_apply_report.json", upd.report)
            record["edit_apply_summary"] = {k: upd.report.get(k, 0) for k in ("total", "applied", "skipped", "errors",
                                                                              "refused_checker_text")}
        if upd.rewrite is not None and self.mode.rewrite_file:
            self.store.write_json(f"{s.d}/{self.mode.rewrite_file}", upd.rewrite)
            record["rewrite_change_summary"] = (upd.rewrite.get("parsed") or upd.rewrite).get("change_summary")
        if upd.candidate is None or upd.candidate == s.skill:
            return await self._finish_step(g, epoch, self.mode.skip_action, record, ro, summaries, sel.selected,
                                           None, notes, t_start)
        self.store.write_text(f"{s.d}/candidate_skill.md", upd.candidate)
        record.update(candidate_hash=skill_hash(upd.candidate), candidate_skill_len=len(upd.candidate))

        v = await self._gate(s, upd.candidate, record, ro, batch)
        await self._finish_step(g, epoch, v.action, record, ro, summaries, sel.selected,
                                None if v.upper_bound else v.score, notes, t_start)

    async def _gate(self, s: StepInput, cand: str, record: dict[str, Any], ro: RolloutResult,
                    batch: list[Item]) -> Verdict:
        """The step's candidate through the candidate pipeline; accepted edits then earn their place (credit)."""
        ctx, origin = self.ctx, f"step_{s.g:04d}"

        async def tiebreak(incumbent: str, candidate: str) -> tuple[bool, dict[str, Any]]:
            passed, rule = await train_tiebreak(ctx, s.d, incumbent, candidate, ro.trajectories, batch)
            if "candidate_train_hard" in rule:
                self.state.train_hard[skill_hash(candidate)] = rule["candidate_train_hard"]
            return passed, rule

        v = await ctx.stage("gate", s.g, s.epoch, lambda: judge_candidate(
            ctx, cand, origin, folder=s.d, stage="gate", step=s.g, epoch=s.epoch, apply=False,
            tiebreak=tiebreak if self.cfg.train.tiebreak else None))
        sj = v.scores_json()  # an early stop (engine/gate_early.py) keeps upper bounds beside None scores
        record.update(selection_hard=sj.pop("selection_hard"), selection_soft=sj.pop("selection_soft"),
                      gate_metric=self.cfg.evaluation.gate_metric, candidate_gate_score=sj.pop("gate_score"),
                      **{("candidate_gate_score_upper_bound" if k == "gate_score_upper_bound" else k): x
                         for k, x in sj.items()},
                      score_before=v.score_before, gate_rule=v.rule, origin=origin)
        if v.accepted and self.cfg.evaluation.edit_credit:  # drop the edits that rode along (engine/credit.py)
            if self._credit_affordable(record):
                cand, v, record["edit_credit"] = await credit_accepted_step(ctx, s.d, s.g, s.epoch, s.skill, cand, v)
            else:  # a stop inside credit would lose the accepted step itself
                record["edit_credit"] = {"skipped": "the budget left cannot pay one validation pass per edit"}
        adopt(ctx, v, cand, s.g)
        return v

    def _credit_affordable(self, record: dict[str, Any]) -> bool:
        units = max(1, int(record.get("n_edits_ranked") or 1))
        return affordable(self.models.budget) >= (units + 1) * len(self.ctx.val_items())

    @staticmethod
    async def _analysts(ctx: RunContext, s: StepInput, ro: RolloutResult, budget: int) -> list[RawPatch]:
        """Reflect's and deep reflect's patches; the two read the same rollouts, so they run side by side."""
        shallow, deep = await gather_all(reflect_stage(ctx, s, ro, budget), deep_reflect_stage(ctx, s, ro, budget))
        return shallow + deep

    def _follows_examples(self) -> bool:
        """The probe measured a student that copies worked examples and ignores stated rules (student_probe.py), and
        `optimizer.example_shortcuts` lets that save the rule-writing calls."""
        sc = self.student_form.scores
        return self.cfg.optimizer.example_shortcuts and self.student_form.probed and self.student_form.prefers == "example" and sc.get("rule", 0.0) == 0.0 \
            and max(sc.get("example_text", 0.0), sc.get("example_turns", 0.0)) > 0.0

    def _examples_fill_budget(self, demos: list[dict[str, Any]]) -> bool:
        """The probe measured a student that follows examples, not rules, and this step verified at least one
        example (select puts them first): the analysts' calls (the slowest of a step on a small teacher) are not
        made. Their rules would only fill slots the examples leave free, for a student that ignores rules; in the
        suite (review-sections) such a slot took "The original code is: ..." from a 135M analyst, and the step's
        reflection, merge and ranking cost 160 s of its 250."""
        opt = self.cfg.optimizer
        if not self._follows_examples() or not self.mode.edit_budget \
                or opt.lr_control_mode == "autonomous":
            return False
        return bool(demos)

    def _analyst_budget(self, select_index: int) -> int:
        """The analysts' per-minibatch cap follows the schedule (SkillOpt uses the unscheduled max)."""
        if self.cfg.compat.skillopt_analyst_budget or not self.mode.edit_budget:
            return self.cfg.optimizer.learning_rate
        return max(1, self.schedule.lr_at(select_index))

    async def _finish_step(self, g: int, epoch: int, action: str, record: dict[str, Any], ro: RolloutResult,
                           analyst_summaries: list[dict[str, Any]], selected: list[dict[str, Any]],
                           cand_score: float | None, notes: list[str], t_start: float) -> None:
        st = self.state
        d = f"steps/step_{g:04d}"
        patterns = failure_patterns([(t.item_id, t.fail_reason or "failed") for t in ro.trajectories if t.failed],
                                    analyst_summaries)
        entry = BufferEntry(step=g, epoch=epoch, action=action, n_total=ro.n, n_fail=ro.n_fail,
                            failure_patterns=patterns)
        if "reject" in action or action == "blocked":
            entry.rejected_edits = [summarize_edit(i) for i in selected]
            entry.score_before, entry.score_after = record.get("score_before"), cand_score
            entry.score_after_max = record.get("candidate_gate_score_upper_bound")  # the gate stopped early
            entry.reason = gate_reason(action, record.get("gate_rule"))
            entry.replies = candidate_replies(self.store, d)
        entry.refused_edits = refused_edits(self.store.read_json(f"{d}/edit_apply_report.json", default=None))
        self.buffer.add(entry)
        self.store.write_json(f"{d}/trajectory_digest.json", entry.model_dump(mode="json"))
        if notes and self.cfg.optimizer.use_skill_aware_reflection:
            await flush_appendix(self.ctx, d, record, notes)
        if action.startswith("skip"):
            self.emit("step_skipped", step=g, epoch=epoch, action=action)
        record.update(action=action, current_score=st.current_score, best_score=st.best_score,
                      best_step=st.best_step, current_origin=st.current_origin, best_origin=st.best_origin,
                      skill_len=len(st.current_skill), timing={k: round(v, 3) for k, v in self.ctx.timing.items()},
                      wall_time_s=round(time.monotonic() - t_start, 3))
        self.history = [h for h in self.history if h.get("step") != g] + [record]
        self.store.write_json(f"{d}/step_record.json", record)
        self.store.write_json("history.json", self.history)
        self.store.save_skill_version(g, st.current_skill)
        self.store.write_text("best_skill.md", st.best_skill)
        st.last_completed_step = g
        self._save_state()

    # ------------------------------------------------------------------ epoch end
    async def _epoch_end(self, epoch: int, splits: Splits) -> None:
        opt, st = self.cfg.optimizer, self.state
        if opt.use_meta_reflect:  # review the epoch's steps; a gated higher-level edit of the skill
            await run_meta_reflect(self.ctx, epoch)
        epoch_last_skill = st.current_skill
        prev_skill = st.epoch_end_skills.get(str(epoch - 1))
        pairs: list[Pair] | None = None
        if opt.use_slow_update and self._follows_examples():
            # a block of rules for a student measured to ignore rules: in the suite runs it was force-accepted at
            # a lower validation score (push-length 1.0 -> 0.83) or blocked, at two teacher-minutes an epoch
            self.emit("slow_update", epoch=epoch, action="skipped",
                      reason="the student probe measured a student that follows examples, not stated rules")
        elif opt.use_slow_update:
            pairs = await slow_update_stage(self.ctx, epoch, prev_skill)
        if opt.use_meta_skill:
            last = epoch >= self.cfg.train.num_epochs or self.early_stop is not None
            await meta_skill_stage(self.ctx, epoch, prev_skill, epoch_last_skill, pairs, last=last)
        st.epoch_end_skills[str(epoch)] = st.current_skill
        st.epochs_done.append(epoch)
        self.store.save_skill_version(st.last_completed_step, st.current_skill)
        self.store.write_text("best_skill.md", st.best_skill)
        self._save_state()

    # ------------------------------------------------------------------ run end
    async def _finish(self, splits: Splits) -> dict[str, Any]:
        st = self.state
        if not st.finished:
            if skill_hash(st.current_skill) != skill_hash(st.best_skill):
                v = await self.ctx.stage("final_validation", st.last_completed_step, 0, lambda: judge_candidate(
                    self.ctx, st.current_skill, st.current_origin, folder="final_selection_eval",
                    eval_rel="final_selection_eval", stage="final_validation", step=st.last_completed_step, epoch=0,
                    target="best"))  # the run's last skill must beat the best one through the same gate
                self.emit("final_promotion", promoted=v.is_new_best, final_score=None if v.upper_bound else v.score,
                          **({"final_score_upper_bound": v.score} if v.upper_bound else {}), best_score=st.best_score,
                          origin=v.origin, decided_by=v.rule.get("decided_by"), p_value=v.rule.get("p_value"),
                          reason=v.rule.get("reason"))
            if self.cfg.evaluation.edit_credit:  # every line of best_skill.md must earn its place
                self.state.final_edit_credit = await credit_best(self.ctx)
            self.store.write_text("best_skill.md", st.best_skill)
            st.finished = True
            self._save_state()
        tests, self._test_intervals, self._sample_replies = await score_test_split(self.ctx)
        self._save_state()
        return self._write_summary(splits, status="completed", tests=tests)

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
                 "final_edit_credit": self.state.final_edit_credit, "student_probe": self.student_form.to_json(),
                 "early_stop": getattr(self, "early_stop", None)},
        )
        self.store.write_json("summary.json", summary)
        return summary


def _thread_fields(models: Any) -> dict[str, Any]:
    """The embedded model's thread choice for run_start (absent when every thread count was set by hand)."""
    choice = getattr(models, "threads", None)
    return {} if choice is None else {"threads": choice.to_event(), "threads_note": choice.describe()}
