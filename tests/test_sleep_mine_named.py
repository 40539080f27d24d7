"""The offline miner checks the word the user named, a plain one included (issue 32, second round): choices
("I would go with Golang"), names ("refer to it as "Policy""), colours, ports and versions, a git command banned by
its verb ("do not stash"), a passive ban ("watson should never be used"), a proposal's complement ("... be
final?"), a compound chosen over another ("list comprehension instead of loops"), and statements after a context
lead ("in the ... rows, keep ..."). Every statement below is a real one from a development list
(tests/fixtures/sessions/real_preferences_fresh2.json unless named) that the miner missed or tested on another word
before; the last two tests hold statements of real_preferences_fresh3.json, read after it was measured once."""

from __future__ import annotations

from pathlib import Path

from skillgrad.envs.tasks.checks import Check, run_check
from skillgrad.sleep import mine
from skillgrad.sleep.recall import load_labelled, recall
from skillgrad.sleep.statements import stated_preferences

FIX = Path(__file__).parent / "fixtures" / "sessions"


def _checks(text: str, correction: bool | None = None) -> list[tuple[str, str]]:
    return [(s.check.op, s.check.arg) for s in stated_preferences(text, correction=correction) if s.check]


def _passes(check: tuple[str, str], reply: str) -> bool:
    return run_check(Check(op=check[0], arg=check[1]), reply, [])


def test_a_choice_names_the_thing_chosen_even_a_plain_word():
    for said, term in (("For the backend language preference, I would go with Golang as the main backend language",
                        "Golang"),
                       ("For analytics, we will use an open source version of PostHog", "PostHog"),
                       ("we should install entire automatically", "entire"),
                       ("Let's use https://github.com/strapi/strapi as our CMS to manage orgs and users", "strapi"),
                       ("we need https://github.com/spider-gazelle/ssh2.cr as well", "ssh2.cr"),
                       ("lets do makefile", "makefile"), ("switch unwraps to expect", "expect")):
        assert ("contains", term) in _checks(said), said
    # a habit or an option's number is no choice of a thing
    assert _checks("after we install from npm, run claude install") == []
    assert _checks("Lets do 1") == []


def test_names_ports_versions_and_colours_are_what_the_reply_must_say():
    for said, term in (("It’s to be treated as “Policies” so maybe we can refer to it as “Policy”", "Policy"),
                       ("I made the change already, but other_code and slot should have been other_code_slot and "
                        "other_usercode", "other_code_slot"),
                       ("We were using port 19006 before", "19006"),
                       ("make sure we are going with Postgres version 18", "18"),
                       ("the base provider should also accept None to represent no PIN", "None")):
        assert ("contains", term) in _checks(said), said
    # "instead of black ... green": never black, and green
    checks = _checks("instead of black let's make the icon a green color.")
    assert ("contains", "green") in checks
    assert any(op == "regex" and not _passes((op, arg), "the icon is black now") for op, arg in checks)
    # a colour the user only mentions asks for nothing (real_preferences_heldout.json)
    assert _checks("Also syntax highlight in a nice color (my background is dark blue)") == []
    # "just call it don't need script dir": `don` is no name (real_preferences_heldout.json)
    assert ("contains", "don") not in _checks("just call it don't need script dir since it's installed")


def test_bans_test_the_thing_banned():
    [stash] = _checks("do not stash.. there is a parallel session running")
    assert not _passes(stash, "I'll run `git stash` first") and _passes(stash, "Committed on top of your changes.")
    [watson] = _checks("watson should never be used")
    assert not _passes(watson, "Agents: spirit, watson") and _passes(watson, "Agents: spirit, golem")
    [vscode] = _checks("does vscode have to be the name i dont like it")
    assert not _passes(vscode, "name: vscode")
    [root] = _checks("dont do things as root, do it as the user!")
    assert not _passes(root, "USER root")


