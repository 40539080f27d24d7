"""Demonstrate: worked examples proposed as edits, each verified by the environment's own scorer first.

Two sources, as in bootstrapped few-shot demonstrations, but inside the gated, bounded-edit loop:
- a task the student passed in this step's rollout: its own reply is the example (no teacher call; the
  rollout's score is the verification);
- a task it failed: the teacher writes the reply it should have given (one small call); the expected answer
  itself is the next candidate; then a few mechanical repairs of these and of the student's own reply are
  tried, built from the environment's failure feedback (each quoted text in it put at the start, on a line
  at the end, or leading a line; a word it bans replaced by the one it requires), because a small teacher
  knows the answer long before it writes the required form. A reply that is junk whatever its score (`junk`:
  it narrates the check, carries the learned block's markers, or stops after a lead-in) is never taken. The environment scores each candidate on the task
  (`verify_example`, envs/base.py) and the first with full marks becomes the edit; when none passes, the
  teacher's reply is logged as rejected. Environments without a verifier get passing-rollout examples only.

An accepted demonstration is an edit item `{"op": "example", "target": task, "content": reply}`: it counts
against the learning rate, goes through the update stage's checks and the gate like any other edit.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from skillgrad.core.gather import gather_all
from skillgrad.engine.demo_limits import earlier_line, judge, limit_line
from skillgrad.engine.evidence import render_trajectory
from skillgrad.engine.goodhart import Guard, checker_text_hits
from skillgrad.engine.schemas import demonstration_model
from skillgrad.engine.stages.demo_opening import stock_opening, stock_openings, without_stock_opening
from skillgrad.engine.stages.demo_request import Wordings, asks, example_request, norm_text, shared_opening
from skillgrad.engine.stages.demo_variety import repeats, required_texts
from skillgrad.engine.stages.required_text import (
    composed_forms,
    inline_texts,
    is_phrase,
    near_variant,
    quoted_texts,
    subject_words,
    swap_banned,
    task_request,
)
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import ExampleVerifier, Item, Trajectory
from skillgrad.envs.trajectory import gold_text
from skillgrad.models.base import LLM
from skillgrad.skill.examples import find_examples, split_examples


@dataclass
class DemoResult:
    items: list[dict[str, Any]] = field(default_factory=list)  # verified: edit items for the select stage
    log: list[dict[str, Any]] = field(default_factory=list)  # every candidate, verified or rejected, and why

    @property
    def rejected(self) -> list[dict[str, Any]]:
        return [d for d in self.log if not d["verified"]]

    def to_json(self) -> dict[str, Any]:
        return {"items": self.items, "log": self.log}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> DemoResult:
        return cls(items=list(d.get("items", [])), log=list(d.get("log", [])))


# A reply that talks about replies ("The response must contain exactly 3 sections", "This is a fixed answer")
# describes the check instead of doing the task: the student copies such a sentence into every reply.
# Measured in the Sleep benchmark (benchmarks/sleep_sessions.py): "The task asks for a list of items, and the response
# is not one that has a line starting with 'Summary:'" and "Summary: This is a response that has been provided to the
# task." passed their checks once labelled, and later replies copied them.
_ABOUT_REPLIES = re.compile(
    r"\b(?:the|a|your|this|each|every) (?:response|reply|answer|output)s? (?:must|should|has to|needs? to|is required)\b"
    r"|\bsections? named\b|\bfixed answer\b|\bchecks? (?:failed|passed)\b|\bwhat was wrong\b"
    r"|\b(?:has|have|with) a line (?:that|with|starting|beginning|ending)\b|\bwith the prefix\b"
    r"|\bthe (?:task|question|request|user) (?:asks|asked|wants|wanted|requires|required|is asking)\b"
    r"|\bthis is (?:a|an|the|my) (?:response|reply|answer)\b"
    r"|\bthis (?:response|reply) (?:is|was|does|did|has|will)\b"  # "Summary: This response is not a function."
    r"|\bthe assistant (?:replied|said|wrote)\b", re.IGNORECASE)  # the last: the teacher's view echoed back
# The learned block's marker text ("## SKILLGRAD:LEARNED START" in a reply): the system text echoed, not the task done.
_MARKER = re.compile(r"SKILLGRAD\s*:\s*LEARNED", re.IGNORECASE)
_ALPHA = re.compile(r"[A-Za-z]{3,}")
_WORDS = re.compile(r"[a-z0-9]+")
_JOINS = re.compile(r"(?:but|and|or|so|yet|nor|while|whereas|because)\b", re.IGNORECASE)  # a sentence's 2nd half
_CONNECTIVE = re.compile(r"^(?:however|but|so|also|still|instead|unfortunately|therefore|additionally),?\s+",
                         re.IGNORECASE)
MAX_CANDIDATES = 12  # verifications per failed task (a rubric judge costs a model call each)


# A reply cut off after announcing what comes ("Here's how:  1.", "Here's a sample of how to format due dates:"):
# the student reached its reply cap; as an example it teaches a lead-in with nothing after it (Sleep benchmark).
_DANGLING = re.compile(r":\s*(?:(?:\d+[.)]|[-*])\s*)?\Z")


def junk(reply: str, ends: list[str] | tuple[str, ...] = ()) -> str:
    """Why a reply is no worked example whatever its score ('' when it may be one): it talks about replies or the
    task instead of doing it, it carries the learned block's marker text, or it stops at a lead-in (`ends`: texts
    a reply of the task may end with, such as a required label)."""
    if _ABOUT_REPLIES.search(reply):
        return "talks about the reply or the task instead of doing it"
    if _MARKER.search(reply):
        return "carries the learned block's marker text"
    tail = reply.rstrip()
    if _DANGLING.search(tail) and not any(e.strip() and tail.endswith(e.strip()) for e in ends):
        return "stops after announcing what comes (cut off at the reply cap)"
    return ""


def _label(text: str, body: str) -> str:
    """`text` in front of `body`: "TL;DR: x", "1. x", "Summary: x" (a bare word becomes a label)."""
    text = text.rstrip()
    sep = ": " if text[-1:].isalnum() and body else " "
    return f"{text}{sep}{body}".rstrip()


def feedback_repairs(reply: str, feedback: str, required: Sequence[str] = ()) -> list[str]:
    """Candidate repairs of `reply` from the failure feedback: where it bans a word and requires another ("contains
    'pnpm'", "does not use the word 'npm'"), the reply with the one replaced by the other, labelled as below, then
    alone; then the label repairs of the reply itself (`_label_repairs`). `required`: the texts every passing reply
    of the task holds (a banned word may be swapped for an alike one of them, see `swap_banned`). The scorer decides
    which, if any, pass."""
    reply = reply.strip()
    swapped = swap_banned(reply, feedback, required)
    if not swapped:
        return _label_repairs(reply, feedback)
    return list(dict.fromkeys([*_label_repairs(swapped, feedback), swapped, *_label_repairs(reply, feedback)]))


def _label_repairs(reply: str, feedback: str) -> list[str]:
    """Repairs of `reply` from the quoted texts of the failure feedback: a quoted form with a `...` placeholder
    filled with the reply; all of them (the first at the start, the rest on lines at the end); each one leading
    a line of the reply in turn (numbered steps, labelled sections); then each alone at the start, then each
    alone at the end."""
    quoted = quoted_texts(feedback)
    reply = reply.strip()
    if not quoted or not reply:
        return []
    parts = [p for p in re.split(r"(?<=[.!?])\s+|\n+", reply) if p.strip()]
    if len(parts) < len(quoted):  # fewer sentences than labels: clauses, so that no label is left empty
        parts = [p for p in re.split(r"(?<=[.!?,;:])\s+|\n+|\s+(?=and |but )", reply) if p.strip()]
    parts += [""] * (len(quoted) - len(parts))
    spread = [_label(q, parts[i]) for i, q in enumerate(quoted)]
    out = [filled for q in quoted if (filled := _fill(q, reply))]  # a form to fill in: the most specific repair
    out += ["\n".join([_label(quoted[0], reply), *(q.strip() for q in quoted[1:])])]
    # one piece of the reply per quoted label (sections, steps), without and with the rest; only when every
    # label gets words (`1. 1.` is an empty step that passes a list check) and leads a line (a text the reply must
    # contain, spread, gave "I can't help with that: Please go ahead" / "security@corp.example: and provide ...")
    inline = inline_texts(feedback)
    if len(quoted) > 1 and all(_sentence(p) for p in parts[:len(quoted)]) and not inline:
        out += ["\n".join(spread), "\n".join(spread + parts[len(quoted):])]
    out += [_label(q, reply) for q in quoted if q == quoted[0] or q not in inline]
    out += [f"{reply}\n{q.strip()}" for q in quoted]
    # A repair must still say something besides the checker's quoted text: `1. 1.` / `2. '1.` passes a list
    # check and teaches the student to reply with nothing (the three-steps suite skill accepted one).
    return list(dict.fromkeys(c for c in out if c != reply and _says_something(c, quoted)))


def _sentence(piece: str) -> bool:
    """A piece of a reply that a label may lead: not the second half of a sentence (a piece opening with "but",
    "and", ...) nor a piece of code. Review-sections kept `Summary: The email worker process is not only a
    performance improvement` / `Risks: but also an optimization ...` and `Risks: ```python def create_user(username,`
    / `Verdict: password):`; 4 of 10 held-out replies then copied the first ("Summary: This action is not only a
    performance improvement"). A clause that reads on its own (`2. you'll need to install a firmware update ...`)
    may lead a line: for three-steps, refusing every clause left no verified example at all."""
    p = piece.strip()
    return bool(_ALPHA.search(p)) and not _JOINS.match(p) and not p.endswith(":") and "`" not in p \
        and not re.search(r"[{}()=<>\[\]]", p)


def _instruction_lines(skill: str) -> list[str]:
    """The skill's headings of 2+ words outside its examples (normalised): a reply that repeats one echoes the
    system text ("# Engineering status updates" at the start of every tldr-status reply), it does not do the task.
    Headings only: a rule line the reply restates (a fact the skill holds) is what a worked example shows."""
    body, _ = split_examples(skill)
    lines = (" ".join(_WORDS.findall(x.lower())) for x in body.splitlines() if x.lstrip().startswith("#"))
    return [x for x in lines if len(x.split()) >= 2]


def _echoes(reply: str, lines: list[str]) -> bool:
    norm = " ".join(_WORDS.findall(reply.lower()))
    return any(x in norm for x in lines)


def _fill(form: str, reply: str) -> str:
    """A quoted form with a `...` placeholder (`{"title": "..."}`) filled with the reply's first sentence
    (JSON-escaped inside quotes): the form the feedback names, carrying what the reply says; '' when the form has
    no placeholder."""
    line = next((x.strip() for x in reply.splitlines() if x.strip()), "")
    line = re.split(r"(?<=[.!?])\s+", line)[0][:160]  # its first sentence: a title, a value, not a paragraph
    if '"..."' in form:
        return form.replace('"..."', json.dumps(line), 1)
    return form.replace("...", line, 1) if "..." in form else ""


def _says_something(text: str, quoted: list[str]) -> bool:
    for q in quoted:
        text = text.replace(q, " ")
    return len(re.findall(r"[A-Za-z]{3,}", text)) >= 2


def _edit(t: Trajectory, reply: str, source: str, asked: str = "") -> dict[str, Any]:
    """The example edit, asked as `asked` (by default the task; stages/demo_request.py)."""
    return {"op": "example", "target": asked or t.question.strip(), "content": reply.strip(),
            "source_type": "demonstration",
            "support_count": 1, "failure_kind": "other" if source == "passing_rollout" else "format",
            "demonstration": {"item_id": t.item_id, "source": source}}


def teacher_view(t: Trajectory, skill: str, *, compact: bool, limit: str = "", earlier: str = "") -> str:
    """The failed task as the teacher reads it, with the limit its reply is held to and, when the task is asked
    again, why (engine/demo_limits.py). Compact (small teachers copy the last line they read): the task, the
    reply, what was wrong, and the expected answer last, as measured with the 135M teacher (no notes: with the
    limit line its corrections changed and none was verified on fewshot-format)."""
    if not compact:
        return "\n".join([render_trajectory(t, skill), *(x for x in (limit, earlier) if x)])
    lines = [f"Task: {t.question.strip()}"]
    if not t.fail_reason.startswith("missing_knowledge"):  # a wrong fact only gets copied
        lines.append(f"The assistant replied: {' '.join(t.answer.split())[:300] or '(nothing)'}")
    if t.fail_reason:
        lines.append(f"What was wrong: {t.fail_reason}")
    lines.append(f"Expected answer: {gold_text(t.gold)}")
    return "\n".join(lines)


async def demonstrate(
    trajs: list[Trajectory], items: dict[str, Item], skill: str, teacher: TeacherCall, env: Any, student: LLM, *,
    limit: int, max_chars: int, seed: int, compact: bool = False, sample: int = 0,
    refused: dict[tuple[str, str], int] | None = None, corrections: int | None = None, teacher_first: bool = False,
    earlier: dict[str, tuple[int, str, str]] | None = None,
) -> DemoResult:
    """At most `limit` verified examples from passing rollouts, at most `corrections` (default `limit`) from
    teacher-corrected failures and at most `limit` from repairs of the student's own replies on other failed tasks.
    `teacher_first`: the teacher's verified corrections lead the items (and so the learning-rate budget), ahead of
    the student's own passing or repaired replies. A reply in `refused` ((item id,
    normalised reply) -> step: it was in a candidate the gate refused) is not proposed again; the next one is. The
    task's expected answer is the exception: it is the one reply the data call right. `earlier`: item id -> (step,
    reply, why) of the teacher's refused correction of that task in an earlier step, told when it is asked again."""
    result = DemoResult()
    if limit <= 0:
        return result
    have = [e.question for e in find_examples(skill)]
    skill_lines = _instruction_lines(skill)
    usable = [t for t in trajs if t.question.strip() and not any(asks(t.question, q) for q in have)
              and not t.env_error]
    opening = shared_opening([t.question for t in trajs])  # "Review this PR:": how the data are worded
    wordings = Wordings(opening, have)  # examples asked with it and without, in turn
    rng = random.Random(seed)
    passed = sorted((t for t in usable if not t.failed and t.answer.strip()), key=lambda t: len(t.answer))
    # the examples so far (the skill's, then this step's): a reply repeating one for another task is not taken
    shown, required = [(e.question, e.reply) for e in find_examples(skill)], required_texts(trajs)
    # the student's habitual opening ("Hey everyone, it's a great ..."), cut from its replies (stages/demo_opening.py)
    stock = stock_openings([(t.question, t.answer) for t in usable if t.answer.strip()], required)

    trims = 0  # cuts scored so far: at most 4 x limit a step (a rubric verifier costs a call per candidate)

    async def trimmed(t: Trajectory) -> str:
        """The passing reply without its stock opening, when the environment's scorer passes the rest ('' if not)."""
        nonlocal trims
        cut = without_stock_opening(t.answer, stock, _required(t))
        if not cut or not isinstance(env, ExampleVerifier) or t.item_id not in items or junk(cut) \
                or len(t.question) + len(cut) > max_chars or _again(t, cut, refused, opening) \
                or repeats(t.question, cut, shown, required) or trims >= 4 * limit:
            return ""
        trims += 1
        return cut if float(await env.verify_example(items[t.item_id], cut, student)) >= 1.0 - 1e-9 else ""

    for t in passed:
        if len(result.items) >= limit:
            break
        if cut := await trimmed(t):
            shown.append((t.question, cut))
            result.items.append(_edit(t, cut, "passing_rollout_trimmed", wordings.ask(t.question)))
            result.log.append(_entry(t, cut, "passing_rollout_trimmed", 1.0, True,
                                     "the rollout passed; its stock opening cut, the scorer passed the rest"))
            continue
        if len(t.question) + len(t.answer) > max_chars:
            result.log.append(_entry(t, t.answer, "passing_rollout", t.hard, False, "longer than max_example_chars"))
            continue
        if habit := stock_opening(t.answer, stock, _required(t)):
            result.log.append(_entry(t, t.answer, "passing_rollout", t.hard, False, _habit_why(habit)))
            continue
        if why := _again(t, t.answer, refused, opening) or _repeat_why(repeats(t.question, t.answer, shown, required)):
            result.log.append(_entry(t, t.answer, "passing_rollout", t.hard, False, why))
            continue
        if why := junk(t.answer):  # a passing reply can be junk too ("This is a response that has been provided")
            result.log.append(_entry(t, t.answer, "passing_rollout", t.hard, False, why))
            continue
        shown.append((t.question, t.answer))
        result.items.append(_edit(t, t.answer, "passing_rollout", wordings.ask(t.question)))
        result.log.append(_entry(t, t.answer, "passing_rollout", t.hard, True, "the rollout passed"))
    if not isinstance(env, ExampleVerifier):
        return result
    failed = [t for t in usable if t.failed and t.item_id in items]
    rng.shuffle(failed)
    schema = demonstration_model(max_chars)
    async def verified(t: Trajectory, candidates: list[str], sources: dict[str, str], log: list[dict[str, Any]],
                       reasons: dict[str, str] | None = None) -> tuple[dict[str, Any] | None, bool]:
        """The first candidate the environment's scorer passes on `t`'s task, as an edit (None when none does),
        and whether any candidate was tried; `reasons` gets why each candidate was refused (the rule named)."""
        reasons = {} if reasons is None else reasons
        # a reply in the voice of the checker's feedback is a copy even when it passes (engine/goodhart.py); one that
        # keeps a wrong copy of a required text beside the right one ("I can't help with that: I can help you with
        # that: Please go ahead ...", refusal-policy) teaches both
        quoted = quoted_texts(t.fail_reason)
        ends = [q for q in quoted if f"ends with {q!r}" in t.fail_reason]  # "X\nSummary:" is cut off, "X. OK:" asked

        def screened(c: str) -> str:  # why a candidate is not even scored ('' when it is)
            if len(t.question) + len(c) > max_chars:
                return f"too long ({len(t.question) + len(c)} > {max_chars} characters with its task)"
            if checker_text_hits(c, Guard()) or near_variant(c, quoted) or \
                    (quoted and sources.get(c) != "expected_answer" and not _says_something(c, quoted)):
                return "guard: copies the checker's wording"
            if why := junk(c, ends):
                return f"guard: {why}"
            if sources.get(c) != "expected_answer" and (habit := stock_opening(c, stock, _required(t))):
                return f"guard: {_habit_why(habit)}"
            return "guard: repeats a heading of the skill" if _echoes(c, skill_lines) else ""

        for c in dict.fromkeys(candidates):
            if c not in reasons:
                reasons[c] = screened(c)
        candidates = [c for c in dict.fromkeys(candidates) if not reasons[c]]
        for cand in candidates[:MAX_CANDIDATES]:
            score, reasons[cand] = await judge(env, items[t.item_id], cand, student)
            if score >= 1.0 - 1e-9:
                source = sources.get(cand, "feedback_repair")
                # the next candidate may vary with the task, or may not have been refused at the gate before; the
                # task's own expected answer stays (a refused candidate of ten facts says nothing against each of
                # them, and a fact has no other wording to try: the facts demo fell from 43 % to 23 % held-out)
                again = refused if source != "expected_answer" else None
                if why := _again(t, cand, again, opening) or _repeat_why(repeats(t.question, cand, shown, required)):
                    reasons[cand] = f"repeat: {why}"
                    log.append(_entry(t, cand, source, score, False, reasons[cand]))
                    continue
                shown.append((t.question, cand))
                log.append(_entry(t, cand, source, score, True, "the environment's scorer passed it"))
                return _edit(t, cand, source, wordings.ask(t.question)), True
        return None, bool(candidates)

    def trimmed_own(t: Trajectory) -> list[str]:
        """A failed reply without its stock opening, then that cut's feedback repairs (a greeting can be what runs a
        reply past a length limit). Tried after the reply's own repairs, those with a stock opening taken out: first
        in line, they took the 12 tries from the repairs that pass (three-steps: 0.70 -> 0.30 held-out)."""
        cut = without_stock_opening(t.answer, stock, _required(t))
        return [cut, *repairs(cut, t.fail_reason, t.question, _required(t))] if cut else []

    async def correct(t: Trajectory) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """One failed trajectory: the teacher's corrected reply, verified (log entries, the edit item or None)."""
        log: list[dict[str, Any]] = []
        view = teacher_view(t, skill, compact=compact, earlier=earlier_line((earlier or {}).get(t.item_id)),
                            limit=limit_line(env, items.get(t.item_id), student, t.question, max_chars))
        # a small teacher (compact) keeps the short prompt measured with it: the skill, the syntax and the limits are
        # for a teacher that can act on them (issue 31); the 135M teacher's replies changed with every added line
        reply = await teacher.ask("demonstrate_compact" if compact else "demonstrate", schema, stage="demonstrate",
                                  values={"skill": skill.strip()}, evidence_key="task", evidence=[view], sample=sample)
        text = str(getattr(reply.parsed, "reply", "") or "").strip() if reply.parsed is not None else ""
        if not text:
            log.append(_entry(t, reply.raw, "teacher_correction", None, False,
                              f"no usable reply: {reply.error or 'empty'}"))
        gold = _first_gold(t.gold)
        forms = composed_forms(t.fail_reason, t.answer, t.question, also=text)
        asked = restated(t)
        need = _required(t)
        own = trimmed_own(t)
        candidates = [c for c in (text, gold) if c] + forms + repairs(text, t.fail_reason, t.question, need) \
            + feedback_repairs(gold, t.fail_reason, need) + repairs(t.answer, t.fail_reason, t.question, need) + own \
            + asked
        sources = {**dict.fromkeys(own, "own_reply_trimmed"), **dict.fromkeys(forms, "composed_form"),
                   **dict.fromkeys(asked, "task_restated"), text: "teacher_correction", gold: "expected_answer"}
        reasons: dict[str, str] = {}
        item, tried = await verified(t, candidates, sources, log, reasons)
        # the rule that refused the teacher's own reply (length, checks, guard, repeat), also when another candidate
        # passed in its place: the teacher is told it when the task is asked again (engine/demo_limits.py)
        if text and (item is None or item["content"] != text.strip()):
            why = reasons.get(text) or "not scored: the scorer's tries went to other candidates"
            log.append(_entry(t, text, "teacher_correction", 0.0 if tried else None, False, why))
        return log, item

    async def repair_own(t: Trajectory) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """A failed trajectory the teacher is not asked about: repairs of the student's own reply only (no call
        but the scorer's), so a step can show the student its own words in the required form on more tasks."""
        log: list[dict[str, Any]] = []
        forms, asked, own = composed_forms(t.fail_reason, t.answer, t.question), restated(t), trimmed_own(t)
        candidates = forms + repairs(t.answer, t.fail_reason, t.question, _required(t)) + own + asked
        sources = {**dict.fromkeys(own, "own_reply_trimmed"), **dict.fromkeys(forms, "composed_form"),
                   **dict.fromkeys(asked, "task_restated")}
        item, tried = await verified(t, candidates, sources, log)
        if item is None:
            log.append(_entry(t, t.answer, "own_reply_repair", 0.0 if tried else None, False,
                              "no repair of the student's reply passed" if tried else "no repair to try"))
        return log, item

    # The failures are corrected together (in order of the shuffle): a handoff teacher gets them in one round.
    n_correct = limit if corrections is None else max(0, corrections)
    for log, item in await gather_all(*(correct(t) for t in failed[:n_correct])):
        result.log.extend(log)
        if item is not None:
            result.items.append(item)
    # Then up to `limit` examples from the student's own replies on the other failed tasks, tried in turn
    # (at most 4 x limit tasks: a rubric verifier costs a call per candidate).
    own = 0
    for t in failed[n_correct:n_correct + 4 * limit]:
        if own >= limit:
            break
        log, item = await repair_own(t)
        result.log.extend(log)
        if item is not None:
            result.items.append(item)
            own += 1
    if teacher_first:  # stable: the order within each group stays
        result.items.sort(key=lambda it: (it.get("demonstration") or {}).get("source") != "teacher_correction")
    return result


