"""What the agent that mines reads of a session: every user turn, whole, in one prompt or in consecutive parts.

A turn was cut at 600 characters, so what a long turn states late never reached the agent (a development turn of
real_preferences_fresh5.json lists "Keep SPDA ...", "Don't prefix ...", "Use namespaces ..." after a pasted
.csproj). A session that fits one prompt is that prompt, where the agent's replies give way first. A longer one
left turns out (past the budget, or judged to state nothing by the offline parser, whose judgement then decided
what the agent saw), so it is split into parts, each its own mining prompt, that together show every user turn.
A part is also bounded by the statements it holds, not only its characters: one answer quotes each statement once,
and a 12,000-character part of 44 short turns (real_preferences_fresh6.json's rtchess session, 38 labelled
statements) held more than its answer's 30 quotes carried.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillgrad.sleep.harvest.digest import Feedback, SessionDigest, Turn
from skillgrad.sleep.statements import is_correction, stated_preferences

PROMPT_CHARS = 600  # of a reply, and of a turn that states nothing when its whole does not fit
_GAP = 60  # room for a "turns left out" line
_SENTENCE = re.compile(r"[^\n.!?;]+(?:[.!?](?=\S)[^\n.!?;]*)*[.!?;]*")  # as statements.py reads them
_PART_LINE = 100  # room for the "Part 2 of 3: turns 14-27 of 41 ..." line
_LABEL = 60  # room for "User N" and a piece's "(characters 1-9,800 of 20,000)" or the "left out" count
MAX_PIECES = 2  # parts a turn longer than one may run on over; a longer one keeps what it states
# A turn counts for at most this many statements: a pasted spec's imperatives are not each the user's preference
# (fresh5's playlist session: 49 found by the offline parser, 3 labelled); 246 of the 249 labelled turns of fresh5
# and fresh6 hold at most 3 labels (one 6, two 4), and every part's count is at least its labels.
PER_TURN = 3
MAX_STATEMENTS = 48  # the most one answer carries: mine.MAX_TASKS tasks of mine.QUOTES quotes each


@dataclass(frozen=True)
class SessionPart:
    """One mining prompt's session block and the turns it shows (indices into the session's turns)."""

    text: str
    turns: range
    statements: int = 0  # what its user turns state (turn_statements), which sizes the answer


def stating_turns(d: SessionDigest) -> set[int]:
    """Turns whose prompt states a preference or corrects a reply (by the offline parser or the feedback)."""
    said = {i for i, t in enumerate(d.turns) if stated_preferences(t.prompt, correction=is_correction(t.prompt))}
    return said | {f.turn + 1 for f in d.feedback
                   if f.kind in ("negative", "correction") and f.turn + 1 < len(d.turns)}


def turn_statements(text: str) -> int:
    """The statements a user message holds for sizing an answer: the offline parser's, at most PER_TURN."""
    return min(len(stated_preferences(text, correction=is_correction(text))), PER_TURN)


def _weights(d: SessionDigest) -> list[int]:
    """Each turn's statements; a turn the feedback names as a correction counts for one at least."""
    fixed = {f.turn + 1 for f in d.feedback if f.kind in ("negative", "correction")}
    return [max(turn_statements(t.prompt), int(i in fixed)) for i, t in enumerate(d.turns)]


def statement_sentences(text: str) -> str:
    """A long message cut to its first PROMPT_CHARS characters (all the prompt used to show) and, after them, the
    sentences that state something, in order, with "…" for what is left out."""
    return " … ".join([text[:PROMPT_CHARS], *(" ".join(text[a:b].split()) for a, b in _stating_spans(text))])


def _stating_spans(text: str) -> list[tuple[int, int]]:
    """The sentences past the first PROMPT_CHARS characters that state something, as (start, end) in `text`."""
    said = [" ".join(s.words.split()).lower()[:60] for s in stated_preferences(text)]
    out = []
    for m in _SENTENCE.finditer(text, PROMPT_CHARS):
        s = " ".join(m.group(0).split())
        if s and any(w in s.lower() or s.lower()[:60] in w for w in said):
            out.append(m.span())
    return out


def session_parts(d: SessionDigest, max_turns: int = 4, max_chars: int = 12_000,
                  max_statements: int = MAX_STATEMENTS) -> list[SessionPart]:
    """The mining prompts of a session: the one prompt of `session_text` when it shows every user turn whole (its
    replies may give way) and holds at most `max_statements` statements, else consecutive parts, each at most
    `max_chars` and `max_statements`, that show every user turn."""
    text, whole = _one_prompt(d, max_turns, max_chars)
    said = sum(_weights(d))
    if whole and said <= max_statements:
        return [SessionPart(text, range(len(d.turns)), said)]
    return _split(d, max_chars, max_statements)


