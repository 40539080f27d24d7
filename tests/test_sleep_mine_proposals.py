"""The offline miner on wishes, proposals, contrasts and facts about the product (issue 32, the fourth round:
proposal_forms.py). Every statement below is read from the real turn it was said in (the fixture's text,
asserted), from real_preferences_fresh5.json (development material from this round) unless named; each was missed
before. The negatives are real turns of the other lists that the first drafts of these forms misread."""

from __future__ import annotations

from pathlib import Path

from skillgrad.envs.tasks.checks import run_check
from skillgrad.sleep.recall import load_labelled
from skillgrad.sleep.statements import stated_preferences

FIX = Path(__file__).parent / "fixtures" / "sessions"
_TURNS: dict[str, dict[str, list[str]]] = {}


def _said(session: str, turn: int, words: str, name: str = "_fresh5") -> str:
    """`words` as the user typed them in that turn of the labelled list (the test fails if the fixture lacks them)."""
    if name not in _TURNS:
        digests, _, _ = load_labelled(FIX / f"real_preferences{name}.json")
        _TURNS[name] = {d.session_id: [t.prompt for t in d.turns] for d in digests}
    assert words in _TURNS[name][session][turn], (session, turn, words)
    return words


def _checks(text: str) -> list[tuple[str, str]]:
    return [(s.check.op, s.check.arg) for s in stated_preferences(text) if s.check]


# (session, turn, the user's words): a wish, a contrast, a disagreement, a property asked for, a judgement with its
# fix, a form of answer, a thing gone or to come back, an order, a reference to follow, a standing move, what the
# product does, a condition after a lead, an undo
STATED = (
    ("stationpedia/refactor-and-editor", 1, "❌ Don’t prefix every internal class"),
    ("stationpedia/refactor-and-editor", 1, "✅ Use namespaces to express ownership"),
    ("emailbuddy/rewrite-companion", 14, "I also want the input and output fields under each other and wider"),
    ("listfix/playlist-encoding", 18, "I just want them to be displayed in the window correctly like they are in every "
                                      "other app on on windows, linux, mac. etc."),
    ("minsky/task-011-merge", 10, "i think you made these changes in the main workspace, not the session"),
    ("minsky/task-008-tests", 18, "you edited the main workspace file, not the session one."),
    ("stationpedia/refactor-and-editor", 18, "The backgrounds are dark gray Not really the blue from the theme."),
    ("league/standings-tables", 22, "i dont agree here."),
    ("emailbuddy/claude-fallback", 3, "can we change every model discover to be dynamic"),
    ("emailbuddy/rewrite-companion", 6, "command + shift + b is used for the bookmarks, can we make the combination "
                                        "configurable"),
    ("emailbuddy/rewrite-companion", 14, "the gradient is a bit weird, remove it."),
    ("minsky/task-011-merge", 3, "in markdown, more detail"),
    ("emailbuddy/launchd-and-models", 57, "the drag and drop feature is not there any more for the model order, can "
                                          "you bring that back and replace the move up/down buttons"),
    ("league/standings-tables", 4, "can we change the order of coloring: heatmap > striping?"),
    ("minsky/task-008-tests", 3, "look at other commands that work with session repo paths and follow "
                                 "@test-driven-bugfix.mdc"),
    ("listfix/pr-review", 12, "Maybe we permanently move to C:\\Users\\Adam\\Documents\\listFix"),
    ("minsky/backlog-task-001", 9, "bun test supports mocking"),
    ("league/button-manager", 2, "so, when entering the league stats: when nothing is selected, select the latest "
                                 "season available in the database."),
    ("league/standings-tables", 12, "roll back the unhelpful changes"),
)


def test_wishes_contrasts_proposals_and_facts_are_statements():
    for session, turn, words in STATED:
        assert stated_preferences(_said(session, turn, words)), words


