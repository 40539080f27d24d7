"""A proposal states the user's standing preferences (issue 32): rules written from the preferences a night mined,
each resting on the user's own words, and only worked examples that show one of them and say something. On the
public held-out sessions (tests/fixtures/sessions/real_preferences_heldout.json, idvorkin/Settings) and the worked
examples real nights on them staged (docs/sleep.md, "Three nights on one real project")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from skillgrad.models.base import Completion, Usage
from skillgrad.sleep import mine, standing
from skillgrad.sleep.proposal_text import clean_block
from skillgrad.sleep.recall import load_labelled

FIX = Path(__file__).parent / "fixtures" / "sessions"
BREW = "settings/2025-03-09_09-10-homebrew-installation-scripts-and-grip"
GIT = "settings/2025-03-01_18-53-recommended-git-settings-from-core-developers"


class ScriptedTeacher:
    """Answers the standing-rules prompt with one fixed reply; records the prompt (plumbing only: the rules an
    agent wrote on real nights are in docs/sleep.md)."""

    name, context_window, supports_vision, is_agent, role = "scripted:teacher", 100_000, False, False, "teacher"

    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply, self.prompts = reply, []  # type: ignore[var-annotated]

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], *, schema: Any = None, **_: Any) -> Completion:
        self.prompts.append(messages[-1]["content"])
        return Completion(text=json.dumps(self.reply), parsed=schema.model_validate(self.reply), usage=Usage(10, 10))


def _tasks() -> list:
    digests, _, _ = load_labelled(FIX / "real_preferences_heldout.json")
    tasks = mine.mine_heuristic(digests)
    # one held-out task: its statements must never reach the rules
    return [t.model_copy(update={"split": "test" if t.meta["session"].endswith("tig-configuration-error-fix")
                                 else "train"}) for t in tasks]


def _task(tasks: list, session: str, turn: int):
    return next(t for t in tasks if t.meta["session"] == session and t.meta["turn"] == turn)


def test_rules_rest_on_the_users_words_and_never_copy_a_request_name_the_tool_or_read_the_held_out():
    tasks = _tasks()
    brew = _task(tasks, BREW, 0)
    teacher = ScriptedTeacher({"rules": [
        {"rule": "Shared packages: add brew packages to the shared brew_packages list and leave the mac install "
                 "script alone.", "said": ["No use brew_packages", "No don't touch mac"]},
        {"rule": "Always write tests first.", "said": ["write the tests first"]},  # the user never said it
        {"rule": f"Do this: {brew.task}", "said": ["No use brew_packages"]},  # a past task, not a preference
        {"rule": "Keep the [REDACTED] token in the env file.", "said": ["No use brew_packages"]},
        {"rule": "Let skillgrad decide where packages go.", "said": ["No use brew_packages"]},
    ]})
    dropped: list[str] = []
    said = standing.statements(tasks)
    assert not any(s.session.endswith("tig-configuration-error-fix") for s in said)  # held-out never read
    rules = asyncio.run(standing.teacher_rules(teacher, said, tasks, on_drop=dropped.append))
    assert [r.text for r in rules] == ["Shared packages: add brew packages to the shared brew_packages list and "
                                       "leave the mac install script alone."]
    assert rules[0].rests_on == {(BREW, 1), (BREW, 2)}
    assert len(dropped) == 4 and any("cites nothing" in d for d in dropped)
    assert any("copies a request" in d for d in dropped) and any("placeholder" in d for d in dropped)
    assert any("names the tool" in d for d in dropped)
    prompt = teacher.prompts[0]  # the teacher reads the user's words with the request each was said for
    assert '"use brew_packages"' in prompt and "Fix without changing anything in git config" not in prompt


def test_a_staged_block_keeps_examples_of_standing_preferences_and_refuses_past_tasks_and_empty_replies():
    """The block a real night staged (four past tasks) and the 135M student's passing replies it bootstrapped:
    only the example that shows the user's standing preference stays, under the rule."""
    tasks = _tasks()
    brew, git = _task(tasks, BREW, 0), _task(tasks, GIT, 1)
    rules = [standing.Rule("Shared packages: add brew packages to the shared brew_packages list.",
                           ["No use brew_packages"], {(BREW, 1)})]
    block = "\n".join([
        "## Learned preferences and examples",
        f"Q: {brew.task}",
        "A: Add grip to the shared list in shared/brew_packages.sh:",
        "   brew_packages+=(grip)",
        "   Leave mac/install.sh untouched.",
        f"Q: {git.task}",
        'A: git config --global "~>"',  # a 135M reply a real night staged as a worked example
        "Q: Show the fold column in gitcommit.lua instead of setting foldlevel.",
        'A: vim.opt_local.foldcolumn = "2"',
    ]) + "\n"
    assert clean_block(block, tasks)[0] == block  # before: every past task and reply was staged as it was
    kept, why = standing.keep_examples(standing.with_rules(block, rules), tasks, rules)
    assert kept.splitlines()[:2] == ["## Learned preferences and examples",
                                     "- Shared packages: add brew packages to the shared brew_packages list."]
    assert "brew_packages+=(grip)" in kept and "~>" not in kept and "foldcolumn" not in kept
    assert len(why) == 2 and all("a past task no standing preference rests on" in w for w in why)