def session_text(d: SessionDigest, max_turns: int = 4, max_chars: int = 12_000) -> str:
    """The session in one prompt (see `_one_prompt`); `session_parts` splits one that does not fit."""
    return _one_prompt(d, max_turns, max_chars)[0]


def _one_prompt(d: SessionDigest, max_turns: int, max_chars: int) -> tuple[str, bool]:
    """The session as the miner reads it, at most `max_chars`: project and branch, turns, then feedback. Room goes
    first to the whole of every turn that states a preference or a correction (when those alone overflow, each
    long one keeps its stating sentences), then to the first `max_turns` turns and the requests those corrections
    answer, then to the others in order; each turn's reply is cut at PROMPT_CHARS and given room after its
    prompt, and a turn that states nothing is cut at PROMPT_CHARS when its whole does not fit: a turn
    cut for room still shows the first PROMPT_CHARS characters, all that the prompt used to show of it. With it,
    whether every user turn is in it whole."""
    said = stating_turns(d)
    first = {*range(min(max_turns, len(d.turns))), *said, *(i - 1 for i in said if i > 0)}
    head = f"Project: {d.project or '?'}  Branch: {d.branch or '?'}"
    feedback = [_feedback_line(f) for f in d.feedback]
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
    whole = len(shown) == len(d.turns) and all(users[i] == f"User {i + 1}: {t.prompt}" for i, t in enumerate(d.turns))
    return (text, whole) if len(text) <= max_chars else (text[:max_chars - 10] + "\n(trimmed)", False)


def _feedback_line(f: Feedback) -> str:
    return f"Feedback ({f.kind}, turn {f.turn + 1}): {f.text[:200]}"


def _reply(i: int, t: Turn) -> str:
    lines = [f"Assistant {i + 1}: {t.answer[:PROMPT_CHARS]}"] if t.answer else []
    if t.tools:
        lines.append(f"Tools {i + 1}: {', '.join(t.tools[:8])}")
    return "\n".join(lines)


def _split(d: SessionDigest, max_chars: int, max_statements: int) -> list[SessionPart]:
    """Consecutive parts of about equal size (in statements where those bound them, else in characters), each
    holding at most `max_statements` statements and showing its turns whole, in order, with the session's numbering,
    then as many of their replies as still fit (replies give way first), then the feedback on its turns. A turn
    longer than a part runs on over up to MAX_PIECES parts; a longer one keeps its first PROMPT_CHARS characters
    and the sentences that state something, and says how much of it is left out."""
    head = f"Project: {d.project or '?'}  Branch: {d.branch or '?'}"
    room = max_chars - len(head) - 1 - _PART_LINE
    last = len(d.turns) - 1
    feedback: dict[int, list[str]] = {}
    for f in d.feedback:
        feedback.setdefault(min(max(f.turn, 0), last), []).append(_feedback_line(f))
    fb_cost = {i: sum(len(x) + 1 for x in lines) for i, lines in feedback.items()}
    units: list[tuple[int, str]] = []  # (turn, its line or one piece of it), in order
    weights = _weights(d)
    for i, t in enumerate(d.turns):
        line = f"User {i + 1}: {t.prompt}"
        fits = room - fb_cost.get(i, 0)
        units.extend([(i, line)] if len(line) + 1 <= fits else _pieces(i, t.prompt, fits - _LABEL))
    # a turn's statements count in the part of its first piece
    said = [weights[i] if k == 0 or units[k - 1][0] != i else 0 for k, (i, _) in enumerate(units)]
    groups = _balanced(units, fb_cost, room, said, sum(said))  # by characters alone, as before
    if max(_group_said(groups, said)) > max_statements:
        most = max(max_statements, *said)
        n = len(_fill(units, fb_cost, room, said, most))
        lo, hi = max(said), most  # the fewest statements a part may hold that still needs n parts
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if len(_fill(units, fb_cost, room, said, mid)) <= n else (mid + 1, hi)
        groups = _balanced(units, fb_cost, room, said, lo)
    replies = {i: _reply(i, t) for i, t in enumerate(d.turns)}
    ends = {i: k for k, (i, _) in enumerate(units)}  # a turn's reply follows its last piece
    out = []
    at = 0
    for k, group in enumerate(groups, 1):
        turns = range(units[at][0], units[at + len(group) - 1][0] + 1)
        span = f"turn {turns[0] + 1}" if len(turns) == 1 else f"turns {turns[0] + 1}-{turns[-1] + 1}"
        name = f"Part {k} of {len(groups)}: {span} of {len(d.turns)} (each part is mined on its own)"
        lines = [head, name] if len(groups) > 1 else [head]  # one part: every turn fits after all
        notes = [x for i in turns for x in feedback.get(i, [])]
        left = max_chars - sum(len(x) + 1 for x in [*lines, *notes]) - sum(len(text) + 1 for _, text in group)
        for j, (i, text) in enumerate(group, at):
            lines.append(text)
            if ends[i] == j and replies[i] and len(replies[i]) + 1 <= left:
                lines.append(replies[i])
                left -= len(replies[i]) + 1
        stated = _group_said([group], said, at)[0]
        at += len(group)
        text = "\n".join([*lines, *notes])
        out.append(SessionPart(text if len(text) <= max_chars else text[:max_chars - 10] + "\n(trimmed)", turns,
                               stated))
    return out


