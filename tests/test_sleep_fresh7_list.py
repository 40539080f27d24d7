"""The seventh fresh labelled list (tests/fixtures/sessions/real_preferences_fresh7.json, issue 32): it parses, each
label quotes its own turn, and no session, project or person is shared with the eight earlier lists. Only parsed
here: its recall is measured once, by benchmarks/sleep_sessions.py --recall --labelled fresh7."""

from __future__ import annotations

from labelled_lists import people_new_to, quoted_prompts

EARLIER = ("real_preferences.json", "real_preferences_heldout.json", "real_preferences_fresh.json",
           "real_preferences_fresh2.json", "real_preferences_fresh3.json", "real_preferences_fresh4.json",
           "real_preferences_fresh5.json", "real_preferences_fresh6.json")
# SpecStory writes these into user blocks without the user typing them: VS Code Copilot's "Continue to iterate?"
# click and the empty block of an attachment-only turn
HARNESS = ("@agent Continue",)
# the secrets found in these sessions, each replaced by [REDACTED] where it stood
SECRETS = ("Password=A", "Transc0re", "diHwuLPim", "admin123")


def test_the_seventh_fresh_list_parses_and_each_label_quotes_its_turn():
    prompts = quoted_prompts("real_preferences_fresh7.json", 17, 164)
    assert not [p for p in prompts if any(h in p for h in HARNESS) or p.strip() in ("", "---")]
    assert not [p for p in prompts if any(s in p for s in SECRETS)]
    assert all(len(p) <= 2000 for p in prompts)


def test_the_seventh_fresh_list_shares_no_repository_or_person_with_earlier_lists_and_no_person_dominates():
    per_person = people_new_to("real_preferences_fresh7.json", EARLIER)
    assert len(per_person) >= 6 and max(per_person.values()) <= 4, per_person
