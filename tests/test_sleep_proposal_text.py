"""Learned text reads like the user's own (issue 32, finding 6): no tool name, no redaction placeholder and no
request copied as an example enters a proposal; the night's new skill names no tool."""

from __future__ import annotations

from pathlib import Path

from skillgrad.envs.tasks.records import Judge, TaskRecord
from skillgrad.sleep.night import SKILL_SCAFFOLD, default_skill
from skillgrad.sleep.proposal_text import clean_block
from skillgrad.sleep.recall import load_labelled

FIX = Path(__file__).parent / "fixtures" / "sessions"


def test_lines_that_name_the_tool_carry_placeholders_or_copy_requests_are_removed():
    digests, _, _ = load_labelled(FIX / "real_preferences.json")
    request = digests[0].turns[0].prompt  # "Update Anthropic Model to be: claude-3-7-sonnet-20250219"
    train = "Add append_task and add it to the task tests"
    tasks = [TaskRecord(task_id="t", task=request, judge=Judge(kind="rubric", rubric="r"), split="test"),
             TaskRecord(task_id="u", task=train, judge=Judge(kind="rubric", rubric="r"), split="train")]
    block = ("- Run the CLI directly (`omnifocus`), never through python3.\n"
             "- This is a skillgrad-learned skill.\n"
             "- Example: export API_KEY=[REDACTED] before running.\n"
             f"- Example request: {request}\n"
             f"Q: {train}\n"
             "- Only change the function the user names.\n")
    cleaned, why = clean_block(block, tasks)
    assert cleaned == ("- Run the CLI directly (`omnifocus`), never through python3.\n"
                       f"Q: {train}\n"  # a worked example on a training request stays (the small student's way)
                       "- Only change the function the user names.\n")
    assert [w.split(":")[0] for w in why] == ["names the tool", "carries a redaction placeholder",
                                              "copies a held-out request"]


def test_the_new_skill_names_no_tool(tmp_path: Path):
    assert "skillgrad" not in SKILL_SCAFFOLD.lower()
    assert default_skill(tmp_path).parent.name == "project-preferences"
    old = tmp_path / ".claude" / "skills" / "skillgrad-learned" / "SKILL.md"
    old.parent.mkdir(parents=True)
    old.write_text(SKILL_SCAFFOLD)
    assert default_skill(tmp_path) == old  # a skill an earlier night made stays where it is