# (session, turn, the user's words, the check wanted, a reply that passes it, one that fails it)
CHECKED = (
    ("stationpedia/refactor-and-editor", 1, "✅ Keep SPDA for Unity/Harmony-facing classes", ("contains", "SPDA"),
     "SPDA_Patch stays", "rename it"),
    ("minsky/cli-with-bun", 5, "each rule should be a distinct mdc file in that rules dir", ("contains", "mdc"),
     "rules/a.mdc", "rules.md"),
    ("munsell/future-development", 5, "I remind you the main directive that we rely on task-master, not in a file.",
     ("contains", "task-master"), "task-master add", "see TODO.md"),
    ("stationpedia/refactor-and-editor", 17, "Can we do it in CustomTkinter?", ("contains", "CustomTkinter"),
     "import customtkinter as ctk  # CustomTkinter", "import tkinter"),
    ("league/button-manager", 18, "the use the teamCOlorMap, see components/tables.html", ("contains", "teamCOlorMap"),
     "teamCOlorMap[team]", "colors[team]"),
    ("league/standings-tables", 22, "have a look how this is done e.g for the leagueTimetable",
     ("contains", "leagueTimetable"), "as leagueTimetable does", "as before"),
    ("emailbuddy/launchd-and-models", 47, "simplify the labels for URL and Model to just say URL and Model",
     ("contains", "URL"), "URL", "Endpoint"),
    ("afterburn/mobile-controls", 1, "Move all the stats needed fo for plying to the hud", ("contains", "hud"),
     "the hud shows speed", "a stats panel"),
)
BANNED = (
    ("emailbuddy/launchd-and-models", 1, "I am still getting the `Here is the rewritten email:` start and [Your Name] "
                                         "at the end of the re-written email.", "Here is the rewritten email:"),
    ("listfix/playlist-encoding", 3, "i don't want it to be called beyonce though.", "beyonce"),
    ("emailbuddy/launchd-and-models", 51, "remove OpenAI and Anthropic from the labels", "OpenAI"),
)


def test_the_thing_a_statement_names_is_checked_the_way_the_user_meant():
    for session, turn, words, want, good, bad in CHECKED:
        said = stated_preferences(_said(session, turn, words))
        [check] = [s.check for s in said if s.check and (s.check.op, s.check.arg) == want] or [None]
        assert check is not None, (words, _checks(words))
        assert run_check(check, good, []) and not run_check(check, bad, []), words
    for session, turn, words, term in BANNED:
        [check] = [s.check for s in stated_preferences(_said(session, turn, words)) if s.check]
        assert check.op == "regex" and not run_check(check, f"{term} ...", []) and run_check(check, "Done.", [])
    assert ("contains", "e.g") not in _checks(_said("league/standings-tables", 22, "have a look how this is done e.g"))
    # what is removed is banned, never the place it is removed from, nor a file (the reply that removes it names it)
    assert _checks("remove the debug print from main.py") == _checks("Remove config.yaml from git.") == []


def test_what_the_forms_never_read_as_a_statement():
    # a request for help, a description of what the user sees, a report of a bug, a judgement with no fix, a place,
    # an agent's pasted line, a spec's table row, a failure reported, a feature asked
    for name, session, turn, words in (
            ("_fresh4", "bc-connector/strategic-questions", 40, "I also want you to help create similar stuff, but now "
                                                                "just for customers"),
            ("_fresh2", "entire2/events-viewer", 5, "i see what are supposed to be markdown tables but i see the raw "
                                                    "text of the markdown, not a table."),
            ("_fresh5", "league/venv-and-db-switch", 5, "changing the data set now does not trigger most of the dynamic "
                                                        "content"),
            ("_fresh4", "cozy/pricelist-layout", 0, "Because now, when one category has less items it looks pretty "
                                                    "weird"),
            ("_fresh3", "chef-chopsky/auto-fix-ci", 35, "Let me get more detailed PR information including the "
                                                        "branches:"),
            ("_fresh3", "tnyoffice/comments", 0, "Sync plugin    Handles live document sync and comment map updates"),
            ("_fresh3", "chef-chopsky/integration-tests", 25, "I'm still seeing errors when running @test-agent.yml ."),
            ("_fresh5", "emailbuddy/rewrite-companion", 35, "we also need a feature to uninstall the app and remove the "
                                                            "extention even if it is just a guide in md format")):
        assert stated_preferences(_said(session, turn, words, name)) == [], words
    assert "Frequenzen" not in str(_checks(_said("entire2/bosarsalog", 7, "do it in Frequenzen and OE Link table",
                                                 "_fresh2")))
    # a typographic apostrophe opens a negation only where it opens the sentence: a report of what players do bans
    # nothing
    report = _said("listfix/playlist-encoding", 0, "some older players don’t recognize the .m3u8 extension")
    assert not any(op == "regex" for op, _ in _checks(report))
