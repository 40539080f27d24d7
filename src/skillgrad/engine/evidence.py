"""Rendering evidence for teacher prompts, and fitting prompts into the teacher's context window.

Every teacher prompt is built under a token budget measured with the teacher's own tokenizer
(SkillOpt let epoch-end prompts grow past the context and fail). Evidence items are trimmed
duplicates first, then the longest are shortened, then the oldest dropped; the trim is recorded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillgrad.envs.base import Trajectory


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # multimodal parts
        out = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                out.append(str(part.get("text", "")))
            elif isinstance(part, dict):
                out.append(f"<{part.get('type', 'part')}>")
        return " ".join(out)
    return str(content)


def render_trajectory(t: Trajectory, skill: str, *, compact: bool = False) -> str:
    """One task as the teacher sees it: question, the student's turns, the evaluation with the gold."""
    head = f"### Task {t.item_id} (type: {t.task_type}; hard={t.hard:g}, soft={t.soft:.2f})"
    if compact:
        # Small teachers copy the last thing they read: the expected answer goes last.
        # For a knowledge gap the wrong answer only distracts (it gets copied); otherwise it is the evidence.
        lines = [f"Question: {t.question}", f"Expected answer: {_gold_text(t.gold)}"]
        if t.fail_kind != "missing_knowledge":
            lines.insert(0, f"The assistant answered: {' '.join(t.answer.split())[:200] or '(nothing)'}")
        return "\n".join(lines)
    lines = [head]
    for m in t.messages:
        role = m.get("role", "?")
        text = _content_text(m.get("content", ""))
        if role == "system" and skill.strip() and skill.strip() in text:
            text = text.replace(skill.strip(), "<the current skill, shown in full above>")  # every such prompt shows it
        lines.append(f"[{role}] {text.strip()}")
    if not any(m.get("role") == "evaluation" for m in t.messages):
        lines.append(f"[evaluation] expected: {_gold_text(t.gold)}; answer: {t.answer.strip()[:400]}")
    if t.fail_reason:
        lines.append(f"Failure reason: {t.fail_reason}")
    if t.error:
        lines.append(f"Error: {t.error[:400]}")
    if t.trimmed:
        lines.append(f"(trajectory trimmed: {json.dumps(t.trimmed)})")
    return "\n".join(lines)


def _gold_text(gold: Any) -> str:
    if isinstance(gold, (list, tuple)):
        return " | ".join(str(g) for g in gold)
    return str(gold)


@dataclass
class TrimRecord:
    budget_tokens: int
    tokens_before: int = 0
    tokens_after: int = 0
    duplicates_dropped: int = 0
    shortened: int = 0
    dropped_oldest: int = 0

    @property
    def trimmed(self) -> bool:
        return bool(self.duplicates_dropped or self.shortened or self.dropped_oldest)

    def to_json(self) -> dict[str, int | bool]:
        return {**self.__dict__, "trimmed": self.trimmed}


@dataclass
class FittedEvidence:
    items: list[str]
    trim: TrimRecord
    text: str = field(default="")


def fit_evidence(
    items: Sequence[str],
    budget_tokens: int,
    count_tokens: Callable[[str], int],
    *,
    sep: str = "\n\n",
) -> FittedEvidence:
    """Trim `items` (oldest first) so their joined text fits in `budget_tokens`."""
    budget = max(budget_tokens, 0)
    seen: set[str] = set()
    kept: list[str] = []
    rec = TrimRecord(budget_tokens=budget)
    for it in items:
        if it in seen:
            rec.duplicates_dropped += 1
            continue
        seen.add(it)
        kept.append(it)
    sizes = [count_tokens(it) for it in kept]
    rec.tokens_before = sum(count_tokens(it) for it in items)
    total = sum(sizes)
    while total > budget and kept:
        share = budget // max(len(kept), 1)
        longest = max(range(len(kept)), key=lambda i: sizes[i])
        if sizes[longest] > 2 * max(share, 1) and share >= 40:
            # shorten the longest item to its fair share, keeping its head and tail
            text = kept[longest]
            keep_chars = max(int(len(text) * share / sizes[longest]), 80)
            half = keep_chars // 2
            kept[longest] = text[:half] + "\n[... trimmed ...]\n" + text[-half:]
            sizes[longest] = count_tokens(kept[longest])
            rec.shortened += 1
        else:
            kept.pop(0)
            sizes.pop(0)
            rec.dropped_oldest += 1
        total = sum(sizes)
    rec.tokens_after = total
    return FittedEvidence(items=kept, trim=rec, text=sep.join(kept))


def reply_budget(context_window: int, max_reply: int, fixed_tokens: int, cap: int = 0) -> int:
    """Tokens left for evidence after the fixed prompt parts and the reply."""
    room = context_window - max_reply - fixed_tokens - 64  # chat template overhead margin
    if cap:
        room = min(room, cap - fixed_tokens)
    return max(room, 0)
