"""The step buffer: what earlier steps tried and why they failed (reference §2.8).

Differences from SkillOpt, on purpose (§11.1 items 6, 7):
- a failure group's label is the analyst failure_summary entry that matches it by content, not the
  next entry in list order;
- the buffer is kept for the whole run by default (`scope="run"`); `scope="epoch"` resets it at every
  epoch like SkillOpt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

_STOPWORDS = frozenset(
    "a an the of to in on at for and or but is are was were be been not no with by as it its this that "
    "from into than then".split()
)


class FailurePattern(BaseModel):
    label: str
    kind: str = ""  # the fail_reason prefix that defines the group
    count: int = 0
    task_ids: list[str] = Field(default_factory=list)


class BufferEntry(BaseModel):
    step: int
    epoch: int = 0
    action: str
    n_total: int = 0
    n_fail: int = 0
    failure_patterns: list[FailurePattern] = Field(default_factory=list)
    rejected_edits: list[str] = Field(default_factory=list)
    score_before: float | None = None
    score_after: float | None = None
    score_after_max: float | None = None  # the gate stopped scoring the candidate early: its score is at most this
    reason: str = ""  # why the gate refused the candidate (its rule's own words)
    replies: list[str] = Field(default_factory=list)  # a few student replies under the refused candidate
    refused_edits: list[str] = Field(default_factory=list)  # edits refused before the gate, each with its reason
    untried: str = ""  # why the analysts' edits never reached a candidate (worked examples took every slot)


def _tokens(s: str) -> set[str]:
    return {t for t in re.findall(r"[a-z0-9]+", s.lower()) if t not in _STOPWORDS and len(t) > 1}


def _summary_entries(analyst_summaries: Iterable[Any]) -> list[dict[str, Any]]:
    """Flatten failure_summary entries; accepts the entries themselves or analyst outputs holding them."""
    entries: list[dict[str, Any]] = []
    for item in analyst_summaries:
        if not isinstance(item, Mapping):
            continue
        nested = item.get("failure_summary")
        if isinstance(nested, list):
            entries.extend(dict(e) for e in nested if isinstance(e, Mapping))
        elif "failure_type" in item or "description" in item:
            entries.append(dict(item))
    return entries


def _label(entry: Mapping[str, Any]) -> str:
    ftype = str(entry.get("failure_type") or "").strip()
    desc = " ".join(str(entry.get("description") or "").split())
    return f"{ftype}: {desc}" if ftype and desc else ftype or desc


def failure_patterns(
    trajectories_fail_reasons: Iterable[tuple[str, str]], analyst_summaries: Iterable[Any]
) -> list[FailurePattern]:
    """Group failed tasks by fail-reason prefix (text before ':') and label each group by content.

    Each analyst entry labels at most one group: pairs are taken best-overlap first, where overlap
    weighs failure_type against the prefix three times as much as the free-text description against
    the reasons, plus a bonus when failure_type and the prefix have the same words. A group with no overlapping entry keeps its prefix as the label.
    """
    groups: dict[str, FailurePattern] = {}
    reasons: dict[str, list[str]] = {}
    for task_id, reason in trajectories_fail_reasons:
        reason = str(reason or "")
        prefix = reason.split(":", 1)[0].strip() or "unspecified"
        g = groups.setdefault(prefix, FailurePattern(label=prefix, kind=prefix))
        g.count += 1
        g.task_ids.append(str(task_id))
        reasons.setdefault(prefix, []).append(reason)

    entries = _summary_entries(analyst_summaries)
    prefixes = list(groups)
    scored: list[tuple[int, int, int]] = []  # (-score, entry index, group index): deterministic order
    for gi, prefix in enumerate(prefixes):
        p_tokens = _tokens(prefix)
        g_tokens = p_tokens | set().union(*(_tokens(r) for r in reasons[prefix]))
        for ei, e in enumerate(entries):
            t_tokens = _tokens(str(e.get("failure_type") or ""))
            e_tokens = t_tokens | _tokens(str(e.get("description") or ""))
            score = 3 * len(p_tokens & t_tokens) + len(g_tokens & e_tokens)
            if p_tokens and p_tokens == t_tokens:
                score += 5  # the analyst named exactly this failure type
            if score > 0 and _label(e):
                scored.append((-score, ei, gi))
    used_e: set[int] = set()
    used_g: set[int] = set()
    for _, ei, gi in sorted(scored):
        if ei in used_e or gi in used_g:
            continue
        used_e.add(ei)
        used_g.add(gi)
        groups[prefixes[gi]].label = _label(entries[ei])
    # Largest groups first; ties keep first-seen order.
    return sorted(groups.values(), key=lambda g: -g.count)


def _short(s: Any, n: int) -> str:
    s = " ".join(str(s or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


def summarize_edit(edit_or_dict: Any) -> str:
    """One short line for an edit, a rewrite suggestion or a full-rewrite candidate."""
    d = edit_or_dict.model_dump() if hasattr(edit_or_dict, "model_dump") else edit_or_dict
    if not isinstance(d, Mapping):
        return _short(d, 200)
    if d.get("op"):
        out = f"{d['op']}: {_short(d.get('content'), 140)}"
        if d.get("target"):
            out += f" (target: {_short(d.get('target'), 60)})"
        return out
    if d.get("type") or d.get("instruction"):
        head = " ".join(x for x in (str(d.get("type") or ""), _short(d.get("title"), 60)) if x)
        return f"{head}: {_short(d.get('instruction'), 140)}" if d.get("instruction") else head
    if d.get("new_skill") is not None:
        return f"full rewrite: {_short(d.get('title') or d.get('change_summary'), 140)}"
    return _short(json.dumps(d, default=str, ensure_ascii=False), 200)


class StepBuffer:
    """Entries of earlier steps, rendered into the analyst, LR and rewrite prompts."""

    def __init__(self, scope: Literal["run", "epoch"] = "run") -> None:
        if scope not in ("run", "epoch"):
            raise ValueError(f"buffer scope must be 'run' or 'epoch', not {scope!r}")
        self.scope = scope
        self.epoch = 0
        self._entries: list[BufferEntry] = []

    @property
    def entries(self) -> list[BufferEntry]:
        return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, entry: BufferEntry) -> None:
        self._entries.append(entry)

    def start_epoch(self, epoch: int) -> None:
        """Called at the start of every epoch; forgets earlier epochs only with scope 'epoch'."""
        self.epoch = epoch
        if self.scope == "epoch":
            self._entries.clear()

    @staticmethod
    def _render_entry(e: BufferEntry) -> str:
        lines = [f"### Step {e.step} — {e.action.upper()} ({e.n_fail}/{e.n_total} failed)"]
        if e.failure_patterns:
            lines.append("Failure patterns:")
            for p in e.failure_patterns:
                ids = ", ".join(p.task_ids[:5]) + (", …" if len(p.task_ids) > 5 else "")
                lines.append(f"- {_short(p.label, 160)} ({p.count}×; tasks: {ids})")
        if "reject" in e.action or e.action == "blocked":  # a blocked step too: its reason and edits
            if e.score_before is not None and e.score_after is not None:
                lines.append(f"Score before -> after: {e.score_before:.4f} -> {e.score_after:.4f}")
            elif e.score_before is not None and e.score_after_max is not None:
                lines.append(f"Score before -> after: {e.score_before:.4f} -> at most {e.score_after_max:.4f} "
                             "(scoring stopped once it could not pass)")
            if e.reason:
                lines.append(f"Why refused: {_short(e.reason, 240)}")
            if e.rejected_edits:
                lines.append("Rejected edits (do not propose these again as they are):")
                lines.extend(f"- {_short(s, 240)}" for s in e.rejected_edits)
            if e.replies:
                lines.append("Student replies under the refused candidate:")
                lines.extend(f"- {_short(s, 300)}" for s in e.replies)
        if e.untried:
            lines.append(f"Not tried: {_short(e.untried, 200)}.")
        if e.refused_edits:
            lines.append("Edits refused before the gate, with the reason (fix the reason, do not repeat them):")
            lines.extend(f"- {_short(s, 300)}" for s in e.refused_edits)
        return "\n".join(lines)

    def render(self, max_entries: int = 8, max_chars: int = 2000) -> str:
        """A "Previous steps" block, most recent steps kept when over budget; "" when empty.

        The result is never longer than max_chars.
        """
        if not self._entries or max_entries <= 0 or max_chars <= 0:
            return ""
        where = "in this epoch" if self.scope == "epoch" else "in this run"
        intro = f"## Previous steps {where}\nWhat earlier steps saw and decided (oldest first)."
        blocks = [self._render_entry(e) for e in self._entries[-max_entries:]]
        omitted = len(self._entries) - len(blocks)

        def assemble() -> str:
            note = [f"({omitted} earlier step(s) omitted)"] if omitted else []
            return "\n\n".join([intro, *note, *blocks])

        text = assemble()
        while len(text) > max_chars and len(blocks) > 1:
            blocks.pop(0)
            omitted += 1
            text = assemble()
        if len(text) > max_chars:
            text = text[: max(0, max_chars - 1)] + "…"
        return text[:max_chars]

    def to_json(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "epoch": self.epoch,
            "entries": [e.model_dump(mode="json") for e in self._entries],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str) -> StepBuffer:
        d = json.loads(data) if isinstance(data, str) else data
        buf = cls(scope=d.get("scope", "run"))
        buf.epoch = int(d.get("epoch", 0))
        buf._entries = [BufferEntry.model_validate(e) for e in d.get("entries", [])]
        return buf
