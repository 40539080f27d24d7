"""Agent Skills folders (envs/skillfolder/, skillfolder/): frontmatter validation by the specification, the real
evals.json forms skill authors commit, assertion grading, the skill-eval workspace written and read back (also
one another tool wrote), trigger F1, and a package edit to references/ that passes the gate and is undone
exactly. The fixtures are real public skill folders (tests/fixtures/skills/README.md names them and their
licenses). Plumbing tests use scripted models; the end-to-end runs with the embedded model are marked slow."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_engine_plumbing import Scripted

from skillgrad.config.loader import load_config
from skillgrad.core.events import EventLog
from skillgrad.engine.candidate import judge_candidate
from skillgrad.engine.context import RunContext
from skillgrad.envs.registry import create_env
from skillgrad.envs.skillfolder.folder import (
    adopt_texts,
    folder_texts,
    read_skill_folder,
    replace_description,
    split_package,
    undo_last,
)
from skillgrad.envs.skillfolder.grading import grade, scores
from skillgrad.envs.skillfolder.spec import (
    assertion_check,
    frontmatter_problems,
    parse_evals,
    parse_queries,
    split_frontmatter,
    trigger_score,
)
from skillgrad.envs.skillfolder.tasks import eval_tasks
from skillgrad.envs.skillfolder.trigger import competitors, split_queries, trigger_eval
from skillgrad.envs.skillfolder.workspace import (
    RunRecord,
    read_benchmark,
    read_feedback,
    read_workspace,
    write_iteration,
)
from skillgrad.errors import DataError
from skillgrad.models.base import Completion, Usage
from skillgrad.models.budget import Budget
from skillgrad.models.factory import Models
from skillgrad.models.meter import Meter
from skillgrad.runs.store import RunStore

FIXTURES = Path(__file__).parent / "fixtures" / "skills"
PR = FIXTURES / "pr-naming-convention"  # MIT-0, plain-rule assertions, a linked reference, a script
REQ = FIXTURES / "requirements-engineering"  # MIT, assertions in words, a folded description, query splits
EVAL_SKILL = FIXTURES / "eval-skill"  # MIT-0, input files named relative to evals/ (that project's layout)


def _copy(src: Path, tmp: Path) -> Path:
    dst = tmp / src.name
    shutil.copytree(src, dst)
    return dst


def _sha(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".skillgrad-undo" not in p.parts}


# ------------------------------------------------------------------ frontmatter
def test_real_frontmatter_is_valid() -> None:
    for root in (PR, REQ):
        fm = split_frontmatter((root / "SKILL.md").read_text(encoding="utf-8"))
        assert not isinstance(fm, str)
        assert frontmatter_problems(fm.meta, root.name) == []


def test_frontmatter_problems_one_line_each() -> None:
    meta = {"name": "PDF--Tools-", "description": "x" * 1025, "compatibility": "", "metadata": {"version": 1},
            "allowed-tools": 3, "tags": ["a"]}
    lines = frontmatter_problems(meta, "pdf-tools")
    assert lines == [
        "SKILL.md name: 'PDF--Tools-' must be lower-case letters, digits and single hyphens, not starting or ending "
        "with a hyphen",
        "SKILL.md name: 'PDF--Tools-' does not match the folder name 'pdf-tools'; rename one of them",
        "SKILL.md description: 1025 characters; shorten it to at most 1024",
        "SKILL.md compatibility: must be a string of 1-500 characters",
        "SKILL.md metadata: must map string keys to string values (quote numbers: version: \"1.0\")",
        "SKILL.md allowed-tools: must be a space-separated string or a list of strings",
        "SKILL.md tags: not a frontmatter key of the specification; move it under metadata: (allowed: name, "
        "description, license, compatibility, metadata, allowed-tools)",
    ]
    assert frontmatter_problems({"name": "a" * 65, "description": " "}, "") == [
        "SKILL.md name: 65 characters; shorten it to at most 64",
        "SKILL.md description: missing or empty; say what the skill does and when to use it"]
    assert frontmatter_problems({}, "x")[0].startswith("SKILL.md name: missing")
    assert frontmatter_problems({"name": "ok-1", "description": "d", "allowed-tools": ["Read", "Bash(git:*)"],
                                 "license": "MIT", "metadata": {"author": "me"}}, "ok-1") == []


def test_broken_folder_exits_2_with_every_problem(tmp_path: Path) -> None:
    root = _copy(PR, tmp_path)
    text = (root / "SKILL.md").read_text(encoding="utf-8")
    (root / "SKILL.md").write_text(text.replace("name: pr-naming-convention", "name: PR_Naming\nversion: 2"),
                                   encoding="utf-8")
    p = subprocess.run([sys.executable, "-m", "skillgrad.cli", "skill", "check", str(root)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2
    err = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(err) == 3, p.stderr
    assert "name: 'PR_Naming' must be lower-case" in err[0] and "does not match the folder name" in err[1]
    assert "version: not a frontmatter key" in err[2]
    (root / "SKILL.md").write_text("# no frontmatter\n", encoding="utf-8")
    with pytest.raises(DataError, match="no YAML frontmatter"):
        read_skill_folder(root)


def test_description_replaced_in_a_folded_block() -> None:
    fm = split_frontmatter((REQ / "SKILL.md").read_text(encoding="utf-8"))
    assert not isinstance(fm, str)
    head = replace_description(fm.head, 'Use this skill when "requirements" are vague: a: b')
    again = split_frontmatter(head + fm.body)
    assert not isinstance(again, str)
    assert again.meta["description"] == 'Use this skill when "requirements" are vague: a: b'
    assert {k: v for k, v in again.meta.items() if k != "description"} == \
        {k: v for k, v in fm.meta.items() if k != "description"}


# ------------------------------------------------------------------ evals.json and grading
def test_real_evals_parse_and_assertions_map_to_checks() -> None:
    f = read_skill_folder(PR)
    assert [c.id for c in f.cases][:2] == ["valid-title-standard", "invalid-title-missing-ticket"]
    checks = [a.check for c in f.cases for a in c.assertions]
    assert all(c is not None for c in checks)  # every assertion of this folder is a plain rule
    assert f.cases[-1].assertions[0].check is not None and f.cases[-1].assertions[0].check.op == "contains"
    r = read_skill_folder(REQ)
    assert len(r.cases) == 3 and all(a.check is None for c in r.cases for a in c.assertions)  # sentences
    assert r.cases[0].expected_output.startswith("A self-contained feature spec")
    assert assertion_check("does not contain 'TODO'") is not None
    assert assertion_check("The output names the file it changed") is None
    assert assertion_check('matches /^\\[TEAM-\\d+\\]/') is not None


def test_spec_form_with_expectations_and_files(tmp_path: Path) -> None:
    # The guide's documented form: {skill_name, evals}, "expectations", integer ids, files relative to the folder.
    name, cases = parse_evals({"skill_name": "csv-analyzer", "evals": [
        {"id": 1, "prompt": "Top 3 months?", "expected_output": "A bar chart.", "files": ["evals/files/s.csv"],
         "expectations": ["The chart shows exactly 3 months", {"text": "contains 'revenue'"}]}]})
    assert name == "csv-analyzer" and cases[0].files == ["evals/files/s.csv"]
    assert cases[0].assertions[0].check is None and cases[0].assertions[1].check is not None
    assert cases[0].name == "1-top-3-months"
    for bad, msg in (({"evals": [{"id": 1}]}, "evals\\[0\\].prompt"), ({"evals": []}, "empty"),
                     ([{"prompt": "a", "id": 1}, {"prompt": "b", "id": 1}], "appears twice"),
                     ({"evals": [{"prompt": "a", "assertions": "x"}]}, "assertions must be a list")):
        with pytest.raises(ValueError, match=msg):
            parse_evals(bad)
    root = _copy(PR, tmp_path)
    data = json.loads((root / "evals/evals.json").read_text())
    data[0]["files"] = ["evals/files/missing.txt"]
    (root / "evals/evals.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match="names file 'evals/files/missing.txt'"):
        read_skill_folder(root)


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillgrad.cli", "skill", "check", str(root)], capture_output=True,
                          text=True, timeout=120)


def test_eval_files_relative_to_evals_or_to_the_folder(tmp_path: Path) -> None:
    # sample-agent-skill-eval's own fixture names `files/sample.csv` relative to evals/ (its tool stages files from
    # there); the Agent Skills guide and skill-creator name `evals/files/x` relative to the folder. Both are read.
    p = _check(EVAL_SKILL)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("eval-skill: valid; 3 evals")
    folder = read_skill_folder(EVAL_SKILL)
    assert [c.files for c in folder.cases] == [["evals/files/sample.csv"]] * 3
    env = create_env(load_config(None, ["env.name=skill-folder", f"env.skill_dir={EVAL_SKILL}"]).env)
    item = env.to_item(folder.cases[0])  # type: ignore[attr-defined]
    assert "name,age,city\nAlice,30,New York" in item.inputs["context"]
    assert eval_tasks(EVAL_SKILL / "SKILL.md")[0].meta["context"][0]["text"].startswith("name,age,city")
    root = _copy(EVAL_SKILL, tmp_path)
    data = json.loads((root / "evals/evals.json").read_text())
    data[0]["files"] = ["evals/files/sample.csv"]  # relative to the folder
    data[1]["files"] = ["./files/sample.csv"]
    (root / "evals/evals.json").write_text(json.dumps(data))
    assert [c.files for c in read_skill_folder(root).cases] == [["evals/files/sample.csv"]] * 3
    (tmp_path / "outside.csv").write_text("a,b\n")  # a file outside the folder is never read
    for bad in ("files/samples.csv", "../outside.csv", str(tmp_path / "outside.csv")):
        data[2]["files"] = [bad]
        (root / "evals/evals.json").write_text(json.dumps(data))
        p = _check(root)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert (f"evals.json: eval csv-json-columns names file {bad!r}, which is neither in" in p.stderr
                and "fix the path (relative to the skill folder or to evals/)" in p.stderr), p.stderr


class Judge:
    """A scripted judge: passes a statement when the reply holds the word it names in brackets."""

    name, supports_vision, is_agent, context_window = "judge", False, False, 8192

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], *, schema: Any = None, **kw: Any) -> Completion:
        user = messages[-1]["content"]
        reply = user.split("Reply: ", 1)[1].split("\nStatement: ", 1)[0]
        word = user.rsplit("[", 1)[-1].split("]", 1)[0]
        parsed = schema(passed=word in reply, evidence=f"'{word}' {'quoted' if word in reply else 'absent'}")
        return Completion(text=parsed.model_dump_json(), parsed=parsed, usage=Usage(10, 5))


def test_grading_records_text_passed_evidence() -> None:
    _, cases = parse_evals([{"id": "a", "prompt": "p", "assertions": [
        "contains 'feat' or contains 'fix'", "does not contain 'TODO'", "It names the [ticket]"]}])
    graded = asyncio.run(grade(cases[0], "fix: the ticket TODO", Judge()))
    assert [g.to_json() for g in graded] == [
        {"text": "contains 'feat' or contains 'fix'", "passed": True, "evidence": "matched /feat|fix/"},
        {"text": "does not contain 'TODO'", "passed": False, "evidence": "'TODO' found in the reply"},
        {"text": "It names the [ticket]", "passed": True, "evidence": "'ticket' quoted"}]
    assert scores(graded)[:2] == (0.0, pytest.approx(2 / 3))
    no_judge = asyncio.run(grade(cases[0], "fix", None))
    assert no_judge[2].passed is False and "no judge model" in no_judge[2].evidence


# ------------------------------------------------------------------ workspace
def _rec(eid: str, split: str, passed: list[bool], answer: str = "a") -> RunRecord:
    return RunRecord(eid, eid, f"prompt {eid}", answer,
                     [{"text": f"t{i}", "passed": p, "evidence": "e"} for i, p in enumerate(passed)], split, 1.5, 40)


def test_workspace_written_in_the_spec_fields_and_read_back(tmp_path: Path) -> None:
    ws = tmp_path / "x-workspace"
    runs = {"with_skill": [_rec("a", "test", [True, True]), _rec("b", "val", [True, False])],
            "without_skill": [_rec("a", "test", [False, False]), _rec("b", "val", [True, False])]}
    it = write_iteration(ws, 1, skill_name="x", skill_path="/x", runs=runs, label="baseline")
    g = json.loads((it / "eval-a/with_skill/grading.json").read_text())
    assert g["expectations"][0] == {"text": "t0", "passed": True, "evidence": "e"}
    assert g["summary"] == {"passed": 2, "failed": 0, "total": 2, "pass_rate": 1.0}
    assert json.loads((it / "eval-b/without_skill/timing.json").read_text()) == \
        {"total_tokens": 40, "duration_ms": 1500, "total_duration_seconds": 1.5, "cached": False}
    assert (it / "eval-a/with_skill/outputs/response.md").read_text() == "a\n"
    b = json.loads((it / "benchmark.json").read_text())
    assert {r["configuration"] for r in b["runs"]} == {"with_skill", "without_skill"}
    assert b["runs"][0]["result"]["pass_rate"] == 1.0 and b["run_summary"]["delta"]["pass_rate"] == 0.5
    assert b["run_summary"]["with_skill"]["pass_rate"] == {"mean": 0.75, "stddev": 0.3536, "min": 0.5, "max": 1.0}
    assert read_benchmark(it / "benchmark.json").pass_rate == {"with_skill": 0.75, "without_skill": 0.25}
    (ws / "feedback.json").write_text(json.dumps({"eval-a": "too terse", "eval-b": ""}))
    w = read_workspace(ws)
    assert w is not None and w.iteration == 1 and w.benchmark is not None
    assert w.feedback_path == ws / "feedback.json" and read_feedback(ws / "feedback.json") == {"eval-a": "too terse"}


def test_another_tools_workspace_reads_as_a_baseline(tmp_path: Path) -> None:
    # A benchmark.json written by another skill-eval tool (MIT-0, its own field names) and skill-creator's review form.
    other = FIXTURES / "skill-eval-workspace"
    w = read_workspace(other)
    assert w is not None and w.benchmark is not None
    assert w.benchmark.pass_rate == {"with_skill": 0.35, "without_skill": 0.35}
    fb = tmp_path / "feedback.json"
    fb.write_text(json.dumps({"reviews": [
        {"run_id": "eval-suggest-fix-with_skill", "feedback": "Give the corrected title.", "timestamp": "t"},
        {"run_id": "eval-valid-branch-with_skill", "feedback": "", "timestamp": "t"}], "status": "complete"}))
    assert read_feedback(fb) == {"eval-suggest-fix": "Give the corrected title."}
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(DataError, match="no pass rate per configuration"):
        read_benchmark(tmp_path / "bad.json")


# ------------------------------------------------------------------ trigger F1
def test_trigger_score() -> None:
    s = trigger_score([(True, True), (True, False), (False, True), (False, False), (True, True)])
    assert (s.tp, s.fp, s.fn, s.tn) == (2, 1, 1, 1)
    assert (s.precision, s.recall, s.f1) == (0.6667, 0.6667, 0.6667)
    assert trigger_score([(False, False)]).f1 == 1.0 and trigger_score([(True, False)]).f1 == 0.0


class KeywordRouter:
    """Picks the skill under test for a request that mentions a PR, a branch or Python, on every sample."""

    name, supports_vision, is_agent, context_window = "router", False, False, 8192

    def __init__(self) -> None:
        self.listings: list[str] = []

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], *, schema: Any = None, **kw: Any) -> Completion:
        user = messages[-1]["content"]
        self.listings.append(user)
        query = user.split("Request: ", 1)[1].lower()
        pick = "pr-naming-convention" if any(w in query for w in ("pr ", "branch", "python")) else "none"
        parsed = schema(skill=pick)
        return Completion(text=parsed.model_dump_json(), parsed=parsed, usage=Usage(30, 5))


def test_trigger_f1_on_the_real_query_set(tmp_path: Path) -> None:
    f = read_skill_folder(PR)
    router = KeywordRouter()
    ev = asyncio.run(trigger_eval(router, f.name, f.description, competitors(f.root), f.queries, samples=2))
    # The 4 should-trigger queries all name a PR or a branch; of the 4 near misses, "Write me a Python function"
    # fires wrongly: precision 4/5, recall 4/4.
    assert [r.triggers for r in ev.rows] == [2, 2, 2, 2, 2, 0, 0, 0]
    assert (ev.score.precision, ev.score.recall, ev.score.f1) == (0.8, 1.0, 0.8889)
    assert all("pr-naming-convention: Validates PR titles" in x for x in router.listings)
    assert "- requirements-engineering: Use this skill" in router.listings[0]  # its sibling in the same folder
    alone = competitors(_copy(PR, tmp_path))  # a folder alone gets the fixed distractors
    assert [n for n, _ in alone][:2] == ["python-coding", "web-search"]
    train, val = split_queries(f.queries)
    # 60% of each 4 rounds to 2: 4 train, 4 validation, each half should-trigger
    assert (len(train), len(val)) == (4, 4) and sorted(q.should_trigger for q in val) == [False, False, True, True]
    r = read_skill_folder(REQ)
    rt, rv = split_queries(r.queries)
    assert (len(rt), len(rv)) == (14, 7)  # the file's own split is kept
    with pytest.raises(ValueError, match="should_trigger"):
        parse_queries([{"query": "a", "should_trigger": "yes"}])


# ------------------------------------------------------------------ package: references/ under the gate, undo
GOOD = "[TEAM-42] feat: add login feature (valid, follows TEAM format, not a bad type)"
HINT = "When you fix a title, answer with the corrected title itself."


class TokenCount:
    """The teacher-side token counter the run context trims trajectories with (no teacher call is made here)."""

    @staticmethod
    def count(text: str) -> int:
        return len(text) // 4


class RuleStudent:
    """Answers the corrected title only when its system text carries the hint; otherwise a useless reply."""

    name, supports_vision, is_agent, context_window = "rule-student", False, False, 100_000

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], **kw: Any) -> Completion:
        return Completion(text=GOOD if HINT in str(messages[0]["content"]) else "ok", usage=Usage(50, 8))


def test_reference_edit_passes_the_gate_and_is_undone_exactly(tmp_path: Path) -> None:
    root = _copy(PR, tmp_path)
    before = _sha(root)
    cfg = load_config(None, ["env.name=skill-folder", f"env.skill_dir={root}", "env.split_ratio=1:1:1",
                             "evaluation.min_val_items=2"])
    env = create_env(cfg.env)
    folder = read_skill_folder(root)
    incumbent = env.initial_skill()
    assert "<!-- file: references/naming-rules.md -->" in incumbent and "check_pr.py title" in incumbent
    assert "import json" not in incumbent  # the script's code is never part of the trained text
    ref = folder.references["references/naming-rules.md"]
    candidate = incumbent.replace("### PR Title Rules\n", f"### PR Title Rules\n\n{HINT}\n", 1)
    assert candidate != incumbent and split_package(candidate, list(folder.references))[0] == \
        split_package(incumbent, list(folder.references))[0]  # the body is untouched: the edit is in the reference

    async def judge() -> Any:
        models = Models(teacher=Scripted("teacher"), student=RuleStudent(), meter=Meter(), budget=Budget(),  # type: ignore[arg-type]
                        cache=None)
        ctx = RunContext(cfg, env, models, RunStore(tmp_path / "run"), EventLog(tmp_path / "run/events.jsonl"),
                         TokenCount())  # type: ignore[arg-type]
        ctx.splits = env.load_splits()
        base = await ctx.evaluate("selection_eval_baseline", incumbent, stage="baseline")
        ctx.state.current_skill = ctx.state.best_skill = incumbent
        ctx.state.current_score = ctx.state.best_score = base.score
        broken = candidate.replace("<!-- file: references/naming-rules.md -->", "")
        lost = await ctx.evaluate("lost", broken, stage="gate")
        v = await judge_candidate(ctx, candidate, "step_0001", folder="steps/step_0001", stage="gate", step=1,
                                  epoch=1)
        return base, lost, v

    base, lost, verdict = asyncio.run(judge())
    assert base.hard == 0.0 and lost.hard == 0.0  # a package whose marker was lost fails every task
    assert verdict.accepted and verdict.score > base.score
    texts = folder_texts(folder, candidate)
    assert set(texts) == {"SKILL.md", "references/naming-rules.md"}
    assert texts["SKILL.md"] == (root / "SKILL.md").read_text(encoding="utf-8")
    assert texts["references/naming-rules.md"] == ref.replace("### PR Title Rules\n", f"### PR Title Rules\n\n{HINT}\n")
    adopt_texts(root, {"references/naming-rules.md": texts["references/naming-rules.md"]})
    assert HINT in (root / "references/naming-rules.md").read_text(encoding="utf-8")
    assert _sha(root) != before
    undo_last(root)
    assert _sha(root) == before  # byte for byte
    with pytest.raises(Exception, match="never written"):
        adopt_texts(root, {"scripts/check_pr.py": "print('x')\n"})


def test_cli_adopt_and_undo(tmp_path: Path) -> None:
    root = _copy(PR, tmp_path)
    before = _sha(root)
    run = tmp_path / "run"
    run.mkdir()
    folder = read_skill_folder(root)
    (run / "best_skill.md").write_text(folder.package().replace("## Helping users fix issues",
                                                                "## Helping users fix issues\n\nBe brief."))
    (run / "skills").mkdir()
    (run / "skills/skill_v0000.md").write_text(folder.package())  # the run started from the folder as it is
    (run / "trigger.json").write_text(json.dumps({"description_before": folder.description,
                                                  "description_after": "Use this skill when a PR title or "
                                                                       "branch name needs checking."}))
    cmd = [sys.executable, "-m", "skillgrad.cli", "skill"]
    p = subprocess.run([*cmd, "adopt", str(run), str(root)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    after = read_skill_folder(root)
    assert after.description.startswith("Use this skill when a PR title") and "Be brief." in after.front.body
    assert after.references == folder.references  # unchanged reference: not rewritten
    p = subprocess.run([*cmd, "undo", str(root)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and _sha(root) == before
    p = subprocess.run([*cmd, "undo", str(root)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "no adoption to undo" in p.stderr
    (root / "references/naming-rules.md").write_text("edited by hand since the run\n")
    p = subprocess.run([*cmd, "adopt", str(run), str(root)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "changed since the run" in p.stderr


# ------------------------------------------------------------------ the embedded model, end to end
@pytest.mark.slow
def test_round_trip_with_the_embedded_model(tmp_path: Path, gguf_path: Path) -> None:
    """A real public skill folder with its evals: read, train a step, write the workspace, read it back; the
    workspace another tool left (its benchmark.json, a review) is read first."""
    root = _copy(PR, tmp_path)
    ws = tmp_path / "pr-naming-convention-workspace"
    shutil.copytree(FIXTURES / "skill-eval-workspace", ws)
    (ws / "feedback.json").write_text(json.dumps({"reviews": [
        {"run_id": "eval-suggest-fix-with_skill", "feedback": "Answer with the corrected title.", "timestamp": "t"}]}))
    p = subprocess.run([sys.executable, "-m", "skillgrad.cli", "train", "--skill", str(root), "--out", str(tmp_path / "run"),
                        "-q", "-o", "train.batch_size=2", "-o", f"model.student.model={gguf_path}",
                        "-o", f"model.teacher.model={gguf_path}", "-o", "model.student.n_threads=1",
                        "-o", "model.teacher.n_threads=1"],
                       capture_output=True, text=True, timeout=1200)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "held-out pass rate" in p.stdout and "recorded baseline" in p.stdout
    result = json.loads((tmp_path / "run/skill_folder.json").read_text())
    assert result["recorded_baseline"] == {"with_skill": 0.35, "without_skill": 0.35}
    assert result["iterations"][0] == 2  # after the other tool's iteration-1
    for n in result["iterations"]:
        bench = read_benchmark(ws / f"iteration-{n}" / "benchmark.json")
        assert set(bench.pass_rate) == {"with_skill", "without_skill"}
        grading = json.loads((ws / f"iteration-{n}/eval-suggest-fix/with_skill/grading.json").read_text())
        assert {"text", "passed", "evidence"} <= set(grading["expectations"][0])
    assert set(result["held_out"]) == {"no_skill", "before", "after", "no_skill_evals_passed", "before_evals_passed",
                                       "after_evals_passed"}
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    assert result["held_out"]["before_evals_passed"] == summary["baseline_test_hard"]  # the run's own test figure
    config = json.loads((tmp_path / "run/config.json").read_text())["config"]["env"]
    assert config["feedback_file"] == str((ws / "feedback.json").resolve())
    # The reviewer's note is in the evaluation message of the trajectory the teacher reads (suggest-fix is a train
    # eval under the packaged split, and it fails with the folder's SKILL.md).
    rollout = (tmp_path / "run/steps/step_0001/rollout/results.jsonl").read_text()
    assert "a reviewer wrote: Answer with the corrected title." in rollout


# ------------------------------------------------------------------ the description optimizer's gate
class Proposer:
    """A scripted teacher: proposes the given descriptions in turn."""

    name, supports_vision, is_agent, context_window = "proposer", False, False, 8192

    def __init__(self, *proposals: str) -> None:
        self.proposals = list(proposals)
        self.prompts: list[str] = []

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], *, schema: Any = None, **kw: Any) -> Completion:
        self.prompts.append(messages[-1]["content"])
        parsed = schema(description=self.proposals.pop(0))
        return Completion(text=parsed.model_dump_json(), parsed=parsed, usage=Usage(40, 20))


class DescriptionRouter:
    """Picks the skill when its listed description mentions the request's topic word (PR, branch, naming)."""

    name, supports_vision, is_agent, context_window = "router", False, False, 8192

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], *, schema: Any = None, **kw: Any) -> Completion:
        user = messages[-1]["content"]
        listing, query = user.split("Request: ", 1)
        desc = next(line for line in listing.splitlines() if line.startswith("- pr-naming-convention: "))
        hit = any(w in query.lower() and w in desc.lower() for w in ("pr title", "branch", "naming format"))
        parsed = schema(skill="pr-naming-convention" if hit else "none")
        return Completion(text=parsed.model_dump_json(), parsed=parsed, usage=Usage(30, 5))


