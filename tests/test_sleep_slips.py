"""Typing slips in closed-class keywords (sleep/slips.py) and the mining prompt's room for what a session states
(session_prompt.py counts the directive grammar's statements too): round 7 of issue 32, on real user turns."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from skillgrad.sleep import mine
from skillgrad.sleep.harvest.digest import SessionDigest
from skillgrad.sleep.recall import load_labelled
from skillgrad.sleep.session_prompt import session_parts, session_text
from skillgrad.sleep.slips import mend
from skillgrad.sleep.statements import stated_preferences

FIX = Path(__file__).parent / "fixtures" / "sessions"


@cache
def _digests(name: str) -> dict[str, SessionDigest]:
    return {d.session_id: d for d in load_labelled(FIX / f"real_preferences_{name}.json")[0]}


def _turn(name: str, session: str, turn: int) -> str:
    return _digests(name)[session].turns[turn].prompt


def test_a_keyword_typed_with_a_slip_is_read_and_quoted_as_typed():
    """Two people's labelled statements the miner missed for a misspelt keyword: "liek" (fresh6's pytato), "shoud",
    "WNAT" (fresh8's PromptChain)."""
    for name, session, turn, words in [
        ("fresh6", "pytato/rotato-format", 3, "I dont liek the shelling out for example"),
        ("fresh8", "promptchain/minimal-agent-chat-frontend", 18, "the chain shoud be setup with the mcp in paramters"),
        ("fresh8", "promptchain/static-mockup-tailwind", 36, "I DONT WNAT LIGHT PILLSS"),
    ]:
        said = stated_preferences(_turn(name, session, turn))
        assert any(st.words.startswith(words) for st in said), (session, [st.words for st in said])


def test_only_the_closed_list_is_mended_never_a_content_word_or_a_name():
    assert mend("There shoud be a way") == "There should be a way"  # fresh4's cozy
    assert mend("i shold publish") == "i should publish"  # fresh2, fresh3
    assert mend("plese order the configuraiton") == "please order the configuraiton"  # content word left as typed
    assert mend("I DONT WNAT LIGHT PILLSS") == "I DONT WANT LIGHT PILLSS"
    # words one slip from a keyword that are words of their own, in real turns: "form", "were", "three" stay
    for name, session, turn in [("fresh4", "cozy/inventory", 9), ("fresh4", "cozy/inventory", 20),
                                ("fresh5", "emailbuddy/launchd-and-models", 46), ("fresh6", "rtchess/cooldown-chess", 75)]:
        text = _turn(name, session, turn)
        assert mend(text) == text
    assert mend("see utils/util.py, the wiht_x flag and @wiht, it was cold") == \
        "see utils/util.py, the wiht_x flag and @wiht, it was cold"
    assert mend("ther eare errors") == "ther eare errors"  # "ther": there or their, left alone


def test_a_session_of_typed_corrections_gets_the_room_for_what_it_states():
    """fresh8's chain-of-draft-demo states its one-off corrections in the directive grammar's shapes and with slips:
    counted without them, the one prompt stated 30 things and its answer was allowed 5 tasks."""
    d = _digests("fresh8")["promptchain/chain-of-draft-demo"]
    [part] = session_parts(d)
    assert part.text == session_text(d)  # the prompt is as it was; only its answer's room grows
    assert part.statements > 5 * mine.QUOTES and mine.answer_tasks(part.statements) == 7


def test_a_short_sessions_prompt_and_room_stay_where_it_states_no_more():
    d = _digests("fresh8")["gryag/system-prompt-and-bans"]
    [part] = session_parts(d)
    assert part.statements == 5 and mine.answer_tasks(part.statements) == mine.MAX_PER_SESSION
