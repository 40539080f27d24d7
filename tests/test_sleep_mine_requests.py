"""The offline miner on plain requests that state a standing choice (issue 32, fourth round: request_forms.py), and
on output pasted into a request. Every statement below is read from the real turn it was said in (the fixture's
text, asserted), from the development lists real_preferences_fresh2.json, _fresh3.json and _fresh4.json unless
named; each was missed, or tested on another word, before."""

from __future__ import annotations

from pathlib import Path

from skillgrad.envs.tasks.checks import Check, run_check
from skillgrad.sleep import mine
from skillgrad.sleep.recall import load_labelled, recall
from skillgrad.sleep.statements import is_correction, stated_preferences

FIX = Path(__file__).parent / "fixtures" / "sessions"
_TURNS: dict[str, dict[str, list[str]]] = {}


def _said(name: str, session: str, turn: int, words: str) -> str:
    """`words` as the user typed them in that turn of the labelled list (the test fails if the fixture lacks them)."""
    if name not in _TURNS:
        digests, _, _ = load_labelled(FIX / f"real_preferences{name}.json")
        _TURNS[name] = {d.session_id: [t.prompt for t in d.turns] for d in digests}
    prompt = _TURNS[name][session][turn]
    assert words in prompt, (session, turn, words)
    return words


def _checks(text: str) -> list[tuple[str, str]]:
    return [(s.check.op, s.check.arg) for s in stated_preferences(text) if s.check]


# (list, session, turn, the user's words): a scope, a recurring complaint, a reason for later, a pattern to follow, a
# taste, a way of working, a correction of substance, a value, an intent, an option picked, a rule asked politely, a
# proposal, a priority, a rule for a kind of thing
STANDING = (
    ("_fresh2", "entire2/lock-code-manager", 14, "Spell it out where used"),
    ("_fresh4", "cozy/inventory", 6, "Because I am getting this error very often when you implement something."),
    ("_fresh4", "cozy/dinner-menu", 2, "We may need it in the near future"),
    ("_fresh4", "cozy/inventory", 20, "Please try to get inpsiration from current solution in booking form"),
    ("_fresh2", "entire2/nimbus", 12, "Review the last PR’s summary template and apply it to this body of work"),
    ("_fresh4", "cozy/pricelist-layout", 10, "I am fine with more A4 pages."),
    ("_fresh4", "cozy/active-prices", 12, "Please do simple and small edits and check compilation regularly"),
    ("_fresh2", "entire2/hetzner-blackbsd", 3, "yes but this a builder not the actual blackbsd"),
    ("_fresh2", "entire2/meta-critic", 6, "Bad quality is a signal we can't afford to send"),
    ("_fresh4", "inkwell/projects", 0, "Let's set it up so that Projects is what the project opens to"),
    ("_fresh2", "entire2/hetzner-blackbsd", 11, "ok so continue with  B: Rescue + dd"),
    ("_fresh4", "cozy/pricelist-layout", 12, "Can we make sure that category name and its items are never separated by "
                                             "page break?"),
    ("_fresh4", "bc-connector/strategic-questions", 22, "Why don't you add it yourself?"),
    ("_fresh4", "cozy/dinner-menu", 2, "yes, mobile access is important"),
    ("_fresh4", "cozy/active-prices", 12, "Still take a look and try to make look similar to other pages."),
    ("_heldout", "settings/2025-03-07_09-50-convert-zsh-chop-to-python-with-typer", 5,
     "For commands that add to git, do a quick tail, skipping blank lines"),
)


def test_requests_that_state_how_the_work_goes_from_now_on_are_statements():
    for row in STANDING:
        said = _said(*row)
        assert stated_preferences(said), said
    oh = _said("_fresh4", "cozy/dinner-menu", 10, "Oh come on. Start to focus a little bit more.")
    assert is_correction(oh) and stated_preferences(oh)
    # a bare approval, an option named by no letter or number, a polite question that only asks, a move on, and
    # "create" as a noun state nothing
    for said in (_said("_fresh4", "cozy/dinner-menu", 3, "sounds good, please do that as well"),
                 "ok so continue with the implementation",
                 _said("_fresh3", "chef-chopsky/auto-fix-ci", 17, "Can we test and make sure this is working locally "
                                                                  "before pushing up to git?"),
                 "Move on to the next step",
                 _said("_fresh3", "tnyoffice/api2-sqlite", 22, "now help me fix the create ui in the @apps/docs/ app")):
        assert stated_preferences(said) == [], said


