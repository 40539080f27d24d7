"""The offline miner on constraints stated as a thing left out, a contrast, a setting or a way of working (issue 32,
the fifth round: constraint_forms.py). Every statement below is read from the real turn it was said in (the
fixture's text, asserted), from real_preferences_fresh6.json (development material from this round) unless named;
each was missed before. The negatives are real turns of the other lists that the first drafts of these forms
misread."""

from __future__ import annotations

from pathlib import Path

from skillgrad.envs.tasks.checks import Check, run_check
from skillgrad.sleep.recall import load_labelled
from skillgrad.sleep.statements import stated_preferences

FIX = Path(__file__).parent / "fixtures" / "sessions"
_TURNS: dict[str, dict[str, list[str]]] = {}


def _turn(session: str, turn: int, name: str = "_fresh6") -> str:
    if name not in _TURNS:
        digests, _, _ = load_labelled(FIX / f"real_preferences{name}.json")
        _TURNS[name] = {d.session_id: [t.prompt for t in d.turns] for d in digests}
    return _TURNS[name][session][turn]


def _said(session: str, turn: int, words: str, name: str = "_fresh6") -> str:
    """`words` as the user typed them in that turn of the labelled list (the test fails if the fixture lacks them)."""
    assert words in _turn(session, turn, name), (session, turn, words)
    return words


def _checks(text: str) -> list[tuple[str, str]]:
    return [(s.check.op, s.check.arg) for s in stated_preferences(text) if s.check]


# (session, turn, the user's words): a way of working, an order, a contrast, fewer of something, a wish, a removal
# decided, a rule with its condition, a hope, a definition, blame, a polite removal, an option picked, a judgement,
# a scope, "let's not", a plain word left out in a request that simplifies
STATED = (
    ("ecic/endpoint-mistake", 3, "Update your instructions so that you don't make this mistake again."),
    ("contact-maintain/diffdrive-pusher", 5, "also note down the above report as comment inside that files also for "
                                             "future double check"),
    ("claude-dev-settings/edit-guard", 13, "maybe just write me a python temp script like this one directly each time"),
    ("claude-dev-settings/mission-control-prd", 16, "invert order 1,3,2 for tiers"),
    ("rtchess/dev-history-export", 3, "Order the blocks by timestamp ascending."),
    ("claude-dev-settings/mission-control-prd", 16, "I sse it more like a personal tool we instll localy and it help "
                                                    "you, not a hosted solution"),
    ("tft-bot/create-bot", 7, "is there a way to make the pagination within the embed a per user update and not a "
                              "server wide update?"),
    ("rtchess/cooldown-chess", 25, "Make a new proposal with less files and a flatter folder structure"),
    ("paperbites/homepage", 0, "I would like to use the same structure for my app."),
    ("claude-dev-settings/edit-guard", 28, "I would like to ideally just have a question asked to me"),
    ("rtchess/cooldown-chess", 10, "Let's remove the red highlight for taking"),
    ("rtchess/cooldown-chess", 11, "Let's have a red highlight when a king is in check"),
    ("claude-dev-settings/edit-guard", 3, "I was hoping it to trigger a permission request even in "
                                          "bypass-permissions-on"),
    ("rtchess/cooldown-chess", 74, "For pawns, yes double step is considered a valid move"),
    ("rtchess/cooldown-chess", 74, "Yes, castling can be a premove destination"),
    ("rtchess/cooldown-chess", 38, "Being in check has no other effect than the overlay"),
    ("rtchess/cooldown-chess", 71, "This means that you can premove onto your own pieces"),
    ("ecic/epic3-changes", 4, "How come you forgot removing from wireframes?"),
    ("kinorate/search-reviews-profiles", 15, "can you just remove the supabase config file from gitignore and then we "
                                             "can move on?"),
    ("claude-dev-settings/mission-control-prd", 2, "good, go with option C"),
    ("claude-dev-settings/edit-guard", 21, "that;s not scalable a solution."),
    ("claude-dev-settings/edit-guard", 13, "the spacing on your output was bad again."),
    ("claude-dev-settings/edit-guard", 28, "I feel like this is adding some bloat"),
    ("rtchess/cooldown-chess", 43, "Make a big separator line between each block (prompt or commit) in the "
                                   "prompt_history.md file"),
    ("claude-dev-settings/edit-guard", 6, "Can you also add this check for any agent-os/sbe/* path?"),
    ("claude-dev-settings/tool-descriptions", 2, "And we keep supervisor get hub review separate."),
    ("kinorate/supabase-auth", 8, "could it just have a system where accounts are created with username and password "
                                  "but no email"),
)


