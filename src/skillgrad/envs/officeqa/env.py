"""OfficeQA: answer questions about (Treasury-bulletin-like) documents with a small tool loop.

Records: {uid, question, ground_truth, source_files, source_docs} (JSON, or CSV via `prepare` / a
.csv data_path). Documents live under `data_dirs` (relative to `data_root`, default the split dir).
The student calls tools by writing lines in plain text, so any chat model can play:

    TOOL: glob docs/*.txt      TOOL: grep <regex> [<glob>]      TOOL: read <path> [<line>]
    ANSWER: <final answer>

at most `max_tool_turns` tool calls, then it must answer. Paths outside the document roots are
refused (see tools.py). Scoring: exact match / token F1 after numeric-friendly normalisation (commas,
$, "million", "billion", "dollars" removed; numbers compared by value). The expected answer is put in
`fail_reason` (as SkillOpt does) and in the closing evaluation message.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, field_validator

from skillgrad.envs.base import SPLITS, EnvOptions, Item, Splits, Trajectory
from skillgrad.envs.benchkit import BenchEnv, as_list, extract_answer, ratio_split_records, write_prepared
from skillgrad.envs.chat import student_messages, usage_extras
from skillgrad.envs.officeqa.search import custom_search, oracle_pages, parse_queries
from skillgrad.envs.officeqa.tools import DocTools
from skillgrad.envs.scoring import normalize_answer, token_f1
from skillgrad.envs.splits import check_unique, parse_records, read_records
from skillgrad.errors import DataError
from skillgrad.models.base import LLM, Message

PREAMBLE = """You answer questions about documents. You cannot see the documents until you use a tool.
Each reply must contain exactly one of these lines:
TOOL: glob <pattern>          (list files, e.g. TOOL: glob docs/*.txt)
TOOL: grep <regex> [<glob>]   (search file contents)
TOOL: read <path> [<line>]    (show a file from a line number)
ANSWER: <final answer>"""
NO_TOOLS_PREAMBLE = """You answer questions about documents. The relevant document pages are in the question.
Reply with the line ANSWER: <final answer>"""
SEARCH_PREAMBLE = """You answer questions about documents. The relevant document pages are in the question, and
you may search for more. Each reply must contain exactly one of these lines:
SEARCH: <query> | <another query>   (up to {n} queries, separated by |)
ANSWER: <final answer>"""
_SEARCH_MODES = {"tools": "tools", "local": "tools", "offline": "offline", "oracle": "offline",
                 "custom": "custom_search", "custom_search": "custom_search"}
_TOOL = re.compile(r"^\s*(?:[-*]\s*)?(?:TOOL\s*:\s*)?(glob|grep|read)\b[:\s]+(.+?)\s*$", re.IGNORECASE)
_ANSWER = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?(?:the\s+)?(?:final\s+)?answer(?:\*\*)?\s*(?:is\s*)?[:\-]\s*(.+?)\s*$",
                     re.IGNORECASE)
_UNIT_WORDS = re.compile(r"\b(millions?|billions?|dollars?|usd)\b")
_MAX_AGENT_BYTES = 20_000_000


def normalize_numeric(text: str) -> str:
    s = str(text).lower().replace(",", "").replace("$", "")
    s = _UNIT_WORDS.sub(" ", s)
    s = " ".join(s.split()).strip().rstrip(".")
    return s


def _number(s: str) -> float | None:
    try:
        return float(s.replace(" ", "").rstrip("%"))
    except ValueError:
        return None


def officeqa_scores(answer: str, golds: list[str]) -> tuple[float, float]:
    """(exact match, token F1) after numeric-friendly normalisation; numbers compare by value."""
    a = normalize_numeric(answer)
    em, f1 = 0.0, 0.0
    for gold in golds:
        g = normalize_numeric(gold)
        na, ng = _number(a), _number(g)
        if na is not None and ng is not None:
            same = abs(na - ng) <= 1e-9 * max(1.0, abs(ng))
        else:
            same = normalize_answer(a) == normalize_answer(g)
        em = max(em, 1.0 if same else 0.0)
        f1 = max(f1, 1.0 if same else token_f1(a, g))
    return em, f1


def parse_action(reply: str) -> tuple[str, str]:
    """("answer", text) or (tool, argument) from the first actionable line; ("", "") when none."""
    for line in (reply or "").splitlines():
        m = _ANSWER.match(line)
        if m:
            return "answer", m.group(1).strip()
        m = _TOOL.match(line)
        if m:
            return m.group(1).lower(), m.group(2).strip()
    return "", ""


class OfficeQAOptions(EnvOptions):
    data_dirs: list[str] = Field(default_factory=lambda: ["docs"],
                                 description="Document folders the tools may read, relative to data_root.")
    data_root: str = Field("", description="Base of data_dirs ('' = the split directory).")
    max_tool_turns: int = Field(6, ge=0, description="Tool calls before the student must answer.")
    oracle_docs: bool = Field(False, description="Put the item's source files into the first prompt.")
    oracle_chars: int = Field(4000, ge=200, description="Characters of source files shown with oracle_docs.")
    max_tokens: int = Field(160, ge=8, description="Completion token cap per turn.")
    search_mode: str = Field("tools", description="tools: document tool loop only; offline (SkillOpt's default): "
                             "the gold page(s) in the prompt plus the tools; custom_search: gold pages plus "
                             "queries run against search_api_url.")
    use_local_tools: bool = Field(True, description="offline mode: False = answer from the gold pages, no tools.")
    max_queries_per_turn: int = Field(4, ge=1, description="custom_search: queries run per student turn.")
    search_api_url: str = Field("", description="custom_search: HTTP endpoint (POST {query, provider, ...}).")
    search_auth_env: str = Field("OFFICEQA_CUSTOM_SEARCH_AUTH", description="Variable holding the bearer token.")
    search_provider: str = Field("duckduckgo", description="custom_search: provider name sent to the API.")
    search_max_num_results: int = Field(4, ge=1, description="custom_search: results shown per query.")
    search_timeout_seconds: float = Field(20, gt=0, description="custom_search: per-query timeout.")

    @field_validator("search_mode", mode="before")
    @classmethod
    def _mode(cls, v: Any) -> str:
        key = str(v or "tools").strip().lower()
        if key in ("azure", "azure_search"):
            raise ValueError("azure_search needs the provider's built-in web search tool, which skillgrad does "
                             "not offer; use offline, custom_search or tools")
        if key not in _SEARCH_MODES:
            raise ValueError(f"unknown search_mode {v!r}; use tools, offline or custom_search")
        return _SEARCH_MODES[key]

    def shows_gold_pages(self) -> bool:
        return self.oracle_docs or self.search_mode in ("offline", "custom_search")


class OfficeQAEnv(BenchEnv):
    name: ClassVar[str] = "officeqa"
    scorer: ClassVar[str] = "EM / token F1 (numeric-friendly normalisation)"
    Options: ClassVar[type[OfficeQAOptions]] = OfficeQAOptions  # type: ignore[assignment]
    package_dir: ClassVar[Path] = Path(__file__).parent

    def parse_item(self, record: Any, split: str) -> Item:
        if not isinstance(record, dict):
            raise ValueError("expected an object with uid, question, ground_truth")
        uid = record.get("uid", record.get("id"))
        if uid is None or str(uid).strip() == "":
            raise KeyError("uid")
        golds = as_list(record["ground_truth"])
        if not golds or not golds[0].strip():
            raise ValueError("field 'ground_truth' is empty")
        files = record.get("source_files") or []
        if isinstance(files, str):
            files = [f.strip() for f in re.split(r"[;,\n]", files) if f.strip()]
        ttype = str(record.get("category") or record.get("difficulty") or "default")
        return Item(id=str(uid).strip(), inputs={"question": str(record["question"]), "source_files": list(files),
                                                 "source_docs": record.get("source_docs") or ""},
                    gold=golds, task_type=re.sub(r"[^a-z0-9]+", "_", ttype.lower()).strip("_") or "default")

    def load_splits(self) -> Splits:
        src = self.configured_source()
        if src is not None and src.is_file() and src.suffix == ".csv":
            with open(src, newline="", encoding="utf-8-sig") as f:
                rows = list(csv.DictReader(f))
            parts = ratio_split_records(rows, ratio=self.cfg.split_ratio, seed=self.cfg.split_seed)
            parsed = {s: parse_records(parts[s], s, self.parse_item, source=src) for s in SPLITS}
            splits = Splits(parsed["train"], parsed["val"], parsed["test"])
            check_unique(splits, {s: src for s in SPLITS})
            if self.cfg.limit:
                splits = Splits(*(getattr(splits, s)[: self.cfg.limit] for s in SPLITS))
        else:
            splits = super().load_splits()
        if self.options.search_mode == "custom_search":
            self.search_token()  # before any model call: a missing URL or token is a setup error
        missing = [d for d in self.doc_roots() if not d.is_dir()]
        if missing:
            raise DataError(f"env.data_dirs: document folder {missing[0]} not found "
                            f"(data_dirs are relative to {self.data_root(self.options.data_root)})")
        return splits

    def search_token(self) -> str:
        opts = self.options
        if not opts.search_api_url.strip():
            raise DataError("env.search_mode custom_search needs env.search_api_url (the search API endpoint)")
        token = os.environ.get(opts.search_auth_env, "").strip()
        if not token:
            raise DataError(f"env.search_mode custom_search needs a token in ${opts.search_auth_env} "
                            "(env.search_auth_env names the variable)")
        return token

    def doc_roots(self) -> list[Path]:
        base = self.data_root(self.options.data_root)
        return [(base / d).expanduser() for d in self.options.data_dirs]

    def tools(self) -> DocTools:
        return DocTools(self.data_root(self.options.data_root), self.doc_roots())

    def user_prompt(self, item: Item, tools: DocTools) -> str:
        text = (f"Question: {item.inputs['question']}\n"
                f"Document folders: {', '.join(tools.root_names())}\n")
        if self.options.shows_gold_pages() and item.inputs["source_files"]:
            pages = oracle_pages(tools, item.inputs["source_files"], item.inputs.get("source_docs"),
                                 self.options.oracle_chars)
            text += f"\nDocument pages:\n{pages}\n"
        if self.options.search_mode == "custom_search":
            return text + "\nReply with SEARCH: <queries> for more evidence, or ANSWER: <answer>."
        if not self.tool_budget():
            return text + "\nReply with ANSWER: <answer>."
        return text + "\nUse a TOOL line to look at the documents, then reply with ANSWER: <answer>."

    def tool_budget(self) -> int:
        opts = self.options
        return opts.max_tool_turns if opts.use_local_tools or opts.search_mode == "tools" else 0

    def preamble(self) -> str:
        if self.options.search_mode == "custom_search":
            return SEARCH_PREAMBLE.format(n=self.options.max_queries_per_turn)
        return PREAMBLE if self.tool_budget() else NO_TOOLS_PREAMBLE

    async def _run(self, item: Item, skill: str, student: LLM, *, sample: int, temperature: float,
                   feedback: bool) -> Trajectory:
        tools = self.tools()
        messages: list[Message] = student_messages(skill, self.preamble(), self.user_prompt(item, tools))
        if getattr(student, "is_agent", False):
            return await self._run_agent(item, tools, messages, student, sample=sample, temperature=temperature)
        if self.options.search_mode == "custom_search":
            return await self._run_search(item, messages, student, sample=sample, temperature=temperature)
        answer, usage, calls = "", {}, 0
        budget = self.tool_budget()
        turns = budget + 2  # tool calls, one nudge, and the final answer
        for turn in range(turns):
            completion = await self.ask(student, messages, max_tokens=self.options.max_tokens,
                                        temperature=temperature, sample=sample)
            reply = completion.text or ""
            usage = usage_extras(completion)
            messages.append({"role": "assistant", "content": reply})
            kind, arg = parse_action(reply)
            if kind == "answer":
                answer = arg
                break
            if turn == turns - 1:
                answer = extract_answer(reply)
                break
            if kind and calls < budget:
                calls += 1
                result = tools.run(kind, arg)
                left = budget - calls
                note = f"Tool result ({kind}):\n{result}\n\n" + (
                    f"{left} tool call(s) left." if left else "No tool calls left: reply with ANSWER: <answer>.")
            elif kind:
                note = "No tool calls left. Reply now with ANSWER: <answer>."
            else:
                note = "Reply with one TOOL: line, or ANSWER: <answer> when you know the answer."
            messages.append({"role": "user", "content": note})
        return self._score(item, messages, answer, {**usage, "tool_calls": calls})

    async def _run_search(self, item: Item, messages: list[Message], student: LLM, *, sample: int,
                          temperature: float) -> Trajectory:
        """SkillOpt's custom_search loop: at most max_tool_turns rounds of queries, then an answer."""
        opts = self.options
        token = self.search_token()
        answer, usage, searches = "", {}, 0
        for turn in range(1, opts.max_tool_turns + 2):
            completion = await self.ask(student, messages, max_tokens=opts.max_tokens, temperature=temperature,
                                        sample=sample)
            reply = completion.text or ""
            usage = usage_extras(completion)
            messages.append({"role": "assistant", "content": reply})
            kind, arg = parse_action(reply)
            queries = parse_queries(reply, opts.max_queries_per_turn)
            if kind == "answer" or turn > opts.max_tool_turns:
                answer = arg if kind == "answer" else extract_answer(reply)
                break
            if not queries:
                note = "Reply with SEARCH: <queries> or ANSWER: <answer>."
            else:
                searches += len(queries)
                found = await custom_search(queries, url=opts.search_api_url, token=token,
                                            provider=opts.search_provider, max_results=opts.search_max_num_results,
                                            timeout_s=opts.search_timeout_seconds)
                left = opts.max_tool_turns - turn
                note = f"Search results:\n{found}\n\n" + (
                    f"{left} search round(s) left." if left else "No searches left: reply with ANSWER: <answer>.")
            messages.append({"role": "user", "content": note})
        return self._score(item, messages, answer, {**usage, "search_queries": searches})

    async def _run_agent(self, item: Item, tools: DocTools, messages: list[Message], student: LLM, *,
                         sample: int, temperature: float) -> Trajectory:
        """Agent harness students read the documents themselves from their workspace."""
        files: dict[str, bytes] = {}
        total = 0
        for shown, real in tools.files():
            size = real.stat().st_size
            if total + size > _MAX_AGENT_BYTES:
                break
            files[shown] = real.read_bytes()
            total += size
        prompt = (f"Question: {item.inputs['question']}\nThe documents are in this workspace under "
                  f"{', '.join(tools.root_names())}. Reply with ANSWER: <answer> on the last line.")
        msgs = [messages[0], {"role": "user", "content": prompt}]
        completion = await self.ask(student, msgs, max_tokens=self.options.max_tokens, temperature=temperature,
                                    sample=sample, extra={"workspace_files": files})
        reply = completion.text or ""
        msgs.append({"role": "assistant", "content": reply})
        kind, arg = parse_action(reply)
        answer = arg if kind == "answer" else extract_answer(reply)
        return self._score(item, msgs, answer, usage_extras(completion))

    def _score(self, item: Item, messages: list[Message], answer: str, extras: dict[str, Any]) -> Trajectory:
        em, f1 = officeqa_scores(answer, item.gold)
        expected = " | ".join(item.gold)
        if em:
            reason = ""
        elif not answer:
            reason = f"no_answer: no ANSWER line; expected {expected!r}"
        else:
            reason = f"wrong_answer: expected {expected!r}, got {answer!r}"
        return self.finish(item, messages, answer, hard=em, soft=f1, fail_reason=reason, extras=extras)

    @classmethod
    def prepare(cls, src: Path, dest: Path, *, ratio: str = "2:1:7", seed: int = 42,
                docs: Path | None = None) -> dict[str, Any]:
        """OfficeQA CSV/JSON (+ a docs folder beside it, or `docs`) -> split_dir layout with docs/ copied."""
        src, dest = Path(src), Path(dest)
        if src.is_dir():
            found = sorted([*src.glob("*.csv"), *src.glob("*.json"), *src.glob("*.jsonl")])
            if not found:
                raise DataError(f"{src}: no .csv/.json/.jsonl question file found")
            qfile = found[0]
        else:
            qfile = src
        if qfile.suffix == ".csv":
            with open(qfile, newline="", encoding="utf-8-sig") as f:
                rows: list[Any] = list(csv.DictReader(f))
        else:
            rows = read_records(qfile, key="--from")
        records = []
        for n, row in enumerate(rows):
            if not isinstance(row, dict):
                raise DataError(f"{qfile}: record {n} is not an object")
            for key in ("uid", "question", "ground_truth"):
                if not str(row.get(key) or "").strip():
                    raise DataError(f"{qfile}: record {n} is missing field {key!r}")
            files = row.get("source_files") or []
            if isinstance(files, str):
                files = [f.strip() for f in re.split(r"[;,\n]", files) if f.strip()]
            records.append({**row, "uid": str(row["uid"]), "source_files": files})
        doc_dir = docs if docs is not None else qfile.parent / "docs"
        if doc_dir.is_dir():
            shutil.copytree(doc_dir, dest / "docs", dirs_exist_ok=True, symlinks=False)
        summary = write_prepared(records, dest, env=cls.name, source=src, ratio=ratio, seed=seed, id_key="uid")
        summary["docs"] = str(dest / "docs") if doc_dir.is_dir() else "none copied (pass docs=...)"
        return summary
