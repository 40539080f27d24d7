"""Token estimates for a run sized to `budget.max_tokens` (engine/budget_plan.py plans the calls).

An estimate, read from the texts themselves before any call is made, and an upper bound by the same rule the
budget reserves a call by (models/budget.py: the prompt by the role's token counter plus the reply cap):
- a student call: the skill, the question and the student's reply cap on it (the environment's `reply_tokens`
  or `options.max_tokens`, else the student's stated room), plus the chat framing of each message
  (models/tokens.py: a worked example is two turns where the environment turns it into chat turns);
- a teacher call: the fixed part of the step's largest prompt (its templates rendered with every placeholder
  blank, by the run's own prompt library), the skill, the batch's questions with their reply caps as evidence,
  and the teacher's reply cap; never more than the teacher's context window, which the prompt is fitted to
  (engine/teacher.py).
A step is counted as `step_calls` counts it (every analyst, demonstration, merge and ranking call made, every
validation item scored), the gate's candidate being the skill plus one teacher reply. Replies are usually far
shorter than their caps and the gate's early stop cuts a losing candidate short, so a run spends less than this.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from skillgrad.config.schema import Config
from skillgrad.engine.budget_plan import step_calls
from skillgrad.models.tokens import PER_MESSAGE_TOKENS, REPLY_PRIMER_TOKENS, estimate
from skillgrad.skill.examples import find_examples

STEP_TEMPLATES = ("analyst_error", "analyst_success", "demonstrate", "merge_failure", "merge_final", "ranking")
SMALL_REPLY = 64  # the reply room of a student that states none (envs/tasks/checks.py: the embedded model's)
_PLACEHOLDER = re.compile(r"\{\{\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\}\}")


def counter_of(llm: Any) -> Callable[[str], int]:
    """The role's token counter, else models/tokens.py's `estimate` (ceil(chars / 4))."""
    count = getattr(llm, "count_tokens", None)

    def safe(text: str) -> int:
        try:
            return int(count(text)) if callable(count) else estimate(text)
        except Exception:  # noqa: BLE001 - a counter that cannot count this text: the rough estimate
            return estimate(text)
    return safe


def student_reply_cap(env: Any, item: Any, student: Any) -> int:
    """The student's reply cap on `item`, as the environment states it, else the student's own stated room."""
    ask = getattr(env, "reply_tokens", None)
    if callable(ask):
        try:
            return int(ask(item, student))
        except (TypeError, KeyError, ValueError):  # another signature, or an item it cannot size
            pass
    cap = int(getattr(getattr(env, "options", None), "max_tokens", 0) or 0)
    if cap > 0:
        return cap
    stated = int(getattr(getattr(student, "role_cfg", None), "max_tokens", 0) or 0)
    return stated or max(SMALL_REPLY, int(getattr(student, "context_window", 0) or 0) // 64)


def teacher_fixed_tokens(prompts: Any, count: Callable[[str], int], names: Sequence[str] = STEP_TEMPLATES) -> int:
    """The largest fixed part (placeholders blank) of the step's teacher prompts, by the run's prompt library."""
    most = 0
    for name in names:
        try:
            tpl = prompts.get(name)
        except Exception:  # noqa: BLE001 - a template this run does not have
            continue
        most = max(most, count(_PLACEHOLDER.sub("", f"{tpl.system}\n{tpl.user}")))
    return most


@dataclass
class TokenCosts:
    """What a run's calls cost in tokens, by the estimate above. `val` and `batch`: (question, reply cap) of each
    validation item and of the next step's batch items, in order."""

    count: Callable[[str], int]  # the student's counter
    teacher_count: Callable[[str], int]
    val: list[tuple[str, int]]
    batch: list[tuple[str, int]]
    teacher_reply: int
    teacher_fixed: int
    teacher_window: int

    def student(self, skill: str, question: str, cap: int) -> int:
        turns = 2 + 2 * len(find_examples(skill))  # system, user, and two turns per worked example
        return self.count(skill) + self.count(question) + cap + PER_MESSAGE_TOKENS * turns + REPLY_PRIMER_TOKENS

    def val_pass(self, skill: str, n_val: int | None = None) -> int:
        """One validation pass of `skill` (the gate's scoring, no early stop)."""
        return sum(self.student(skill, q, cap) for q, cap in self.val[:n_val])

    def teacher(self, skill: str, n_items: int) -> int:
        evidence = sum(self.teacher_count(q) + cap for q, cap in self.batch[:n_items])
        prompt = self.teacher_fixed + self.teacher_count(skill) + evidence + 2 * PER_MESSAGE_TOKENS
        return min(self.teacher_window, prompt + REPLY_PRIMER_TOKENS + self.teacher_reply)

    def step(self, cfg: Config, skill: str, n_items: int, n_val: int) -> int:
        """One step with `n_items` batch items: rollout, every teacher call `step_calls` counts, the gate's pass."""
        calls = step_calls(cfg, n_items, n_val)
        rollout = sum(self.student(skill, q, cap) for q, cap in self.batch[:n_items])
        teacher = (sum(calls.values()) - calls["rollout"] - calls["gate"]) * self.teacher(skill, n_items)
        gate = self.val_pass(skill, n_val) + len(self.val[:n_val]) * self.teacher_reply  # skill + one reply of edits
        return rollout + teacher + gate


