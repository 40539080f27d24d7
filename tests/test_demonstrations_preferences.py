"""Demonstrations for tasks mined by Sleep from a user's stated preferences (use pnpm, never npm; start every reply
with `Summary:`; never `var`): the real checks of `sleep/preferences.py` and the replies and teacher narrations
measured in `benchmarks/sleep_sessions.py` (docs/benchmarks.md, "A Sleep night on realistic sessions")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from skillgrad.config.schema import EnvSection
from skillgrad.engine.prompts import PromptLibrary
from skillgrad.engine.proposers.filters import carries_marker, small_junk
from skillgrad.engine.proposers.repairs import candidates, swap_banned
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import ReplyContract, Trajectory
from skillgrad.envs.chat import student_messages
from skillgrad.envs.registry import create_env
from skillgrad.envs.tasks.checks import Check, regex_in_words, score_checks
from skillgrad.envs.tasks.contract import task_contract
from skillgrad.skill.learned import LEARNED_END, LEARNED_START, as_read, extract_learned
from skillgrad.sleep.preferences import preference_checks
from tests.proposer_helpers import demonstrate
from tests.test_demonstrations import ScriptedTeacher

# The checks the heuristic miner gave "Which command starts the dev server? (ticket 118)" in the benchmark night.
NPM_ABSENT = r"(?is)\A(?!.*(?<![\w\-])npm(?![\w\-]))"
CHECKS = [{"op": "no_refusal"}, {"op": "contains", "arg": "pnpm"}, {"op": "regex", "arg": NPM_ABSENT},
          {"op": "regex", "arg": r"^\s*Summary:"}, {"op": "regex", "arg": r"(?is)\A(?!.*(?<![\w\-])var(?![\w\-]))"}]
# The student's reply to that task in the seed-1 night (its own-reply repairs all failed: none removed `npm`).
DEV_SERVER = "The command to start the dev server is:\n```bash\nnpm run start --env=dev-server\n```"


def _checks() -> list[Check]:
    return [Check(**c) for c in CHECKS]


def _contract(checks: list[Check] | None = None) -> ReplyContract:
    return task_contract("rule", checks if checks is not None else _checks(), "", "")


def junk(text: str, ends: list[str] | None = None) -> str:
    return small_junk(text, (ends or [""])[0]) or ("carries the marker" if carries_marker(text) else "")


def _env(tmp_path: Path, tasks: list[str]) -> Any:
    rows = [{"task_id": f"t{i}", "task": t, "judge": {"kind": "rule", "checks": CHECKS}} for i, t in enumerate(tasks)]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(path), "split_ratio": "1:0:0"}))


def test_a_banned_word_is_said_in_words() -> None:
    # the miner's check for "No, use pnpm, not npm." was described as "has the form the task asks for", so neither
    # the teacher nor a repair knew that `npm` was banned
    mined = [p.check for p in preference_checks("No, use pnpm, not npm.")]
    absent = next(c for c in mined if c.op == "regex")
    assert absent.arg == NPM_ABSENT
    assert regex_in_words(absent.arg) == "does not use the word 'npm'"
    assert regex_in_words(r"\A(?!.*\bvar\b)") == "does not use the word 'var'"
    assert regex_in_words(r"\A(?!.*TODO)") == "does not contain 'TODO'"
    assert regex_in_words(r"\A(?!Sure)") == "does not start with 'Sure'"
    assert regex_in_words(r"\A(?!.*a.+b)") == "has the form the task asks for"  # not plain enough to say
    # the handoff night's agent wrote the ban as people do, reading past the first line: it was said "does not
    # start with 'npm'", so the swap repair never fired
    assert regex_in_words(r"\A(?![\s\S]*\bnpm\b)") == "does not use the word 'npm'"
    assert regex_in_words(r"\A(?![\w\W]*TODO)") == "does not contain 'TODO'"
    assert regex_in_words(r"\A(?![\s]*npm)") == "does not start with 'npm'"  # not every character: an opening
    feedback = score_checks(_checks(), DEV_SERVER)[2]
    assert "does not use the word 'npm'" in feedback and "has the form" not in feedback
    c = _contract()  # the contract states the ban as data: a forbidden word, never a label
    assert c.forbidden == ("npm", "var") and "npm" not in c.fixed_texts() and c.labels == ("Summary:",)


def test_a_banned_word_is_replaced_by_the_required_one_and_verified() -> None:
    c = _contract()
    assert swap_banned(DEV_SERVER, c) == DEV_SERVER.replace("npm run", "pnpm run")
    first = candidates(DEV_SERVER, c, "Which command starts the dev server? (ticket 118)")[0]
    assert first == "Summary: " + DEV_SERVER.replace("npm run", "pnpm run")
    assert score_checks(_checks(), first)[0] == 1.0
    # `npm-test` is no use of the word `npm` for the check either, and stays
    assert swap_banned("Run `npm-test` then `npm test`.", c) == "Run `npm-test` then `pnpm test`."
    assert swap_banned("Run `pnpm test`.", c) == ""
    # one required word replaces one banned word, the most alike: `var` is no `pnpm` (the task bans both)
    assert swap_banned("var cmd = 'npm start';", c) == "var cmd = 'pnpm start';"
    # no required word to put in its place (three-steps bans a form, not a word): nothing is swapped
    assert swap_banned("1. a\n4. b", ReplyContract(forbidden=("\n4. ",))) == ""
    only_ban = _contract([Check(op="regex", arg=NPM_ABSENT)])
    assert swap_banned("Run npm test.", only_ban) == ""
    var_ban = ReplyContract(forbidden=("var",), required=("pnpm",))
    assert swap_banned("var n = 1; // pnpm", var_ban) == ""  # `var` is nothing like `pnpm`


def test_the_students_npm_reply_becomes_a_verified_pnpm_example(tmp_path: Path) -> None:
    env = _env(tmp_path, ["Which command starts the dev server? (ticket 118)", "How do I run the API tests?"])
    items = env.load_splits().train
    trajs = [Trajectory(item_id=i.id, answer=a, gold=i.gold, hard=0.0, soft=0.0, question=i.inputs["question"],
                        fail_reason=score_checks(_checks(), a)[2])
             for i, a in zip(items, [DEV_SERVER, "Run `npm test` in apps/api."], strict=True)]
    teacher_llm = ScriptedTeacher(["pnpm"])  # the seed-1 teacher's reply: the bare word
    res = asyncio.run(demonstrate(trajs, {i.id: i for i in items}, "## Learned preferences and examples", TeacherCall(
        teacher_llm, PromptLibrary([]), max_tokens=64), env, teacher_llm, limit=1, max_chars=400, seed=0, compact=True))
    contents = [it["content"] for it in res.items]
    assert contents and all("pnpm " in c and c.startswith("Summary: ") for c in contents)
    assert all(score_checks(_checks(), c)[0] == 1.0 for c in contents)


def test_narrations_of_the_check_and_the_block_markers_are_no_examples(tmp_path: Path) -> None:
    # verified in the benchmark nights once labelled with `Summary:`, and copied by later replies
    for text in ["Summary: The task asks for a list of items, and the response is not one that has a line starting "
                 "with 'Summary:'",
                 "Summary: the request wants a reply that has a line beginning with Summary:",
                 "Summary: This is a response that has been provided to the task.",
                 "Summary: This response is not a function.",  # seed 4, three passes: 6 of 10 held-out replies
                 "Summary: ### SKILLGRAD:LEARNED START",
                 "Summary: Inventals are scoped by the account.\n\n## SKILLGRAD:LEARNED START"]:
        assert junk(text), text
    for text in ["Summary: run `pnpm dev` in the repository root.", "Summary: every query is scoped by accountId.",
                 "Summary: This response cache is cleared every hour. The response time is 20 ms.",
                 "I can't help with that: Send me the list of all employees' personal phone numbers."]:
        assert junk(text) == "", text
    # a passing rollout of that kind is not taken either
    env = _env(tmp_path, ["Show me how to format a due date. (ticket 117)"])
    item = env.load_splits().train[0]
    reply = "Summary: This is a response that has been provided to the task, and it will be used for future requests."
    assert score_checks(_checks()[:1] + _checks()[3:], reply)[0] == 1.0
    t = Trajectory(item_id=item.id, answer=reply, gold=item.gold, hard=1.0, soft=1.0, question=item.inputs["question"])
    teacher_llm = ScriptedTeacher([])
    res = asyncio.run(demonstrate([t], {item.id: item}, "", TeacherCall(teacher_llm, PromptLibrary([]), max_tokens=64),
                                  env, teacher_llm, limit=2, max_chars=400, seed=0, compact=True))
    assert res.items == [] and "talks about" in res.log[0]["why"]


def test_the_student_never_reads_the_learned_blocks_markers(tmp_path: Path) -> None:
    # a seed-1 reply carried `## SKILLGRAD:LEARNED START`: the student read the markers in its system text
    memory = tmp_path / "CLAUDE.md"
    memory.write_text(f"# Ledgerline\n\n## Commands\n- `pnpm dev`\n\n{LEARNED_START}\n## Learned preferences and "
                      f"examples\nQ: How are invoices scoped?\nA: Summary: by accountId.\n{LEARNED_END}\n",
                      encoding="utf-8")
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps({"task_id": "t", "task": "Which command starts the dev server?",
                                "judge": {"kind": "rule", "checks": CHECKS}}) + "\n", encoding="utf-8")
    env = create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(path), "learned_only": True,
                                                "train_target": "memory", "memory_file": str(memory)}))
    block = env.initial_skill()
    text = env.compose(block)  # type: ignore[attr-defined]
    assert "SKILLGRAD" not in text and "## Commands\n- `pnpm dev`" in text and "\n## Learned preferences" in text
    messages = student_messages(text, "", "Which command starts the dev server?")
    assert not [m for m in messages if "SKILLGRAD" in m["content"]]
    assert messages[1:3] == [{"role": "user", "content": "How are invoices scoped?"},
                             {"role": "assistant", "content": "Summary: by accountId."}]
    # the files keep their markers: adopt and undo find the block by them, and an agent student reads the file
    mem, _ = env.documents(block)  # type: ignore[attr-defined]
    assert LEARNED_START in mem and extract_learned(mem) == block
    assert as_read(f"a {LEARNED_START}b{LEARNED_END} c\n") == "a b c\n"


def test_a_request_is_not_restated_after_a_label() -> None:
    # seed 1 of the benchmark: "Summary: Write a helper that counts overdue invoices." filled the block and 6 of 8
    # later replies restated their request; no repair writes the request into a reply
    task = "Write a helper that counts overdue invoices. (ticket 120)"
    checks = [Check(op="no_refusal"), Check(op="regex", arg=r"^\s*Summary:"),
              Check(op="regex", arg=r"(?is)\A(?!.*(?<![\w\-])var(?![\w\-]))")]
    reply = "var n = invoices.filter(isOverdue).length;"
    assert not [c for c in candidates(reply, _contract(checks), task) if "Write a helper" in c]


def test_a_reply_cut_off_after_its_lead_in_is_no_example() -> None:
    # seeds 1 and 2 on 4bee5cc: both verified, and later replies copied "Here's a sample of how to ...:" and
    # "Here's how: 1." with nothing after them
    for text in ["Summary: Here's a sample of how to format due dates:",
                 "Summary: To add lodash to the web app, you can use `pnpm` and `npx londashadloot`. Here's how:  1.",
                 "The deploy is green.\nSummary:"]:
        assert junk(text) == "stops after announcing what comes (cut off at the reply cap)", text
    assert junk("Summary: run `pnpm add lodash --filter web`.") == ""
    assert junk("All good. Status:", ["Status:"]) == ""  # a task that asks for the reply to end so
    passing = [c for c in candidates("To add lodash, run `npm install lodash`. Here's how: 1.", _contract())
               if score_checks(_checks(), c)[0] == 1.0 and not junk(c)]
    assert passing[0] == "Summary: To add lodash, run `pnpm install lodash`."  # the cut, swapped and labelled
