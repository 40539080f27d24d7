"""`benchmarks/sleep_sessions.py`: the real project laid out as a user's home (`--real-home N`) and the agent
miner's recall through handoff (`--recall --recall-miner handoff`), on the held-out real sessions."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from skillgrad.errors import AnswersNeeded
from skillgrad.sleep.harvest import harvest, load_state
from skillgrad.sleep.night import harvest_state_path, run_night
from skillgrad.sleep.recall import load_labelled
from skillgrad.sleep.settings import SleepSettings

_spec = importlib.util.spec_from_file_location(
    "bench_sleep_sessions_real", Path(__file__).resolve().parent.parent / "benchmarks" / "sleep_sessions.py")
bench = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(bench)  # type: ignore[union-attr]


def test_the_real_home_holds_each_nights_sessions_with_every_user_turn(tmp_path: Path) -> None:
    digests, _, _ = load_labelled(bench.REAL)
    said = {tuple(t.prompt.strip() for t in d.turns) for d in digests}
    seen = []
    for night in (1, 2, 3):
        project, claude = bench.real_home(tmp_path, night)
        r = harvest(project=project, claude_home=claude, codex_home=tmp_path / "none", sources=["claude_code"],
                    since=datetime(2024, 1, 1, tzinfo=UTC), max_sessions=200)
        assert not r.problems() and {tuple(t.prompt.strip() for t in d.turns) for d in r.digests} <= said
        seen.append(len(r.digests))
    assert seen == [12, 20, 29]


def test_a_night_stopped_for_its_mining_answers_uses_up_no_session(tmp_path: Path) -> None:
    project, claude = bench.real_home(tmp_path, 1)
    s = SleepSettings(project=str(project), claude_home=str(claude), codex_home=str(tmp_path / "none"),
                      source="claude_code", lookback_hours=24 * 2000, teacher={"provider": "handoff"},
                      evolve_memory=False)
    with pytest.raises(AnswersNeeded) as e:
        asyncio.run(run_night(s))
    assert len(e.value.pending) == 12
    st = load_state(harvest_state_path(project))
    assert not st.cursor and not st.settled


def test_the_agent_miners_recall_is_read_from_its_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["sleep_sessions.py", "--recall", "--recall-miner", "handoff", "--labelled", "held-out",
            "--out", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as e:
        bench.main()
    assert e.value.code == 3
    board = tmp_path / "recall_real_preferences_heldout" / "handoff"
    pending = json.loads((board / "pending.json").read_text())["pending"]
    assert len(pending) == 29 and {p["stage"] for p in pending} == {"mine"}
    for p in pending:  # an agent that finds nothing
        (board / "answers" / f"{p['id']}.md").write_text('{"tasks": []}')
    capsys.readouterr()
    bench.main()
    out = capsys.readouterr().out
    assert "agent miner (handoff) (29 real sessions, 0 tasks) | 0 / 45" in out


def test_a_setting_named_author_is_not_redacted_as_a_secret() -> None:
    """A real session's tigrc lines ("set show-author = abbreviated") reached the miner as `[REDACTED]`: the
    secret word `auth` matched inside `author`. A name that is a secret still is one."""
    from skillgrad.core.redact import redact_text

    digests, _, _ = load_labelled(bench.REAL)
    line = next(t.prompt for d in digests for t in d.turns if "show-author" in t.prompt)
    assert redact_text(line) == line
    for secret in ("auth_token = abc123def456", "AUTH=s3cr3tvalue", "authorization: Basic dXNlcjpwYXNzd29yZDEyMw==",
                   "author_api_key=abc123def456"):
        assert "***" in redact_text(secret, "***"), secret
