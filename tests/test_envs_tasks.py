"""The `tasks` environment: rule checks, task-file errors, stable splits, learned-block composition, and a
real rollout with the embedded model."""

import asyncio
import json
from pathlib import Path

import pytest

from skillgrad.config.schema import EnvSection
from skillgrad.envs.registry import create_env
from skillgrad.envs.tasks import Check, TasksEnv, read_tasks, score_checks, stable_split
from skillgrad.envs.tasks.checks import required_text, tool_call_text, trace_tools
from skillgrad.errors import ConfigError, DataError
from skillgrad.skill.learned import LEARNED_END, LEARNED_START, extract_learned


def _check(op, arg="", value=""):
    return Check(op=op, arg=arg, value=value)


REPLY = "## Summary\nFixed the login bug.\n\n## Tests\nAll pass."


@pytest.mark.parametrize("op,arg,value,ok", [
    ("contains", "LOGIN", "", True), ("contains", "logout", "", False),
    ("not_contains", "logout", "", True), ("not_contains", "bug", "", False),
    ("regex", r"^## Summary", "", True), ("regex", r"^Fixed$", "", False),
    ("no_refusal", "", "", True), ("section_present", "Tests", "", True), ("section_present", "Risks", "", False),
    ("section_contains", "summary", "login", True), ("section_contains", "Tests", "login", False),
    ("min_chars", "10", "", True), ("max_chars", "10", "", False), ("tool_called", "Bash", "", False),
])
def test_each_check_op(op, arg, value, ok):
    hard, soft, reason = score_checks([_check(op, arg, value)], REPLY)
    assert (hard, soft) == ((1.0, 1.0) if ok else (0.0, 0.0))
    assert (reason == "") == ok


def test_hard_is_all_soft_is_fraction_and_refusals_and_tools():
    hard, soft, reason = score_checks([_check("contains", "bug"), _check("contains", "nope")], REPLY)
    assert (hard, soft) == (0.0, 0.5) and "nope" in reason
    assert score_checks([_check("no_refusal")], "I'm sorry, but I cannot help.")[0] == 0.0
    assert score_checks([_check("tool_called", "bash")], "x", ["Bash"])[0] == 1.0
    assert score_checks([_check("section_present", "Status")], "Status: green")[0] == 1.0


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def _rule(i, pattern="^DONE:", **kw):
    return {"task_id": f"t{i}", "task": f"Report on job {i}.",
            "judge": {"kind": "rule", "checks": [{"op": "regex", "arg": pattern}]}, **kw}


@pytest.mark.parametrize("row,needle", [
    ("{not json", ":1: not valid JSON"),
    ({"task_id": "a", "task": "x", "judge": {"kind": "rule", "checks": []}}, "needs at least one check"),
    ({"task_id": "a", "task": "x", "judge": {"kind": "rule", "checks": [{"op": "regex", "arg": "("}]}},
     "does not compile"),
    ({"task_id": "a", "task": "x", "judge": {"kind": "rule", "checks": [{"op": "shout", "arg": "x"}]}},
     "judge.checks.0.op"),
    ({"task_id": "a", "task": "x", "judge": {"kind": "rubric"}}, "non-empty rubric"),
    ({"task": "x", "judge": {"kind": "rubric", "rubric": "r"}}, "task_id"),
])
def test_bad_task_lines_are_one_line_errors(tmp_path, row, needle):
    path = _write(tmp_path / "tasks.jsonl", [row])
    with pytest.raises(DataError) as e:
        read_tasks(path)
    assert needle in str(e.value) and str(path) in str(e.value) and "\n" not in str(e.value)


def test_duplicate_ids_and_missing_file(tmp_path):
    with pytest.raises(DataError, match="duplicate task_id 't1'"):
        read_tasks(_write(tmp_path / "t.jsonl", [_rule(1), _rule(1)]))
    with pytest.raises(DataError, match="task file not found"):
        read_tasks(tmp_path / "none.jsonl")


def test_env_options_are_validated_with_one_line_errors():
    with pytest.raises(ConfigError, match="unknown option env.task_file .*did you mean env.tasks_file"):
        create_env(EnvSection.model_validate({"name": "tasks", "task_file": "x"}))
    with pytest.raises(DataError, match="env.tasks_file is not set"):
        create_env(EnvSection.model_validate({"name": "tasks"})).load_splits()


