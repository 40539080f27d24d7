"""Checks shared by the tests of the labelled real-session lists (tests/fixtures/sessions/real_preferences_*.json)."""

from __future__ import annotations

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
