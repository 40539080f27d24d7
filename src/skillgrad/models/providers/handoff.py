"""`handoff`: no API key and no CLI to spawn; the user's own agent answers the model calls.

A call whose answer is not on disk yet is written as a prompt file, and once no new call has arrived for
a moment (every call that could be issued concurrently has been asked), the process stops with
`AnswersNeeded` (exit code 3). The user's agent writes `answers/<id>.md`; rerunning the same command
reads them, the cache keeps them, and the run goes on deterministically from where it stopped.

    <run_dir>/handoff/PROMPTS.md        what to do, then every pending prompt in full
    <run_dir>/handoff/pending.json      the pending ids, roles, stages and file paths (machine-readable)
    <run_dir>/handoff/prompts/<id>.md   one prompt per call
    <run_dir>/handoff/answers/<id>.md   the reply, written by the user's agent

The id is the first 16 hex digits of the call's cache key, so the same call always has the same id.
Structured calls state their JSON schema; an answer that does not validate is moved to
`answers/<id>.rejected.md` and asked again with the parser's message.

    <run_dir>/handoff/index.json        every id asked -> its prompt's content hash, and the ids answered

A call whose id has no answer takes the answer of an earlier id with the same prompt content (the conversation,
the schema and the sample number): a changed reply length, stage name or sampling setting between reruns keeps
its answer. An answer that no call of the run has used is listed on one line (a warning, and `orphaned` in
pending.json), not dropped in silence: its prompt changed (the code, or an earlier reply it quotes).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import warnings
from pathlib import Path
from typing import Any, NoReturn

from skillgrad.config.schema import RoleConfig
from skillgrad.core.atomic import read_json, write_json, write_text
from skillgrad.errors import AnswersNeeded, OrphanedAnswers, StructuredOutputError, UsageError
from skillgrad.models.base import Completion, Request, Usage
from skillgrad.models.structured import parse_structured

ID_CHARS = 16
SETTLE_S = 0.3  # no new question for this long (and for SETTLE_TURNS loop turns) = every concurrent call asked
SETTLE_TURNS = 50  # turns, not only seconds: on a loaded machine a descheduled process sees time pass idle
PENDING = "pending.json"
INDEX = "index.json"
SHOWN_ORPHANS = 8  # ids named in the one-line notice; the count covers the rest
PROMPTS = "PROMPTS.md"
SCHEMA_HEAD = "JSON schema of the reply:"
# An agent answering a demonstrate prompt whose reply is itself JSON or spans lines wrote it unescaped.
STRING_NOTE = ("A string value is JSON-escaped: a reply that is itself JSON or has several lines goes inside the string "
               'with its quotes and line breaks escaped, e.g. {"reply": "{\\"severity\\": \\"low\\"}"} or '
               '{"reply": "1. First step.\\n2. Second step."}.')


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for p in content or []:
        if isinstance(p, dict) and p.get("type") == "text":
            parts.append(str(p.get("text", "")))
        else:
            parts.append("[image omitted: handoff prompts are text only]")
    return "\n".join(parts)


def prompt_hash(req: Request, *, sample: bool = True) -> str:
    """What the answer depends on: the conversation's text, the reply's schema and the sample number (two samples
    of one prompt are two answers). Not the stage, role, reply length or temperature. `sample=False`: the prompt's
    text alone, which two samples share."""
    body = {"messages": [[str(m.get("role", "user")), _text(m.get("content"))] for m in req.messages],
            "schema": req.schema.model_json_schema() if req.schema is not None else None,
            "sample": req.sample if sample else None}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:ID_CHARS]


def render_prompt(call_id: str, req: Request, answer_file: Path, note: str = "") -> str:
    """One call as a markdown prompt for an agent to answer."""
    fmt = ("a single JSON object that matches the JSON schema at the end (no prose around it)"
           if req.schema is not None else "plain text: only the assistant's reply")
    lines = [f"# skillgrad handoff prompt {call_id}", "",
             f"- role: {req.role or '-'}, stage: {req.stage or '-'}",
             f"- write the answer to: {answer_file}",
             f"- reply format: {fmt}",
             f"- reply length: at most about {req.max_tokens} tokens (the call's cap; a tighter limit stated in the "
             "prompt binds first)", ""]
    if note.startswith("this prompt was answered before"):
        lines += [f"Asked again: {note}.", ""]
    elif note:
        lines += [f"Your previous answer was rejected: {note}", ""]
    lines += ["Reply to the conversation below as its assistant would. Write only that reply to the answer file.", ""]
    for m in req.messages:
        role = str(m.get("role", "user"))
        lines += [f"<{role}>", _text(m.get("content")), f"</{role}>", ""]
    if req.schema is not None:
        lines += [SCHEMA_HEAD, "", "```json", json.dumps(req.schema.model_json_schema(), ensure_ascii=False, indent=1),
                  "```", "", STRING_NOTE, ""]
    return "\n".join(lines)


def again_note(earlier: str, sample: int) -> str:
    """Why a prompt already answered as `earlier` is asked again: another sample of it (a later epoch asks for a
    fresh answer to the same evidence)."""
    return (f"this prompt was answered before as {earlier} (answers/{earlier}.md); it is asked again as sample "
            f"{sample} of it, for a fresh answer: the run asks each epoch anew. Write your best answer now; it may "
            "differ from the earlier one")


def _short_prompts(bodies: list[str]) -> list[str]:
    """PROMPTS.md names a JSON schema it already showed instead of repeating it (a round of reflect calls repeats a
    1.5 KB schema per prompt); each prompts/<id>.md file keeps its own in full."""
    seen: dict[str, str] = {}
    out = []
    for body in bodies:
        head, sep, schema = body.partition(SCHEMA_HEAD)
        call_id = head.split("\n", 1)[0].rsplit(" ", 1)[-1]
        if sep and schema in seen:
            out.append(f"{head}{SCHEMA_HEAD} the same as for prompt {seen[schema]} above.\n")
            continue
        if sep:
            seen[schema] = call_id
        out.append(body)
    return out


class Board:
    """The handoff folder of one run: answers on disk, and the questions asked since the last flush."""

    def __init__(self, root: Path, scope: str = "") -> None:
        self.root = root.resolve()
        # Who asks on this board: a Sleep night's target runs share one folder (one board each, one after another),
        # and an answer written for the next target's call is not an orphan of this one's.
        self.scope = scope
        self.asked: dict[str, dict[str, Any]] = {}
        self.flushed = False
        self.flushes = 0  # rounds flushed by this process
        self.seq = 0  # questions asked so far; a waiter stops once it stays the same for a while
        index = read_json(self.root / INDEX, None)
        if index is None:  # a run from before the index: its answers were taken by the calls they answered
            index = {"used": [p.name[:-3] for p in (self.root / "answers").glob("*.md")]}
        self.hashes: dict[str, str] = dict(index.get("asked", {}))  # every id asked in this run -> prompt hash
        self.used: set[str] = set(index.get("used", []))  # ids whose answer a call of this run has taken
        self.scopes: dict[str, str] = dict(index.get("scopes", {}))  # id -> the scope that asked it
        self.texts: dict[str, str] = dict(index.get("texts", {}))  # id -> its prompt's text hash (no sample number)
        self.taken: dict[str, str] = {}  # answer id -> the call id that took it in this process
        self.warned: set[str] = set()
        self._stop: asyncio.Future[tuple[str, list[str]]] | None = None  # the round's stop, shared by its waiters
        self._settler: asyncio.Task[None] | None = None

    def answer_file(self, call_id: str) -> Path:
        return self.root / "answers" / f"{call_id}.md"

    def _read(self, call_id: str) -> str | None:
        try:
            return self.answer_file(call_id).read_text(encoding="utf-8").rstrip("\n")
        except FileNotFoundError:
            return None

    def read_answer(self, call_id: str, content: str = "") -> tuple[str, str] | None:
        """(answer id, text) of the call: its own answer, else the answer of an earlier id with the same content
        that no other call of this process took (two calls with one content get one answer each)."""
        for aid in [call_id, *sorted(a for a, h in self.hashes.items() if content and h == content and a != call_id)]:
            if self.taken.get(aid, call_id) != call_id:
                continue
            text = self._read(aid)
            if text is not None:
                self.used.add(aid)
                self.taken[aid] = call_id
                return aid, text
        return None

    def orphans(self) -> list[str]:
        """Answers on disk that no call of the run has taken and that are not asked now."""
        folder = self.root / "answers"
        ids = {p.name[:-3] for p in folder.glob("*.md") if not p.name.endswith(".rejected.md")} if folder.is_dir() else set()
        mine = {i for i in ids if self.scopes.get(i, self.scope) == self.scope}  # unknown: an answer of ours
        return sorted(mine - self.used - set(self.asked))

    def _save_index(self) -> None:
        write_json(self.root / INDEX, {"version": 1, "asked": dict(sorted(self.hashes.items())),
                                       "used": sorted(self.used), "scopes": dict(sorted(self.scopes.items())),
                                       "texts": dict(sorted(self.texts.items()))})

    def notice_orphans(self) -> list[str]:
        """Warn once per process (one line) about answers the run has not used; returns them."""
        orphaned = self.orphans()
        fresh = [o for o in orphaned if o not in self.warned]
        if fresh:
            self.warned.update(fresh)
            more = f" and {len(orphaned) - SHOWN_ORPHANS} more" if len(orphaned) > SHOWN_ORPHANS else ""
            warnings.warn(
                f"handoff: {len(orphaned)} answer(s) in {self.root / 'answers'} match no call of this run so far "
                f"({', '.join(orphaned[:SHOWN_ORPHANS])}{more}): the prompt each answered has changed (the code, "
                "or an earlier reply it quotes; a changed prompt is asked under a new id); the files are kept, unused",
                OrphanedAnswers, stacklevel=2)
        return orphaned

    def reject(self, answer_id: str, call_id: str, reason: str) -> None:
        path = self.answer_file(answer_id)
        path.replace(path.with_name(f"{answer_id}.rejected.md"))
        self.used.discard(answer_id)
        self.taken.pop(answer_id, None)
        self.asked.setdefault(call_id, {})["rejected"] = reason

    def ask(self, call_id: str, req: Request, note: str = "", content: str = "") -> None:
        if self.flushed:  # a new invocation in the same process: a new round
            self.asked, self.flushed = {}, False
        self.hashes[call_id] = content or prompt_hash(req)
        self.scopes[call_id] = self.scope
        text = self.texts[call_id] = prompt_hash(req, sample=False)
        before = sorted(a for a, h in self.texts.items() if h == text and a != call_id and self._read(a) is not None)
        # the same prompt, answered before: the prompt says why it is asked again (no silent byte-identical re-ask)
        shown = note or (again_note(before[0], req.sample) if before else "")
        prompt = self.root / "prompts" / f"{call_id}.md"
        if call_id not in self.asked or note:
            write_text(prompt, render_prompt(call_id, req, self.answer_file(call_id), shown))
            self.seq += 1
        self.asked[call_id] = {"id": call_id, "role": req.role, "stage": req.stage,
                               "structured": req.schema is not None, "max_tokens": req.max_tokens,
                               "prompt_file": str(prompt), "answer_file": str(self.answer_file(call_id)),
                               **({"schema": req.schema.model_json_schema()} if req.schema is not None else {}),
                               **({"rejected": note} if note else {}),
                               **({"asked_before_as": before[0]} if before and not note else {})}

    async def wait_and_stop(self) -> NoReturn:
        """Wait until every concurrent call has asked, then stop. All waiters share one settle task and raise
        together in the same loop turn, so none is cancelled by a sibling's stop (a cancelled call counts as a
        failed one in the meter)."""
        loop = asyncio.get_running_loop()
        if self._stop is None or self._stop.done() or self._stop.get_loop() is not loop:
            self._stop = loop.create_future()
            self._settler = loop.create_task(self._settle(self._stop))
        message, pending = await asyncio.shield(self._stop)
        raise AnswersNeeded(message, handoff_dir=str(self.root), pending=pending)

    async def _settle(self, stop: asyncio.Future[tuple[str, list[str]]]) -> None:
        try:
            while True:
                seen = self.seq
                for _ in range(SETTLE_TURNS):  # every ready task gets to run up to its own question
                    await asyncio.sleep(0)
                await asyncio.sleep(SETTLE_S)  # calls finishing in threads (a local judge) may still ask
                if self.seq == seen:
                    break
            if not self.flushed:
                self.flush()
            stop.set_result((f"answers needed: {len(self.asked)} prompt(s) in {self.root / PROMPTS}; write each reply "
                             f"to {self.root / 'answers'}/<id>.md and rerun the same command", sorted(self.asked)))
        finally:
            if not stop.done():  # the loop is shutting down: the waiters end with it
                stop.cancel()

    def flush(self) -> None:
        previous = read_json(self.root / PENDING, {}) or {}
        items = [self.asked[k] for k in sorted(self.asked)]
        self._save_index()
        write_json(self.root / PENDING, {"version": 1, "round": int(previous.get("round", 0)) + 1,
                                         "answers_dir": str(self.root / "answers"), "pending": items,
                                         "orphaned": self.notice_orphans()})
        head = ["# skillgrad: answers needed", "",
                f"{len(items)} model call(s) are waiting. For each prompt below, write the reply (and nothing else) "
                "to its answer file, then rerun the same skillgrad command. Structured prompts want one JSON "
                "object matching their schema.", "",
                *(f"- `{i['id']}` {i['role'] or '-'}/{i['stage'] or '-'}"
                  f"{' (structured)' if i['structured'] else ''}: {i['answer_file']}" for i in items), "", ""]
        body = [(self.root / "prompts" / f"{i['id']}.md").read_text(encoding="utf-8") for i in items]
        write_text(self.root / PROMPTS, "\n".join(head) + "\n---\n\n".join(_short_prompts(body)))
        (self.root / "answers").mkdir(parents=True, exist_ok=True)  # the agent writes into it; need not create it
        self.flushed = True
        self.flushes += 1

    def settle_idle(self, flushes_at_start: int) -> None:
        """A provider closing with no question asked since it started: no stale prompt list is left behind."""
        if self.flushes != flushes_at_start or (self.asked and not self.flushed):
            return
        if self.used or self.hashes:
            self._save_index()
            self.notice_orphans()
        (self.root / PROMPTS).unlink(missing_ok=True)
        if (self.root / PENDING).exists():
            previous = read_json(self.root / PENDING, {}) or {}
            write_json(self.root / PENDING, {**previous, "pending": []})


class HandoffProvider:
    name = "handoff"
    supports_vision = False
    is_agent = False
    concurrency = 100_000  # questions cost nothing to hold open: one round asks every concurrent call

    def __init__(self, role_cfg: RoleConfig, role: str) -> None:
        self.model = role_cfg.model or "agent"
        self.role = role
        self.board: Board | None = None
        self._flushes_at_start = 0

    def use_board(self, board: Board) -> None:
        """The run's one board (models/factory.build_models makes it): every handoff role and the judge of a
        run ask on it, so one round holds all their open questions."""
        self.board = board
        self._flushes_at_start = board.flushes

    def params(self) -> dict[str, Any]:
        return {}

    async def __call__(self, req: Request) -> Completion:
        if self.board is None:
            raise UsageError(f"model.{self.role}.provider=handoff needs a run directory for its prompt files; "
                             "run it through `skillgrad train`, `eval` or `sleep`")
        call_id = req.cache_key(self.name, self.model, self.params())[:ID_CHARS]
        content = prompt_hash(req)
        found = self.board.read_answer(call_id, content)
        text, note = (found[1] if found else None), ""
        if found is not None and req.schema is not None:
            try:
                parse_structured(found[1], req.schema)
            except StructuredOutputError as e:
                note = str(e)
                self.board.reject(found[0], call_id, note)
                text = None
        if text is not None:
            prompt_chars = sum(len(_text(m.get("content"))) for m in req.messages)
            return Completion(text=text, usage=Usage(prompt_tokens=prompt_chars // 4, completion_tokens=len(text) // 4),
                              cost=None, model=self.model, provider=self.name, finish_reason="stop")
        self.board.ask(call_id, req, note, content)
        await self.board.wait_and_stop()

    async def aclose(self) -> None:
        if self.board is not None:
            self.board.settle_idle(self._flushes_at_start)


def create(role_cfg: RoleConfig, role: str) -> HandoffProvider:
    return HandoffProvider(role_cfg, role)

