"""Checks shared by the tests of the labelled real-session lists (tests/fixtures/sessions/real_preferences_*.json)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from skillgrad.sleep.recall import load_labelled

FIX = Path(__file__).parent / "fixtures" / "sessions"


def quoted_prompts(name: str, sessions: int, labels: int) -> list[str]:
    """The list parses with the expected counts and each label quotes its own turn (and names a term it holds);
    returns every user turn's text for the list's own checks."""
    digests, labs, _ = load_labelled(FIX / name)
    assert len(digests) == sessions and len(labs) == labels
    by_id = {d.session_id: d for d in digests}
    assert len(by_id) == len(digests) and all(d.turns for d in digests)
    for lab in labs:
        said = by_id[lab.session].turns[lab.turn].prompt
        assert lab.words in said, lab
        assert not lab.term or lab.term.lower() in said.lower(), lab
    return [t.prompt for d in digests for t in d.turns]


def people_new_to(name: str, earlier: tuple[str, ...]) -> Counter[str]:
    """The list's sessions per person (repository owner), after checking that no repository, owner or session id of
    the list appears in the earlier lists or in the README's text before the list's own section, and that each
    source names its commit and licence."""
    raw = json.loads((FIX / name).read_text(encoding="utf-8"))
    repos = {s["id"]: s["source"].split("github.com/")[1].split()[0] for s in raw["sessions"]}
    seen = " ".join((FIX / n).read_text(encoding="utf-8") for n in earlier)
    seen += (FIX / "README.md").read_text(encoding="utf-8").split(f"`{name}`")[0]
    assert not {r for r in repos.values() if r in seen}
    assert not {r.split("/")[0] for r in repos.values() if f"{r.split('/')[0]}/" in seen}
    known = {d.session_id for n in earlier for d in load_labelled(FIX / n)[0]}
    assert not known & set(repos)
    assert all("licence:" in s["source"] and "commit " in s["source"] for s in raw["sessions"])
    return Counter(r.split("/")[0] for r in repos.values())
