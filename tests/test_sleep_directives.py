"""The directive grammar (sleep/directives.py, issue 32's sixth mining round): statements of real fresh7 turns that
five form rounds missed, each checked on the thing it names; and real questions, bug reports, plain requests and
pasted logs of the same lists that it leaves alone. Whole user turns of the labelled lists, as the users sent them."""

from __future__ import annotations

from pathlib import Path

from skillgrad.envs.tasks.checks import run_check
from skillgrad.sleep.directives import directive_in
from skillgrad.sleep.mine import miner_system
from skillgrad.sleep.recall import load_labelled
from skillgrad.sleep.statements import _SENTENCE, MAX_DIRECTIVES, stated_preferences

FIX = Path(__file__).parent / "fixtures" / "sessions"
_TURNS: dict[str, dict[str, list[str]]] = {}


def _turn(name: str, session: str, turn: int) -> str:
    if name not in _TURNS:
        digests, _, _ = load_labelled(FIX / f"real_preferences{name}.json")
        _TURNS[name] = {d.session_id: [t.prompt for t in d.turns] for d in digests}
    return _TURNS[name][session][turn]


def _stated(name: str, session: str, turn: int, words: str) -> list[tuple[str, str] | None]:
    """The checks (None: judged on the user's words) of the statements of a whole turn that quote `words`."""
    said = [s for s in stated_preferences(_turn(name, session, turn)) if words in s.words]
    return [(s.check.op, s.check.arg) if s.check else None for s in said]


# (session, turn, the user's words, the check of what they meant: None where the words name no concrete thing, so
# a reviewer judges the reply on them); fresh7 labels the default miner missed before the grammar
FOUND = (
    ("odyash-dev.to/vibe-article", 1, "color code them (borders, not text)", None),
    ("odyash-dev.to/vibe-article", 3, "find another (simpler) mermaid graph to draw", None),
    ("dialfa-sales/schema-migration", 20, "I wanna see each record being written", None),
    ("process-xbrl/cell-format", 69, "can you change it so that the tab opens only after conversion is complete?", None),
    ("fishtown/venue-page", 2, "make the hero the same bg color", None),
    ("odyash-dev.to/devto-toc", 15, "so that it's now expectedMd const", ("contains", "expectedMd")),
    ("shellbale/go-packer", 0, 'the heredoc delimiter name should have a "__" prefix', ("contains", "__")),
    ("shellbale/go-packer", 4, 'add a flag "-t" to include an ascii art file tree', ("contains", "-t")),
    ("odyash-dev.to/mermaid-png", 2, "instead of looking for `.md` files", ("contains", ".mmd")),
)


def test_directives_with_any_verb_are_statements_checked_on_what_they_name():
    for session, turn, words, check in FOUND:
        said = _stated("_fresh7", session, turn, words)
        assert said, (session, turn, words)
        assert check in said, (words, said)
    # the check tests what the user meant: the new name, never the one they renamed
    [check] = [s.check for s in stated_preferences(_turn("_fresh7", "odyash-dev.to/devto-toc", 15)) if s.check]
    assert run_check(check, "const expectedMd = readFileSync(...)", []) and not run_check(check, "const expectedToc", [])


def test_a_negated_directive_bans_the_thing_it_names_and_a_wanted_name_never_follows_a_negation():
    # "make sure you dont use CODEX_HOME" (issue 32, a real user's correction): the reply must not name it, and no
    # directive check requires it
    checks = [s.check for s in stated_preferences("make sure you dont use CODEX_HOME") if s.check]
    assert checks and all(not run_check(c, "export CODEX_HOME=/tmp/x", []) for c in checks)


# (list, session, turn): whole turns that state no directive: questions, bug reports, plain requests, pasted logs
# and terminal output, an agent's line pasted back
LEFT_ALONE = (
    ("_fresh7", "dialfa-sales/railway-deploy", 9),   # "is there a way we can use railway cli ...? This is still failing"
    ("_fresh7", "dialfa-sales/quick-cart", 2),       # "when I drag, ... Why is this happening?"
    ("_fresh7", "dialfa-sales/quick-cart", 4),       # "now when I resize, the whole window moves (the quick cart)"
    ("_fresh7", "dialfa-sales/railway-deploy", 7),   # "build still fails. root directory is ok. ..."
    ("_fresh7", "dialfa-sales/prisma-reset", 4),     # "run migrate to local and fix the errors"
    ("_fresh7", "dialfa-sales/railway-deploy", 18),  # a pasted Railpack build log
    ("_fresh7", "dialfa-sales/schema-migration", 26),  # pasted ERROR lines
    ("_fresh7", "dialfa-sales/railway-deploy", 34),  # a pasted Windows terminal
    ("_fresh7", "dialfa-sales/schema-migration", 27),  # "Can you check what you do? so many errors."
)


def test_questions_bug_reports_plain_requests_and_pasted_logs_are_no_directives():
    for name, session, turn in LEFT_ALONE:
        text = _turn(name, session, turn)
        assert [m.group(0) for m in _SENTENCE.finditer(text) if directive_in(m.group(0))] == [], (session, turn)
        assert stated_preferences(text) == stated_preferences(text, directives=False), (session, turn)


def test_a_pasted_plan_gives_at_most_the_cap_of_directives():
    # fresh6's mission-control phase plan: 7 imperatives in one message, 1 labelled statement
    text = _turn("_fresh6", "claude-dev-settings/mission-control-phases", 3)
    found = [m.group(0) for m in _SENTENCE.finditer(text) if directive_in(m.group(0))]
    assert len(found) > MAX_DIRECTIVES
    extra = len(stated_preferences(text)) - len(stated_preferences(text, directives=False))
    assert 0 < extra <= MAX_DIRECTIVES


def test_the_agent_miner_is_asked_for_one_off_corrections_and_design_choices_too():
    system = miner_system()
    assert "Not only standing rules count" in system and "design choice" in system
    assert "Leave out plain requests" in system and "questions, and bug reports" in system
    assert "0 to 5 reusable tasks" in system and "0 to 8 reusable tasks" in miner_system(8)
