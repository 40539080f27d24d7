"""`tasks`: train any SKILL.md on a JSONL of tasks judged by rule checks (locally) or a rubric (a model).

The student gets the skill as its system text (after the memory file, when one is given) and the skill's
worked `Q:`/`A:` examples as chat turns (envs/chat.py). With `env.learned_only`, the trainable skill is
only the inner text of the learned block (skill/learned.py) of `env.skill_init` (or of `env.memory_file`
when `env.train_target=memory`): the environment composes hand-written + learned text for the student,
so no edit the trainer makes can reach hand-written text.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from skillgrad.config.schema import EnvSection
from skillgrad.envs.base import EnvOptions, Item, ReplyContract, Splits, Trajectory
from skillgrad.envs.chat import student_messages, usage_extras
from skillgrad.envs.splits import parse_ratio
from skillgrad.envs.tasks.checks import reply_cap, stated_reply_tokens, trace_tools
from skillgrad.envs.tasks.contract import item_contract
from skillgrad.envs.tasks.judge import JudgeRole, grade
from skillgrad.envs.tasks.records import TaskRecord, read_tasks, stable_split
from skillgrad.envs.trajectory import evaluation_message, failed_trajectory
from skillgrad.errors import BudgetExceeded, DataError, ProviderFatal
from skillgrad.models.base import LLM
from skillgrad.skill.learned import as_read, ensure_learned, extract_learned, replace_learned

PACKAGE_DIR = Path(__file__).resolve().parent
DEFAULT_SKILL = "# Skill\n\nFollow the team's conventions.\n"
EXAMPLE_ROOM = 0.75  # a worked example's share of the student's reply cap, at most (verify_example)


class TasksOptions(EnvOptions):
    tasks_file: str = Field("", description="JSONL of tasks with a rule or rubric judge (required).")
    max_tokens: int = Field(0, ge=0, description="Student completion token cap; 0 = the student's stated room "
                            "(model.student.max_tokens, else 1/64 of its context window: 64 for the embedded model), "
                            "more for a max_chars/min_chars band or required sections.")
    max_examples: int = Field(8, ge=0, description="Worked examples from the skill sent as chat turns.")
    preamble: str = Field("You are a helpful assistant.", description="System text before the memory and skill.")
    learned_only: bool = Field(False, description="Train only the learned block; text outside it is fixed.")
    memory_file: str = Field("", description="CLAUDE.md / AGENTS.md shown to the student before the skill.")
    train_target: Literal["skill", "memory"] = Field("skill", description="With learned_only: whose block trains.")
    task_prefix: str = Field("", description="Text put before every task (e.g. a replay marker for agent students).")
    replay_project: str = Field("", description="An agent student (codex, claude_code) replays each task in a copy "
                                "of this folder (a project snapshot) instead of a bare workspace.")
    replay_memory_path: str = Field("", description="Where the memory file (with the trained block) goes in the copy.")
    replay_skill_paths: list[str] = Field(default_factory=list, description="Where the skill goes in the copy.")
    judge_provider: str = Field("", description="Rubric judge provider ('' = judge with the student model).")
    judge_model: str = Field("", description="Rubric judge model name or .gguf path.")
    judge_max_tokens: int = Field(96, ge=16, description="Rubric judge completion token cap.")


def _read(path_str: str, key: str, env_cfg: EnvSection | None = None) -> str:
    path = Path(path_str).expanduser()
    if not path.is_file():
        raise DataError(env_cfg.missing_input(key, path_str) if env_cfg is not None and not path.exists()
                        else f"{key}: file not found: {path_str}")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{key}: {path_str} is not UTF-8 text") from None


def _with_block(text: str, key: str) -> str:
    try:
        return ensure_learned(text)
    except ValueError as e:
        raise DataError(f"{key}: {e}; restore the marker or delete the partial block") from None


_INLINE_QA = re.compile(r"^(\s*(?:[-*]\s+)?)(?:Q:\s*)?(\S.*?)\s+A:\s*(\S.*)$", re.MULTILINE)


def split_inline_examples(text: str) -> str:
    """A learned line `[Q:] task A: reply` (how small teachers write examples, often without the Q: label)
    becomes a Q: line and an A: line, so it reaches the student as a worked example."""
    return _INLINE_QA.sub(lambda m: f"{m.group(1)}Q: {m.group(2)}\n{m.group(1)}A: {m.group(3)}", text)


def context_text(files: Any) -> str:
    """The files a mined task's request named (`meta.context`: [{path, text, truncated}]), as the student sees
    them before the request: the context the user had when they asked."""
    parts = []
    for f in files if isinstance(files, list) else []:
        if isinstance(f, dict) and f.get("path") and isinstance(f.get("text"), str):
            cut = "\n[... cut]" if f.get("truncated") else ""
            parts.append(f"{f['path']}:\n```\n{f['text'].rstrip()}{cut}\n```")
    return "Files I named:\n\n" + "\n\n".join(parts) if parts else ""


def to_item(task: TaskRecord) -> Item:
    # The gold is the requirement in words, not a `Q: ... A: (...)` line: a small teacher pasted that form
    # into the skill as a worked example and the student learned to echo the description (issue 17).
    # A hand-written correct reply (`judge.reference`) stays in the judge: the Goodhart guard reads a gold of four
    # or more words as the requirement, and a correct reply that repeats it would be flagged as restating it.
    inputs = {"question": task.task}
    if task.meta.get("context"):
        inputs["context"] = context_text(task.meta["context"])
    return Item(id=task.task_id, inputs=inputs, gold=task.judge.describe(),
                task_type=task.task_type or task.judge.kind,
                meta={"judge": task.judge.model_dump(mode="json"), "origin": task.origin})


class TasksEnv(JudgeRole):
    name: ClassVar[str] = "tasks"
    scorer: ClassVar[str] = "rule checks (local) / rubric (LLM judge)"
    Options: ClassVar[type[EnvOptions]] = TasksOptions

    def __init__(self, env_cfg: EnvSection, options: TasksOptions) -> None:
        self.cfg, self.options = env_cfg, options
        self._judge: LLM | None = None

    def data_status(self) -> str:
        if not self.options.tasks_file:
            return "missing: set env.tasks_file to a JSONL of tasks"
        return "ready" if Path(self.options.tasks_file).expanduser().is_file() else \
            f"missing: {self.options.tasks_file}"

    def load_splits(self) -> Splits:
        if not self.options.tasks_file:
            raise DataError("env.tasks_file is not set; point it at a JSONL of tasks "
                            '({"task_id", "task", "judge": {"kind": "rule", "checks": [...]}})')
        path = Path(self.options.tasks_file).expanduser()
        if not path.exists():
            raise DataError(self.cfg.missing_input("env.tasks_file", self.options.tasks_file))
        tasks = read_tasks(path)
        weights = parse_ratio(self.cfg.split_ratio)
        parts: dict[str, list[Item]] = {"train": [], "val": [], "test": []}
        for t in tasks:
            split = t.split or stable_split(t.task_id, self.cfg.split_seed, weights, origin=t.origin)
            if split != "train" and t.origin != "real":
                raise DataError(f"{self.options.tasks_file}: task {t.task_id!r} is synthetic ({t.origin}) "
                                f"but has split {split!r}; validation and test hold only real tasks")
            parts[split].append(to_item(t))
        limit = self.cfg.limit or None
        return Splits(parts["train"][:limit], parts["val"][:limit], parts["test"][:limit],
                      pinned=all(t.split for t in tasks))

    # ---------------------------------------------------------------- the documents
    def _skill_doc(self) -> str:
        if self.cfg.skill_init:
            return _read(self.cfg.skill_init, "env.skill_init", self.cfg)
        return DEFAULT_SKILL

    def _memory_doc(self) -> str:
        return _read(self.options.memory_file, "env.memory_file", self.cfg) if self.options.memory_file else ""

    def initial_skill(self) -> str:
        o = self.options
        if not o.learned_only:
            return self._skill_doc()
        if o.train_target == "memory":
            if not o.memory_file:
                raise DataError("env.train_target=memory needs env.memory_file (CLAUDE.md or AGENTS.md)")
            return extract_learned(_with_block(self._memory_doc(), "env.memory_file"))
        return extract_learned(_with_block(self._skill_doc(), "env.skill_init"))

    def documents(self, skill: str) -> tuple[str, str]:
        """(memory file, skill document) as the student gets them, the trained part put in its place."""
        o = self.options
        memory, doc = self._memory_doc(), self._skill_doc()
        if o.learned_only and o.train_target == "memory":
            memory = replace_learned(_with_block(memory, "env.memory_file"), split_inline_examples(skill))
        elif o.learned_only:
            doc = replace_learned(_with_block(doc, "env.skill_init"), split_inline_examples(skill))
        else:
            doc = skill
        return memory, doc

    def compose(self, skill: str) -> str:
        """The text the student reads: memory, then the skill, without the learned block's markers (an agent student
        reads the files themselves, markers and all: `replay_extra`)."""
        memory, doc = self.documents(skill)
        return as_read(f"{memory.rstrip()}\n\n{doc}" if memory.strip() else doc)

    def replay_extra(self, skill: str, student: LLM) -> dict[str, Any] | None:
        """For an agent student with `replay_project`: the project copy and the candidate's files in it."""
        o = self.options
        if not o.replay_project or not getattr(student, "is_agent", False):
            return None
        memory, doc = self.documents(skill)
        files = dict.fromkeys(o.replay_skill_paths, doc)
        if o.replay_memory_path and memory.strip():
            files[o.replay_memory_path] = memory
        return {"project": {"root": o.replay_project, "files": files}}

    def prompt_dirs(self) -> list[Path]:
        return [PACKAGE_DIR / "prompts"]

    def reply_contract(self, item: Item) -> ReplyContract:
        """What a passing reply of `item` must contain, from its checks (envs/tasks/contract.py)."""
        return item_contract(item)

    def reply_tokens(self, item: Item, student: LLM) -> int:
        """The student's reply cap on `item`: `env.max_tokens`, else the student's stated room sized up by the
        task's checks (envs/tasks/checks.py `reply_cap`)."""
        from skillgrad.envs.tasks.records import Judge

        if self.options.max_tokens:
            return self.options.max_tokens
        judge = Judge.model_validate(item.meta["judge"])
        base = stated_reply_tokens(student)
        return reply_cap(judge.checks, base) if judge.kind == "rule" else base

    def example_limit(self, item: Item, student: LLM) -> int:
        """The most student tokens a worked example for `item` may have (`EXAMPLE_ROOM` of the reply cap): stated in
        the demonstrate prompt, and the limit `judge_example` holds a proposed example to."""
        return int(EXAMPLE_ROOM * self.reply_tokens(item, student))

    async def judge_example(self, item: Item, reply: str, student: LLM) -> tuple[float, str]:
        """(score, why it was refused) of a proposed worked example: the task's own judge (no tool can be called in
        a text reply), after the length limit; the reason names the rule (length or checks), '' when it passed."""
        from skillgrad.envs.tasks.records import Judge

        judge = Judge.model_validate(item.meta["judge"])
        # The student could never write it within its reply cap: measured on refusal-policy, long examples taught
        # replies that were cut before the required address. Nor one that fills the cap: a student copying it words
        # it a little longer and is cut (three-steps: two 64-token examples of a 64-token cap, themselves rollouts
        # cut mid-sentence, and 9 of 10 held-out replies ran to the cap, 5 of them cut before `3.`).
        n, room = student.count_tokens(reply), self.example_limit(item, student)
        if n > room:
            return 0.0, f"too long ({n} > {room} tokens): the student's reply cap on this task leaves {room} " \
                        "tokens for an example"
        hard, _, reason = await grade(judge, str(item.inputs.get("question", "")), reply,
                                      judge=self._judge_llm(student) if judge.graded else None,
                                      max_tokens=self.options.judge_max_tokens)
        return hard, "" if hard >= 1.0 - 1e-9 else f"failed the checks: {reason or 'the judge failed it'}"

    async def verify_example(self, item: Item, reply: str, student: LLM) -> float:
        """The score of `judge_example`: 0 for a reply longer than the example limit."""
        return (await self.judge_example(item, reply, student))[0]

    # ---------------------------------------------------------------- one task
    async def run_task(self, item: Item, skill: str, student: LLM, *, sample: int = 0, temperature: float = 0.0,
                       feedback: bool = True) -> Trajectory:
        from skillgrad.envs.tasks.records import Judge

        question = str(item.inputs.get("question", ""))
        if item.inputs.get("context"):  # the files the request named, as the user had them
            question = f"{item.inputs['context']}\n\n{question}"
        asked = f"{self.options.task_prefix}\n{question}" if self.options.task_prefix else question
        messages = student_messages(self.compose(skill), self.options.preamble, asked,
                                    max_examples=self.options.max_examples)
        judge = Judge.model_validate(item.meta["judge"])
        cap = self.reply_tokens(item, student)
        try:
            replay = self.replay_extra(skill, student)
            c = await student.complete(messages, max_tokens=cap, temperature=temperature, stage="rollout",
                                       sample=sample, extra=replay)
        except (ProviderFatal, BudgetExceeded):
            raise
        except Exception as e:  # noqa: BLE001 - a failed call is a failed, scored task
            return failed_trajectory(item, e, messages)
        answer = c.text.strip()
        hard, soft, reason = await grade(judge, question, answer, tools=trace_tools(c.trace),
                                         judge=self._judge_llm(student) if judge.graded else None,
                                         max_tokens=self.options.judge_max_tokens)
        messages = [*messages, {"role": "assistant", "content": answer},
                    evaluation_message(item.gold, answer, hard, reason)]
        return Trajectory(item_id=item.id, task_type=item.task_type, messages=messages, answer=answer,
                          gold=item.gold, hard=hard, soft=soft, fail_reason=reason, question=question,
                          extras=usage_extras(c), fail_kind="form" if reason else "",
                          contract=self.reply_contract(item))
