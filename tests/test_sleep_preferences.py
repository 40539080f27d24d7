"""Checks from the user's own words (issue 21): preferences in a request, corrections of a reply."""

from __future__ import annotations

from skillgrad.envs.tasks.checks import run_check
from skillgrad.sleep.preferences import preference_checks


def _ok(text: str, reply: str) -> list[bool]:
    return [run_check(p.check, reply, []) for p in preference_checks(text)]


def test_use_x_not_y_checks_the_reply():
    assert _ok("use pnpm, not npm, for the test run", "Run `pnpm test`.") == [True, True]
    assert _ok("use pnpm, not npm, for the test run", "Run `npm test`.") == [False, False]
    assert _ok("No, use ruff instead of flake8", "ruff check . (flake8 is gone)") == [True, False]
    assert _ok("Please use `httpx` rather than `requests`", "import httpx") == [True, True]


def test_negations_formats_and_openings():
    assert _ok("Never use var in this codebase", "let x = 1; const y = 2;") == [True]
    assert _ok("Never use var in this codebase", "var x = 1;") == [False]
    assert _ok("Start every reply with DONE: please", "DONE: shipped.") == [True]
    assert _ok("Start every reply with DONE: please", "Shipped. DONE: yes") == [False]
    assert _ok("reply in JSON", '{"ok": true}') == [True] and _ok("reply in JSON", "ok") == [False]


def test_apostrophes_are_not_quotes_and_vague_words_make_no_check():
    assert preference_checks("don't control claude code process - it's fine") == []
    assert preference_checks("use the same approach, not the old one") == []
    [p] = preference_checks("Don't call it 'done' before the tests ran.")
    assert "'done'" in p.words and run_check(p.check, "Tests pass; done.", []) is False
