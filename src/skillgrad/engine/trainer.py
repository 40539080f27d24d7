"""The training loop (DESIGN.md section 1): rollout -> propose (the analysts' rules beside verified worked
examples, engine/proposers/) -> aggregate -> select -> update -> gate, per step; epoch-end slow update and meta
skill; run-end promotion and test scoring.

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
from skillgrad.engine.baselines import FEWSHOT_FILE, fewshot_stage, start_from_fewshot
from skillgrad.engine.budget_plan import affordable
from skillgrad.engine.buffer import StepBuffer
from skillgrad.engine.candidate import Verdict, adopt, judge_candidate
from skillgrad.engine.ceiling import ceiling_reason
from skillgrad.engine.context import RunContext
from skillgrad.engine.credit import credit_accepted_step
from skillgrad.engine.epoch_end import epoch_end
from skillgrad.engine.gate.tiebreak import pass_rate, train_tiebreak
from skillgrad.engine.modes import MODES
from skillgrad.engine.no_learning import explain_no_learning
from skillgrad.engine.prompts import PromptLibrary, search_dirs
from skillgrad.engine.proposers.sources import SMALL_STUDENT, choose_strategy, ignores_rules
from skillgrad.engine.proposers.stage import demo_counts
from skillgrad.engine.proposers.step import propose_step, selectable_rules
from skillgrad.engine.run_end import finish_run
from skillgrad.engine.schedule import EditBudgetSchedule, plan_epoch
from skillgrad.engine.sealed import seal_test, sealed_statement
from skillgrad.engine.stages.rollout import RolloutResult
from skillgrad.engine.step_budget import StepBudget
from skillgrad.engine.step_record import finish_step
from skillgrad.engine.step_stages import (
    StepInput,
    aggregate_stage,
    rollout_stage,
    select_stage,
    update_stage,
)
from skillgrad.engine.student_probe import StudentForm, load_or_probe
from skillgrad.engine.summary import build_summary
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import Environment, Item, Splits
from skillgrad.envs.splits import check_split_sizes
from skillgrad.errors import AnswersNeeded, BudgetExceeded, EnvironmentFailure, SkillgradError
from skillgrad.exec.base import Executor
from skillgrad.models.factory import Models
from skillgrad.runs.store import RunStore
from skillgrad.skill import ensure_appendix, skill_hash


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
        self.strategy = SMALL_STUDENT  # the proposers' strategy the probe chooses (engine/proposers/sources.py)
        self.teacher = TeacherCall(models.teacher, self.prompts, max_tokens=teacher_max_tokens,
                                   temperature=teacher_temperature, max_prompt_tokens=cfg.gradient.max_prompt_tokens)
        # what stages and extensions may use of the run (engine/context.py); state, buffer, history live there
        self.ctx = RunContext(cfg, env, models, store, emit, self.teacher, executor,
                              buffer=StepBuffer(cfg.optimizer.buffer_scope))
        self.steps = StepBudget(self.ctx)  # the start-up and steps sized to a small budget
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
                    self.ctx.save_state()
                    self._write_summary(splits, status="failed", reason=str(e))
                # handoff: not a failure, the run waits for its prompt files to be answered
                status = "answers_needed" if isinstance(e, AnswersNeeded) else "failed"
                self.emit("run_end", status=status, error=str(e), seconds=self.ctx.elapsed())
                raise
            self.state.stopped = "budget"
            self.ctx.save_state()
            self.store.write_text("best_skill.md", self.state.best_skill)  # e.g. the few-shot start, before any step
            summary = self._write_summary(splits, status="stopped", stopped="budget", reason=str(e))
            self.emit("run_end", status="stopped", stopped="budget", reason=str(e), seconds=self.ctx.elapsed())
            return summary
        except (asyncio.CancelledError, KeyboardInterrupt):  # Ctrl-C or SIGTERM: resumable, and not "incomplete"
            self.emit("run_end", status="stopped", stopped="interrupted", seconds=self.ctx.elapsed())
            raise
        self.emit("run_end", status="completed", seconds=self.ctx.elapsed())
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
        plan = self.steps.plan_run(splits, min(per_step, train_size))
        self.student_form = await load_or_probe(self.store, self.emit, self.models.student, self.state.initial_skill,
                                                [str(i.inputs.get("question", "")) for i in splits.train[:3]],
                                                cfg.optimizer.student_probe, n_questions=plan.probe_questions,
                                                skipped_why=plan.reason)
        self.strategy = choose_strategy(self.student_form)
        # optimizer.start_from: fewshot (engine/baselines.py); otherwise the few-shot baseline is built at run end
        self.fewshot = await fewshot_stage(self.ctx, self.student_form, at_start=True,
                                           sizer=self.steps.fewshot_sizer)
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
                await self._step(g, epoch, k, self.steps.size(g, batch), splits, seed=cfg.train.seed + epoch * 1000 + k)
                self.steps.step_done()
            if epoch not in self.state.epochs_done:
                last = epoch >= cfg.train.num_epochs or self.early_stop is not None  # no meta skill after it
                await epoch_end(self.ctx, epoch, ignores_rules=self._shortcuts(), last=last)

    def _at_ceiling(self, epoch: int) -> bool:
        """The best skill scores full marks where the gate looks (engine/ceiling.py): no candidate can pass."""
        reason = ceiling_reason(self.cfg, self.state)
        if reason and self.early_stop is None:
            self.early_stop = {"epoch": epoch, "after_step": self.state.last_completed_step,
                               "best_score": self.state.best_score, "reason": reason}
            self.emit("early_stop", **self.early_stop)
        return bool(reason)

    # ------------------------------------------------------------------ state (kept in the run context)
    def _load_or_init_state(self, splits: Splits) -> None:
        if not self.ctx.load_state():
            initial = self.env.initial_skill()
            if self.cfg.optimizer.use_skill_aware_reflection:
                initial = ensure_appendix(initial)
            self.ctx.init_state(initial)

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
        await start_from_fewshot(self.ctx, self.fewshot, self.steps.plan)  # optimizer.start_from: fewshot
        self.ctx.save_state()

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
        # the proposers (engine/proposers/step.py): rules and verified worked examples, by the student's strategy
        prop = await propose_step(ctx, s, ro, batch, self.strategy, analyst_budget=self._analyst_budget(st.lr_steps + 1),
                                  shortcuts=self._shortcuts())
        demos, fail_p, succ_p = prop.demos, prop.analyst_items("failure"), prop.analyst_items("success")
        notes = [n for p in prop.patches for n in p.appendix_notes]
        record.update(prop.record, n_patches=len(fail_p) + len(succ_p), n_failure_patches=len(fail_p),
                      n_success_patches=len(succ_p))
        summaries = [{"failure_summary": p.failure_summary} for p in prop.patches if p.source_type == "failure"]
        if not fail_p and not succ_p and not demos.items:
            return await self._finish_step(g, epoch, "skip_no_patches", record, ro, summaries, [], None, notes, t_start)

        slots = self.schedule.lr_at(st.lr_steps + 1) if self.mode.ranks_with_budget and \
            cfg.optimizer.lr_control_mode != "autonomous" else None
        fail_p, succ_p, untried = selectable_rules(fail_p, succ_p, demos, slots)
        if untried:  # the next step's history says why they were not tried
            record["rules_untried"] = untried
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
            record["edit_apply_summary"] = {k: upd.report.get(k, 0) for k in (
                "total", "applied", "skipped", "errors", "refused_checker_text", "refused_no_content")}
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
        sj = v.scores_json()  # an early stop (engine/gate/early.py) keeps upper bounds beside None scores
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

    def _shortcuts(self) -> bool:
        """The small-student strategy's shortcuts (`optimizer.example_shortcuts`): the probe saw the student ignore
        a stated rule, so its examples may replace the analysts' calls and no slow update is written."""
        return self.cfg.optimizer.example_shortcuts and ignores_rules(self.student_form)

    def _analyst_budget(self, select_index: int) -> int:
        """The analysts' per-minibatch cap follows the schedule (SkillOpt uses the unscheduled max)."""
        if self.cfg.compat.skillopt_analyst_budget or not self.mode.edit_budget:
            return self.cfg.optimizer.learning_rate
        return max(1, self.schedule.lr_at(select_index))

    async def _finish_step(self, g: int, *args: Any) -> None:
        await finish_step(self.ctx, g, *args)  # the step's record, buffer entry and checkpoint (step_record.py)

    # ------------------------------------------------------------------ run end
    async def _finish(self, splits: Splits) -> dict[str, Any]:
        tests, self._test_intervals, self._sample_replies = await finish_run(self.ctx)  # promotion, credit, test
        return self._write_summary(splits, status="completed", tests=tests)

    def _write_summary(self, splits: Splits, *, status: str, stopped: str | None = None, reason: str = "",
                       tests: dict[str, Any] | None = None) -> dict[str, Any]:
        summary = build_summary(
            self.state, self.history, tests or {}, status=status, stopped=stopped, reason=reason,
            run={"env": self.cfg.env.name, "teacher": self.models.teacher.name, "student": self.models.student.name,
                 "gate_metric": self.cfg.evaluation.gate_metric, "planned_steps": getattr(self, "total_steps", None),
                 "total_wall_time_s": self.ctx.elapsed(), "token_summary": self.models.meter.summary(),
                 "cache": self.models.cache.stats() if self.models.cache is not None else None,
                 "gate_test": self.cfg.evaluation.gate_test, "test_intervals": getattr(self, "_test_intervals", None),
                 "sample_replies": getattr(self, "_sample_replies", None),
                 "sealed_test": sealed_statement(splits, scored=bool(tests)),
                 "final_edit_credit": self.state.final_edit_credit, "student_probe": self.student_form.to_json(),
                 "proposer_strategy": self.strategy.name, "early_stop": getattr(self, "early_stop", None),
                 "fewshot": self.store.read_json(FEWSHOT_FILE),
                 "no_learning": explain_no_learning(self.store, self.history, self.state)},
        )
        self.store.write_json("summary.json", summary)
        return summary


def _thread_fields(models: Any) -> dict[str, Any]:
    """The embedded model's thread choice for run_start (absent when every thread count was set by hand)."""
    choice = getattr(models, "threads", None)
    return {} if choice is None else {"threads": choice.to_event(), "threads_note": choice.describe()}
