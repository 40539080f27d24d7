"""Building a student's chat from a skill.

Small models follow few-shot *chat turns* but ignore instructions and examples written inside the
system prompt (reference/offline-llm.md §6), so worked examples written in the skill as

    ## Examples
    Q: What is the capital of Chile?
    A: ANSWER: Santiago

are lifted out of the system text and sent as real (user, assistant) turns (the parser, with multi-line
examples, is skill/examples.py: the optimizer's demonstration edits write the same form).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from skillgrad.errors import DataError
from skillgrad.models.base import Message
from skillgrad.skill.examples import render_example, split_examples

__all__ = ["example_turns", "read_skill_file", "single_turn_task", "skill_system_message", "split_examples",
           "student_messages", "usage_extras"]

def skill_system_message(skill: str, preamble: str) -> Message:
    """The system message: a short preamble, then the skill. Always sent (the template's default misleads)."""
    parts = [p.strip() for p in (preamble, skill) if p and p.strip()]
    return {"role": "system", "content": "\n\n".join(parts) or "You are a helpful assistant."}


def example_turns(pairs: list[tuple[str, str]]) -> list[Message]:
    turns: list[Message] = []
    for q, a in pairs:
        turns.append({"role": "user", "content": q})
        turns.append({"role": "assistant", "content": a})
    return turns


def student_messages(skill: str, preamble: str, question: str, *, max_examples: int = 8) -> list[Message]:
    """system (preamble + skill without examples) + the skill's examples as turns + the question.

    Examples past `max_examples` stay in the system text (a long chat costs every call; dropping them would
    hide what the skill says)."""
    text, pairs = split_examples(skill)
    if pairs[max_examples:]:
        text += "\n\n## More examples\n" + "\n".join(render_example(q, a) for q, a in pairs[max_examples:])
    return [skill_system_message(text, preamble), *example_turns(pairs[:max_examples]),
            {"role": "user", "content": question}]


def read_skill_file(skill_init: str, default: Path, env_cfg: Any = None) -> str:
    """The initial skill: `env.skill_init` when set (a missing file is a DataError naming where it was looked for,
    `env_cfg.missing_input`), else `default`."""
    if skill_init:
        path = Path(skill_init).expanduser()
        if not path.is_file():
            if env_cfg is not None and not path.exists():
                raise DataError(env_cfg.missing_input("env.skill_init", skill_init))
            raise DataError(f"env.skill_init: skill file not found: {skill_init}")
        return path.read_text(encoding="utf-8")
    return default.read_text(encoding="utf-8")


def usage_extras(completion: Any) -> dict[str, Any]:
    """Token counts of the student call, kept in `Trajectory.extras` for reports."""
    usage = getattr(completion, "usage", None)
    if usage is None:
        return {}
    return {"usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens},
            "cached": bool(getattr(completion, "cached", False))}


async def single_turn_task(
    item: Any, skill: str, student: Any, *, preamble: str, max_tokens: int, temperature: float, sample: int,
    score: Any, max_examples: int = 8,
) -> Any:
    """Ask one question with the skill; `score(answer, gold) -> (hard, soft, fail_reason)` (or an awaitable of it).

    A failed call is a failed, scored trajectory; a fatal provider error or a spent budget stops the run.
    """
    from skillgrad.envs.base import Trajectory
    from skillgrad.envs.trajectory import evaluation_message, failed_trajectory
    from skillgrad.errors import BudgetExceeded, ProviderFatal

    question = str(item.inputs.get("question", ""))
    messages = student_messages(skill, preamble, question, max_examples=max_examples)
    try:
        completion = await student.complete(messages, max_tokens=max_tokens, temperature=temperature,
                                            stage="rollout", sample=sample)
    except (ProviderFatal, BudgetExceeded):
        raise
    except Exception as e:  # noqa: BLE001 - a failed call is a failed, scored task
        return failed_trajectory(item, e, messages)
    answer = completion.text.strip()
    scored = score(answer, item.gold)
    hard, soft, reason = await scored if inspect.isawaitable(scored) else scored  # an async scorer (pyfunc)
    messages = [*messages, {"role": "assistant", "content": answer}, evaluation_message(item.gold, answer, hard, reason)]
    return Trajectory(item_id=item.id, task_type=item.task_type, messages=messages, answer=answer, gold=item.gold,
                      hard=hard, soft=soft, fail_reason=reason, question=question, extras=usage_extras(completion))