def repairs(reply: str, feedback: str, question: str = "", required: Sequence[str] = ()) -> list[str]:
    """The feedback repairs of a reply, then of its cuts (a required text added to a shorter reply fits a reply
    cap the whole one runs past), then the cuts alone; the best-placed first, for MAX_CANDIDATES to keep. The cut
    to the sentence about the task comes first among the cuts."""
    focus = focused(reply, question)
    cuts = shortened(reply)
    whole = feedback_repairs(reply, feedback, required)
    cut = [r for c in [*focus, *reversed(cuts)] for r in feedback_repairs(c, feedback, required)[:3]]
    return list(dict.fromkeys([*whole[:4], *cut, *whole[4:], *focus, *cuts]))


def restated(t: Trajectory) -> list[str]:
    """What the task asked, in the required form ("I can't help with that: reset my manager's password ..."), the
    last candidates for a task: a reply that names what was asked where the student's own words promised the
    forbidden action or named nothing (refusal-policy)."""
    asked = task_request(t.question)
    if not asked:
        return []
    # every text the task requires (the `tasks` env records them with each reply), not only those the reply
    # lacked: a student that copied an example's refusal for another task failed only the subject check
    labels = [str(x) for x in (t.extras or {}).get("required_text", []) if str(x).strip()]
    # Only where the task requires a sentence (a refusal): that sentence is the reply's content and naming the
    # request completes it. A label (`Summary:`, `TL;DR:`) asks for content the request does not hold: in the Sleep
    # benchmark "Summary: Write a helper that counts overdue invoices." made 6 of 8 later replies restate theirs.
    if not any(is_phrase(x) for x in labels or quoted_texts(t.fail_reason)):
        return []
    whole = ["\n".join([_label(labels[0], asked), *(x.strip() for x in labels[1:])])] if labels else []
    return list(dict.fromkeys(whole + feedback_repairs(asked, t.fail_reason)[:2]))


