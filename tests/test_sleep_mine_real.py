"""Mining on real sessions (issue 32, finding 1 and 5): the preferences and corrections people state in public
session exports, labelled by reading them (tests/fixtures/sessions/real_preferences*.json)."""

from __future__ import annotations

from pathlib import Path

from skillgrad.envs.tasks.checks import run_check
from skillgrad.sleep import mine
from skillgrad.sleep.harvest.digest import SessionDigest, Turn
from skillgrad.sleep.recall import load_labelled, recall
from skillgrad.sleep.session_prompt import session_text
from skillgrad.sleep.statements import stated_preferences

FIX = Path(__file__).parent / "fixtures" / "sessions"


def test_the_default_miner_finds_most_labelled_preferences_in_real_sessions():
    for name, floor in (("real_preferences.json", 0.9), ("real_preferences_heldout.json", 0.7)):
        digests, labels, _ = load_labelled(FIX / name)
        r = recall(mine.mine_heuristic(digests), labels)
        assert r.rate >= floor, (name, r.found, r.total, r.missed[:5])


def test_statements_quoted_in_the_issue_become_checks_of_what_the_user_meant():
    def checks(text: str) -> list:
        return [s.check for s in stated_preferences(text)]

    [c] = checks("don't produce code, design solution first")
    assert run_check(c, "Design: a hook on /clear that ...", []) and not run_check(c, "```ts\nx()\n```", [])
    [c] = checks("TODO is not acceptable, implementation must be full")
    assert not run_check(c, "def f():\n    # TODO", [])
    [c] = checks("make sure you dont use CODEX_HOME")
    assert not run_check(c, "export CODEX_HOME=/tmp", []) and run_check(c, "use a temp dir", [])
    for said in ("don't overcomplicate", "don't refer to agent specific path/folder",
                 "important not to commit changes until final step"):
        [s] = stated_preferences(said)
        assert s.check is None and s.words  # judged against the user's words, never a made-up term
    [s] = stated_preferences("don't add notes, looks like there is a need to track progress")
    assert s.check is None  # not "the reply never contains the word notes"


def test_a_correction_of_a_correction_is_evidence_for_the_request():
    digests, _, _ = load_labelled(FIX / "real_preferences.json")
    d = next(x for x in digests if x.session_id.endswith("implementing-append-task-and-updating-tests"))
    [task] = [t for t in mine.mine_heuristic([d]) if t.meta["turn"] == 0]
    assert task.task.startswith("Add append_task")
    assert {e["turn"] for e in task.meta["evidence"]} == {1, 2}  # "Instead of ...", then "No you should never ..."
    reply = "def append_task(self, task_id: str) -> None: ..."
    assert not all(run_check(c, reply, []) for c in task.judge.checks)


def test_the_mining_prompt_shows_every_turn_that_holds_a_correction():
    turns = [Turn(prompt=f"step {i}: add the {i}th endpoint " + "x" * 300, answer="done") for i in range(12)]
    turns[9] = Turn(prompt="don't overcomplicate", answer="ok")
    turns[5] = Turn(prompt="TODO is not acceptable, implementation must be full", answer="ok")
    d = SessionDigest(agent="claude_code", session_id="s", source_path="/x", turns=turns)
    text = session_text(d, max_chars=2_400)  # room for 6 long turns: the first 4 and the corrections first
    assert "TODO is not acceptable" in text and "don't overcomplicate" in text and "step 3:" in text
    assert "step 10:" not in text and "left out" in text and len(text) <= 2_400
    assert "step 10:" in session_text(d)  # with room, every turn


def test_the_mining_prompt_of_a_real_session_shows_every_turn_when_it_fits():
    """The 29 held-out real sessions: the prompt used to hold only the first 4 turns and those the offline parser
    flagged (140 of 183 turns), so a correction in words it cannot read never reached the agent that mines."""
    digests, _, _ = load_labelled(FIX / "real_preferences_heldout.json")
    for d in digests:
        text = session_text(d)
        assert all(f"User {i + 1}: " in text for i in range(len(d.turns))), d.session_id
        assert "left out" not in text