def test_description_steps_are_bounded_and_gated(tmp_path: Path) -> None:
    from skillgrad.skillfolder.trigger_train import changed_chars, optimize_description

    root = _copy(PR, tmp_path)
    folder = read_skill_folder(root)
    folder.front.meta["description"] = "Checks PR titles."
    wide = "Checks PR titles, branch names and the team's PR naming format."
    held: list[str] = []

    async def hold(desc: str) -> tuple[bool, str]:
        held.append(desc)
        return False, "evals' validation score with it 0.50 vs 1.00"

    def run(teacher: Proposer, **kw: Any) -> dict[str, Any]:
        return asyncio.run(optimize_description(folder, teacher, DescriptionRouter(), steps=2, samples=1,  # type: ignore[arg-type]
                                                temperature=0.0, max_tokens=64, seed=42, **kw))

    too_big = "x" * 300
    report = run(Proposer(too_big, wide), edit_budget=120)
    assert [s["action"] for s in report["steps"]] == ["reject", "accept"]
    assert "the budget is 120" in report["steps"][0]["why"] and changed_chars("Checks PR titles.", too_big) > 120
    assert report["description_after"] == wide
    assert report["validation_after"]["f1"] > report["validation_before"]["f1"]
    # the validation queries are never shown to the teacher: only train failures are
    train, val = split_queries(folder.queries)
    teacher = Proposer(wide, wide)
    gated = run(teacher, edit_budget=120, hold=hold)
    # F1 rose both times, and both times the evals' half of the gate held the candidate back
    assert held == [wide, wide] and [s["action"] for s in gated["steps"]] == ["reject", "reject"]
    assert "0.50 vs 1.00" in gated["steps"][0]["why"] and gated["description_after"] == "Checks PR titles."
    assert not any(q.query in p for q in val for p in teacher.prompts)