# (list, session, turn, the user's words, a term, whether a check of it is wanted): the thing a standing choice names
# or where it goes; never a word that names nothing (a direction, a possessive, "called", an adjective, a quoted
# error's key, a capitalised word in brackets, an acronym)
NAMED = (
    ("_fresh4", "cozy/invoicing", 1, "definitely create new table booking_invoices", "booking_invoices", True),
    ("_fresh4", "cozy/pos-interface", 1, "/pos sounds good", "/pos", True),
    ("_fresh4", "docgen/mcp-patterns", 2, "i want to move @scripts/  to be in @assets/", "assets/", True),
    ("_fresh3", "polychrome/undo-layers", 21, "Also move `src/undo.layers.test.js` to `test/`", "test/", True),
    ("_fresh4", "cozy/dinner-menu", 11, "Move dietary restrictions from guests to bookings.", "bookings", True),
    ("_fresh3", "tnyoffice/api2-sqlite", 4, "rewrite api2 completely in typescript", "typescript", True),
    ("_fresh2", "entire2/openbotcity", 8, "create the plan in docs/Claude", "docs/Claude", True),
    ("_fresh3", "tnyoffice/monorepo-api", 16, "put the API endpoint into an environment variable",
     "environment variable", True),
    ("_fresh4", "inkwell/right-side-panel", 2, "let's incorporate being able to use local models from Ollama",
     "Ollama", True),
    ("_fresh4", "inkwell/right-side-panel", 3, "Let's incorporate SQLite3 into the app", "SQLite3", True),
    ("_fresh4", "cozy/database-design", 4, "Check it properly and try to use daisy UI components.", "daisy", True),
    ("_fresh3", "tnyoffice/api2-sqlite", 3, "better-sqlite3 12.2.0 instead of sqlite3", "better-sqlite3", True),
    ("_fresh2", "entire2/light-account", 11, "it should import light-sdk-types witht the light-account feature always",
     "light-account", True),
    ("_fresh3", "chef-chopsky/prototype-stack", 1, "I'm most comfortable in JavaScript and TypeScript.", "TypeScript",
     True),
    ("_fresh", "entire/jaja-bot", 6, "ehh, in this _specific_ gemini case, can we not get the sessionId off the hook "
                                     "payload?", "sessionId", True),
    ("_heldout", "settings/2025-06-08_18-32-point-ai-fix-to-ai-clip-path", 3,
     "You're right load the env variable via the way it's done here @zsh_include.sh", "zsh_include.sh", True),
    ("_fresh", "entire/pianoquest", 5, "you didnt move the 4/4 to the right.", "right", False),
    ("_fresh4", "cozy/active-prices", 11, "Please move that whole management to its own tile", "its", False),
    ("_fresh4", "cozy/active-prices", 11, "Please move that whole management to its own tile", "tile", True),
    ("_fresh2", "entire2/raven", 10, "we are going to use something called OpenObservability.", "called", False),
    ("_fresh2", "entire2/raven", 10, "we are going to use something called OpenObservability.", "OpenObservability",
     True),
    ("_fresh", "entire/semantic-release", 13, "rewrite it into plain ASCII text before sending", "plain", False),
    ("_fresh", "entire/brain-seville", 10, 'when i click on a node: {"error":"record id must be prefixed', "error",
     False),
    ("_heldout", "settings/custom-folding-for-vim-commit-messages", 0,
     "I want to use custom folding when viewing my commit message in vim (Before opening)", "Before", False),
    ("_fresh", "entire/brain-seville", 12, "use SurrealDB 3.0 for MVP", "MVP", False),
)


def test_a_standing_choice_names_what_the_reply_must_use_or_where_it_goes():
    for *row, term, wanted in NAMED:
        said = _said(*row)
        assert (("contains", term) in _checks(said)) == wanted, said
    golang = _said("_fresh2", "entire2/raven", 6, "I don't know why you went with the backend approach of Node.js as "
                   "recommended when I explicitly provided you with the information that we are going to go with Golang")
    assert ("contains", "Golang") in _checks(golang)
    palette = _said("_fresh3", "focuslab/palette", 1, "We're using the following colors:\n\nDeep Purple (#4A0E4E) for "
                                                      "primary headings")
    assert ("contains", "#4A0E4E") in _checks(palette)
    [fallback] = _checks(_said("_fresh3", "chef-chopsky/auto-fix-ci", 30, "let's just remove the fallback entirely"))
    assert not run_check(Check(op=fallback[0], arg=fallback[1]), "Kept the fallback analysis.", [])
    # "remove the possibility to add custom amount altogether": a phrase's head is no term to ban
    custom = _said("_fresh4", "cozy/product-pricing", 2, "Let's remove the possibility to add custom amount altogether.")
    assert stated_preferences(custom) and _checks(custom) == []