def test_the_agent_miners_quotes_are_evidence_from_the_turn_the_user_said_them_in():
    """A mined task quotes the user's words; its evidence names the turn that holds them, not only the request."""
    import asyncio
    import json

    from skillgrad.models.base import Completion, Usage

    digests, _, _ = load_labelled(FIX / "real_preferences_heldout.json")
    d = max(digests, key=lambda x: len(x.turns))
    late = next(i for i in range(len(d.turns) - 1, 0, -1) if len(d.turns[i].prompt.split()) >= 4)
    quote = " ".join(d.turns[late].prompt.split()[:6])
    reply = {"tasks": [{"intent": d.turns[0].prompt[:200], "checks": [], "rubric": "does what the user asked",
                        "said": [quote, "words nobody wrote in this session at all"]}]}

    class Teacher:
        async def complete(self, messages, **kw):  # noqa: ANN001, ANN003, ANN202
            return Completion(text=json.dumps(reply), usage=Usage(), cost=None, model="m", provider="p",
                              parsed=mine.MinedTasks.model_validate(reply))

    errors: list[str] = []
    [task] = asyncio.run(mine.mine_llm([d], Teacher(), on_error=lambda _, e: errors.append(e)))  # type: ignore[arg-type]
    turns = {e["turn"] for e in task.meta["evidence"]}
    assert late in turns and mine.asked_in(d, task.task) in turns, task.meta["evidence"]
    assert any("never wrote" in e for e in errors)


def test_a_nights_agent_miner_may_reply_with_every_task_of_a_real_session(tmp_path: Path):
    """The night's teacher role carries a 160-token cap for its short edits, and a role's cap overrode the mining
    call's: the agent (or an API teacher) mining a real session was held to 160 tokens, one task, and a longer
    reply was cut mid-JSON and mined nothing."""
    import asyncio

    import pytest

    from skillgrad.errors import AnswersNeeded
    from skillgrad.sleep.night import run_night
    from skillgrad.sleep.settings import SleepSettings

    digests, _, _ = load_labelled(FIX / "real_preferences_heldout.json")
    project = tmp_path / "settings"
    project.mkdir()
    s = SleepSettings(project=str(project), teacher={"provider": "handoff"}, evolve_memory=False)
    with pytest.raises(AnswersNeeded) as e:
        asyncio.run(run_night(s, digests=digests[:2]))
    prompts = [(Path(e.value.handoff_dir) / "prompts" / f"{i}.md").read_text() for i in e.value.pending]
    assert len(prompts) == 2 and all(f"at most about {mine.MINE_MAX_TOKENS} tokens" in p for p in prompts)


def test_a_quoted_statement_naming_a_file_or_option_gets_a_check_of_it():
    """The agent quotes "Use word-diff" but checks only `delta`: the user's words name `word-diff`, so the task
    checks it too. A plain word is never made a check ("Fix without changing anything in git config" is not
    "never say `changing`")."""
    import asyncio
    import json

    from skillgrad.models.base import Completion, Usage

    digests, _, _ = load_labelled(FIX / "real_preferences_heldout.json")
    tig = next(d for d in digests if d.session_id.endswith("creating-and-integrating-tigrc-configuration"))
    fix = next(d for d in digests if d.session_id.endswith("tig-configuration-error-fix"))
    replies = {tig.session_id: {"tasks": [{"intent": "Configure tig to show diffs through delta with word-diff",
                                           "checks": [{"op": "contains", "arg": "delta"}],
                                           "said": ["Use word-diff", "don't show line numbers"]}]},
               fix.session_id: {"tasks": [{"intent": "Fix the tig pager warning in tigrc", "checks": [],
                                           "rubric": "tigrc only", "said": ["Fix without changing anything in git config"]}]}}

    class Teacher:
        async def complete(self, messages, **kw):  # noqa: ANN001, ANN003, ANN202
            r = next(v for k, v in replies.items()
                     if (tig if k == tig.session_id else fix).turns[0].prompt[:40] in messages[1]["content"])
            return Completion(text=json.dumps(r), usage=Usage(), parsed=mine.MinedTasks.model_validate(r))

    a, b = asyncio.run(mine.mine_llm([tig, fix], Teacher()))  # type: ignore[arg-type]
    assert {(c.op, c.arg) for c in a.judge.checks} == {("contains", "delta"), ("contains", "word-diff")}
    assert b.judge.kind == "rubric" and not b.judge.checks


