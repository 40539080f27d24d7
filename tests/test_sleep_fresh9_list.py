"""The ninth fresh labelled list (tests/fixtures/sessions/real_preferences_fresh9.json, issue 32): it parses, each
label quotes its own turn and says whether it is a standing preference or a one-off correction, no session, project or
person is shared with the ten earlier lists, and no person dominates it. Only parsed here: its recall is measured by
benchmarks/sleep_sessions.py --recall --labelled fresh9."""

from __future__ import annotations

from labelled_lists import FIX, people_new_to, quoted_prompts

from skillgrad.sleep.recall import load_labelled

EARLIER = ("real_preferences.json", "real_preferences_heldout.json", "real_preferences_fresh.json",
           "real_preferences_fresh2.json", "real_preferences_fresh3.json", "real_preferences_fresh4.json",
           "real_preferences_fresh5.json", "real_preferences_fresh6.json", "real_preferences_fresh7.json",
           "real_preferences_fresh8.json")


def test_the_ninth_fresh_list_parses_each_label_quotes_its_turn_and_has_a_kind():
    prompts = quoted_prompts("real_preferences_fresh9.json", 16, 90)
    assert not [p for p in prompts if "@agent Continue" in p or p.strip() in ("", "---")]
    assert not [p for p in prompts if "<system_notification>" in p or "<local-command-" in p]
    assert all(len(p) <= 2000 for p in prompts)
    _, labels, _ = load_labelled(FIX / "real_preferences_fresh9.json")
    kinds = [lab.kind for lab in labels]
    assert set(kinds) == {"standing", "one-off"} and kinds.count("standing") == 20


def test_the_ninth_fresh_list_shares_no_repository_or_person_with_earlier_lists_and_no_person_dominates():
    per_person = people_new_to("real_preferences_fresh9.json", EARLIER)
    assert len(per_person) >= 7 and max(per_person.values()) <= 4, per_person
    _, labels, _ = load_labelled(FIX / "real_preferences_fresh9.json")
    owner = {lab.session: lab.session.split("/")[0] for lab in labels}
    per_project = {p: sum(1 for lab in labels if owner[lab.session] == p) for p in set(owner.values())}
    assert max(per_project.values()) <= 0.33 * len(labels), per_project