def test_ways_of_working_contrasts_orders_and_judgements_are_statements():
    for session, turn, words in STATED:
        assert stated_preferences(_said(session, turn, words)), words
    # the last line of a long request (alone, its "Stop" was read as a correction lead)
    _said("claude-dev-settings/mission-control-phases", 0, "Stop and wait for my review.")
    assert any(s.words == "Stop and wait for my review."
               for s in stated_preferences(_turn("claude-dev-settings/mission-control-phases", 0)))
    # "let's not" negates like "don't" (real_preferences_fresh.json); a plain word left out after "just" (fresh5)
    assert stated_preferences(_said("entire/hero", 30, "let's not just pipe the user input to the terminal below as "
                                                        "well", "_fresh"))
    assert stated_preferences(_said("league/button-manager", 9, "let us just select the latest seasons, no league.",
                                    "_fresh5"))


# (session, turn, the user's words, the check wanted, a reply that passes it, one that fails it)
CHECKED = (
    ("kinorate/supabase-auth", 0, "I'm building a movie review app called KinoRate in vanilla HTML/CSS/JS, deployed on "
     "GitHub Pages, using Supabase for auth via the JS CDN (no npm).", ("regex", r"(?is)\A(?!.*(?<![\w\-])npm(?![\w\-]))"),
     '<script src="https://cdn.jsdelivr.net/npm-free/supabase.js">', "npm install @supabase/supabase-js"),
    ("kinorate/search-reviews-profiles", 2, "i forgot that i need to have no php and just use supabase with js",
     ("regex", r"(?is)\A(?!.*(?<![\w\-])php(?![\w\-]))"), "const { data } = await supabase.from('reviews')",
     "<?php echo $review; ?> (php)"),
    ("contact-maintain/diffdrive-pusher", 4, "no new code.", ("regex", r"(?s)\A(?!.*```)"),
     "The report, redone: v_cp is fixed in the local frame.", "```python\nv = 0\n```"),
    ("contact-maintain/diffdrive-pusher", 24, "so maybe no code yet, double check here.", ("regex", r"(?s)\A(?!.*```)"),
     "Checked: the matching holds.", "```py\nx = 1\n```"),
    ("claude-dev-settings/edit-guard", 0, "tell edit my claude.md to never write those ugly-ass dashes commonly written "
     "by LLMS please —.", ("not_contains", "—"), "Never write em dashes; use a comma - or a colon.", "fast—and clean"),
    ("contact-maintain/diffdrive-pusher", 11, "then we scale up the wrench value by SCALE_UP_FACTOR (which is an args "
     "from user cli)", ("contains", "SCALE_UP_FACTOR"), "wrench *= args.SCALE_UP_FACTOR", "wrench *= 10"),
    ("claude-dev-settings/tool-descriptions", 1, "You can tell how to do it, to sonnet and tell sonnet to do it with a "
     "prompt.", ("contains", "sonnet"), "Task(model='sonnet', prompt=...)", "I rewrote the skills myself."),
    ("rtchess/cooldown-chess", 6, "For displaying the pieces, download the pieces from here: "
     "https://github.com/lichess-org/lila/tree/master/public/piece/cburnett", ("contains", "cburnett"),
     "curl -O .../piece/cburnett/wK.svg", "draw the pieces with unicode glyphs"),
    ("claude-dev-settings/tool-descriptions", 2, "Let's replace PR review with the PR review toolkit.",
     ("contains", "PR review toolkit"), "Using the PR review toolkit now.", "Kept PR review as is."),
    ("rtchess/cooldown-chess", 5, 'And the text "current game" and "board" is removed',
     ("regex", r"(?is)\A(?!.*(?<![\w\-])current\ game(?![\w\-]))"), "<h2>Chess</h2>", "<h2>Current game</h2>"),
    ("rtchess/cooldown-chess", 45, "Also remove the -o option and always write to prompt_history.md.",
     ("regex", r"(?is)\A(?!.*(?<![\w\-])\-o(?![\w\-]))"), "python export.py  # writes prompt_history.md",
     "python export.py -o out.md"),
    ("claude-dev-settings/mission-control-prd", 18, "can you put all of them under "
     "~/Developer/gabriel-amyot/projects/mission-control-dashboard/", ("contains", "mission-control-dashboard"),
     "mv *.md ~/Developer/gabriel-amyot/projects/mission-control-dashboard/", "mv *.md ~/Documents/"),
    ("paperbites/homepage", 7, "Match existing patterns in saved-client and for-you-client.", ("contains", "saved-client"),
     "following saved-client.tsx", "a new pattern"),
)


