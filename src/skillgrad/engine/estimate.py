"""`skillgrad estimate`: expected calls and tokens per stage for a whole run, before anything is spent.

Counts follow the loop's arithmetic (steps, minibatches, merges, gate and test rollouts) as upper
bounds; prompt sizes are measured with each role's tokenizer on the real initial skill and items.
"""

from __future__ import annotations

import math
from typing import Any

from skillgrad.config.schema import Config
from skillgrad.engine.prompts import PromptLibrary, search_dirs
from skillgrad.engine.stages.deep_reflect import MAX_TURNS
from skillgrad.envs.registry import create_env
from skillgrad.models.base import Usage
from skillgrad.models.factory import resolve_role
from skillgrad.models.prices import Pricing, load_prices

REVEAL_TOKENS = 400  # a probe turn re-reads up to 1,500 characters of the trajectory; findings ride with the patch
STEP_BLOCK_TOKENS = 150  # one step's evidence block in the meta-reflect review


def _template_tokens(prompts: PromptLibrary, name: str, count: Any) -> int:
    tpl = prompts.get(name)
    return int(count(tpl.system + tpl.user))


def _counter(cfg: Config, role: str) -> Any:
    rc = resolve_role(cfg, role)  # type: ignore[arg-type]
    if rc.provider == "local":
        from skillgrad.models.factory import build_llm

        llm = build_llm(rc, role)
        return llm.count_tokens, rc
    return (lambda text: max(1, len(text) // 4)), rc


def estimate_run(cfg: Config) -> dict[str, Any]:
    env = create_env(cfg.env)
    splits = env.load_splits()
    skill = env.initial_skill()
    s_count, s_rc = _counter(cfg, "student")
    t_count, t_rc = _counter(cfg, "teacher")
    per_step = cfg.train.batch_size * cfg.train.accumulation
    n_train = cfg.train.train_size or len(splits.train)
    steps_per_epoch = max(1, math.ceil(n_train / per_step))
    steps = steps_per_epoch * cfg.train.num_epochs
    batch = min(per_step, n_train)
    n_val = min(cfg.evaluation.sel_env_num or len(splits.val), len(splits.val))
    n_test = min(cfg.evaluation.test_env_num or len(splits.test), len(splits.test))
    sample_items = (splits.train or splits.val)[:20]
    avg_item = sum(s_count(" ".join(str(v) for v in it.inputs.values())) for it in sample_items) / max(
        len(sample_items), 1)
    # the skill grows as edits are accepted: assume every step accepts its budget of half-length edits
    lr = cfg.optimizer.learning_rate
    growth = lr * cfg.gradient.max_edit_chars // 8 if cfg.optimizer.skill_update_mode == "patch" else 0
    skill_tokens = s_count(skill)
    mean_skill, final_skill = skill_tokens + growth * steps // 2, skill_tokens + growth * steps
    student_prompt = mean_skill + int(avg_item) + 40
    final_prompt = final_skill + int(avg_item) + 40
    env_options = getattr(env, "options", None)
    student_reply = s_rc.max_tokens or int(getattr(env_options, "max_tokens", 0) or 64)
    teacher_reply = t_rc.max_tokens or (512 if t_rc.provider == "local" else 4096)
    prompts = PromptLibrary(search_dirs(cfg.prompts.dir, env.prompt_dirs(),
                                        use_env_prompts=cfg.prompts.use_env_prompts))
    tpl = prompts.get("analyst_error")
    traj = int(avg_item) + student_reply + 60
    m = cfg.gradient.minibatch_size
    analyst_prompt = t_count(tpl.system + tpl.user) + (mean_skill if "{{skill}}" in tpl.user else 0) + traj * m
    analysts = math.ceil(batch / m) + (0 if cfg.gradient.failure_only else 1)
    merges = 0
    if cfg.gradient.merge_mode == "llm" and analysts > 1:
        merges = math.ceil((analysts - 1) / (cfg.gradient.merge_batch_size - 1)) + 1
    rows: list[dict[str, Any]] = []

    def row(stage: str, role: str, calls: int, prompt: int, reply: int) -> None:
        rows.append({"stage": stage, "role": role, "calls": calls, "prompt_tokens": calls * prompt,
                     "completion_tokens": calls * reply})

    if cfg.optimizer.student_probe == "auto":  # engine/student_probe.py: 2 questions x 3 forms
        row("student_probe", "student", 6, skill_tokens + int(avg_item) + 60, 12)
    row("baseline", "student", n_val, skill_tokens + int(avg_item) + 40, student_reply)
    row("rollout", "student", steps * batch, student_prompt, student_reply)
    row("reflect", "teacher", steps * analysts, analyst_prompt, teacher_reply)
    if merges:
        row("aggregate", "teacher", steps * merges, analyst_prompt, teacher_reply)
    if cfg.optimizer.demonstrations and cfg.optimizer.skill_update_mode == "patch":  # one per corrected failure
        demo_prompt = _template_tokens(prompts, "demonstrate", t_count) + traj
        row("demonstrate", "teacher", steps * min(cfg.optimizer.demonstrations, batch), demo_prompt,
            min(teacher_reply, cfg.optimizer.max_example_chars // 4))
    if cfg.gradient.use_deep_reflect:  # per probed trajectory: up to MAX_TURNS probe turns, then its analyst call
        probed = min(cfg.gradient.deep_reflect_failures
                     + (0 if cfg.gradient.failure_only else cfg.gradient.deep_reflect_successes), batch)
        probe_prompt = _template_tokens(prompts, "deep_probe", t_count) + mean_skill + traj + REVEAL_TOKENS
        row("deep_reflect", "teacher", steps * probed * MAX_TURNS, probe_prompt, teacher_reply)
        row("deep_reflect_patch", "teacher", steps * probed, analyst_prompt + REVEAL_TOKENS, teacher_reply)
    autonomous = cfg.optimizer.lr_control_mode == "autonomous"
    can_rank = autonomous or analysts * max(lr, 1) > lr  # a ranking call only when the pool can exceed the budget
    if can_rank:
        row("select", "teacher", steps * (int(autonomous) + 1), mean_skill + 400, 64)
    if cfg.optimizer.skill_update_mode == "rewrite_from_suggestions":
        row("update", "teacher", steps, mean_skill + 800, teacher_reply)
    row("gate", "student", steps * n_val, student_prompt, student_reply)
    ev = cfg.evaluation
    if ev.incumbent_reeval:  # incumbent and candidate on the validation items outside the selection slice
        row("incumbent_reeval", "student", steps * 2 * (len(splits.val) - n_val or (n_val if ev.eval_temperature
                                                                                     else 0)),
            student_prompt, student_reply)
    if ev.edit_credit:  # upper bound: every step accepted, one unit per edit, each unit one selection evaluation
        cap = ev.edit_credit_max_units or 10**9
        per_step = min(lr if cfg.optimizer.skill_update_mode == "patch" else cap, cap)
        row("edit_credit", "student", (steps * per_step + min(steps * max(lr, 1), cap)) * n_val, final_prompt,
            student_reply)
    later_epochs = max(cfg.train.num_epochs - 1, 0)
    if cfg.optimizer.use_slow_update:
        k = min(cfg.optimizer.slow_update_samples, n_train)
        row("slow_update", "student", later_epochs * 2 * k + cfg.train.num_epochs * n_val, student_prompt,
            student_reply)
        row("slow_update", "teacher", later_epochs, analyst_prompt, teacher_reply)
    if cfg.optimizer.use_meta_skill:
        row("meta_skill", "teacher", later_epochs, analyst_prompt, teacher_reply)
    if cfg.optimizer.use_meta_reflect:  # per epoch: one review of the epoch's steps, its candidate gated
        review = _template_tokens(prompts, "meta_reflect", t_count) + mean_skill + STEP_BLOCK_TOKENS * steps_per_epoch
        row("meta_reflect", "teacher", cfg.train.num_epochs, review, teacher_reply)
        row("meta_reflect", "student", cfg.train.num_epochs * n_val, student_prompt, student_reply)
    if cfg.evaluation.eval_test:
        row("final_validation", "student", n_val, student_prompt, student_reply)
        row("test", "student", 3 * n_test, final_prompt, student_reply)
    pricing = Pricing(load_prices(cfg.model.prices_file or None))
    models = {"student": (s_rc.provider, s_rc.model), "teacher": (t_rc.provider, t_rc.model)}
    for r in rows:
        provider, model = models[r["role"]]
        r["cost"] = pricing.cost(str(provider), model, Usage(prompt_tokens=r["prompt_tokens"],
                                                            completion_tokens=r["completion_tokens"]))
    total = {k: sum(r[k] for r in rows) for k in ("calls", "prompt_tokens", "completion_tokens")}
    costs = [r["cost"] for r in rows]
    total["cost"] = None if any(c is None for c in costs) else sum(costs)
    return {"steps": steps, "steps_per_epoch": steps_per_epoch, "rows": rows, "total": total,
            "split_sizes": {"train": n_train, "val": n_val, "test": n_test}}