def test_output_pasted_into_a_request_is_not_the_users_words():
    digests, _, _ = load_labelled(FIX / "real_preferences_fresh4.json")
    turns = {d.session_id: d.turns for d in digests}
    fenced = turns["cozy/invoicing"][6].prompt  # a fenced changeset error: {"must be greater than %{number}", ...}
    stack = turns["cozy/inventory"][23].prompt  # ** (Ecto.Query.CompileError) binding list should contain only ...
    assert "must be greater" in fenced and "should contain only" in stack
    assert stated_preferences(fenced) == [] and stated_preferences(stack) == []
    _said("_fresh3", "chef-chopsky/auto-fix-ci", 24, "Is this output what you'd expect?\n\n2025-09-19T18:41:08")
    ci = _TURNS["_fresh3"]["chef-chopsky/auto-fix-ci"][24]  # a CI log pasted after the question, one stamp a line
    assert all("2025-09-19T" not in st.words for st in stated_preferences(ci))
    inline = turns["cozy/inventory"][6].prompt  # the error on the request's line, then what the user asks
    said = stated_preferences(inline)
    assert any("write it somewhere" in s.words for s in said)
    assert not any("no function clause" in s.words for s in said)


def test_recall_rises_on_the_newest_lists_and_no_list_gains_tasks_off_its_labels():
    # (found, tasks on no labelled statement) before the fourth round (scored with two shared subject words,
    # sleep/recall.py; fresh6: before the fifth), then the floor now: development lists only (fresh5 became one in
    # the fourth round, fresh6 in the fifth: test_sleep_mine_constraints.py). The last figure is the ceiling on tasks
    # off the labels since the directive grammar (sleep/directives.py, round 6), which mines a request that says how
    # the work goes ("color code them (borders, not text)") whether or not a person labelled it.
    for name, before, floor, off_now in (("real_preferences.json", (38, 14), 38, 18),
                                         ("real_preferences_heldout.json", (43, 19), 44, 27),
                                         ("real_preferences_fresh.json", (71, 60), 72, 78),
                                         ("real_preferences_fresh2.json", (76, 54), 77, 71),
                                         ("real_preferences_fresh3.json", (59, 86), 60, 94),
                                         ("real_preferences_fresh4.json", (47, 63), 47, 75),
                                         ("real_preferences_fresh5.json", (73, 73), 105, 84),
                                         ("real_preferences_fresh6.json", (137, 108), 185, 111)):
        digests, labels, _ = load_labelled(FIX / name)
        r = recall(mine.mine_heuristic(digests), labels)
        off = r.tasks - r.on_label
        assert r.found >= floor >= before[0], (name, r.found, r.missed[:3])
        assert off <= off_now, (name, off)


def test_a_listed_item_is_checked_by_a_name_never_by_an_english_compound():
    _said("_fresh3", "chef-chopsky/auto-fix-ci", 40, "The core focus should be to:\n1. Figure out")
    listed = _TURNS["_fresh3"]["chef-chopsky/auto-fix-ci"][40]  # its list's first name is an English compound
    assert "copy-pasteable" in listed and ("contains", "copy-pasteable") not in _checks(listed)


def test_a_sentence_naming_several_things_is_quoted_once_in_its_tasks_evidence():
    digests, _, _ = load_labelled(FIX / "real_preferences_fresh2.json")
    d = next(x for x in digests if x.session_id == "entire2/light-account")
    task = next(t for t in mine.mine_heuristic([d]) if any(e["turn"] == 11 for e in t.meta["evidence"]))
    said = [e for e in task.meta["evidence"] if e["turn"] == 11]
    assert {"light-sdk-types", "light-account"} <= {c.arg for c in task.judge.checks}
    assert len(said) == len({e["words"] for e in said}) == 1
