"""The mining prompt shows the whole of every user turn that states something (issue 32): a real turn of
real_preferences_fresh5.json (development material from the fourth round) states three design rules after a
pasted .csproj, past the 600 characters the prompt used to show of each turn."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from skillgrad.sleep import mine
from skillgrad.sleep.recall import load_labelled
from skillgrad.sleep.session_prompt import PROMPT_CHARS, session_text, statement_sentences

FIX = Path(__file__).parent / "fixtures" / "sessions"
RULES = ("Keep SPDA for Unity/Harmony-facing classes", "Don’t prefix every internal class",
         "Use namespaces to express ownership")


def _stationpedia():
    digests, _, _ = load_labelled(FIX / "real_preferences_fresh5.json")
    return next(x for x in digests if x.session_id == "stationpedia/refactor-and-editor")


def test_a_long_turn_that_states_something_reaches_the_agent_whole():
    d = _stationpedia()
    said = d.turns[1].prompt
    assert all(said.index(r) > PROMPT_CHARS for r in RULES)
    text = mine.session_text(d)  # what mine_llm sends
    assert all(r in text for r in RULES)
    assert said in text


def test_with_room_short_replies_and_turns_that_state_nothing_give_way_first():
    # the labelled list keeps no replies; a harvested session has one per turn, each shown up to 600 characters
    d = _stationpedia()
    d = replace(d, turns=[replace(t, answer=f"Done with step {i}. " + "Updated the files. " * 40)
                          for i, t in enumerate(d.turns)])
    assert "Assistant 1:" in session_text(d, max_chars=40_000)  # with room, replies are shown
    tight = session_text(d, max_chars=3_000)
    assert len(tight) <= 3_000
    assert d.turns[1].prompt not in tight and all(r in tight for r in RULES)  # cut to what it states
    assert "Assistant" not in tight  # replies went first
    assert "User 5:" not in tight and "left out" in tight  # and turns that state nothing


def test_a_cut_turn_keeps_its_start_and_its_stating_sentences():
    said = _stationpedia().turns[1].prompt
    cut = statement_sentences(said)
    assert cut.startswith(said[:PROMPT_CHARS]) and len(cut) < len(said)
    assert all(r in cut for r in RULES)
