"""The learned block: text outside it is byte-identical after any sequence of edits."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillgrad.skill.learned import (
    LEARNED_END,
    LEARNED_START,
    apply_learned_edits,
    ensure_learned,
    extract_learned,
    find_learned,
    outside_learned,
    replace_learned,
    strip_learned_markers,
)

frag = st.sampled_from(["a", "b ", "\n", "  ", "<!-- ", " -->", "SKILLGRAD:LEARNED", " START", " END",
                        "# H\n", "- x\n", "é", "\r\n", LEARNED_START, LEARNED_END,
                        "<!-- APPENDIX_START -->", "Q: hi\nA: ok\n"])
raw = st.lists(frag, max_size=20).map("".join)
hand = raw.map(strip_learned_markers)  # hand-written text holds no learned markers
ops = st.sampled_from(["append", "insert_after", "replace", "delete", "bogus"])
edit = st.fixed_dictionaries({"op": ops, "target": raw, "content": raw})
action = st.one_of(st.tuples(st.just("replace"), raw), st.tuples(st.just("edits"), st.lists(edit, max_size=4)))


@settings(max_examples=300, deadline=None)
@given(before=hand, after=hand, start=raw, actions=st.lists(action, max_size=6))
def test_outside_is_byte_identical_after_any_edit_sequence(before, after, start, actions):
    doc = f"{before}{LEARNED_START}\n{strip_learned_markers(start)}\n{LEARNED_END}{after}"
    for kind, arg in actions:
        doc = replace_learned(doc, arg) if kind == "replace" else apply_learned_edits(doc, arg)[0]
        assert outside_learned(doc) == (before, after)
        assert doc.startswith(before) and doc.endswith(after)
        assert doc.count(LEARNED_START) == 1 and doc.count(LEARNED_END) == 1


@settings(max_examples=200, deadline=None)
@given(text=hand, content=raw)
def test_ensure_keeps_the_original_as_prefix_and_round_trips(text, content):
    doc = ensure_learned(text)
    assert doc.startswith(text) and find_learned(doc) is not None
    assert ensure_learned(doc) == doc
    new = replace_learned(doc, content)
    assert outside_learned(new)[0] == outside_learned(doc)[0]
    assert extract_learned(new) == strip_learned_markers(content).strip("\n")
    assert replace_learned(new, extract_learned(new)) == new


def test_block_content_and_edits_stay_inside():
    doc = "# Team skill\nHand rule.\n\n" + f"{LEARNED_START}\n## Learned\n- old\n{LEARNED_END}\nfooter\n"
    new, report = apply_learned_edits(doc, [{"op": "replace", "target": "Hand rule.", "content": "X"},
                                           {"op": "append", "content": "- new"}])
    assert [o.status for o in report.outcomes] == ["skipped_target_not_found", "applied_append"]
    assert extract_learned(new) == "## Learned\n- old\n\n- new"
    assert new.startswith("# Team skill\nHand rule.\n\n") and new.endswith(f"{LEARNED_END}\nfooter\n")


def test_unterminated_block_is_an_error_not_a_guess():
    with pytest.raises(ValueError, match="no end marker"):
        find_learned(f"hand\n{LEARNED_START}\nrest")
    assert find_learned("no block") is None and extract_learned("no block") == ""
