"""The fifth fresh labelled list (tests/fixtures/sessions/real_preferences_fresh5.json, issue 32): it parses,
each label quotes its own turn, and no session, project or person is shared with an earlier list. Only parsed
here: its recall is measured once, by benchmarks/sleep_sessions.py --recall --labelled fresh5."""

from __future__ import annotations

import json
from collections import Counter

from labelled_lists import FIX, quoted_prompts

from skillgrad.sleep.recall import load_labelled

EARLIER = ("real_preferences.json", "real_preferences_heldout.json", "real_preferences_fresh.json",
           "real_preferences_fresh2.json", "real_preferences_fresh3.json", "real_preferences_fresh4.json")


def test_the_fifth_fresh_list_parses_and_each_label_quotes_its_turn():
    prompts = quoted_prompts("real_preferences_fresh5.json", 15, 109)
    assert not any(p.startswith(("<system_notification>", "/exit", "Generate a file named AGENTS.md")) for p in prompts)
    assert all(len(p) <= 2000 for p in prompts)


def test_the_fifth_fresh_list_shares_no_repository_with_earlier_lists_and_no_person_dominates():
    raw = json.loads((FIX / "real_preferences_fresh5.json").read_text(encoding="utf-8"))
    repos = {s["id"]: s["source"].split("github.com/")[1].split()[0] for s in raw["sessions"]}
    earlier = " ".join((FIX / n).read_text(encoding="utf-8") for n in EARLIER)
    earlier += (FIX / "README.md").read_text(encoding="utf-8").split("`real_preferences_fresh5.json`")[0]
    assert not {r for r in repos.values() if r in earlier}
    known = {d.session_id for n in EARLIER for d in load_labelled(FIX / n)[0]}
    assert not known & set(repos)
    per_repo = Counter(repos.values())
    assert len(per_repo) >= 4 and max(per_repo.values()) <= 4, per_repo
    assert all("licence:" in s["source"] and "commit " in s["source"] for s in raw["sessions"])
