"""The sixth fresh labelled list (tests/fixtures/sessions/real_preferences_fresh6.json, issue 32): it parses, each
label quotes its own turn, and no session, project or person is shared with the seven earlier lists. Only parsed
here: its recall was measured blind by benchmarks/sleep_sessions.py --recall --labelled fresh6; since the fifth
round it is development material (tests/test_sleep_mine_constraints.py)."""

from __future__ import annotations

from labelled_lists import people_new_to, quoted_prompts

EARLIER = ("real_preferences.json", "real_preferences_heldout.json", "real_preferences_fresh.json",
           "real_preferences_fresh2.json", "real_preferences_fresh3.json", "real_preferences_fresh4.json",
           "real_preferences_fresh5.json")
# text the harness adds to a user record, never typed by the user (Claude Code IDE context, plan mode, skills,
# local commands; Cursor plan and debug modes)
HARNESS = ("<ide_opened_file>", "<ide_selection>", "Implement the following plan:", "Implement the plan as specified",
           "Base directory for this skill", "<local-command", "<command-name>", "<bash-", "[Request interrupted",
           "Unknown skill:", "Issue reproduced, please proceed.", "_Opened file:", "#### Subagent")


def test_the_sixth_fresh_list_parses_and_each_label_quotes_its_turn():
    prompts = quoted_prompts("real_preferences_fresh6.json", 19, 202)
    assert not [p for p in prompts if any(h in p for h in HARNESS) or p.startswith(("/exit", "<environment_context>"))]
    assert all(len(p) <= 2000 for p in prompts)


def test_the_sixth_fresh_list_shares_no_repository_or_person_with_earlier_lists_and_no_person_dominates():
    per_person = people_new_to("real_preferences_fresh6.json", EARLIER)
    assert len(per_person) >= 5 and max(per_person.values()) <= 4, per_person