def _sentences(reply: str) -> list[str]:
    return [p.strip() for p in re.split(r"(?<=[.!?])\s+", reply.strip().replace("\n", " ")) if p.strip()]


def shortened(reply: str) -> list[str]:
    """The reply cut to its first line, first sentence and first two sentences (a reply that runs past a length
    limit, or whose tail breaks the form, may pass once cut); only cuts shorter than the reply."""
    reply = reply.strip()
    sentences = _sentences(reply)
    cuts = [reply.splitlines()[0] if reply else "", " ".join(sentences[:1]), " ".join(sentences[:2])]
    return [c.strip() for c in dict.fromkeys(cuts) if c.strip() and len(c.strip()) < len(reply)
            and len(re.findall(r"[A-Za-z]{3,}", c)) >= 3]


def focused(reply: str, question: str) -> list[str]:
    """The reply cut to its sentence that shares the most subject words with the task, when that is not its first
    sentence: measured on refusal-policy, the student opened with "I'm sorry for any confusion." and named the
    task later ("I can't provide a list of all employees' personal phone numbers ..."); a cut to the opening says
    nothing about the task."""
    sentences, task = _sentences(reply), subject_words(question)
    if len(sentences) < 2 or not task:
        return []
    overlap = [len(subject_words(x) & task) for x in sentences]
    best = max(range(len(sentences)), key=lambda i: (overlap[i], -i))
    if overlap[best] <= overlap[0]:
        return []
    cut = _CONNECTIVE.sub("", sentences[best])  # "However, I can't ..." out of its context reads "I can't ..."
    return [cut[:1].upper() + cut[1:]]


