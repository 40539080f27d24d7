"""Mining: session digests -> tasks with programmatic checks and a rubric, deduplicated, capped and split.

Two miners produce the same `TaskRecord`s (envs/tasks): the LLM miner (one grammar-constrained teacher
call per session, or per part of a session too long for one prompt, through the models layer like every other
teacher call) and a heuristic miner that
needs no model. Splits come from a stable hash of the task id; validation and test hold only real tasks.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Sequence
from itertools import zip_longest
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, create_model

from skillgrad.core.gather import gather_all
from skillgrad.envs.tasks.checks import CHECK_OPS, Check, run_check
from skillgrad.envs.tasks.records import Judge, TaskRecord
from skillgrad.errors import BudgetExceeded, ProviderFatal
from skillgrad.models.base import LLM
from skillgrad.sleep.harvest.digest import SessionDigest
from skillgrad.sleep.preferences import absent_term, code_like, preference_checks
from skillgrad.sleep.session_prompt import MAX_STATEMENTS, SessionPart, session_parts
from skillgrad.sleep.statements import Statement, is_correction, stated_preferences

MAX_PER_SESSION = 5  # tasks of an answer whose prompt states up to 5 x QUOTES things
QUOTES = 6  # `said` quotes per task
MAX_TASKS = 8  # tasks of an answer whose part states more; a part never states more than these carry
MAX_CHECKS = 6  # the agent's 4 and the checks its quotes name
# A task's reply tokens: the longest task of the 77 recorded capable-model answers (benchmarks/results/2026-11-28/
# sleep-agent-mining) is 1,126 characters of compact JSON, under 400 tokens at 3 characters a token; 768 tokens for
# 5 tasks cut answers of fresh5 and fresh6 prompts that ran to 1,300 (characters / 4).
TASK_TOKENS = 400
LOCAL_MINE_MAX_TOKENS = 768  # the embedded 135M teacher: a longer cap only lets it ramble on the CPU
ACCEPTED_CHARS = 600  # of an accepted answer kept with its task


class MinedCheck(BaseModel):
    op: Literal["contains", "not_contains", "regex", "no_refusal", "tool_called", "section_present",
                "section_contains", "min_chars", "max_chars"]
    arg: str = Field("", max_length=80)
    value: str = Field("", max_length=60)


class MinedTask(BaseModel):
    intent: str = Field(..., min_length=4, max_length=240)
    checks: list[MinedCheck] = Field(default_factory=list, max_length=4)
    rubric: str = Field("", max_length=200)
    said: list[str] = Field(default_factory=list, max_length=6, description=(
        "the user's own words, quoted verbatim from their messages, that state each preference or correction this "
        "task checks (one short quote per statement)"))


class MinedTasks(BaseModel):
    tasks: list[MinedTask] = Field(default_factory=list, max_length=MAX_PER_SESSION)


assert set(MinedCheck.model_fields["op"].annotation.__args__) == set(CHECK_OPS)  # type: ignore[union-attr]
assert MAX_TASKS * QUOTES == MAX_STATEMENTS and MinedTask.model_fields["said"].metadata[0].max_length == QUOTES  # type: ignore[attr-defined]


def answer_tasks(statements: int) -> int:
    """The tasks an answer may carry for a prompt stating this many things: each quoted once, QUOTES to a task;
    MAX_PER_SESSION at least, so a prompt within that keeps its schema and its id."""
    return min(max(MAX_PER_SESSION, -(-statements // QUOTES)), MAX_TASKS)


def answer_tokens(tasks: int) -> int:
    """The reply cap of an answer of this many tasks, each at most TASK_TOKENS."""
    return tasks * TASK_TOKENS + 48


MINE_MAX_TOKENS = answer_tokens(MAX_PER_SESSION)  # 2,048: an answer of 5 full tasks


@functools.cache
def mined_schema(tasks: int) -> type[MinedTasks]:
    """The reply schema of an answer of up to `tasks` tasks: MinedTasks itself up to MAX_PER_SESSION."""
    if tasks <= MAX_PER_SESSION:
        return MinedTasks
    field: Any = (list[MinedTask], Field(default_factory=list, max_length=tasks))
    return create_model("MinedTasks", __base__=MinedTasks, tasks=field)


def miner_system(tasks: int = MAX_PER_SESSION) -> str:
    """The miner's system prompt for an answer of up to `tasks` tasks."""
    return (
        f"You turn a coding assistant's past session into 0 to {tasks} reusable tasks the assistant should do well next "
        "time. Each task: the user's intent as a self-contained request; up to 4 programmatic checks on a good "
        "reply (ops: contains, not_contains, regex, no_refusal, tool_called, section_present, section_contains, "
        "min_chars, max_chars; arg is the text, pattern, tool, section or number); and a one-sentence rubric. "
        "Prefer checks the user's own words or corrections ask for (a required prefix, section or phrase); a "
        "correction of substance (\"No, only change fix_url\") is a check of what the user wanted instead, and a "
        "preference stated in any turn counts, however late. Not only standing rules count: a one-off correction of "
        "substance or a design choice the user stated for this piece of work (\"color code them (borders, not "
        "text)\", \"Use stdout if OUTPUT_SCRIPT is not specified\", \"the script needs to truncate all the tables "
        "first\") is a task too, its checks testing what the user wanted (the file, name, value or option they named, "
        "present or absent as they said). Leave out plain requests that only say what to do next (\"commit and "
        "push\", \"go ahead\"), questions, and bug reports. Cover every preference and correction the user stated; "
        "in `said` quote the user's words that state each one, verbatim. "
        'Reply with JSON: {"tasks": [{"intent": ..., "checks": [{"op": ..., "arg": ...}], "rubric": ..., '
        '"said": [...]}]}.')


