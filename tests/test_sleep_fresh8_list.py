"""The eighth fresh labelled list (tests/fixtures/sessions/real_preferences_fresh8.json, issue 32): it parses, each
label quotes its own turn and says whether it is a standing preference or a one-off correction, and no session,
project or person is shared with the nine earlier lists. Only parsed here: its recall is measured by
benchmarks/sleep_sessions.py --recall --labelled fresh8."""

from __future__ import annotations

from labelled_lists import FIX, people_new_to, quoted_prompts

from skillgrad.sleep.recall import load_labelled

EARLIER = ("real_preferences.json", "real_preferences_heldout.json", "real_preferences_fresh.json",
           "real_preferences_fresh2.json", "real_preferences_fresh3.json", "real_preferences_fresh4.json",
           "real_preferences_fresh5.json", "real_preferences_fresh6.json", "real_preferences_fresh7.json")


def test_the_eighth_fresh_list_parses_each_label_quotes_its_turn_and_has_a_kind():
    prompts = quoted_prompts("real_preferences_fresh8.json", 19, 180)
    assert not [p for p in prompts if "@agent Continue" in p or p.strip() in ("", "---")]
    assert all(len(p) <= 2000 for p in prompts)
    _, labels, _ = load_labelled(FIX / "real_preferences_fresh8.json")
    assert {lab.kind for lab in labels} == {"standing", "one-off"}


def test_the_eighth_fresh_list_shares_no_repository_or_person_with_earlier_lists_and_no_person_dominates():
    per_person = people_new_to("real_preferences_fresh8.json", EARLIER)
    assert len(per_person) >= 6 and max(per_person.values()) <= 4, per_person