def step_tokens_fit(cfg: Config, costs: TokenCosts, skill: str, left: float, *, n_batch: int,
                    n_val: int) -> int:
    """The most batch items (at most `n_batch`) whose step fits `left` tokens by the estimate; 0: none."""
    for b in range(n_batch, 0, -1):
        if costs.step(cfg, skill, b, n_val) <= left:
            return b
    return 0


@dataclass
class FewShotSize:
    k: int  # examples kept (the first ones, in order)
    reference_list: bool
    example_search: int
    reason: str = ""  # what was cut and why ('' : nothing)


def size_fewshot(cfg: Config, costs: TokenCosts, skills: list[str], left: float, *, n_val: int, n_batch: int,
                 baseline: str | None, reference: Callable[[str], str] | None, example_search: int) -> FewShotSize:
    """The few-shot start sized to `left` tokens. `skills[i]`: the few-shot skill with its first i examples;
    `baseline`: the initial skill when its validation pass is still to come; `reference`: the reference-list
    candidate of a few-shot skill ('' when none), None when that pass is off or dropped by the calls plan.
    As the calls plan does: the optional passes (example search, then the reference list) stay only beside the
    whole few-shot start and a full step; then examples are dropped from the end until the few-shot start's
    passes and a one-item step fit. The few-shot start itself stays, with one example at least."""
    top = len(skills) - 1

    def need(k: int, ref: bool, es: int, items: int) -> int:
        s = skills[k]
        t = (costs.val_pass(baseline, n_val) if baseline is not None else 0) + (1 + es) * costs.val_pass(s, n_val)
        cand = reference(s) if ref and reference is not None else ""
        return t + (costs.val_pass(cand, n_val) if cand else 0) + costs.step(cfg, s, items, n_val)

    ref, es, notes = reference is not None, example_search, []
    while (ref or es) and need(top, ref, es, n_batch) > left:
        es, ref = (es - 1, ref) if es else (0, False)
    if (ref, es) != (reference is not None, example_search):
        dropped = ([f"example search cut to {es} of {example_search}"] if es < example_search else []) + \
                  (["reference list dropped"] if reference is not None and not ref else [])
        notes.append(f"{', '.join(dropped)}: {left:.0f} tokens left, the few-shot start with them and a "
                     f"{n_batch}-item step need about {need(top, reference is not None, example_search, n_batch)}")
    k = next((k for k in range(top, 0, -1) if need(k, ref, es, 1) <= left), min(1, top))
    if k < top:
        fits = "fit" if need(k, ref, es, 1) <= left else "do not fit even so"
        notes.append(f"few-shot examples cut to {k} of {top}: {left:.0f} tokens left, the validation passes and a "
                     f"one-item step need about {need(top, ref, es, 1)} with all, {need(k, ref, es, 1)} with {k} "
                     f"({fits})")
    return FewShotSize(k, ref, es, "; ".join(notes))
