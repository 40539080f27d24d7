"""SearchQA environment.

Items: {id, question, context, answers[]} (SkillOpt's materialised HF `lucadiliello/searchqa` rows; `key`
is accepted for `id`). The context is cut at `[DOC]` boundaries to `context_chars` (6,000) characters.
The answer is the last <answer>...</answer> in the reply, else its last line; hard = exact match after
SQuAD normalisation, soft = the best token F1 over the gold answers. `max_turns` > 1 lets the student
refine: a reply with no <answer> tag gets a follow-up asking for one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from skillgrad.envs.base import EnvOptions, Item, Trajectory
from skillgrad.envs.benchkit import BenchEnv, as_list, extract_answer, write_prepared
from skillgrad.envs.chat import student_messages, usage_extras
from skillgrad.envs.scoring import exact_match, token_f1
from skillgrad.envs.splits import read_records
from skillgrad.errors import DataError
from skillgrad.models.base import LLM, Message

PREAMBLE = ("You answer trivia questions using search results. Think briefly, then give the final answer "
            "inside <answer></answer> tags.")
_DOC = re.compile(r"(?=\[DOC\])")


def truncate_context(context: str, limit: int = 6000) -> str:
    """Keep whole `[DOC]` blocks while they fit in `limit` characters (the first block is cut if it alone is too long)."""
    if len(context) <= limit:
        return context
    out = ""
    for block in (b for b in _DOC.split(context) if b):
        if len(out) + len(block) > limit:
            break
        out += block
    return out if out else context[:limit]


class SearchQAOptions(EnvOptions):
    max_turns: int = Field(1, ge=1, description="Student turns; later turns only ask for a missing <answer>.")
    max_tokens: int = Field(256, ge=8, description="Completion token cap per student turn.")
    context_chars: int = Field(6000, ge=100, description="Context budget, cut at [DOC] boundaries.")


class SearchQAEnv(BenchEnv):
    name: ClassVar[str] = "searchqa"
    scorer: ClassVar[str] = "EM (SQuAD-normalised) / token F1"
    Options: ClassVar[type[SearchQAOptions]] = SearchQAOptions  # type: ignore[assignment]
    package_dir: ClassVar[Path] = Path(__file__).parent
    default_task_types: ClassVar[tuple[str, ...]] = ("qa",)

    def parse_item(self, record: Any, split: str) -> Item:
        if not isinstance(record, dict):
            raise ValueError("expected an object with id, question, context, answers")
        rid = record.get("id", record.get("key"))
        if rid is None or rid == "":
            raise KeyError("id")
        answers = as_list(record["answers"])
        if not answers:
            raise ValueError("field 'answers' is empty")
        return Item(id=str(rid), inputs={"question": str(record["question"]), "context": str(record["context"])},
                    gold=answers, task_type="qa")

    def user_prompt(self, item: Item) -> str:
        context = truncate_context(item.inputs["context"], self.options.context_chars)
        return (f"Context:\n{context}\n\nQuestion: {item.inputs['question']}\n"
                "Give the final answer inside <answer></answer>.")

    async def _run(self, item: Item, skill: str, student: LLM, *, sample: int, temperature: float,
                   feedback: bool) -> Trajectory:
        messages: list[Message] = student_messages(skill, PREAMBLE, self.user_prompt(item))
        reply = ""
        usage: dict[str, Any] = {}
        for turn in range(self.options.max_turns):
            completion = await self.ask(student, messages, max_tokens=self.options.max_tokens,
                                        temperature=temperature, sample=sample)
            reply = completion.text or ""
            usage = usage_extras(completion)
            messages.append({"role": "assistant", "content": reply})
            if "<answer>" in reply.lower() or turn == self.options.max_turns - 1:
                break
            messages.append({"role": "user", "content": "Give your final answer inside <answer></answer>."})
        answer = extract_answer(reply)
        hard = exact_match(answer, item.gold)
        soft = token_f1(answer, item.gold)
        if hard >= 1.0:
            reason = ""
        elif not answer:
            reason = "no_answer: the reply was empty"
        elif soft > 0:
            reason = f"partial: {answer!r} overlaps a gold answer but is not an exact match"
        else:
            reason = f"wrong_answer: {answer!r} matches no gold answer"
        return self.finish(item, messages, answer, hard=hard, soft=soft, fail_reason=reason,
                           extras={**usage, "turns": sum(1 for m in messages if m["role"] == "assistant")})

    async def verify_example(self, item: Item, reply: str, student: LLM) -> float:
        return exact_match(extract_answer(reply), item.gold)

    @classmethod
    def prepare(cls, src: Path, dest: Path, *, ratio: str = "2:1:7", seed: int = 42) -> dict[str, Any]:
        """HF-style JSON/JSONL (a file, or a directory of them) -> split_dir layout."""
        src = Path(src)
        files = sorted(p for p in src.rglob("*") if p.suffix in (".json", ".jsonl")) if src.is_dir() else [src]
        if not files:
            raise DataError(f"{src}: no .json or .jsonl files found")
        records: list[dict[str, Any]] = []
        for path in files:
            for n, rec in enumerate(read_records(path, key="--from")):
                if not isinstance(rec, dict):
                    raise DataError(f"{path}: record {n} is not an object")
                for key in ("question", "context"):
                    if key not in rec:
                        raise DataError(f"{path}: record {n} is missing field {key!r}")
                answers = rec.get("answers", rec.get("answer"))
                if answers is None:
                    raise DataError(f"{path}: record {n} is missing field 'answers'")
                if isinstance(answers, str) and answers.startswith("["):
                    answers = json.loads(answers)
                rid = rec.get("id", rec.get("key", rec.get("qid", f"{path.stem}-{n}")))
                records.append({"id": str(rid), "question": rec["question"], "context": rec["context"],
                                "answers": as_list(answers)})
        return write_prepared(records, Path(dest), env=cls.name, source=src, ratio=ratio, seed=seed)
