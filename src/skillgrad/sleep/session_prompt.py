"""What the agent that mines reads of a session: every user turn that states a preference or a correction, whole.

A turn was cut at 600 characters, so what a long turn states late never reached the agent (a development turn of
real_preferences_fresh5.json lists "Keep SPDA ...", "Don't prefix ...", "Use namespaces ..." after a pasted
.csproj). Within the prompt's budget the agent's replies and the turns that state nothing give way first; a turn
that states something and still does not fit keeps the sentences that state it.
"""

from __future__ import annotations

import re

from skillgrad.sleep.harvest.digest import SessionDigest, Turn
from skillgrad.sleep.statements import is_correction, stated_preferences

PROMPT_CHARS = 600  # of a reply, and of a turn that states nothing when its whole does not fit
_GAP = 60  # room for a "turns left out" line
_SENTENCE = re.compile(r"[^\n.!?;]+(?:[.!?](?=\S)[^\n.!?;]*)*[.!?;]*")  # as statements.py reads them


def stating_turns(d: SessionDigest) -> set[int]:
    """Turns whose prompt states a preference or corrects a reply (by the offline parser or the feedback)."""
    said = {i for i, t in enumerate(d.turns) if stated_preferences(t.prompt, correction=is_correction(t.prompt))}
    return said | {f.turn + 1 for f in d.feedback
                   if f.kind in ("negative", "correction") and f.turn + 1 < len(d.turns)}


def statement_sentences(text: str) -> str:
    """A long message cut to its first PROMPT_CHARS characters (all the prompt used to show) and, after them, the
    sentences that state something, in order, with "…" for what is left out."""
    said = [" ".join(s.words.split()).lower()[:60] for s in stated_preferences(text)]
    keep = [text[:PROMPT_CHARS]]
    for m in _SENTENCE.finditer(text, PROMPT_CHARS):
        s = " ".join(m.group(0).split())
        if s and any(w in s.lower() or s.lower()[:60] in w for w in said):
            keep.append(s)
    return " … ".join(keep)


def session_text(d: SessionDigest, max_turns: int = 4, max_chars: int = 12_000) -> str:
    """The session as the miner reads it, at most `max_chars`: project and branch, turns, then feedback. Room goes
    first to the whole of every turn that states a preference or a correction (when those alone overflow, each
    long one keeps its stating sentences), then to the first `max_turns` turns and the requests those corrections
    answer, then to the others in order; each turn's reply is cut at PROMPT_CHARS and given room after its
    prompt, and a turn that states nothing is cut at PROMPT_CHARS when its whole does not fit: a turn
    cut for room still shows the first PROMPT_CHARS characters, all that the prompt used to show of it."""
    said = stating_turns(d)
    first = {*range(min(max_turns, len(d.turns))), *said, *(i - 1 for i in said if i > 0)}
    head = f"Project: {d.project or '?'}  Branch: {d.branch or '?'}"
    feedback = [f"Feedback ({f.kind}, turn {f.turn + 1}): {f.text[:200]}" for f in d.feedback]
    room = max_chars - len(head) - sum(len(x) + 1 for x in feedback) - _GAP  # _GAP: the "later turns" line
    users = {i: f"User {i + 1}: {t.prompt}" for i, t in enumerate(d.turns)}
    replies = {i: _reply(i, t) for i, t in enumerate(d.turns)}
    if sum(len(users[i]) + _GAP for i in said) > room:
        users.update({i: f"User {i + 1}: {statement_sentences(d.turns[i].prompt)}" for i in said
                      if len(d.turns[i].prompt) > PROMPT_CHARS})
    shown: set[int] = set()
    answered: set[int] = set()

    def fits(text: str, i: int) -> bool:
        """Takes the room for a line of turn i, and for the "turns left out" line before it where it may need one."""
        nonlocal room
        cost = len(text) + 1 + (_GAP if i - 1 not in shown and text is users[i] else 0)
        if cost > room:
            return False
        room -= cost
        return True

    for i in sorted(said):
        if fits(users[i], i):
            shown.add(i)
    for i in [*sorted(first), *(i for i in range(len(d.turns)) if i not in first)]:
        if i not in shown:
            if i in said:
                continue  # no room even for the sentences it states
            if not fits(users[i], i):
                users[i] = f"User {i + 1}: {d.turns[i].prompt[:PROMPT_CHARS]}"
                if not fits(users[i], i):
                    continue
            shown.add(i)
        if replies[i] and fits(replies[i], i):
            answered.add(i)
    lines = [head]
    last = -1
    for i in sorted(shown):
        if i > last + 1:
            lines.append(f"({i - last - 1} turns without a preference or correction left out)")
        last = i
        lines.append(users[i])
        if i in answered:
            lines.append(replies[i])
    if last < len(d.turns) - 1:
        lines.append(f"({len(d.turns) - 1 - last} later turns left out)")
    text = "\n".join([*lines, *feedback])
    return text if len(text) <= max_chars else text[:max_chars - 10] + "\n(trimmed)"


def _reply(i: int, t: Turn) -> str:
    lines = [f"Assistant {i + 1}: {t.answer[:PROMPT_CHARS]}"] if t.answer else []
    if t.tools:
        lines.append(f"Tools {i + 1}: {', '.join(t.tools[:8])}")
    return "\n".join(lines)