MINER_SYSTEM = miner_system()


def mining_request(part: SessionPart, max_tokens: int = 0) -> tuple[list[dict[str, str]], type[MinedTasks], int]:
    """A part's mining call: its messages, reply schema and reply cap, sized to what the part states (a part within
    MAX_PER_SESSION tasks is asked as before); `max_tokens` > 0 is the user's cap instead."""
    tasks = answer_tasks(part.statements)
    return ([{"role": "system", "content": miner_system(tasks)}, {"role": "user", "content": part.text}],
            mined_schema(tasks), max_tokens or answer_tokens(tasks))


def _norm(s: str) -> str:
    return " ".join(s.split()).casefold()


def task_id(digest: SessionDigest, intent: str) -> str:
    h = hashlib.sha256(f"{digest.agent}:{digest.session_id}:{_norm(intent)}".encode()).hexdigest()[:12]
    return f"{digest.agent}-{h}"


def _valid_checks(raw: Sequence[Any]) -> list[Check]:
    out: list[Check] = []
    for c in raw:
        try:
            out.append(Check.model_validate(c if isinstance(c, dict) else c.model_dump()))
        except ValidationError:
            continue  # a junk check is dropped, never applied
    return out


def to_record(digest: SessionDigest, intent: str, checks: list[Check], rubric: str, miner: str,
              evidence: list[dict[str, Any]] | None = None, turn: int | None = None) -> TaskRecord | None:
    """A task with its evidence: the session, the turn and the user's words the task and its checks came from;
    with the skills that turn used (the night trains each one's block on its tasks), the files it named, and the
    answer the user accepted (not corrected, not interrupted; a worked example of theirs, standing.py)."""
    intent = intent.strip()
    if not intent:
        return None
    if any(c.op != "no_refusal" for c in checks):
        judge = Judge(kind="rule", checks=checks)
    elif rubric.strip():
        judge = Judge(kind="rubric", rubric=rubric.strip())
    else:
        return None
    meta: dict[str, Any] = {"session": digest.session_id, "agent": digest.agent, "project": digest.project,
                            "miner": miner, "rubric": rubric.strip(), "evidence": evidence or []}
    t = digest.turns[turn] if turn is not None and 0 <= turn < len(digest.turns) else None
    if t is not None:
        meta["turn"] = turn
        if t.skills:
            meta["skills"] = list(t.skills)
            meta["skill_files"] = {n: digest.skill_files[n] for n in t.skills if n in digest.skill_files}
        if t.named_files:
            meta["named_files"] = list(t.named_files)
        if t.answer and not t.interrupted and turn not in corrected_turns(digest):
            meta["accepted"] = t.answer[:ACCEPTED_CHARS]
    return TaskRecord(task_id=task_id(digest, intent), task=intent, judge=judge, origin="real", meta=meta)


