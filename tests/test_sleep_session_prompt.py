"""The mining prompt shows the whole of every user turn that states something (issue 32): a real turn of
real_preferences_fresh5.json (development material from the fourth round) states three design rules after a
pasted .csproj, past the 600 characters the prompt used to show of each turn. A session too long for one prompt is
mined in consecutive parts that together show every user turn."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from pathlib import Path

from skillgrad.models.base import Completion, Usage
from skillgrad.sleep import mine
from skillgrad.sleep.harvest.digest import SessionDigest
from skillgrad.sleep.recall import load_labelled
from skillgrad.sleep.session_prompt import PROMPT_CHARS, session_parts, session_text, statement_sentences

FIX = Path(__file__).parent / "fixtures" / "sessions"
# the session blocks of the fresh2 mining prompts whose committed agent answers replay (70 / 81)
FRESH2_PROMPTS = Path(__file__).parents[1] / "benchmarks/results/2026-11-28/sleep-agent-mining/fresh2/prompts"
RULES = ("Keep SPDA for Unity/Harmony-facing classes", "Don’t prefix every internal class",
         "Use namespaces to express ownership")


def _stationpedia():
    digests, _, _ = load_labelled(FIX / "real_preferences_fresh5.json")
    return next(x for x in digests if x.session_id == "stationpedia/refactor-and-editor")


def test_a_long_turn_that_states_something_reaches_the_agent_whole():
    d = _stationpedia()
    said = d.turns[1].prompt
    assert all(said.index(r) > PROMPT_CHARS for r in RULES)
    text = session_text(d)  # what mine_llm sends
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
    # and turns that state nothing. User 5 gave way here until round 7 counted the directive grammar's statements in
    # the layout: User 6 ("Can you fix my build hotkey ctrl shift b so that it works?") now states something, and
    # the request it answers, User 5, keeps its room; User 14 states nothing and answers nothing that does
    assert "User 14:" not in tight and "left out" in tight


def test_a_cut_turn_keeps_its_start_and_its_stating_sentences():
    said = _stationpedia().turns[1].prompt
    cut = statement_sentences(said)
    assert cut.startswith(said[:PROMPT_CHARS]) and len(cut) < len(said)
    assert all(r in cut for r in RULES)


def _session(name: str, session: str) -> SessionDigest:
    digests, _, _ = load_labelled(FIX / name)
    return next(x for x in digests if x.session_id.endswith(session))


def _with_replies(d: SessionDigest) -> SessionDigest:  # a harvested session has a reply per turn
    return replace(d, turns=[replace(t, answer=f"Done with step {i}. " + "Updated the files. " * 40)
                             for i, t in enumerate(d.turns)])


def _numbers(parts: list) -> list[tuple[int, int, int, int]]:
    return [tuple(map(int, re.search(r"^Part (\d+) of (\d+): turns (\d+)-(\d+) of ", p.text, re.M).groups()))
            for p in parts]


def test_a_long_real_session_is_mined_in_parts_that_show_every_user_turn_whole():
    """auto-fix-ci (43 turns, fresh3): its one prompt showed 16 turns whole and left 27 out or cut (past the
    budget, or judged to state nothing by the offline parser); its parts show each of them, numbered as in the
    session, with the project head, each part within the budget."""
    d = _session("real_preferences_fresh3.json", "auto-fix-ci")
    one = session_text(d)
    assert sum(t.prompt not in one for t in d.turns) > 20
    for session in (d, _with_replies(d)):
        parts = session_parts(session)
        assert len(parts) >= 2 and all(len(p.text) <= 12_000 for p in parts)
        assert all(p.text.startswith("Project: ?  Branch: ?\n") for p in parts)
        for i, t in enumerate(d.turns):
            assert sum(f"User {i + 1}: {t.prompt}" in p.text for p in parts) == 1, i
        numbers = _numbers(parts)
        assert [(k, n) for k, n, _, _ in numbers] == [(k, len(parts)) for k in range(1, len(parts) + 1)]
        assert [(a - 1, b) for _, _, a, b in numbers] == [(p.turns.start, p.turns.stop) for p in parts]
        assert [p.turns.start for p in parts[1:]] == [p.turns.stop for p in parts[:-1]] and parts[-1].turns.stop == 43
        assert not any("left out" in p.text for p in parts)
    replied = session_parts(_with_replies(d))
    assert any("Assistant " in p.text for p in replied)  # replies fill the room the turns leave


def test_a_turn_longer_than_a_part_runs_on_into_the_next_part_or_keeps_what_it_states():
    """A real 1,591-character turn (fresh3 gpt-instructions, turn 3) that states its rules after 600 characters
    ("Prefer drab to pollack"), in parts too small for it: shown whole over two parts, or, in parts too small for
    two, its start and its stating sentences and the count of characters left out, never dropped silently."""
    d = _session("real_preferences_fresh3.json", "gpt-instructions")
    said = d.turns[2].prompt
    assert len(said) > 1_500 and said.index("Prefer drab to pollack") > PROMPT_CHARS
    parts = session_parts(d, max_chars=1_200)
    assert all(len(p.text) <= 1_200 for p in parts)
    pieces = [re.search(r"^User 3 \(characters ([\d,]+)-([\d,]+) of 1,591\): ", p.text, re.M) for p in parts]
    held = [(p, m) for p, m in zip(parts, pieces, strict=True) if m]
    assert len(held) == 2 and held[0][0].turns.stop - 1 == held[1][0].turns.start == 2
    shown = "".join(p.text[m.end():].split("\nAssistant 3:")[0].split("\nUser 4:")[0] for p, m in held)
    assert shown == said
    tight = session_parts(d, max_chars=900)
    assert all(len(p.text) <= 900 for p in tight)
    [cut] = [p.text for p in tight if "User 3: " in p.text]
    assert said[:PROMPT_CHARS] in cut and "Prefer drab to pollack" in cut
    left = int(re.search(r"\(([\d,]+) characters of this turn left out\)", cut).group(1).replace(",", ""))
    assert 0 < left < len(said)


def test_a_session_that_fits_one_prompt_is_the_same_prompt_as_before():
    """Byte for byte the committed session blocks of fresh2's mining prompts, so their agent answers replay."""
    committed = {p.read_text() for p in FRESH2_PROMPTS.glob("*.md")}
    digests, _, _ = load_labelled(FIX / "real_preferences_fresh2.json")
    assert len(committed) == len(digests) == 15
    for d in digests:
        [part] = session_parts(d)
        assert part.text + "\n" in committed and part.turns == range(len(d.turns)), d.session_id


