"""`facts`: questions about a fictional product whose answers exist only in the skill.

Default splits hold the same facts asked three ways: train = paraphrase 1 of every fact, val =
paraphrase 2, test = paraphrase 3, so the gate and the test score measure whether a learned fact
carries over to new wording. `env.data_path` / `env.split_dir` replace the generated data with
records {"id", "question", "answer", "task_type"?}.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from skillgrad.config.schema import EnvSection
from skillgrad.envs.base import EnvOptions, Item, ReplyContract, Splits, Trajectory
from skillgrad.envs.chat import read_skill_file, single_turn_task
from skillgrad.envs.facts.kb import MAX_FACTS, MIN_FACTS, fact_sheet, generate_facts, product_name
from skillgrad.envs.scoring import contains_whole_word, token_recall
from skillgrad.envs.splits import generated_family_status, load_splits, uses_custom_data
from skillgrad.models.base import LLM

PACKAGE_DIR = Path(__file__).resolve().parent
PREAMBLE = "You are a helpful assistant. Answer the user's question in one short sentence."


class FactsOptions(EnvOptions):
    n_facts: int = Field(30, ge=MIN_FACTS, le=MAX_FACTS, description="Facts in the generated knowledge base.")
    family_seed: int = Field(0, description="Seed of the generated knowledge base (product, values, facts).")
    max_tokens: int = Field(48, ge=4, description="Student completion token cap.")
    max_examples: int = Field(32, ge=0, description="Worked examples from the skill sent as chat turns (the "
                              "rest stay in the system text): a small student uses a fact it saw answered in a "
                              "turn, not one written as a Q:/A: line in the system text.")


def score_answer(answer: str, gold: str) -> tuple[float, float, str]:
    """hard = gold appears as a whole word; soft = hard, or token recall for a multi-word gold."""
    if contains_whole_word(answer, gold):
        return 1.0, 1.0, ""
    soft = token_recall(answer, gold) if len(str(gold).split()) > 1 else 0.0
    if not answer.strip():
        return 0.0, 0.0, "empty_answer: the student returned no text"
    return 0.0, soft, "missing_knowledge: answer did not contain the expected value"


def parse_record(record: Any, split: str) -> Item:
    return Item(id=str(record["id"]), inputs={"question": str(record["question"])}, gold=str(record["answer"]),
                task_type=str(record.get("task_type", "fact")))


class FactsEnv:
    name: ClassVar[str] = "facts"
    scorer: ClassVar[str] = "gold contained (whole word)"
    Options: ClassVar[type[EnvOptions]] = FactsOptions

    def __init__(self, env_cfg: EnvSection, options: FactsOptions) -> None:
        self.cfg = env_cfg
        self.options = options
        self.product = product_name(options.family_seed)
        self.facts = generate_facts(options.n_facts, options.family_seed)

    def data_status(self) -> str:
        return generated_family_status(self.cfg)

    def load_splits(self) -> Splits:
        if uses_custom_data(self.cfg):
            return load_splits(self.cfg, parse_item=parse_record)
        parts: list[list[Item]] = [[], [], []]
        for index, fact in enumerate(self.facts):
            for p, question in enumerate(fact.questions):
                parts[p].append(Item(id=f"f{index:02d}-p{p + 1}", inputs={"question": question}, gold=fact.answer,
                                     task_type=fact.category, meta={"fact": fact.key, "paraphrase": p + 1}))
        limit = self.cfg.limit or None
        return Splits(parts[0][:limit], parts[1][:limit], parts[2][:limit])

    def initial_skill(self) -> str:
        return read_skill_file(self.cfg.skill_init, PACKAGE_DIR / "initial.md", self.cfg)

    def oracle_skill(self) -> str:
        return fact_sheet(self.facts, self.product)

    def prompt_dirs(self) -> list[Path]:
        return [PACKAGE_DIR / "prompts"]

    def reply_contract(self, item: Item) -> ReplyContract:
        """A passing reply carries the fact's value (its gold), in any sentence."""
        return ReplyContract(gold=(str(item.gold),))

    async def verify_example(self, item: Item, reply: str, student: LLM) -> float:
        return score_answer(reply, str(item.gold))[0]

    async def run_task(self, item: Item, skill: str, student: LLM, *, sample: int = 0, temperature: float = 0.0,
                       feedback: bool = True) -> Trajectory:
        t = await single_turn_task(item, skill, student, preamble=PREAMBLE, max_tokens=self.options.max_tokens,
                                   temperature=temperature, sample=sample, score=lambda a, g: score_answer(a, str(g)),
                                   max_examples=self.options.max_examples)
        if t.failed and t.answer.strip() and not t.error:  # the answer lacks the fact: a gap in what it knows
            t.fail_kind = "missing_knowledge"
        t.contract = self.reply_contract(item)
        return t


def oracle_skill(n_facts: int = 30, family_seed: int = 0) -> str:
    """Every fact of the generated knowledge base as a sentence: the best skill this family can have."""
    return fact_sheet(generate_facts(n_facts, family_seed), product_name(family_seed))
