"""Trajectory helpers: the evaluation message the teacher reads, failed tasks, and token-budget trimming."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from skillgrad.envs.base import Item, Trajectory
from skillgrad.models.base import Message

EVALUATION_ROLE = "evaluation"


def gold_text(gold: Any) -> str:
    if isinstance(gold, list | tuple):
        return " | ".join(str(g) for g in gold)
    return "" if gold is None else str(gold)


def evaluation_message(gold: Any, answer: str, hard: float, fail_reason: str) -> Message:
    """The closing message of a trajectory: the verdict and the gold answer (seen by the teacher only)."""
    verdict = "correct" if hard >= 1.0 - 1e-9 else ("partially correct" if hard > 0 else "incorrect")
    lines = [f"Evaluation: {verdict} (score {hard:.2f})."]
    if fail_reason:
        lines.append(f"Failure: {fail_reason}")
    lines.append(f"Expected answer: {gold_text(gold)}")
    lines.append(f"Student answer: {answer}")
    return {"role": EVALUATION_ROLE, "content": "\n".join(lines)}


def question_text(item: Item) -> str:
    q = item.inputs.get("question", "")
    return q if isinstance(q, str) else str(q)


def failed_trajectory(item: Item, error: BaseException | str, messages: list[Message] | None = None,
                      *, env_error: bool = False) -> Trajectory:
    """A task that crashed or timed out: scored 0, with the error recorded for the teacher and the logs.
    `env_error`: the environment's own code crashed, so the 0 says nothing about the model or the skill."""
    if isinstance(error, BaseException):
        text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    else:
        text = str(error)
    reason = f"{'env_error' if env_error else 'error'}: {text}"
    where = _crash_site(error) if env_error and isinstance(error, BaseException) else ""
    msgs = list(messages or [])
    msgs.append(evaluation_message(item.gold, "", 0.0, reason))
    return Trajectory(item_id=item.id, task_type=item.task_type, messages=msgs, answer="", gold=item.gold,
                      hard=0.0, soft=0.0, fail_reason=reason, error=text, question=question_text(item),
                      fail_kind="error", env_error=f"{text} ({where})" if where else (text if env_error else None))


def _crash_site(error: BaseException) -> str:
    """'file.py:line in function' of the innermost frame: where to look when fixing the environment."""
    tb = error.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return f"{code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno} in {code.co_name}"


# --- trimming --------------------------------------------------------------------------------------

def _text(msg: Message) -> str:
    content = msg.get("content", "")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # multimodal parts: only the text counts toward the budget
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "" if content is None else str(content)


def _shorten(text: str, target: int, count: Callable[[str], int]) -> str:
    """Keep the head and tail of `text` within `target` tokens, marking the cut."""
    n = count(text)
    if n <= target:
        return text
    chars = max(0, int(len(text) * target / max(n, 1)))
    while True:
        marker = f"\n[... {n - target}+ tokens trimmed ...]\n" if chars else f"[... {n} tokens trimmed ...]"
        head, tail = text[: (chars * 2) // 3], text[len(text) - chars // 3:] if chars // 3 else ""
        out = head + marker + tail
        if count(out) <= target or chars == 0:
            return out
        chars = int(chars * 0.8)


def _protected(messages: list[Message]) -> set[int]:
    keep: set[int] = set()
    roles = [m.get("role") for m in messages]
    if roles and roles[0] == "system":
        keep.add(0)  # the skill the student read
    # The question: the first user message after any few-shot (user, assistant) pairs is not knowable in
    # general, so keep the LAST user message before the final answer, and the first user message.
    users = [i for i, r in enumerate(roles) if r == "user"]
    if users:
        keep.add(users[0])
    answers = [i for i, r in enumerate(roles) if r == "assistant"]
    if answers:
        keep.add(answers[-1])
        before = [i for i in users if i < answers[-1]]
        if before:
            keep.add(before[-1])
    keep.update(i for i, r in enumerate(roles) if r == EVALUATION_ROLE)
    return keep


def trim_trajectory(traj: Trajectory, max_tokens: int, count_tokens: Callable[[str], int]) -> Trajectory:
    """Fit a trajectory's messages into `max_tokens`, longest middle messages first.

    The system (skill) message, the question, the final answer and the evaluation message are kept;
    they are only shortened (skill first, evaluation never) when dropping every middle message is not enough.
    Returns a copy with `trimmed` = {"tokens_before", "tokens_after", "dropped_messages", "shortened_messages"};
    an already-fitting trajectory is returned unchanged.
    """
    msgs = [dict(m) for m in traj.messages]
    sizes = [count_tokens(_text(m)) for m in msgs]
    before = sum(sizes)
    if before <= max_tokens:
        return traj
    protected = _protected(msgs)
    dropped: set[int] = set()
    shortened = 0

    def total() -> int:
        return sum(s for i, s in enumerate(sizes) if i not in dropped)

    middle = sorted((i for i in range(len(msgs)) if i not in protected), key=lambda i: (-sizes[i], i))
    for i in middle:
        excess = total() - max_tokens
        if excess <= 0:
            break
        # Shorten when a useful part of the message survives; drop it otherwise.
        keep = sizes[i] - excess
        if keep >= 32 and isinstance(msgs[i].get("content"), str):
            msgs[i]["content"] = _shorten(_text(msgs[i]), keep, count_tokens)
            sizes[i] = count_tokens(msgs[i]["content"])
            shortened += 1
        else:
            dropped.add(i)
    # Still over: shorten protected messages, the skill first (the teacher sees it separately).
    roles_order = sorted(protected, key=lambda i: (msgs[i].get("role") != "system",
                                                   msgs[i].get("role") == "assistant", i))
    for i in roles_order:
        excess = total() - max_tokens
        if excess <= 0:
            break
        if msgs[i].get("role") == EVALUATION_ROLE:
            continue
        keep = max(8, sizes[i] - excess)
        msgs[i]["content"] = _shorten(_text(msgs[i]), keep, count_tokens)
        sizes[i] = count_tokens(msgs[i]["content"])
        shortened += 1
    kept = [m for i, m in enumerate(msgs) if i not in dropped]
    record = {"tokens_before": before, "tokens_after": total(), "dropped_messages": len(dropped),
              "shortened_messages": shortened}
    return dataclasses.replace(traj, messages=kept, trimmed=record)