def test_the_agent_miner_asks_one_call_per_part_and_joins_their_tasks():
    """A scripted teacher (plumbing only): each part's task restates the part's last request and quotes it; the
    joined tasks carry the session's turn numbers."""
    d = _session("real_preferences_fresh3.json", "auto-fix-ci")
    parts = session_parts(d)
    asked: list[str] = []

    class Teacher:
        async def complete(self, messages, **kw):  # noqa: ANN001, ANN003, ANN202
            text = messages[-1]["content"]
            asked.append(text)
            last = int(re.search(r"^Part \d+ of \d+: turns \d+-(\d+) of ", text, re.M).group(1)) - 1
            words = d.turns[last].prompt
            reply = {"tasks": [{"intent": words[:200], "checks": [], "rubric": "does what the user asked",
                                "said": [" ".join(words.split()[:6])]}]}
            return Completion(text=json.dumps(reply), usage=Usage(), cost=None, model="m", provider="p",
                              parsed=mine.MinedTasks.model_validate(reply))

    tasks = asyncio.run(mine.mine_llm([d], Teacher()))  # type: ignore[arg-type]
    assert sorted(asked) == sorted(p.text for p in parts)
    assert [t.meta["turn"] for t in tasks] == [p.turns.stop - 1 for p in parts]
    assert all({e["turn"] for e in t.meta["evidence"]} == {t.meta["turn"]} for t in tasks)