def test_python_api_takes_a_skill_folder(tmp_path: Path) -> None:
    import skillgrad
    from skillgrad.errors import UsageError

    root = _copy(PR, tmp_path)
    (root / "SKILL.md").write_text("---\nname: other\ndescription: d\n---\n", encoding="utf-8")
    with pytest.raises(DataError, match="does not match the folder name 'pr-naming-convention'"):
        skillgrad.train(skill=root)
    with pytest.raises(UsageError, match="YAML path or a packaged name"):
        skillgrad.train({"env": {"name": "facts"}}, skill=root)
    with pytest.raises(UsageError, match="needs a config"):
        skillgrad.train()


PR_V1 = Path(__file__).parents[1] / "benchmarks" / "public_skills" / "pr-naming"  # MIT-0, the deficient v1
FIX = "[TEAM-42] feat: add login feature"  # the suggest-fix eval's expected output, and an agent teacher's fix


class Unhelpful:
    """A student that fails every eval of the pr-naming folder (no verdict word, no ticket)."""

    name, supports_vision, is_agent, context_window = "scripted:student", False, False, 4096

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], **kw: Any) -> Completion:
        return Completion(text="I can only run scripts.", usage=Usage(50, 6))


def test_a_worked_example_carrying_its_own_tasks_expected_output_is_its_gold_not_a_copy(tmp_path: Path) -> None:
    # The agent-teacher run on pr-naming v1: the teacher's fix for suggest-fix equals that eval's expected output,
    # which the update stage's guard refused as "copies checker text" (every eval's expected output is checker text
    # for a skill folder). It is that task's gold, verified on it: it enters the skill.
    from skillgrad.engine.trainer import Trainer

    root = _copy(PR_V1, tmp_path)
    cfg = load_config("skillgrad:skill-folder.yaml", [f"env.skill_dir={root}"])
    teacher = Scripted("teacher", {"Demonstration": lambda user: {
        "reply": FIX if "added login feature for TEAM-42" in user else "Valid: it follows [TEAM-<n>] <type>: <text>."}})
    models = Models(teacher=teacher, student=Unhelpful(), meter=Meter(), budget=Budget(), cache=None)  # type: ignore[arg-type]
    run_dir = tmp_path / "run"
    env = create_env(cfg.env)
    assert "suggest-fix" in [it.id for it in env.load_splits().train]
    asyncio.run(Trainer(cfg, env, models, RunStore(run_dir), EventLog(run_dir / "events.jsonl")).run())
    outcomes = json.loads((run_dir / "steps/step_0001/update_result.json").read_text())["report"]["outcomes"]
    (fix,) = [o for o in outcomes if o["content"] == FIX]
    assert fix["status"] == "applied_example", fix
    assert f"A: {FIX}" in (run_dir / "steps/step_0001/candidate_skill.md").read_text()