def test_a_proposal_a_compound_a_mention_and_a_context_lead_are_read():
    assert ("contains", "final") in _checks("shouldn't all new methods/functions in the base lock provider be final?")
    assert ("contains", "list comprehension") in _checks(
        "I love using list comprehension instead of loops because it often simplifies the design")
    assert ("contains", "justfile") in _checks("No the @justfile version")  # real_preferences_heldout.json
    assert ("contains", "typer") in _checks("use typer, and uv just like in y.py")  # real_preferences_heldout.json
    assert ("contains", "tuist generate --no-open") in _checks(  # real_preferences_fresh.json
        'Generate with "tuist generate --no-open" and run the tests with "tuist test"')
    for said in ("in the user prompt event rows, keep the timestamp on the same row as the text",
                 "- We do NOT want a full dashboard yet.", "name is required for metadata",
                 "We previously moved all of the package-lock.json files to the root level.",
                 "Let’s make them visually separated from the UI", "ADIF, PNG not clear."):
        assert stated_preferences(said), said
    # a lead that names the term stays with the statement (real_preferences_heldout.json)
    assert _checks("for 'foldcolumn', should be string") == [("contains", "foldcolumn")]
    assert stated_preferences("though that may not clear out session files") == []


def test_recall_on_the_second_fresh_list_and_precision_on_all_development_lists():
    digests, labels, _ = load_labelled(FIX / "real_preferences_fresh2.json")
    r = recall(mine.mine_heuristic(digests), labels)
    # 45 / 81 and 60 / 110 before this round; the directive grammar (sleep/directives.py, round 6) mines requests that
    # say how the work goes, which took fresh7 (never read while the forms were written) from 60 to 73 % and the share
    # of tasks on a labelled statement here from 59 to 52 %
    assert r.found >= 70 and r.precision >= 0.5
    for name, found, on_label, tasks in (("real_preferences.json", 38, 29, 47),
                                         ("real_preferences_heldout.json", 41, 38, 65),
                                         ("real_preferences_fresh.json", 70, 72, 150)):
        digests, labels, _ = load_labelled(FIX / name)
        r = recall(mine.mine_heuristic(digests), labels)
        assert r.found >= found and r.on_label / r.tasks >= on_label / tasks - 1e-9, name


def test_after_fresh3_was_measured_its_forms_are_read_too():
    for said, term in (("don't switch models. go back to gpt-5-nano", "gpt-5-nano"),
                       ("don't change the model from gpt-5-nano.", "gpt-5-nano"),
                       ("I'm not planning on using plausible. I want to set up Posthog for analytics instead.",
                        "Posthog"),
                       ("I thought we were setting up supabase for this?", "supabase"),
                       ("you should try playwright to debug the duplicate nav issue.", "playwright"),
                       ("Let's make the time out 5 minutes or less.", "5 minutes"),
                       ("Let's go with your reccomendation, \"ImageCollection\"", "ImageCollection"),
                       ("Still incorrect. The header background should be #090D22", "#090D22")):
        assert ("contains", term) in _checks(said), said
    [console] = _checks("We shouldn't use console.log.")
    assert not _passes(console, "console.log(x)") and _passes(console, "logger.info(x)")
    [web] = _checks("I think you got the directory structures wrong . there is no apps/web")
    assert not _passes(web, "apps/web/README.md")
    assert ("contains", "model") not in _checks("I want to use that model")  # a wish names a thing by its name
    assert _checks("GET /api/v1/files 200 in 568ms, limit 20") == []  # a pasted duration is no timeout asked for
    for said in ("I'll run the app myself whenever needed", "i'll test manually", "You just did it again.",
                 "nothing complicated. all client side for now.", "That feels super janky.",
                 "remember this is a solid prototype. make simple, straightforward plans for prototyping",
                 "Please repeat that answer in a markdown-formatted code block so I can copy it."):
        assert stated_preferences(said), said


def test_recall_on_the_third_fresh_list_now_development_material():
    digests, labels, _ = load_labelled(FIX / "real_preferences_fresh3.json")
    r = recall(mine.mine_heuristic(digests), labels)
    assert r.found >= 53 and r.precision >= 50 / 147  # measured once before these forms: 31 / 67, 50 of 147