def test_a_check_phrased_as_the_reply_would_say_it_is_grounded_by_the_users_quoted_words():
    """"do not stash.. there is a parallel session running" (a real session, fresh2): a capable agent checks that
    the reply never says `git stash`, a text the session never holds, and the check was dropped as ungrounded, so
    the task tested nothing. A word of the user's quoted statement grounds it; a check naming no word of the
    user's is still dropped."""
    import asyncio
    import json

    from skillgrad.models.base import Completion, Usage

    digests, labels, _ = load_labelled(FIX / "real_preferences_fresh2.json")
    d = next(x for x in digests if x.session_id.endswith("/code-insights"))
    reply = {"tasks": [{"intent": "Make changes without git stash: a parallel session works in the same checkout.",
                        "checks": [{"op": "not_contains", "arg": "git stash"}, {"op": "contains", "arg": "lockfile-guard"}],
                        "rubric": "Never stashes.", "said": ["do not stash.. there is a parallel session running"]}]}

    class Teacher:
        async def complete(self, messages, **kw):  # noqa: ANN001, ANN003, ANN202
            return Completion(text=json.dumps(reply), usage=Usage(), parsed=mine.MinedTasks.model_validate(reply))

    assert "git stash" not in "\n".join(t.prompt for t in d.turns).lower()
    [task] = asyncio.run(mine.mine_llm([d], Teacher()))  # type: ignore[arg-type]
    assert [(c.op, c.arg) for c in task.judge.checks] == [("not_contains", "git stash")]
    stash = [lab for lab in labels if lab.session == d.session_id and lab.term == "stash"]
    assert stash and recall([task], stash).found == len(stash)


def test_an_acronym_the_user_said_is_no_check_of_the_reply():
    """"can you DRY tha tcode?" (a real session): the reply need not say `DRY`; a path the same user named is
    checked."""
    digests, _, _ = load_labelled(FIX / "real_preferences_heldout.json")
    d = next(x for x in digests if x.session_id.endswith("point-ai-fix-to-ai-clip-path"))
    at = mine.said_in(d, "can you DRY tha tcode?")
    assert at is not None and mine.quoted_checks(d, at, "can you DRY tha tcode?", []) == []
    at = mine.said_in(d, "load the env variable via the way it's done here @zsh_include.sh")
    [c] = mine.quoted_checks(d, at, "load the env variable via the way it's done here @zsh_include.sh", [])
    assert (c.op, c.arg) == ("contains", "zsh_include.sh")


def test_the_fresh_list_is_labelled_on_its_own_words_and_the_mining_prompt_shows_every_labelled_turn():
    """The fresh list (21 Claude Code sessions labelled before any miner ran on them): each label quotes its turn,
    names a term only where the turn does, and the LLM miner's prompt shows every labelled turn however late."""
    digests, labels, _ = load_labelled(FIX / "real_preferences_fresh.json")
    by_id = {d.session_id: d for d in digests}
    assert len(digests) == 21 and len(labels) == 78
    for lab in labels:
        d = by_id[lab.session]
        said = d.turns[lab.turn].prompt.lower()
        words = [w for w in lab.words.lower().replace("...", " ").split() if len(w) > 3]
        assert sum(w in said for w in words) >= 0.6 * len(words), lab
        assert not lab.term or lab.term.lower() in said, lab
        shown = session_text(d)
        assert f"User {lab.turn + 1}: {d.turns[lab.turn].prompt[:40]}" in shown, lab


def test_a_task_on_another_sentence_of_the_labelled_turn_does_not_find_the_label():
    """A real turn (fresh5, emailbuddy) states a preference, then asks something else. A task resting on the second
    sentence shares one subject word ("want") with the first: it does not find the label.
    Sharing any one word had credited such tasks with 10 of fresh5's 109 labels."""
    from skillgrad.envs.tasks.records import TaskRecord

    _, labels, _ = load_labelled(FIX / "real_preferences_fresh5.json")
    [lab] = [x for x in labels if x.session == "emailbuddy/rewrite-companion" and x.turn == 28]

    def task(words: str) -> TaskRecord:
        return TaskRecord.model_validate({"task_id": "t", "task": "Reply to the request.",
                                          "judge": {"kind": "rule", "checks": [{"op": "contains", "arg": "x"}]},
                                          "meta": {"session": lab.session,
                                                   "evidence": [{"turn": lab.turn, "words": words}]}})

    other = "I also want to know what we have to do to package the extention"
    assert recall([task(other)], [lab]).found == 0
    own = 'I also want to remove the text from the response that says "Here\'s a rewritten version:"'
    assert recall([task(own)], [lab]).found == 1