def test_splits_are_stable_and_dream_tasks_train_only(tmp_path):
    rows = [_rule(i) for i in range(40)] + [_rule(99, origin="dream")]
    env = create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(_write(tmp_path / "t.jsonl", rows)),
                                                "split_ratio": "6:4:0"}))
    assert isinstance(env, TasksEnv)
    s1, s2 = env.load_splits(), env.load_splits()
    assert [i.id for i in s1.val] == [i.id for i in s2.val] and 5 < len(s1.val) < 30 and not s1.test
    assert "t99" in [i.id for i in s1.train]
    assert all(stable_split(f"t{i}", 42, [6, 4, 0]) == ("val" if f"t{i}" in {x.id for x in s1.val} else "train")
               for i in range(40))
    bad = _write(tmp_path / "b.jsonl", [_rule(1, origin="dream", split="val")])
    with pytest.raises(DataError, match="validation and test hold only real tasks"):
        create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(bad)})).load_splits()


def test_learned_only_trains_the_block_and_composes_the_rest(tmp_path):
    skill = tmp_path / "SKILL.md"
    skill.write_text("# Team\nHand rule.\n", encoding="utf-8")
    memory = tmp_path / "CLAUDE.md"
    memory.write_text(f"Memory.\n{LEARNED_START}\n- mem fact\n{LEARNED_END}\n", encoding="utf-8")
    tasks = _write(tmp_path / "t.jsonl", [_rule(1)])
    base = {"name": "tasks", "tasks_file": str(tasks), "skill_init": str(skill), "learned_only": True,
            "memory_file": str(memory)}
    env = create_env(EnvSection.model_validate(base))
    assert env.initial_skill() == "## Learned preferences and examples"
    text = env.compose("## Learned examples\nQ: hi\nA: DONE: ok")  # type: ignore[attr-defined]
    assert text.startswith("Memory.\n") and "# Team\nHand rule.\n" in text and "Q: hi" in text
    assert LEARNED_START not in text  # the student reads no markers (a reply copied them); the file keeps them
    doc = env.documents("## Learned examples\nQ: hi\nA: DONE: ok")[1]  # type: ignore[attr-defined]
    assert extract_learned(doc.split("# Team", 1)[1]) == "## Learned examples\nQ: hi\nA: DONE: ok"
    mem_env = create_env(EnvSection.model_validate({**base, "train_target": "memory"}))
    assert mem_env.initial_skill() == "- mem fact"
    assert skill.read_text(encoding="utf-8") == "# Team\nHand rule.\n"  # nothing written to live files


@pytest.mark.slow
def test_examples_in_the_learned_block_win_rule_tasks_with_the_embedded_model(tmp_path, gguf_path, event_sink):
    from skillgrad.models.factory import build_llm
    from tests.conftest import local_role

    skill = tmp_path / "SKILL.md"
    skill.write_text("# Status replies\n", encoding="utf-8")
    rows = [{"task_id": f"c{i}", "task": f"What is the capital of {c}?",
             "judge": {"kind": "rule", "checks": [{"op": "regex", "arg": r"^ANSWER:"}, {"op": "contains", "arg": a}]}}
            for i, (c, a) in enumerate([("France", "Paris"), ("Japan", "Tokyo")])]
    env = create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(_write(tmp_path / "t.jsonl", rows)),
                                                "skill_init": str(skill), "learned_only": True, "max_tokens": 12,
                                                "split_ratio": "1:0:0"}))
    student = build_llm(local_role(gguf_path), "student", emit=event_sink)
    items = env.load_splits().train
    learned = "## Learned preferences and examples\nQ: What is the capital of Italy?\nA: ANSWER: Rome\n" \
              "Q: What is the capital of Spain?\nA: ANSWER: Madrid"

    async def score(block: str) -> float:
        trajs = [await env.run_task(i, block, student) for i in items]
        return sum(t.hard for t in trajs)

    before, after = asyncio.run(score(env.initial_skill())), asyncio.run(score(learned))
    assert before == 0 and after >= 1
    # what every passing reply must hold goes with the reply, for the Goodhart guard (engine/goodhart.py)
    contract = asyncio.run(env.run_task(items[0], learned, student)).contract
    assert contract is not None and set(contract.fixed_texts()) == {"ANSWER:", "Paris"}


@pytest.mark.parametrize("reply", ["## 3. Key Risks\nnone", "### KEY RISKS:\nnone", "**Key risks:**\nnone",
                                   "**Key risks**: none", "Key Risks: none", "1. Key risks: none",
                                   "## Key risks and mitigations\nnone"])
def test_section_present_accepts_the_heading_forms_people_write(reply):
    assert score_checks([_check("section_present", "Key risks")], reply)[0] == 1.0
    assert score_checks([_check("section_contains", "key risks", "none")], "intro\n" + reply)[0] == 1.0


def test_section_present_refuses_prose_and_other_names():
    for reply in ["We see no key risks here.", "**Note** key risks are low", "## Risky keys\nx", "## Key\nrisks"]:
        assert score_checks([_check("section_present", "Key risks")], reply)[0] == 0.0, reply


