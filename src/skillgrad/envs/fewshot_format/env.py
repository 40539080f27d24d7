"""`fewshot-format`: easy questions whose reply must start with "ANSWER:" and contain the answer.

Small models ignore a format instruction but copy the format of worked examples sent as chat turns,
so this family rewards a skill that carries `Q:`/`A:` examples (see envs/chat.py). Splits are cut
from the generated questions with `env.split_ratio` and `env.split_seed`, unless `env.data_path` /
`env.split_dir` give records {"id", "question", "answer" (string or list), "task_type"?}.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from skillgrad.config.schema import EnvSection
from skillgrad.envs.base import SPLITS, EnvOptions, Item, ReplyContract, Splits, Trajectory
from skillgrad.envs.chat import read_skill_file, single_turn_task
from skillgrad.envs.fewshot_format.data import generate_records
from skillgrad.envs.scoring import contains_whole_word
from skillgrad.envs.splits import (
    generated_family_status,
    load_splits,
    parse_ratio,
    ratio_counts,
    uses_custom_data,
)
from skillgrad.models.base import LLM

PACKAGE_DIR = Path(__file__).resolve().parent
PREFIX = "ANSWER:"
PREAMBLE = "You are a helpful assistant."


class FewshotFormatOptions(EnvOptions):
    family_seed: int = Field(0, description="Seed for the question wording.")
    max_tokens: int = Field(24, ge=4, description="Student completion token cap.")


def _golds(gold: Any) -> list[str]:
    return [str(g) for g in gold] if isinstance(gold, list | tuple) else [str(gold)]


def score_reply(reply: str, gold: Any) -> tuple[float, float, str]:
    """hard = starts with ANSWER: and contains the gold; soft = half a point for each."""
    formatted = reply.lstrip().startswith(PREFIX)
    correct = any(contains_whole_word(reply, g) for g in _golds(gold))
    reasons = []
    if not formatted:
        reasons.append(f"format: reply did not start with '{PREFIX}'")
    if not correct:
        reasons.append("wrong_answer: reply did not contain the expected value")
    return float(formatted and correct), 0.5 * formatted + 0.5 * correct, "; ".join(reasons)


def parse_record(record: Any, split: str) -> Item:
    answer = record["answer"]
    gold = [str(a) for a in answer] if isinstance(answer, list) else str(answer)
    return Item(id=str(record["id"]), inputs={"question": str(record["question"])}, gold=gold,
                task_type=str(record.get("task_type", "default")))


class FewshotFormatEnv:
    name: ClassVar[str] = "fewshot-format"
    scorer: ClassVar[str] = "starts with ANSWER: + gold contained"
    Options: ClassVar[type[EnvOptions]] = FewshotFormatOptions

    def __init__(self, env_cfg: EnvSection, options: FewshotFormatOptions) -> None:
        self.cfg = env_cfg
        self.options = options

    def data_status(self) -> str:
        return generated_family_status(self.cfg)

    def load_splits(self) -> Splits:
        if uses_custom_data(self.cfg):
            return load_splits(self.cfg, parse_item=parse_record)
        records = generate_records(self.options.family_seed)
        random.Random(self.cfg.split_seed).shuffle(records)
        counts = ratio_counts(len(records), parse_ratio(self.cfg.split_ratio))
        parts: dict[str, list[Item]] = {}
        start = 0
        for split, count in zip(SPLITS, counts, strict=True):
            parts[split] = [parse_record(r, split) for r in records[start:start + count]]
            start += count
        limit = self.cfg.limit or None
        return Splits(parts["train"][:limit], parts["val"][:limit], parts["test"][:limit])

    def initial_skill(self) -> str:
        return read_skill_file(self.cfg.skill_init, PACKAGE_DIR / "initial.md", self.cfg)

    def prompt_dirs(self) -> list[Path]:
        return [PACKAGE_DIR / "prompts"]

    def reply_contract(self, item: Item) -> ReplyContract:
        """A passing reply opens with `ANSWER:` and carries one of the gold values."""
        return ReplyContract(starts_with=PREFIX, gold=tuple(_golds(item.gold)))

    async def verify_example(self, item: Item, reply: str, student: LLM) -> float:
        return score_reply(reply, item.gold)[0]

    async def run_task(self, item: Item, skill: str, student: LLM, *, sample: int = 0, temperature: float = 0.0,
                       feedback: bool = True) -> Trajectory:
        return await single_turn_task(item, skill, student, preamble=PREAMBLE, max_tokens=self.options.max_tokens,
                                      temperature=temperature, sample=sample, score=score_reply)


EXAMPLE_SKILL = f"""# Answer format

Start every reply with "{PREFIX}" followed by the answer.

## Examples
Q: What is the capital of Chile?
A: {PREFIX} Santiago
Q: What is the capital of Iran?
A: {PREFIX} Tehran
"""
