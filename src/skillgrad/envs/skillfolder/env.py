"""`skill-folder`: train an Agent Skills folder against its own `evals/evals.json`.

The trained document is the folder's package (folder.py: the SKILL.md body and the references/ files it links).
Each eval is a task: the student gets the package as its system text and the eval's prompt (after its input
files), and the reply is graded per assertion (grading.py). `expected_output` is the reference answer the teacher
sees. A reviewer's note from a workspace's feedback.json is added to that eval's evaluation message, so the
teacher reads it beside the failed assertions. Evals are split train / validation / test by a stable hash of
their id (`env.split_ratio`), like any task set.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from skillgrad.config.schema import EnvSection
from skillgrad.envs.base import GOLD_IS_CHECKER, EnvOptions, Item, Splits, Trajectory
from skillgrad.envs.chat import student_messages, usage_extras
from skillgrad.envs.skillfolder.folder import SkillFolder, eval_files_text, read_skill_folder, split_package
from skillgrad.envs.skillfolder.grading import grade, scores
from skillgrad.envs.skillfolder.spec import EvalCase
from skillgrad.envs.skillfolder.workspace import read_feedback
from skillgrad.envs.splits import parse_ratio
from skillgrad.envs.tasks.checks import stated_reply_tokens
from skillgrad.envs.tasks.judge import JudgeRole
from skillgrad.envs.tasks.records import stable_split
from skillgrad.envs.trajectory import evaluation_message, failed_trajectory
from skillgrad.errors import BudgetExceeded, DataError, ProviderFatal
from skillgrad.models.base import LLM

PACKAGE_DIR = Path(__file__).resolve().parent
# An eval's expected output is often a paragraph or a short document: the least room a student's reply gets (the
# embedded model's window alone would give it 64 tokens).
REPLY_FLOOR = 160


class SkillFolderOptions(EnvOptions):
    skill_dir: str = Field("", description="The skill folder (SKILL.md, evals/evals.json; required).")
    references: bool = Field(True, description="Train the references/ files SKILL.md links to, with the body.")
    max_tokens: int = Field(0, ge=0, description="Student reply token cap; 0 = the student's stated room "
                            "(model.student.max_tokens, else from its context window: 1,024 for a 64k+ window), at "
                            f"least {REPLY_FLOOR}.")
    max_examples: int = Field(8, ge=0, description="Worked examples from the skill sent as chat turns.")
    preamble: str = Field("You are a helpful assistant.", description="System text before the skill.")
    feedback_file: str = Field("", description="A workspace's feedback.json: a reviewer's notes the teacher sees.")
    metadata: bool = Field(True, description="Show the skill's name and description before its text, as an agent "
                           "has them in context when it uses the skill.")
    description: str = Field("", description="Use this description instead of SKILL.md's (a description "
                             "candidate scored on the evals: --target all).")
    judge_provider: str = Field("", description="Judge provider for assertions in words ('' = the student model).")
    judge_model: str = Field("", description="Judge model name or .gguf path.")
    judge_max_tokens: int = Field(96, ge=16, description="Judge completion token cap.")


class SkillFolderEnv(JudgeRole):
    name: ClassVar[str] = "skill-folder"
    scorer: ClassVar[str] = "evals.json assertions (rules locally, sentences by a judge with evidence)"
    Options: ClassVar[type[EnvOptions]] = SkillFolderOptions

    def __init__(self, env_cfg: EnvSection, options: SkillFolderOptions) -> None:
        self.cfg, self.options = env_cfg, options
        self._judge: LLM | None = None
        self._folder: SkillFolder | None = None
        self._feedback: dict[str, str] | None = None

    @property
    def folder(self) -> SkillFolder:
        if self._folder is None:
            if not self.options.skill_dir:
                raise DataError("env.skill_dir is not set; point it at a skill folder (skillgrad train --skill DIR)")
            self._folder = read_skill_folder(self.options.skill_dir)
        return self._folder

    def data_status(self) -> str:
        if not self.options.skill_dir:
            return "missing: set env.skill_dir to a skill folder"
        return "ready" if (Path(self.options.skill_dir) / "evals" / "evals.json").is_file() else \
            f"missing: {self.options.skill_dir}/evals/evals.json"

    def case(self, item_id: str) -> EvalCase:
        return next(c for c in self.folder.cases if c.id == item_id)

    def load_splits(self) -> Splits:
        weights = parse_ratio(self.cfg.split_ratio)
        parts: dict[str, list[Item]] = {"train": [], "val": [], "test": []}
        for c in self.folder.cases:
            parts[stable_split(c.id, self.cfg.split_seed, weights)].append(self.to_item(c))
        limit = self.cfg.limit or None
        return Splits(parts["train"][:limit], parts["val"][:limit], parts["test"][:limit])

    def to_item(self, c: EvalCase) -> Item:
        inputs = {"question": c.prompt}
        files = eval_files_text(self.folder.root, c.files)
        if files:
            inputs["context"] = files
        # The reference answer is the expected output; the assertions in words are what a reviewer checks. Without an
        # expected output the gold is the checker's own words, never an answer a worked example may carry
        # (engine/stages/update.py own_answers).
        gold = c.expected_output or "; ".join(a.text for a in c.assertions)
        meta: dict[str, Any] = {"name": c.name, **({} if c.expected_output else {GOLD_IS_CHECKER: True})}
        return Item(id=c.id, inputs=inputs, gold=gold, task_type="skill-eval", meta=meta)

    def initial_skill(self) -> str:
        return self.folder.package(with_references=self.options.references)

    def prompt_dirs(self) -> list[Path]:
        return []

    # ---------------------------------------------------------------- reviewer notes
    def reviewer_note(self, case: EvalCase) -> str:
        if self._feedback is None:
            path = self.options.feedback_file
            self._feedback = read_feedback(Path(path)) if path else {}
        return self._feedback.get(case.dir_name, "") or self._feedback.get(case.id, "")

    # ---------------------------------------------------------------- one task
    def compose(self, skill: str) -> str:
        """What the student reads: the skill's name and description (the metadata an agent always has), then the
        trained text; no skill at all (the without_skill arm) stays empty."""
        if not skill.strip() or not self.options.metadata:
            return skill
        f = self.folder
        return f"Skill: {f.name}\nDescription: {self.options.description or f.description}\n\n{skill}"

    def _package_problem(self, skill: str) -> str:
        if not skill or not self.options.references:
            return ""
        try:
            split_package(skill, list(self.folder.references))
        except ValueError as e:
            return str(e)
        return ""

    def reply_tokens(self, student: LLM) -> int:
        """The student's reply cap: `env.max_tokens`, else the student's own room (envs/tasks/checks.py) but at
        least `REPLY_FLOOR` (a role's `max_tokens` binds anyway: the client puts it on every call)."""
        return self.options.max_tokens or max(REPLY_FLOOR, stated_reply_tokens(student))

    async def verify_example(self, item: Item, reply: str, student: LLM) -> float:
        graded = await grade(self.case(item.id), reply, self._judge_llm(student),
                             max_tokens=self.options.judge_max_tokens)
        return scores(graded)[0]

    async def run_task(self, item: Item, skill: str, student: LLM, *, sample: int = 0, temperature: float = 0.0,
                       feedback: bool = True) -> Trajectory:
        case = self.case(item.id)
        question = case.prompt
        if item.inputs.get("context"):
            question = f"{item.inputs['context']}\n\n{question}"
        messages = student_messages(self.compose(skill), self.options.preamble, question,
                                    max_examples=self.options.max_examples)
        problem = self._package_problem(skill)
        if problem:  # a candidate whose file markers broke cannot be written back: it must not pass the gate
            return failed_trajectory(item, f"package: {problem}", messages)
        started = time.monotonic()
        try:
            c = await student.complete(messages, max_tokens=self.reply_tokens(student), temperature=temperature,
                                       stage="rollout", sample=sample)
        except (ProviderFatal, BudgetExceeded):
            raise
        except Exception as e:  # noqa: BLE001 - a failed call is a failed, scored task
            return failed_trajectory(item, e, messages)
        answer = c.text.strip()
        graded = await grade(case, answer, self._judge_llm(student), max_tokens=self.options.judge_max_tokens)
        hard, soft, reason = scores(graded)
        seconds = round(time.monotonic() - started, 3)
        note = self.reviewer_note(case) if feedback else ""
        shown = f"{reason}; a reviewer wrote: {note}" if note and reason else (
            f"a reviewer wrote: {note}" if note else reason)
        messages = [*messages, {"role": "assistant", "content": answer},
                    evaluation_message(item.gold, answer, hard, shown)]
        return Trajectory(item_id=item.id, task_type=item.task_type, messages=messages, answer=answer,
                          gold=item.gold, hard=hard, soft=soft, fail_reason=reason, question=question,
                          extras={**usage_extras(c), "expectations": [g.to_json() for g in graded],
                                  "eval_name": case.name, "seconds": seconds})