def _cost(unit: tuple[int, str], fb_cost: dict[int, int], prev: int | None) -> int:
    """A line's room in a part, with its turn's feedback lines when the part does not already hold that turn."""
    return len(unit[1]) + 1 + (fb_cost.get(unit[0], 0) if unit[0] != prev else 0)


def _balanced(units: list[tuple[int, str]], fb_cost: dict[int, int], room: int, said: list[int],
              cap_said: int) -> list[list[tuple[int, str]]]:
    """The groups of `_fill` at `room` characters, with the smallest capacity in characters that still needs as
    few groups: parts of about equal size."""
    n = len(_fill(units, fb_cost, room, said, cap_said))
    lo, hi = max(_cost(u, fb_cost, None) for u in units), room
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if len(_fill(units, fb_cost, mid, said, cap_said)) <= n else (mid + 1, hi)
    return _fill(units, fb_cost, lo, said, cap_said)


def _group_said(groups: list[list[tuple[int, str]]], said: list[int], at: int = 0) -> list[int]:
    """The statements of consecutive groups whose first unit is units[at]."""
    out = []
    for g in groups:
        out.append(sum(said[at:at + len(g)]))
        at += len(g)
    return out


def _fill(units: list[tuple[int, str]], fb_cost: dict[int, int], cap: int, said: list[int] | None = None,
          cap_said: int = 0) -> list[list[tuple[int, str]]]:
    """Consecutive groups of units, each filled up to `cap` characters (and, with `said`, each unit's statements,
    up to `cap_said` of them) before the next starts."""
    groups: list[list[tuple[int, str]]] = []
    used = stated = 0
    for k, u in enumerate(units):
        cost = _cost(u, fb_cost, groups[-1][-1][0]) if groups else cap + 1
        n = said[k] if said is not None else 0
        if used + cost > cap or (said is not None and stated + n > cap_said):
            groups.append([])
            cost = _cost(u, fb_cost, None)
            used = stated = 0
        used += cost
        stated += n
        groups[-1].append(u)
    return groups


def _pieces(i: int, prompt: str, size: int) -> list[tuple[int, str]]:
    """A turn longer than a part: in consecutive pieces of about equal size, at most `size` characters, each cut at
    a line or sentence end where one is near, when it takes at most MAX_PIECES of them; else its first PROMPT_CHARS
    characters and its stating sentences (as statement_sentences), up to `size`, with the count of characters left
    out: a pasted log of many parts would cost a prompt per part and state nothing."""
    if len(prompt) > MAX_PIECES * size:
        keep = [prompt[:min(PROMPT_CHARS, size)]]
        shown = len(keep[0])
        for a, b in _stating_spans(prompt):
            s = " ".join(prompt[a:b].split())
            if sum(len(x) + 3 for x in keep) + len(s) > size:
                continue  # a shorter one after it may fit
            keep.append(s)
            shown += b - a
        return [(i, f"User {i + 1}: {' … '.join(keep)} ({len(prompt) - shown:,} characters of this turn left out)")]
    out = []
    start, even = 0, -(-len(prompt) // -(-len(prompt) // size))  # pieces of about equal size leave room beside them
    while start < len(prompt):
        end = len(prompt) if len(prompt) - start <= size else _break(prompt, start, start + even)
        out.append((i, f"User {i + 1} (characters {start + 1:,}-{end:,} of {len(prompt):,}): {prompt[start:end]}"))
        start = end
    return out


def _break(text: str, start: int, end: int) -> int:
    """Where a piece of text[start:] ending by `end` stops: after the last line or sentence end in its second half,
    else after its last space, else at `end`."""
    half = start + (end - start) // 2
    for sep in ("\n", ". ", "? ", "! ", "; ", " "):
        at = text.rfind(sep, half, end - len(sep) + 1)
        if at >= 0:
            return at + len(sep)
    return end
