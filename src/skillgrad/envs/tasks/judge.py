"""The rubric judge: one grammar-constrained model call per reply; hard = score >= 0.8 (reference §9.3).

`grade` scores a reply by a task's whole judge: its rule checks locally, then, for a rubric judge or a rule judge
with a reference answer, the rubric judge (shown the reference answer when the task has one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from skillgrad.config.schema import RoleConfig
from skillgrad.envs.tasks.checks import ToolCall, score_checks
from skillgrad.envs.tasks.records import Judge
from skillgrad.errors import BudgetExceeded, ConfigError, ProviderFatal
from skillgrad.models.base import LLM

PASS_AT = 0.8

JUDGE_SYSTEM = ("You grade an assistant's reply against a one-sentence rubric (and a reference answer, when one "
                "is given: the reply must agree with it in substance, not in wording). Reply with JSON: "
                '{"score": a number from 0 (fails the rubric) to 1 (fully meets it), "reason": "a few words"}.')


class JudgeVerdict(BaseModel):
    score: float = Field(ge=0.0, le=1.0)
    reason: str = Field("", max_length=160)


async def judge_rubric(judge: LLM, task: str, rubric: str, reply: str, *, max_tokens: int = 96,
                       reference: str = "") -> tuple[float, float, str]:
    """(hard, soft, fail_reason). A judge call that fails scores the task 0 with the error as the reason."""
    ref = f"\nReference answer: {reference}" if reference.strip() else ""
    messages = [{"role": "system", "content": JUDGE_SYSTEM},
                {"role": "user", "content": f"Task: {task}\nRubric: {rubric}{ref}\nReply: {reply}"}]
    try:
        c = await judge.complete(messages, schema=JudgeVerdict, max_tokens=max_tokens, temperature=0.0, stage="judge")
    except (ProviderFatal, BudgetExceeded):
        raise
    except Exception as e:  # noqa: BLE001 - an unusable verdict is a scored failure, not a crash
        return 0.0, 0.0, f"judge: no verdict ({type(e).__name__}: {str(e)[:120]})"
    verdict = c.parsed if isinstance(c.parsed, JudgeVerdict) else None
    if verdict is None:
        return 0.0, 0.0, "judge: the verdict did not parse"
    hard = float(verdict.score >= PASS_AT)
    return hard, verdict.score, "" if hard else f"rubric: {rubric} (judge: {verdict.reason or verdict.score})"


class JudgeRole:
    """An environment's judge model (options `judge_provider`, `judge_model`): built by the run
    (models/factory.build_models) with the run's meter, budget, cache and events, so it is counted, limited and
    replayed on resume like every other call; without its own model the student judges."""

    options: Any
    _judge: LLM | None = None

    def model_roles(self) -> dict[str, RoleConfig]:
        o = self.options
        if not (o.judge_provider or o.judge_model):
            return {}
        provider: Any = o.judge_provider or "local"
        return {"judge": RoleConfig(provider=provider, model=o.judge_model)}

    def use_models(self, llms: dict[str, LLM]) -> None:
        self._judge = llms.get("judge")

    def __getstate__(self) -> dict[str, Any]:
        # Shipped to a Ray worker without the driver's judge client; the worker builds its own (exec/ray_worker).
        return {**self.__dict__, "_judge": None}

    def _judge_llm(self, student: LLM) -> LLM:
        if not self.model_roles():
            return student
        if self._judge is None:
            raise ConfigError("env.judge_model: the judge was not built with the run's models; build them "
                              "with models.factory.build_models(cfg, env=env, ...)")
        return self._judge


async def grade(spec: Judge, task: str, reply: str, *, tools: Sequence[ToolCall | str] = (),
                judge: LLM | None = None, max_tokens: int = 96) -> tuple[float, float, str]:
    """(hard, soft, fail_reason) of a reply by the task's whole judge. A rule judge with a reference answer passes
    only when every check and the rubric do (its soft: the checks and the rubric's score, each counted once); the
    rubric call is skipped when a check already failed, so a wrong gold value costs no judge call."""
    if not spec.graded:
        return score_checks(spec.checks, reply, tools)
    if judge is None:
        raise ValueError("a rubric or reference answer needs a judge model")
    if not spec.checks:
        return await judge_rubric(judge, task, spec.rubric, reply, max_tokens=max_tokens, reference=spec.reference)
    hard, soft, reason = score_checks(spec.checks, reply, tools)
    n = len(spec.checks)
    if not hard:
        return 0.0, soft * n / (n + 1), reason
    r_hard, r_soft, r_reason = await judge_rubric(judge, task, spec.rubric, reply, max_tokens=max_tokens,
                                                  reference=spec.reference)
    return r_hard, (n + r_soft) / (n + 1), r_reason