async def mine_llm(digests: Sequence[SessionDigest], teacher: LLM, *, max_tokens: int = 0,
                   on_error: Callable[[SessionDigest, str], None] | None = None) -> list[TaskRecord]:
    """0 to MAX_PER_SESSION tasks per mining prompt from the teacher (up to MAX_TASKS where the prompt states more
    than those quote): one prompt per session, or one per part of a session too long for one or stating more than
    one answer carries (session_prompt.session_parts), whose tasks are joined, each with the session's turn
    numbers; an unparsable reply mines nothing from that prompt. Each reply's cap is its schema's
    (`answer_tokens`), or `max_tokens` when > 0.

    Prompts are asked concurrently (the role's concurrency limit still applies), so a handoff teacher gets
    every mining prompt of the night in one round; results keep the sessions' and their parts' order."""

    async def one(d: SessionDigest, part: SessionPart) -> list[TaskRecord]:
        messages, schema, cap = mining_request(part, max_tokens)
        try:
            c = await teacher.complete(messages, schema=schema, max_tokens=cap, temperature=0.0, stage="mine")
        except (ProviderFatal, BudgetExceeded):
            raise
        except Exception as e:  # noqa: BLE001 - one session's bad reply is logged, not fatal
            if on_error:
                on_error(d, f"{type(e).__name__}: {str(e)[:200]}")
            return []
        mined = c.parsed if isinstance(c.parsed, MinedTasks) else None
        records = []
        for t in mined.tasks if mined else []:
            turn = asked_in(d, t.intent, part.turns)  # a turn the agent saw in this part
            if turn is None:
                if on_error:
                    on_error(d, f"dropped a mined task the user never asked for: {t.intent[:80]!r}")
                continue
            quotes: list[tuple[str, int]] = []
            for quote in t.said:
                at = said_in(d, quote, part.turns)
                if at is None:
                    if on_error:
                        on_error(d, f"dropped a quote the user never wrote: {quote[:80]!r}")
                    continue
                quotes.append((quote, at))
            checks = [c for c in _valid_checks(t.checks) if grounded(c, d, [q for q, _ in quotes])]
            evidence = [{"session": d.session_id, "turn": turn, "words": d.turns[turn].prompt[:200]}]
            for quote, at in quotes:
                evidence.append({"session": d.session_id, "turn": at, "words": quote[:200], "kind": "said"})
                checks += quoted_checks(d, at, quote, checks)
            records.append(to_record(d, t.intent, checks[:MAX_CHECKS], t.rubric, "llm", evidence, turn))
        return [r for r in records if r is not None]

    prompts = [(d, part) for d in digests for part in session_parts(d)]
    return [r for batch in await gather_all(*(one(d, part) for d, part in prompts)) for r in batch]


_PREFIX = re.compile(r"^\s*([A-Z][A-Za-z-]{1,20}):")
_WORD = re.compile(r"[a-z0-9][a-z0-9_\-]{2,}")
_COMMON = frozenset("the and for with that this from are was not you your please can could would what which how "
                    "give show tell make".split())