def test_a_tool_call_written_in_the_reply_counts():
    ok = '<tool_call>{"name": "create_ticket", "arguments": {"title": "Leak"}}</tool_call>'
    listed = '<tool_call>[{"name": "lookup", "arguments": {}}, {"name": "create_ticket", "arguments": {}}]</tool_call>'
    check = [_check("tool_called", "create_ticket")]
    assert score_checks(check, ok)[0] == 1.0 and score_checks(check, listed)[0] == 1.0
    assert score_checks(check, "I will call create_ticket now.")[0] == 0.0
    assert score_checks(check, '<tool_call>{"name": "create_ticket", broken</tool_call>')[0] == 0.0


def test_checks_are_described_in_words_never_as_a_regex():
    from skillgrad.envs.tasks.checks import regex_in_words

    assert regex_in_words(r"\ATL;DR: \S") == "starts with 'TL;DR: '"
    assert regex_in_words(r"Brightline Support\s*\Z") == "ends with 'Brightline Support'"
    assert regex_in_words(r"[Rr]ecommendation\s*[:=]") == "contains 'Recommendation' then one of ':', '='"
    assert "\\" not in regex_in_words(r'"severity"\s*:\s*"(low|medium|high)"')
    # required text inside the form is said, not dropped: `"component": ""` fails this regex
    assert regex_in_words(r'"component"\s*:\s*"[^"]+"') == "contains '\"component\"' then ':' then '\"' then some text then '\"'"
    hard, _, reason = score_checks([_check("regex", r"^Recommendation\s*:")], "no")
    assert hard == 0.0 and "\\s" not in reason and "Recommendation" in reason


def test_a_number_or_one_word_is_said_so_not_as_any_text():
    """price-lookup's form check: said as "exactly some text then ' EUR'", it refused a capable teacher's
    `rug 120 EUR` with those words (benchmarks/results/2026-11-28/report-agent-teacher)."""
    from skillgrad.envs.tasks.checks import regex_in_words

    price = Check(op="regex", arg=r"\A\d+ EUR\.?\s*\Z")  # benchmarks/report_suite/price-lookup
    assert regex_in_words(price.arg) == "is exactly a number then ' EUR'"
    hard, _, reason = score_checks([price], "rug 120 EUR")
    assert hard == 0.0 and "a number then ' EUR'" in reason
    assert score_checks([price], "120 EUR")[0] == 1.0
    assert regex_in_words(r"\ASentiment: \w+\.?\s*\Z") == "is exactly 'Sentiment: ' then one word"
    assert regex_in_words(r"[0-9]+ EUR") == "contains a number then ' EUR'"
    assert regex_in_words(r"\S+ x") == "contains some text then ' x'"


def test_the_text_every_passing_reply_holds_is_named():
    checks = [Check(op="regex", arg=r"\ATL;DR: \S"), Check(op="regex", arg=r"Brightline Support\s*\Z"),
              Check(op="regex", arg=r"(?i)\b(postgres|migrat)"), Check(op="contains", arg="security@corp.example"),
              Check(op="section_contains", arg="Risks", value="backoff"), Check(op="max_chars", arg="200"),
              Check(op="tool_called", arg="create_ticket", key="title", value="gas")]
    assert required_text(checks) == ["TL;DR: ", "Brightline Support", "security@corp.example", "Risks", "backoff",
                                     '<tool_call>{"name": "create_ticket", "arguments": {"title": "',
                                     '"}}</tool_call>']  # a branch (any of the words) requires none of them
    reply = '<tool_call>{"name": "create_ticket", "arguments": {"title": "Gas smell"}}</tool_call>'
    assert all(t in reply for t in required_text(checks[-1:]))


def test_the_reply_cap_is_sized_from_the_checks():
    from skillgrad.envs.tasks.checks import reply_cap

    assert reply_cap([_check("regex", "^DONE:")]) == 64
    assert reply_cap([_check("max_chars", "1200")]) == 1200 // 3 + 16  # room to fail the limit visibly
    assert reply_cap([_check("section_present", s) for s in ("A", "B", "C")]) == 160


def test_the_env_sends_the_sized_cap_unless_one_is_set(tmp_path):
    class Recorder:
        caps: list[int] = []

        async def complete(self, messages, *, max_tokens, **kw):
            from types import SimpleNamespace
            self.caps.append(max_tokens)
            return SimpleNamespace(text="x" * 10, trace=None, usage=None)

    rows = [{"task_id": "a", "task": "x", "judge": {"kind": "rule", "checks": [{"op": "max_chars", "arg": "600"}]}}]
    path = _write(tmp_path / "t.jsonl", rows)
    for extra, want in [({}, 216), ({"max_tokens": 40}, 40)]:
        env = create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(path), "split_ratio": "1:0:0",
                                                    **extra}))
        rec = Recorder()
        asyncio.run(env.run_task(env.load_splits().train[0], "skill", rec))  # type: ignore[arg-type]
        assert rec.caps[-1] == want


