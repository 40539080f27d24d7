"""The agent miner's answer follows what a prompt states (issue 32): a 12,000-character part of fresh6's rtchess
session held 44 short turns and 38 labelled statements, more than one answer's 5 tasks of 6 quotes carry, and the
agent's answer to it used 29 of its 30 quotes and missed 11 of them. Parts are now bounded by statements too, and an
answer to a part stating more than 30 things may carry up to MAX_TASKS tasks, with a reply cap to match."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from skillgrad.sleep import mine, session_prompt
from skillgrad.sleep.recall import load_labelled
from skillgrad.sleep.session_prompt import MAX_STATEMENTS, session_parts, session_text
from skillgrad.sleep.statements import stated_preferences

FIX = Path(__file__).parent / "fixtures" / "sessions"
RECORDED = Path(__file__).parents[1] / "benchmarks/results/2026-11-28/sleep-agent-mining"

_spec = importlib.util.spec_from_file_location("bench_sleep_sessions_capacity",
                                               Path(__file__).resolve().parent.parent / "benchmarks" / "sleep_sessions.py")
bench = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(bench)  # type: ignore[union-attr]

# The system text the recorded answers answered (5 tasks); round 6 added the sentences on one-off corrections of
# substance and design choices, and an answer applies only to the question it answered.
RECORDED_SYSTEM = re.search(r"<system>\n(.*?)\n</system>", (RECORDED / "system-and-schema.md").read_text(encoding="utf-8"),
                            re.S).group(1)  # type: ignore[union-attr]


def _recorded_system(tasks: int = mine.MAX_PER_SESSION) -> str:
    return RECORDED_SYSTEM.replace("0 to 5 reusable tasks", f"0 to {tasks} reusable tasks")


def _as_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Prompts asked with the system text the recorded answers answered, and laid out as they were: round 7 counts
    the directive grammar's statements in a prompt's layout, which cut rtchess into other parts than the recorded
    ones."""
    monkeypatch.setattr(mine, "miner_system", _recorded_system)
    monkeypatch.setattr(mine, "MINER_SYSTEM", RECORDED_SYSTEM)
    monkeypatch.setattr(session_prompt, "stated_preferences",
                        lambda text, **kw: stated_preferences(text, **{**kw, "directives": False}))


def _fresh6(session: str):  # noqa: ANN202
    digests, labels, _ = load_labelled(FIX / "real_preferences_fresh6.json")
    d = next(x for x in digests if x.session_id == session)
    return d, [lab for lab in labels if lab.session == session]


def test_a_dense_real_session_is_split_so_that_each_part_fits_one_answer():
    d, labels = _fresh6("rtchess/cooldown-chess")
    by_chars = session_parts(d, max_statements=10**6)  # as parts were cut before: by characters alone
    first = by_chars[0]
    assert first.statements > MAX_STATEMENTS and sum(lab.turn in first.turns for lab in labels) == 38
    parts = session_parts(d)
    assert len(parts) >= 3 and all(len(p.text) <= 12_000 for p in parts)
    for p in parts:
        quotes = mine.answer_tasks(p.statements) * mine.QUOTES
        assert p.statements <= MAX_STATEMENTS and p.statements <= quotes
        assert sum(lab.turn in p.turns for lab in labels) <= quotes  # every labelled statement can be quoted
    for i, t in enumerate(d.turns):  # still every user turn, whole, once
        assert sum(f"User {i + 1}: {t.prompt}" in p.text for p in parts) == 1, i
    assert [p.turns.start for p in parts[1:]] == [p.turns.stop for p in parts[:-1]]


def test_a_part_stating_more_than_five_tasks_carry_is_asked_for_more_with_a_cap_to_match():
    # fresh6's kinorate/search-reviews-profiles (73 turns, 37 statements) was this one prompt until the layout
    # counted the directive grammar's statements too (round 7): at 49 it is two parts of 25 and 24, so a session
    # of fresh8 that is one prompt stating more than 30 things stands in for it
    digests, _, _ = load_labelled(FIX / "real_preferences_fresh8.json")
    d = next(x for x in digests if x.session_id == "promptchain/chain-of-draft-demo")  # 45 turns, 42 statements
    [part] = session_parts(d)
    assert part.text == session_text(d) and part.statements > 5 * mine.QUOTES
    messages, schema, cap = mine.mining_request(part)
    tasks = mine.answer_tasks(part.statements)
    assert tasks > mine.MAX_PER_SESSION and f"into 0 to {tasks} reusable tasks" in messages[0]["content"]
    assert schema.model_json_schema()["properties"]["tasks"]["maxItems"] == tasks
    assert cap == mine.answer_tokens(tasks) > mine.MINE_MAX_TOKENS
    assert mine.mining_request(part, max_tokens=900)[2] == 900  # the user's own cap holds


def test_a_short_sessions_prompt_is_the_one_its_recorded_answer_answered_but_for_the_instruction():
    """Session block and schema byte for byte those of the recorded agent answers (system-and-schema.md); the system
    text is theirs with only the instruction on one-off corrections and plain requests added."""
    recorded = (RECORDED / "system-and-schema.md").read_text(encoding="utf-8")
    d, _ = _fresh6("kinorate/trailers")
    [part] = session_parts(d)
    messages, schema, cap = mine.mining_request(part)
    system = messages[0]["content"]
    added = re.search(r" Not only standing rules count: .*? bug reports\.", system)
    assert added is not None and system.replace(added.group(0), "") == RECORDED_SYSTEM
    assert json.dumps(schema.model_json_schema(), ensure_ascii=False, indent=1) in recorded
    assert schema is mine.MinedTasks and cap == mine.MINE_MAX_TOKENS
    assert f"{part.text}\n" in {p.read_text(encoding="utf-8") for p in (RECORDED / "fresh6/prompts").glob("*.md")}


