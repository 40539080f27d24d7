"""SpreadsheetBench: write Python that transforms an input workbook into the expected output workbook.

Task records follow the upstream dataset.json: {id, instruction, spreadsheet_path, instruction_type,
answer_position}; test cases are `<n>_<id>_input.xlsx` / `<n>_<id>_answer.xlsx` (or `_init` /
`_golden`) under `data_root/spreadsheet_path`, or an explicit `test_cases: [{input, answer}]` list.
The student's ```python block runs in `exec/sandbox.py` with `input.xlsx` and must write `output.xlsx`;
each case is compared cell by cell at answer_position. soft = passed / cases, hard = all passed.

Modes: `single` (one code-generation call) and `multi` (up to `max_turns` rounds; an execution error is
fed back, and on train rollouts with feedback the cell mismatches are too, never on val/test).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from skillgrad.envs.base import SPLITS, EnvOptions, Item, Splits, Trajectory
from skillgrad.envs.benchkit import BenchEnv, write_prepared
from skillgrad.envs.chat import student_messages, usage_extras
from skillgrad.envs.splits import read_records
from skillgrad.envs.spreadsheetbench.compare import compare_workbooks, expected_summary, preview_workbook
from skillgrad.errors import DataError
from skillgrad.exec.sandbox import confinement_warnings, run_python_async
from skillgrad.models.base import LLM, Message

PREAMBLE = ("You write Python programs that edit Excel workbooks with openpyxl. Reply with one complete "
            "program in a ```python code block.")
_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_OPEN_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*)$", re.DOTALL | re.IGNORECASE)
_CASE = re.compile(r"^(\d+)_(.+)_(input|init|answer|golden)\.xlsx$", re.IGNORECASE)


def extract_code(text: str) -> str:
    """The last ```python block (an unclosed final block counts); '' when there is none."""
    blocks = _BLOCK.findall(text or "")
    if blocks:
        python = [b for b in blocks if b.strip()]
        return python[-1].strip() + "\n" if python else ""
    m = _OPEN_BLOCK.search(text or "")
    return m.group(1).strip() + "\n" if m and m.group(1).strip() else ""


def task_type(instruction_type: str) -> str:
    t = str(instruction_type or "").lower()
    return "sheet_level" if "sheet" in t else "cell_level"


def find_cases(folder: Path) -> list[tuple[Path, Path]]:
    """(input, answer) pairs by case number from a task folder."""
    inputs: dict[int, Path] = {}
    answers: dict[int, Path] = {}
    for p in sorted(folder.glob("*.xlsx")):
        m = _CASE.match(p.name)
        if not m:
            continue
        (inputs if m.group(3).lower() in ("input", "init") else answers)[int(m.group(1))] = p
    return [(inputs[n], answers[n]) for n in sorted(inputs) if n in answers]


class SpreadsheetOptions(EnvOptions):
    mode: Literal["single", "multi"] = Field("single", description="single: one codegen call; multi: repair rounds.")
    max_turns: int = Field(3, ge=1, description="Code-generation rounds in multi mode (SkillOpt's config: 30).")
    data_root: str = Field("", description="Directory spreadsheet_path is relative to ('' = the split directory).")
    max_tokens: int = Field(768, ge=16, description="Completion token cap per round.")
    exec_timeout_s: float = Field(30.0, gt=0, description="Wall-clock limit per program run.")
    memory_mb: int = Field(1024, ge=128, description="Address-space limit per program run.")


class SpreadsheetBenchEnv(BenchEnv):
    name: ClassVar[str] = "spreadsheetbench"
    scorer: ClassVar[str] = "cells at answer_position (soft = cases passed, hard = all)"
    Options: ClassVar[type[SpreadsheetOptions]] = SpreadsheetOptions  # type: ignore[assignment]
    package_dir: ClassVar[Path] = Path(__file__).parent
    default_task_types: ClassVar[tuple[str, ...]] = ("cell_level", "sheet_level")

    def parse_item(self, record: Any, split: str) -> Item:
        if not isinstance(record, dict):
            raise ValueError("expected a task object with id, instruction, answer_position")
        rid = record.get("id")
        if rid is None or str(rid) == "":
            raise KeyError("id")
        kind = str(record.get("instruction_type") or "")
        inputs = {"instruction": str(record["instruction"]), "answer_position": str(record["answer_position"]),
                  "spreadsheet_path": str(record.get("spreadsheet_path") or f"spreadsheet/{rid}"),
                  "test_cases": record.get("test_cases") or [], "instruction_type": kind}
        return Item(id=str(rid), inputs=inputs, gold=inputs["answer_position"], task_type=task_type(kind))

    def load_splits(self) -> Splits:
        splits = super().load_splits()
        root = self.data_root(self.options.data_root)
        for split in SPLITS:
            for item in splits.get(split):
                cases = self._resolve_cases(item, root)
                if not cases:
                    raise DataError(f"{split} item {item.id!r}: no test cases (<n>_{item.id}_input.xlsx / "
                                    f"_answer.xlsx) under {root / item.inputs['spreadsheet_path']} "
                                    "(set env.data_root to the dataset directory)")
                item.inputs["cases"] = [[str(i), str(a)] for i, a in cases]
        return splits

    def _resolve_cases(self, item: Item, root: Path) -> list[tuple[Path, Path]]:
        explicit = item.inputs.get("test_cases") or []
        if explicit:
            cases = []
            for n, case in enumerate(explicit):
                try:
                    pair = (root / str(case["input"]), root / str(case["answer"]))
                except (KeyError, TypeError) as e:
                    raise DataError(f"item {item.id!r}: test_cases[{n}] needs 'input' and 'answer' paths") from e
                for p in pair:
                    if not p.is_file():
                        raise DataError(f"item {item.id!r}: test_cases[{n}] file not found: {p}")
                cases.append(pair)
            return cases
        folder = root / item.inputs["spreadsheet_path"]
        return find_cases(folder) if folder.is_dir() else []

    # --- running -----------------------------------------------------------------------------
    def user_prompt(self, item: Item) -> str:
        first_input = Path(item.inputs["cases"][0][0])
        return (
            f"Task: {item.inputs['instruction']}\n\n"
            f"The workbook input.xlsx looks like this:\n{preview_workbook(first_input)}\n\n"
            f"The result is checked at: {item.inputs['answer_position']} ({item.task_type}).\n"
            "Write a Python program that opens \"input.xlsx\" with openpyxl, does the task, and saves the "
            "whole workbook as \"output.xlsx\". Write computed values, not Excel formulas. Reply with the "
            "program in one ```python block."
        )

    async def _run_case(self, code: str, case: list[str], position: str, work: Path,
                        ) -> tuple[bool, str, list[str]]:
        """(passed, execution error or '', mismatch lines)."""
        work.mkdir(parents=True, exist_ok=True)
        res = await run_python_async(code, workdir=work, timeout_s=self.options.exec_timeout_s,
                                     memory_mb=self.options.memory_mb, files_in={"input.xlsx": Path(case[0])})
        if not res.ok:
            return False, res.error_text(1500) or "the program failed", []
        output = work / "output.xlsx"
        if not output.is_file():
            return False, "the program ran but did not write output.xlsx", []
        try:
            ok, problems = compare_workbooks(Path(case[1]), output, position)
        except Exception as e:  # noqa: BLE001 - an unreadable output file is the program's failure
            return False, f"output.xlsx could not be read: {type(e).__name__}: {e}", []
        return ok, "", problems

    async def _score(self, code: str, item: Item, work: Path) -> tuple[int, list[str]]:
        passed, report = 0, []
        for n, case in enumerate(item.inputs["cases"], 1):
            ok, err, problems = await self._run_case(code, case, item.inputs["answer_position"], work / f"case{n}")
            passed += ok
            detail = "passed" if ok else (err.splitlines()[0] if err else "; ".join(problems[:3]))
            report.append(f"case {n}: {detail}")
        return passed, report

    async def _run(self, item: Item, skill: str, student: LLM, *, sample: int, temperature: float,
                   feedback: bool) -> Trajectory:
        messages: list[Message] = student_messages(skill, PREAMBLE, self.user_prompt(item))
        extra = {"workspace_files": {"input.xlsx": Path(item.inputs["cases"][0][0]).read_bytes()}} \
            if getattr(student, "is_agent", False) else None
        rounds = self.options.max_turns if self.options.mode == "multi" else 1
        code, usage = "", {}
        with tempfile.TemporaryDirectory(prefix="skillgrad-sheet-") as tmp:
            work = Path(tmp)
            for turn in range(rounds):
                completion = await self.ask(student, messages, max_tokens=self.options.max_tokens,
                                            temperature=temperature, sample=sample, extra=extra)
                reply = completion.text or ""
                usage = usage_extras(completion)
                messages.append({"role": "assistant", "content": reply})
                code = extract_code(reply)
                if turn == rounds - 1:
                    break
                if not code:
                    note = "No ```python code block was found. Reply with the full program in one ```python block."
                else:
                    ok, err, problems = await self._run_case(code, item.inputs["cases"][0],
                                                             item.inputs["answer_position"], work / f"try{turn}")
                    if err:
                        note = f"Running the program failed:\n{err}\n\nFix it and reply with the full program."
                    elif not ok and feedback and problems:  # gold comparison only on train rollouts
                        note = ("The program ran, but the result is wrong:\n" + "\n".join(problems)
                                + "\n\nFix it and reply with the full program.")
                    else:
                        break
                messages.append({"role": "user", "content": note})
            gold = self._gold_text(item)
            if not code:
                return self.finish(item, messages, "", hard=0.0, soft=0.0, gold=gold,
                                   fail_reason="format: no ```python code block in the reply", extras=usage)
            passed, report = await self._score(code, item, work / "final")
        cases = len(item.inputs["cases"])
        soft = passed / cases
        hard = 1.0 if passed == cases else 0.0
        reason = "" if hard else f"cases_failed: {cases - passed} of {cases} test cases failed ({'; '.join(report)})"
        messages.append({"role": "user", "content": "Verification report:\n" + "\n".join(report)})
        return self.finish(item, messages, code, hard=hard, soft=soft, fail_reason=reason, gold=gold,
                           extras={**usage, "cases_passed": passed, "cases": cases,
                                   "turns": sum(1 for m in messages if m["role"] == "assistant"),
                                   **({"sandbox_warnings": w} if (w := confinement_warnings()) else {})})

    def _gold_text(self, item: Item) -> str:
        try:
            return expected_summary(Path(item.inputs["cases"][0][1]), item.inputs["answer_position"])
        except Exception as e:  # noqa: BLE001 - the gold text is informative only
            return f"cells at {item.inputs['answer_position']} (answer workbook unreadable: {e})"

    @classmethod
    def prepare(cls, src: Path, dest: Path, *, ratio: str = "2:1:7", seed: int = 42) -> dict[str, Any]:
        """A SpreadsheetBench dataset directory (dataset.json + spreadsheet/) -> split_dir layout (files copied)."""
        src, dest = Path(src), Path(dest)
        manifest = src / "dataset.json" if src.is_dir() else src
        root = manifest.parent
        records = []
        for n, rec in enumerate(read_records(manifest, key="--from")):
            if not isinstance(rec, dict):
                raise DataError(f"{manifest}: record {n} is not an object")
            for key in ("id", "instruction", "answer_position"):
                if key not in rec:
                    raise DataError(f"{manifest}: record {n} is missing field {key!r}")
            rel = str(rec.get("spreadsheet_path") or f"spreadsheet/{rec['id']}").strip("/")
            folder = root / rel
            if not find_cases(folder):
                raise DataError(f"{manifest}: record {n} ({rec['id']}): no <n>_<id>_input/answer.xlsx in {folder}")
            shutil.copytree(folder, dest / rel, dirs_exist_ok=True)
            records.append({**rec, "id": str(rec["id"]), "spreadsheet_path": rel})
        return write_prepared(records, dest, env=cls.name, source=src, ratio=ratio, seed=seed)