def test_a_learned_only_best_skill_scored_without_learned_only_gets_a_warning(tmp_path):
    from skillgrad.config.loader import load_config
    from skillgrad.engine.evaluate import learned_only_warning

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "best_skill.md").write_text("Q: hi\nA: DONE: ok\n", encoding="utf-8")
    (run_dir / "config.json").write_text(json.dumps({"config": {"env": {"name": "tasks", "learned_only": True,
                                                                        "skill_init": "SKILL.md"}}}))
    plain = load_config(None, ["env.name=tasks"])
    warning = learned_only_warning(run_dir / "best_skill.md", plain)
    assert warning and "env.learned_only=true" in warning and "env.skill_init=SKILL.md" in warning
    assert learned_only_warning(run_dir / "best_skill.md", load_config(None, ["env.name=tasks",
                                                                               "env.learned_only=true"])) is None
    (run_dir / "config.json").write_text(json.dumps({"config": {"env": {"name": "tasks"}}}))
    assert learned_only_warning(run_dir / "best_skill.md", plain) is None


def test_the_tool_call_form_shown_to_the_teacher_passes_the_check():
    from skillgrad.envs.tasks.checks import tool_call_text

    check = _check("tool_called", "create_ticket")
    assert tool_call_text("create_ticket") in check.describe()
    assert score_checks([check], f"Filed it.\n{tool_call_text('create_ticket')}")[0] == 1.0


def test_a_tool_call_must_carry_the_argument_the_task_asks_for():
    # the ticket-tool suite skill passed with `"arguments": {}`: a check with key/value needs a real title
    check = Check(op="tool_called", arg="create_ticket", key="title", value="projector")
    call = '<tool_call>{{"name": "create_ticket", "arguments": {}}}</tool_call>'
    assert score_checks([check], call.format("{}"))[0] == 0.0
    assert score_checks([check], call.format('{"title": ""}'))[0] == 0.0
    assert score_checks([check], call.format('{"title": "Chair broken"}'))[0] == 0.0
    assert score_checks([check], call.format('{"title": "Projector in Orion is dead"}'))[0] == 1.0
    assert score_checks([check], call.format('{"note": "projector"}'))[0] == 0.0  # the named argument only
    # the form shown to the teacher has the argument to fill in, and by itself does not pass
    assert '"title": "..."' in check.describe()
    assert score_checks([check], tool_call_text("create_ticket", "title"))[0] == 0.0
    # a harness trace: Claude Code tool_use input, Codex function_call arguments as JSON text
    trace = [{"type": "tool_use", "name": "create_ticket", "input": {"title": "Projector dead"}}]
    assert score_checks([check], "done", trace_tools(trace))[0] == 1.0
    codex = [{"type": "function_call", "name": "create_ticket", "arguments": '{"title": "projector"}'}]
    assert score_checks([check], "done", trace_tools(codex))[0] == 1.0
    with pytest.raises(ValueError, match="key is for tool_called"):
        Check(op="contains", arg="x", key="title")


def test_a_worked_example_longer_than_the_students_reply_cap_is_not_verified(tmp_path):
    # measured on refusal-policy: examples longer than the 64-token cap taught replies cut before the address
    rows = [{"task_id": f"t{i}", "task": f"Reset password {i}.", "judge": {"kind": "rule", "checks": [
        {"op": "contains", "arg": "security@corp.example"}]}} for i in range(3)]
    path = _write(tmp_path / "tasks.jsonl", rows)
    env = create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(path), "split_ratio": "1:0:0"}))
    item = env.load_splits().train[0]

    class Words:  # counts a token per word (the verifier asks the student's tokenizer)
        def count_tokens(self, text: str) -> int:
            return len(text.split())

    short = "I can't help with that. Write to security@corp.example."
    assert asyncio.run(env.verify_example(item, short, Words())) == 1.0
    assert asyncio.run(env.verify_example(item, "word " * 80 + short, Words())) == 0.0
    # one that fills the cap leaves the copying student no room (three-steps: 64-token examples of a 64-token cap)
    assert asyncio.run(env.verify_example(item, "word " * 50 + short, Words())) == 0.0
    assert asyncio.run(env.verify_example(item, "word " * 30 + short, Words())) == 1.0