def test_another_tasks_expected_output_stays_checker_text(tmp_path: Path) -> None:
    # The guard's purpose kept: the same text as a worked example of another task, or as a rule, quotes the
    # suggest-fix eval's expected output and would pass its checks by copying: refused.
    from skillgrad.engine.modes import MODES
    from skillgrad.engine.prompts import PromptLibrary
    from skillgrad.engine.stages.update import guard_for, own_answers, update

    root = _copy(PR_V1, tmp_path)
    env = create_env(load_config("skillgrad:skill-folder.yaml", [f"env.skill_dir={root}"]).env)
    sp = env.load_splits()
    items = [*sp.train, *sp.val]
    other = next(it for it in sp.train if it.id != "suggest-fix")
    fix = next(it for it in sp.train if it.id == "suggest-fix")

    def example(item: Any, reply: str) -> dict[str, Any]:
        return {"op": "example", "target": item.inputs["question"], "content": reply, "support_count": 1,
                "source_type": "demonstration", "demonstration": {"item_id": item.id, "source": "teacher_correction"}}

    edits = [example(other, f"Like {FIX}"), {"op": "append", "content": f"Reply {FIX}.", "target": ""},
             example(fix, f"Use this title: {FIX}")]
    upd = asyncio.run(update(env.initial_skill(), edits, None, mode=MODES["patch"],  # type: ignore[arg-type]
                             guard=guard_for(items, PromptLibrary([]), env), own=own_answers(items, env)))
    status = {o["content"]: o["status"] for o in upd.report["outcomes"]}
    assert status == {f"Like {FIX}": "refused_checker_text", f"Reply {FIX}.": "refused_checker_text",
                      f"Use this title: {FIX}": "applied_example"}, status
    assert set(own_answers(items, env)) == {it.id for it in items}  # every eval here states its expected output
    # an eval without one has its assertions as gold: the checker's own words, never exempt
    data = json.loads((root / "evals/evals.json").read_text())
    del data[-1]["expected_output"]  # suggest-fix
    (root / "evals/evals.json").write_text(json.dumps(data))
    env = create_env(load_config("skillgrad:skill-folder.yaml", [f"env.skill_dir={root}"]).env)
    sp = env.load_splits()
    assert "suggest-fix" not in own_answers([*sp.train, *sp.val], env)