def _again(t: Trajectory, reply: str, refused: dict[tuple[str, str], int] | None, opening: str = "") -> str:
    """Why `reply` is no example for `t` after all: it was in a refused candidate, or it is its request as the
    example asks it, word for word (push-length: `Q: The app now shows trail conditions from other hikers.` with the
    same reply taught the student to hand back requests such as "Compose a nudge for people who ...")."""
    step = (refused or {}).get((t.item_id, norm_text(reply)))
    if step is not None:
        return f"was in step {step}'s candidate, which the gate refused"
    asked = example_request(t.question, opening)
    return "repeats its request word for word" if _words(reply) == _words(asked) else ""


def _words(text: str) -> list[str]:
    return _WORDS.findall(text.casefold())


def _required(t: Trajectory) -> list[str]:
    """The texts the environment says every passing reply of the task holds (the `tasks` env records them)."""
    return [str(x) for x in (t.extras or {}).get("required_text", []) if str(x).strip()]


def _habit_why(opening: str) -> str:
    return (f"opens with the student's stock opening ({opening!r}, most replies of the step do): every later reply "
            "would open so")


def _repeat_why(same: str) -> str:
    if not same:
        return ""
    return f"repeats another example's reply for a different task ({' '.join(same.split())[:80]!r})"


def _first_gold(gold: Any) -> str:
    """The expected answer as a reply candidate (the first of several); '' when there is none."""
    if isinstance(gold, list | tuple):
        gold = gold[0] if gold else ""
    return gold.strip() if isinstance(gold, str) else ""


def _entry(t: Trajectory, reply: str, source: str, score: float | None, verified: bool, why: str) -> dict[str, Any]:
    return {"item_id": t.item_id, "source": source, "question": t.question.strip()[:400], "reply": reply[:600],
            "score": score, "verified": verified, "why": why}