def test_a_reply_with_nothing_of_its_own_is_no_worked_example():
    form = standing.rule_form([standing.Rule("Start every reply with `DONE:` (your accepted answers do).")])
    ask = "Give me the status of the report builder."
    for empty in ("DONE: Report Builder 2", "DONE: The status of the report builder is", "...", "TODO",
                  "Give me the status of the report builder."):
        assert standing.example_refusal(ask, empty, form), empty  # 135M replies a night had made examples
    for said in ("DONE: the report builder built 4 reports.", "DONE: the report builder is idle until 02:00."):
        assert standing.example_refusal(ask, said, form) == "", said


def test_without_a_teacher_one_statement_is_no_rule_on_real_sessions():
    """The user's own words become a rule only when they said it in two sessions: every single statement of the
    public lists read as a rule was junk ("Objects instead of raw.", "Github instead of using.")."""
    for name in ("real_preferences.json", "real_preferences_heldout.json", "real_preferences_fresh.json"):
        digests, _, _ = load_labelled(FIX / name)
        tasks = mine.mine_heuristic(digests)
        assert standing.offline_rules(standing.statements(tasks), tasks) == [], name


def test_accepted_answers_are_examples_only_in_the_form_a_rule_requires():
    """The public sessions keep the first line of each reply ("I'll help you convert the zsh_chop script ...",
    "Ah, let me run active_env first:"): some pass their task's checks, none is an answer in a form a rule
    requires, so none becomes an example; a corrected turn keeps no accepted answer at all."""
    tasks = _tasks()
    assert "accepted" not in _task(tasks, BREW, 0).meta  # the user corrected that reply
    everything = {(str(t.meta["session"]), int(t.meta["turn"])) for t in tasks}
    assert standing.answer_examples(tasks, [standing.Rule("Keep the user's conventions.", ["x"], everything)]) == []
    done = standing.Rule("Start every reply with `DONE:` (your accepted answers do).", ["x"], everything)
    assert standing.answer_examples(tasks, [done]) == []
    for reply in ("I'll help you convert the zsh_chop script to a Python file using Typer and uv.",
                  "Ah, let me run active_env first:", "<think>The user is asking me to create a rule"):
        assert standing.example_refusal("look at zsh_chop and move this to a python file", reply), reply


def test_the_small_students_own_passing_reply_is_no_worked_example():
    """A night on the real project (2026-11-27) bootstrapped this 135M reply into the block: a rubric its own
    judge passed, for the lazy.nvim fix, inventing a plugin and a pip command."""
    tasks = _tasks()
    # the task an agent mined from the public session "Running NeoVIM in vscode I'm getting this ... SoftPencil"
    ask = ("Fix the NeoVim-in-VSCode SoftPencil and AutoCorrect errors using the existing lazy plugin setup, keeping "
           "syntax highlighting")
    reply = ("The NeoVim-in-VSCode plugin is designed to help you write and run your code more efficiently. It "
             "provides a set of prebuilt features that can make your coding process easier, such as auto-completion, "
             "syntax highlighting, and other tools like AutoCloak.")
    block = f"## Learned preferences and examples\nQ: {ask}\nA: {reply}\n"
    assert standing.example_refusal(ask, reply) == ""  # it says plenty: only its source gives it away
    rollout = {standing.normalise(reply + " To fix it, run pip install -r requirements.txt")}
    kept, why = standing.keep_examples(block, tasks, None, rollout)
    assert "Q:" not in kept and why == [f"example {ask[:50]!r}: the small model's own reply, not your agent's "
                                        "or yours"]
    assert standing.keep_examples(block, tasks, None, ())[0] == block  # a teacher's or your reply stays


def test_the_report_names_each_standing_preference_with_the_words_it_rests_on(tmp_path):
    from skillgrad.sleep.night import report_markdown

    rule = standing.Rule("Shared packages: add brew packages to the shared brew_packages list.",
                         ["No use brew_packages", "No don't touch mac"], {(BREW, 1), (BREW, 2)})
    report = {"night": "n1", "tasks": {"train": 1, "val": 1, "test": 1},
              "targets": {"skill": {"live": "SKILL.md", "reason": "gain", "standing": [rule.to_json()]}}}
    md = report_markdown(report, {}, {})
    assert ('- standing preference: Shared packages: add brew packages to the shared brew_packages list. (you said: '
            '"No use brew_packages"; "No don\'t touch mac")') in md


def test_a_rule_is_added_even_when_an_example_request_starts_with_its_words():
    """The sessions benchmark's block had "Q: Start every reply with Summary: why do we store money as cents?" and
    lost the rule "Start every reply with Summary:" as if it were there already."""
    block = "## Learned preferences and examples\nQ: Start every reply with Summary: why cents?\nA: Summary: exact.\n"
    rule = standing.Rule("Start every reply with Summary:")
    assert standing.with_rules(block, [rule]).splitlines()[1] == "- Start every reply with Summary:"
    assert standing.with_rules(standing.with_rules(block, [rule]), [rule]) == standing.with_rules(block, [rule])
    assert standing.rule_form([rule, standing.Rule("Never use var.")]) == ["Summary:"]