RECURRING_SESSIONS = 3  # a reply opening (`DONE:`) the user accepted in this many sessions is their convention
STANDING_SESSIONS = 2  # a preference for every reply stated in this many sessions holds for all requests


def _content(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _COMMON


def asked_in(d: SessionDigest, intent: str, turns: range | None = None) -> int | None:
    """The turn (of `turns`, default all) whose request a mined intent restates (shares a content word with), or
    None: a task the user never asked for ("Q: show tools A. ...") is junk."""
    want = _content(intent)
    best = max(((len(want & _content(d.turns[i].prompt)), i) for i in _among(d, turns)), default=(0, -1))
    return best[1] if best[0] else None


def said_in(d: SessionDigest, quote: str, turns: range | None = None) -> int | None:
    """The turn (of `turns`, default all) whose prompt holds a quote of the user's words: verbatim (case and
    spacing aside, quotes and ellipses trimmed), else the turn holding at least 80 % of its content words; None
    when the user never wrote it."""
    parts = [p for p in re.split(r"\s*(?:\.\.\.|…)\s*", _norm(quote).strip(" \"'“”`")) if p]
    if parts:
        for i in _among(d, turns):
            if all(p in _norm(d.turns[i].prompt) for p in parts):
                return i
    want = _content(quote)
    best = max(((len(want & _content(d.turns[i].prompt)), i) for i in _among(d, turns)), default=(0, -1))
    return best[1] if want and best[0] >= 0.8 * len(want) else None


def _among(d: SessionDigest, turns: range | None) -> range:
    """The turns a mining prompt showed: a part's (a quote "yes, do it" is from the turn the agent read), else all."""
    return range(len(d.turns)) if turns is None else range(max(turns.start, 0), min(turns.stop, len(d.turns)))


def quoted_checks(d: SessionDigest, turn: int, quote: str, have: Sequence[Check]) -> list[Check]:
    """The file, identifier or command a statement the agent quoted names ("Use word-diff", "look at the way it's
    done in @zsh_include.sh"), as a check that the reply contains it, when none of the agent's checks tests it:
    the agent finds the statement, the user's own words say what to test. Never a plain word or an acronym: the
    offline parser's checks of those ("never contains `changing`" for "Fix without changing anything in git
    config", "contains `DRY`" for "can you DRY that code?") test nothing the user meant."""
    said = stated_preferences(quote, correction=is_correction(d.turns[turn].prompt) or is_correction(quote))
    out: list[Check] = []
    for c in (st.check for st in said):
        if c is None or c.op != "contains" or not _names_a_thing(c.arg) or not grounded(c, d):
            continue
        if not any(c.arg.lower() in h.arg.lower() for h in [*have, *out]):
            out.append(c)
    return out


def _names_a_thing(term: str) -> bool:
    """A file, path, option or identifier (`word-diff`, `zsh_include.sh`, `python3`), not a word or an acronym
    ("DRY the code" is no requirement that the reply says `DRY`)."""
    return code_like(term) and bool(re.search(r"[._/\-]|\d", term))


def grounded(check: Check, d: SessionDigest, quotes: Sequence[str] = ()) -> bool:
    """A text check is kept when its text occurs in what the user or the agent wrote in the session, or when it
    names a word of a statement its task quotes from the user: "do not stash.. there is a parallel session
    running" is checked as a reply that never says `git stash`, a text the session need not hold."""
    if check.op not in ("contains", "not_contains", "section_present", "section_contains"):
        return True
    said = "\n".join([*(t.prompt for t in d.turns), *(t.answer for t in d.turns)]).lower()
    return check.arg.strip().lower() in said or bool(_content(check.arg) & _content(" ".join(quotes)))


def recurring_openings(digests: Sequence[SessionDigest], min_sessions: int = RECURRING_SESSIONS) -> set[str]:
    """Reply openings (`DONE:`) of uncorrected answers that recur across at least `min_sessions` sessions."""
    seen: dict[str, set[str]] = {}
    for d in digests:
        bad = {f.turn for f in d.feedback if f.kind in ("negative", "correction")}
        for i, t in enumerate(d.turns):
            m = _PREFIX.match(t.answer)
            if m and i not in bad and not t.interrupted:
                seen.setdefault(m.group(1), set()).add(d.session_id)
    return {label for label, sessions in seen.items() if len(sessions) >= min_sessions}


def corrected_turns(d: SessionDigest) -> set[int]:
    """Turns whose reply the next message corrects: the feedback classifier says so, the next message opens by
    rejecting it ("No, ...", "Stop that."), or it states a preference that the reply breaks ("Never use var."
    after a reply full of `var`)."""
    out = {f.turn for f in d.feedback if f.kind in ("negative", "correction")}
    for i, t in enumerate(d.turns[:-1]):
        nxt = d.turns[i + 1].prompt
        if is_correction(nxt) or (t.answer and any(not run_check(p.check, t.answer, [])
                                                   for p in preference_checks(nxt))):
            out.add(i)
    return out


def standing_preferences(digests: Sequence[SessionDigest], min_sessions: int = STANDING_SESSIONS,
                         ) -> list[tuple[Check, dict[str, Any]]]:
    """Preferences for every reply ("start every reply with Summary:", "never use var") that the user stated in at
    least `min_sessions` sessions, each with the evidence of where it was first said: a rule the user keeps
    repeating holds for all of their requests, not only the one they happened to say it in."""
    seen: dict[str, tuple[Check, dict[str, Any], set[str]]] = {}
    for d in digests:
        for i, t in enumerate(d.turns):
            for p in preference_checks(t.prompt):
                if p.every_reply:
                    key = f"{p.check.op}:{p.check.arg}"
                    first = seen.setdefault(key, (p.check, {"session": d.session_id, "turn": i, "words": p.words},
                                                  set()))
                    first[2].add(d.session_id)
    return [(c, {**ev, "why": f"a standing preference: stated in {len(ids)} sessions"})
            for c, ev, ids in seen.values() if len(ids) >= min_sessions]


def _requests(d: SessionDigest, corrections: set[int]) -> dict[int, list[tuple[int, Statement]]]:
    """Each request with what the user stated about it: in its own words and in every message that corrects its
    reply, a correction of a correction included ("No, do X" then "make sure you dont use Y" both belong to the
    request they correct)."""
    out: dict[int, list[tuple[int, Statement]]] = {}
    root = 0
    for i, t in enumerate(d.turns):
        if i == 0 or i - 1 not in corrections:
            root = i
        # the first turn of an export may answer a reply the export cut ("STOP WITH THE WRAPPER SAUCE: ...")
        said = stated_preferences(t.prompt, correction=(i > 0 and i - 1 in corrections and i != root)
                                  or (i == 0 and is_correction(t.prompt)))
        out.setdefault(root, []).extend((i, st) for st in said)
    return out


def _polarity(check: Check) -> tuple[str, bool] | None:
    """(term, wanted) of a check that requires or bans one term: `contains X` -> (x, True), never X -> (x, False)."""
    if check.op == "contains" and check.arg:
        return check.arg.lower(), True
    banned = absent_term(check)
    return (banned.lower(), False) if banned is not None else None


def _last_word(requests: dict[int, list[tuple[int, Statement]]], d: SessionDigest) -> dict[str, tuple[int, Check,
                                                                                                   dict[str, Any]]]:
    """For each term the user required or banned, their last statement of it in the session (turn, check, evidence):
    "STOP WITH THE WRAPPER: parseRecordIdString" then, later, "no, reintroduce parseRecordIdString" ends on the
    second (real_preferences_fresh.json)."""
    out: dict[str, tuple[int, Check, dict[str, Any]]] = {}
    for turn, st in sorted((x for said in requests.values() for x in said), key=lambda x: x[0]):
        if st.check is not None and (p := _polarity(st.check)) is not None:
            out[p[0]] = (turn, st.check, {"session": d.session_id, "turn": turn, "words": st.words, "kind": st.kind})
    return out


def _rubric(statements: list[tuple[int, Statement]]) -> str:
    words = "; ".join(dict.fromkeys(f'"{st.words}"' for _, st in statements))
    return f"The reply does what the user asked in their own words: {words}"[:400]


def mine_heuristic(digests: Sequence[SessionDigest]) -> list[TaskRecord]:
    """No model: a request becomes a task when the user's own words give it a check or a rubric - a preference
    stated in it, or a correction of its reply in a later message (every correction of the chain) - or when its
    reply opens the way the user's accepted replies do across sessions. A statement that names something
    testable (a file, an identifier, a command the user did not want) is a rule check; one that does not is judged
    against the user's words. Never from the incidental shape of one answer. A preference for every reply that
    the user repeats across sessions is checked on each of these tasks too. Every such request of a session is a
    task (a long real session states more than 5: 12 labelled statements in the 60 turns of polygon-kit,
    real_preferences_fresh.json); sessions take turns in the order, so a night's cap on tasks keeps each session's
    first ones."""
    openings = recurring_openings(digests)
    standing = standing_preferences(digests)
    per_session: list[list[TaskRecord]] = []
    for d in digests:
        out: list[TaskRecord] = []
        per_session.append(out)
        corrections = corrected_turns(d)
        requests = _requests(d, corrections)
        last = _last_word(requests, d)
        for i, said in requests.items():
            t = d.turns[i]
            checks = [st.check for _, st in said if st.check is not None]
            # one entry per statement, not per check: a sentence naming three things is quoted once
            evidence = [dict(e) for e in dict.fromkeys(
                (("session", d.session_id), ("turn", turn), ("words", st.words), ("kind", st.kind)) for turn, st in said)]
            for k, c in enumerate(checks):  # a check the user reversed later is checked the way they ended on
                p = _polarity(c)
                final = last.get(p[0]) if p else None
                if p and final and _polarity(final[1]) != p:
                    checks[k] = final[1]
                    if final[2] not in evidence:
                        evidence.append(final[2])
            m = _PREFIX.match(t.answer)
            if m and m.group(1) in openings and i not in corrections and not any(m.group(1) in c.arg for c in checks):
                checks.append(Check(op="regex", arg=f"^{re.escape(m.group(1))}:"))
                evidence.append({"session": d.session_id, "turn": i, "words": t.prompt[:200],
                                 "why": f"accepted replies open with {m.group(1)}: in {RECURRING_SESSIONS}+ sessions"})
            if not evidence:
                continue
            if checks:
                for c, ev in standing:
                    if not any(c.op == have.op and c.arg == have.arg for have in checks):
                        checks.append(c)
                        evidence.append(ev)
            rubric = _rubric([x for x in said if x[1].check is None]) if any(st.check is None for _, st in said) else ""
            rec = to_record(d, t.prompt, [Check(op="no_refusal"), *_unique(checks)], rubric, "heuristic", evidence, i)
            if rec is not None:
                out.append(rec)
    return [t for row in zip_longest(*per_session) for t in row if t is not None]


def _unique(checks: list[Check]) -> list[Check]:
    seen: set[tuple[str, str]] = set()
    return [c for c in checks if (c.op, c.arg) not in seen and not seen.add((c.op, c.arg))]  # type: ignore[func-returns-value]


def dedupe(tasks: Sequence[TaskRecord]) -> list[TaskRecord]:
    seen: set[str] = set()
    out: list[TaskRecord] = []
    for t in tasks:
        key = _norm(t.task)
        if key not in seen and t.task_id not in seen:
            seen.update((key, t.task_id))
            out.append(t)
    return out


def cap(tasks: Sequence[TaskRecord], max_tasks: int) -> list[TaskRecord]:
    return list(tasks[:max_tasks]) if max_tasks > 0 else list(tasks)
