"""Worked examples in a skill (skill/examples.py): add / replace / remove, multi-line replies, chat delivery."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from skillgrad.envs.chat import student_messages
from skillgrad.skill import apply_edits, find_regions, set_region
from skillgrad.skill.examples import (
    add_example,
    find_examples,
    remove_example,
    render_example,
    split_examples,
)

# A line of a question or reply: printable text that does not start or end with whitespace, no markers.
_line = st.text(st.characters(min_codepoint=33, max_codepoint=126, blacklist_characters="<>"), min_size=1,
                max_size=12).map(str.strip).filter(bool)
_words = st.lists(_line, min_size=1, max_size=4).map(" ".join)
_text = st.lists(st.one_of(_words, st.just("")), min_size=1, max_size=5).map(
    lambda ls: "\n".join(ls).strip()).filter(lambda t: bool(t) and "\n\n\n" not in t)
_skills = st.sampled_from([
    "# Skill\n\nAnswer briefly.\n",
    "# Skill\n\nAnswer briefly.\n\n## Examples\nQ: What is 2+2?\nA: 4\n\n## Notes\nBe kind.\n",
    set_region("# Skill\n\nRules here.\n", "SLOW_UPDATE", "Q: protected?\nA: yes"),
])


@settings(max_examples=60, deadline=None)
@given(_skills, _text, _text)
def test_added_example_reads_back_exactly_and_reaches_the_student_as_turns(skill: str, q: str, a: str) -> None:
    new, status = add_example(skill, q, a)
    assert status in ("applied_example", "applied_replace_example", "skipped_duplicate")
    assert (" ".join(q.split()), a) in [(" ".join(x.question.split()), x.reply) for x in find_examples(new)]
    msgs = student_messages(new, "", "next question")
    turns = [(msgs[i]["content"], msgs[i + 1]["content"]) for i in range(1, len(msgs) - 1, 2)]
    assert any(r == a for _, r in turns)
    assert [new[r.start:r.end] for r in find_regions(new)] == [skill[r.start:r.end] for r in find_regions(skill)]


@settings(max_examples=60, deadline=None)
@given(_skills, _text, _text)
def test_remove_undoes_add(skill: str, q: str, a: str) -> None:
    if any(" ".join(x.question.split()).casefold() == " ".join(q.split()).casefold() for x in find_examples(skill)):
        return  # replacing an existing example is a different property (below)
    new, _ = add_example(skill, q, a)
    back, status = remove_example(new, q)
    assert status == "applied_delete_example"
    assert split_examples(back) == split_examples(skill)


def test_same_question_replaces_and_same_pair_is_a_duplicate() -> None:
    skill = "# S\n\n## Examples\nQ: What is 2+2?\nA: 5\n"
    new, status = add_example(skill, "what is  2+2?", "4")
    assert status == "applied_replace_example"
    assert [(e.question, e.reply) for e in find_examples(new)] == [("what is  2+2?", "4")]
    assert add_example(new, "What is 2+2?", "4")[1] == "skipped_duplicate"
    assert add_example(new, "  ", "4")[1] == "skipped_empty"
    assert remove_example(new, "not there")[1] == "skipped_target_not_found"


def test_multi_line_reply_with_headings_stays_one_example() -> None:
    reply = "## Summary\nThe API was down.\n\n## Risks\n- data loss"
    skill, _ = add_example("# S\n\nRules.\n", "Summarise the outage.", reply)
    assert render_example("Summarise the outage.", reply) in skill
    text, pairs = split_examples(skill)
    assert pairs == [("Summarise the outage.", reply)]
    assert text == "# S\n\nRules."


def test_examples_inside_protected_regions_are_not_edited() -> None:
    skill = set_region("# S\n", "APPENDIX", "## Examples\nQ: a\nA: b")
    new, status = add_example(skill, "a", "c")
    assert status == "applied_example"  # a new section in the body; the protected one is untouched
    assert [new[r.start:r.end] for r in find_regions(new)] == [skill[r.start:r.end] for r in find_regions(skill)]


def test_example_ops_go_through_apply_edits_with_a_report() -> None:
    new, report = apply_edits("# S\n", [{"op": "example", "target": "Q1?", "content": "R1"},
                                        {"op": "example", "target": "Q1?", "content": "R1"},
                                        {"op": "delete_example", "target": "Q1?"}])
    assert [o.status for o in report.outcomes] == ["applied_example", "skipped_duplicate", "applied_delete_example"]
    assert find_examples(new) == []


def test_edit_credit_units_never_split_an_example_from_its_task() -> None:
    from skillgrad.skill.units import edit_units, revert_units

    before = "# S\n\n## Examples\nQ: a?\nA: b\n"
    after, _ = add_example(before, "c?", "line one\n\nline two")
    after += "A plain rule.\n"
    units = edit_units(before, after)
    assert [u.added.splitlines()[0] for u in units] == ["Q: c?", "A plain rule."]
    assert find_examples(revert_units(before, after, {0})) == find_examples(before)


def test_examples_past_the_turn_cap_stay_in_the_system_text() -> None:
    skill = "# S\n"
    for i in range(3):
        skill, _ = add_example(skill, f"q{i}?", f"a{i}")
    msgs = student_messages(skill, "", "next?", max_examples=2)
    assert [m["content"] for m in msgs[1:5]] == ["q0?", "a0", "q1?", "a1"]
    assert "Q: q2?\nA: a2" in msgs[0]["content"] and msgs[-1]["content"] == "next?"