def _mine(digests: list, out: Path, replay: list[Path] | None = None) -> list:
    return bench.agent_mined(digests, out, "real_preferences_fresh6.json", replay or [])


def test_a_recorded_answer_replays_under_the_new_reply_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The reply cap is part of a handoff prompt's id, so a recorded answer to the same prompt text is taken by
    --replay: no prompt is left to answer. Asked with another instruction, the prompt is not the one it answered."""
    d, _ = _fresh6("kinorate/trailers")
    with pytest.raises(SystemExit) as e:
        _mine([d], tmp_path / "new", [RECORDED / "fresh6"])
    assert e.value.code == 3
    _as_recorded(monkeypatch)
    with pytest.raises(SystemExit) as e:
        _mine([d], tmp_path / "plain")
    assert e.value.code == 3
    tasks = _mine([d], tmp_path / "replayed", [RECORDED / "fresh6"])
    assert tasks and {t.meta["session"] for t in tasks} == {"kinorate/trailers"}


def test_a_recorded_whole_prompt_file_replays_an_answer_of_more_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A folder recorded with whole handoff prompt files (fresh6-statement-parts: rtchess's parts asked for up to 7
    tasks) replays by the question asked, system text and schema included."""
    d, _ = _fresh6("rtchess/cooldown-chess")
    with pytest.raises(SystemExit) as e:
        _mine([d], tmp_path / "new", [RECORDED / "fresh6-statement-parts"])
    assert e.value.code == 3  # the instruction changed since: not the question these answered
    _as_recorded(monkeypatch)
    with pytest.raises(SystemExit) as e:
        _mine([d], tmp_path / "plain")
    assert e.value.code == 3
    tasks = _mine([d], tmp_path / "replayed", [RECORDED / "fresh6-statement-parts"])
    assert tasks and {t.meta["session"] for t in tasks} == {"rtchess/cooldown-chess"}  # exit 3 had none replayed


def test_the_handoff_parser_takes_an_answer_of_more_tasks_only_where_the_part_asks_for_them(tmp_path: Path):
    # rtchess was cut into parts of 8, 8 and 5 tasks; counting the directive grammar's statements too (round 7), its
    # four parts each ask for 6, so a session with a part of 5 tasks and one of 7 stands in for it
    d, _ = _fresh6("contact-maintain/diffdrive-pusher")
    parts = session_parts(d)
    big = next(p for p in parts if mine.answer_tasks(p.statements) > mine.MAX_PER_SESSION)
    n = mine.answer_tasks(big.statements)
    stating = [i for i in big.turns if len(d.turns[i].prompt.split()) >= 6][:n]
    reply = {"tasks": [{"intent": d.turns[i].prompt[:200], "checks": [{"op": "no_refusal"}],
                        "rubric": "does what the user asked", "said": [" ".join(d.turns[i].prompt.split()[:6])]}
                       for i in stating]}
    assert len(reply["tasks"]) == n
    with pytest.raises(ValidationError):
        mine.MinedTasks.model_validate(reply)  # more than a 5-task answer may hold
    out = tmp_path / "run"
    with pytest.raises(SystemExit):
        _mine([d], out)
    handoff = out / "recall_real_preferences_fresh6" / "handoff"
    pending = json.loads((handoff / "pending.json").read_text())["pending"]
    assert len(pending) == len(parts)
    small = None
    for p in pending:
        prompt = Path(p["prompt_file"]).read_text(encoding="utf-8")
        if big.text in prompt:
            assert f"0 to {n} reusable tasks" in prompt and p["max_tokens"] == mine.answer_tokens(n)
        elif f"0 to {mine.MAX_PER_SESSION} reusable tasks" in prompt:
            small = p
        Path(p["answer_file"]).parent.mkdir(parents=True, exist_ok=True)
        Path(p["answer_file"]).write_text(json.dumps(reply) if big.text in prompt else '{"tasks": []}', encoding="utf-8")
    assert small is not None
    Path(small["answer_file"]).write_text(json.dumps(reply), encoding="utf-8")  # too many tasks for its prompt
    with pytest.raises(SystemExit):
        _mine([d], out)
    assert [x.name for x in (handoff / "answers").glob("*.rejected.md")] == [f"{small['id']}.rejected.md"]
    Path(small["answer_file"]).write_text('{"tasks": []}', encoding="utf-8")
    tasks = _mine([d], out)
    assert sorted(t.meta["turn"] for t in tasks) == stating


def test_the_mining_cap_is_each_prompts_own_unless_the_user_or_the_embedded_teacher_sets_one(tmp_path: Path):
    from skillgrad.sleep.night import miner_config, mining_models
    from skillgrad.sleep.settings import SleepSettings

    def cap(**teacher: object) -> int:
        s = SleepSettings(project=str(tmp_path), teacher=teacher, miner="llm")
        return mining_models(miner_config(s, tmp_path / "cache.sqlite"), s).model.teacher.max_tokens

    assert cap(provider="handoff") == 0  # a role cap of 0 lets each call's own (mine.answer_tokens) hold
    assert cap(provider="handoff", max_tokens=900) == 900
    assert cap(provider="local") == mine.LOCAL_MINE_MAX_TOKENS == 768