def test_what_is_left_out_set_delegated_sourced_replaced_or_removed_is_checked():
    for session, turn, words, want, good, bad in CHECKED:
        _said(session, turn, words)
        checks = _checks(_turn(session, turn))  # the whole turn: "no new code." comes after a report
        assert want in checks, (words, checks)
        c = Check(op=want[0], arg=want[1])
        assert run_check(c, good, []) and not run_check(c, bad, []), words


def test_a_value_set_in_a_parenthesis_is_checked_with_its_value():
    turn = _turn("contact-maintain/diffdrive-pusher", 11)
    _said("contact-maintain/diffdrive-pusher", 11, "(safety_gate = 0.7, = 1.0 will likely operate at bound and i dont "
                                                   "like it)")
    set_to = [c for c in _checks(turn) if c[0] == "regex" and c[1].startswith("safety_gate")]
    assert set_to, _checks(turn)
    c = Check(op="regex", arg=set_to[0][1])
    assert run_check(c, "safety_gate = 0.7", []) and not run_check(c, "safety_gate = 1.0", [])
    assert not run_check(c, "safety_gate = 0.75", [])


def test_a_short_clause_is_read_with_the_sentence_it_qualifies():
    turn = _said("contact-maintain/diffdrive-pusher", 4, "no new code. just redo the above report for me now that i "
                                                         "correct you")
    said = [s for s in stated_preferences(_turn("contact-maintain/diffdrive-pusher", 4)) if "no new code" in s.words]
    assert said and "redo the above report" in said[0].words, turn
    stash = _said("entire2/code-insights", 5, "do not stash.. there is a parallel session running", "_fresh2")
    assert any("parallel session" in s.words for s in stated_preferences(stash))
    # never over a sentence that states something itself: "Use absolute paths." and "Never tell the user ..." stay two
    two = _turn("claude-dev-settings/edit-guard", 12)
    assert "Use absolute paths. Never tell the user" in two
    assert not any(s.words.startswith("Use absolute paths. Never") for s in stated_preferences(two))


def test_a_correction_in_a_word_or_two_checks_what_the_user_meant():
    name = "settings/2025-06-08_18-06-create-ai-clip-command-for-clipboard-processing"
    said = stated_preferences(_said(name, 2, "Oops, I mean maverick", "_heldout"))
    assert [(s.words, s.check.op, s.check.arg) for s in said if s.check] == [
        ("Oops, I mean maverick", "contains", "maverick")]


def test_what_the_user_did_not_mean_is_never_checked_on_the_words_they_quote():
    for session, turn, words, name in (
            ("contact-maintain/diffdrive-pusher", 32, 'welp, i dont mean by "mathcing position", it just matching path.',
             "_fresh6"),
            ("contact-maintain/diffdrive-pusher", 38, "wait, the object state keep changing you say ??, but it does "
                                                      "not change at all", "_fresh6"),
            ("entire2/openbotcity", 7, 'You said "proceed" but I flagged two separate concerns:', "_fresh2")):
        said = stated_preferences(_said(session, turn, words, name))
        assert said and all(s.check is None for s in said), (words, said)


# real turns of the other lists that first drafts misread: a report of what the user sees ("no X"), a pasted error,
# a bug described in the passive, a name qualifying a noun, a link the user asks the agent to use once
NOT_CHECKED = (
    ("_fresh3", "polychrome/undo-layers", 2, "No errors, just no change."),
    ("_fresh", "entire/jaja-bot", 20, "I've still got a shadow, no condensation commit"),
    ("_fresh6", "rtchess/cooldown-chess", 28, "calls into rules.js/ai.js but no DOM work."),
    ("_fresh3", "tnyoffice/git-pull", 7, "give me a curl command I can use against localhost to try out pull from "
                                         "https://github.com/jakelevirne/documents"),
)


def test_reports_errors_and_one_off_links_are_not_read_as_constraints():
    for name, session, turn, words in NOT_CHECKED:
        said = stated_preferences(_said(session, turn, words, name))
        assert not [s for s in said if s.check is not None], (words, said)
    bug = _said("league/venv-and-db-switch", 3, 'the colors in the "Season Overview" table get dropped', "_fresh5")
    assert not [c for c in _checks(_turn("league/venv-and-db-switch", 3, "_fresh5")) if "Season" in c[1] and
                c[0] == "regex"], bug  # a bug reported in the passive bans nothing
    error = _said("settings/2025-06-07_16-02-add-command-to-list-chapters", 3,
                  "Error parsing option cache-default (option not found)", "_heldout")
    assert ("contains", "cache-default") not in _checks(error)
    assert not stated_preferences(_said("entire/jaja-bot", 20, "I've still got a shadow, no condensation commit",
                                        "_fresh"))
