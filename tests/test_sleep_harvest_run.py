"""harvest(): project filtering, replay/short/empty filters, since and max_sessions, errors, bookkeeping."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from skillgrad.errors import UsageError
from skillgrad.sleep.harvest import (
    REPLAY_MARKER,
    HarvestSettings,
    harvest,
    load_state,
    record_harvest,
    since_for,
)

FIX = Path(__file__).parent / "fixtures" / "sessions"
TODO = Path("/home/dev/work/todo-app")


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Path, Path]:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    shutil.copytree(FIX / "claude_code", claude)
    shutil.copytree(FIX / "codex", codex)
    return claude, codex


def run(homes: tuple[Path, Path], **kw: object):  # type: ignore[no-untyped-def]
    args: dict[str, object] = {"project": TODO, "sources": ["claude_code", "codex"], "since": None, "max_sessions": 50}
    args.update(kw)
    return harvest(claude_home=homes[0], codex_home=homes[1], **args)  # type: ignore[arg-type]


def test_project_filter_and_skip_reasons(homes: tuple[Path, Path]) -> None:
    r = run(homes)
    got = {(d.agent, d.session_id) for d in r.digests}
    assert got == {
        ("claude_code", "5d0c9a51-2f4e-4b7a-9c1d-7e3f0a6b8c21"), ("claude_code", "9a8e2c44-61b0-4d3f-8e57-2b4c6d8f0a13"),
        ("claude_code", "c3f1e8d2-7a96-4b05-b1e4-5d2a9f7c6e38"), ("claude_code", "3c4d5e6f-7081-4b92-8c3d-4e5f60718293"),
        ("codex", "019cb1a0-3f2e-7a10-9b8c-5d4e3f2a1b0c"), ("codex", "5a1b2c3d-4e5f-4061-8273-94a5b6c7d8e9"),
    }
    assert r.skipped_counts() == {"replay": 2, "too_short": 1, "no_prompt": 1, "other_project": 2}
    assert r.errors == []
    assert all(d.project.startswith(str(TODO)) for d in r.digests)
    assert [d.started_at for d in r.digests] == sorted(d.started_at for d in r.digests)


def test_no_project_keeps_every_project(homes: tuple[Path, Path]) -> None:
    r = run(homes, project=None)
    assert {d.project for d in r.digests} == {"/home/dev/work/todo-app", "/home/dev/work/billing"}


def test_project_subdirectory_counts_as_inside(homes: tuple[Path, Path], tmp_path: Path) -> None:
    r = run(homes, project=Path("/home/dev/work"))
    assert "other_project" not in r.skipped_counts()
    assert run(homes, project=Path("/home/dev/work/todo")).digests == []  # a prefix is not a parent


def test_sources_and_aliases(homes: tuple[Path, Path]) -> None:
    assert {d.agent for d in run(homes, sources=["claude"]).digests} == {"claude_code"}
    assert {d.agent for d in run(homes, sources=["codex"]).digests} == {"codex"}
    assert {d.agent for d in run(homes, sources=["auto"]).digests} == {"claude_code", "codex"}
    with pytest.raises(UsageError, match="--source 'windsurf'"):
        run(homes, sources=["windsurf"])
    with pytest.raises(UsageError, match="max_sessions"):
        run(homes, max_sessions=-1)


def test_since_and_max_sessions(homes: tuple[Path, Path]) -> None:
    r = run(homes, since=datetime(2026, 3, 1, tzinfo=UTC))
    # sessions that ended before `since` are left out; the pre-envelope one has no end time and stays
    assert {d.session_id[:8] for d in r.digests} == {"5d0c9a51", "3c4d5e6f", "019cb1a0", "5a1b2c3d"}
    assert r.cursor == "2026-03-04T09:20:09.001Z"  # newest end of this project (the /tmp replay is not)
    r = run(homes, max_sessions=2)
    assert [d.session_id[:8] for d in r.digests] == ["3c4d5e6f", "019cb1a0"]  # the newest two, oldest first
    assert r.skipped_counts()["max_sessions"] == 4


def test_unchanged_files_are_not_parsed(homes: tuple[Path, Path]) -> None:
    for p in homes[0].rglob("*.jsonl"):
        os.utime(p, (1_600_000_000, 1_600_000_000))
    r = run(homes, sources=["claude_code"], since=datetime(2025, 1, 1, tzinfo=UTC))
    assert r.digests == [] and set(r.skipped_counts()) == {"before_since"}


def test_bad_files_are_reported_not_raised(homes: tuple[Path, Path]) -> None:
    proj = homes[0] / "projects" / "-home-dev-work-todo-app"
    (proj / "ffffffff-0000-4000-8000-000000000000.jsonl").write_bytes(b"\xff\xfe\x00garbage\n{]\n")
    locked = proj / "eeeeeeee-0000-4000-8000-000000000000.jsonl"
    locked.mkdir()  # a directory where a file should be: reading it fails with OSError
    (locked.parent / "dddddddd-0000-4000-8000-000000000000.jsonl").symlink_to(proj / "missing.jsonl")
    r = run(homes, sources=["claude_code"])
    assert len(r.digests) == 4
    assert any("dddddddd" in e.path for e in r.errors)
    assert r.skipped_counts()["no_prompt"] == 2  # the garbage file parses to nothing, the meta-only one too


def test_duplicate_session_in_sessions_and_archive(homes: tuple[Path, Path]) -> None:
    src = next(homes[1].rglob("rollout-2026-03-04T09-15-02-*.jsonl"))
    shutil.copy(src, homes[1] / "archived_sessions" / src.name)
    r = run(homes, sources=["codex"])
    assert [d.session_id[:8] for d in r.digests].count("019cb1a0") == 1
    assert r.skipped_counts()["duplicate"] == 1


def test_replay_marker_and_settings(homes: tuple[Path, Path]) -> None:
    assert REPLAY_MARKER == "<!-- skillgrad:replay -->"
    loose = HarvestSettings(min_session_seconds=0.0, replay_markers=())
    r = run(homes, settings=loose)
    assert "too_short" not in r.skipped_counts()
    # without the marker the Claude replay is kept; the Codex one still runs under /tmp, outside the project
    assert any(d.session_id.startswith("e7d6c5b4") for d in r.digests)


def test_workspace_under_dot_skillgrad_is_a_replay(homes: tuple[Path, Path]) -> None:
    f = next((homes[0] / "projects" / "-home-dev-work-billing").glob("*.jsonl"))
    f.write_text(f.read_text().replace("/home/dev/work/billing", "/home/dev/work/billing/.skillgrad/sleep/ws"))
    r = run(homes, project=None, sources=["claude_code"])
    assert r.skipped_counts()["replay"] == 2


def test_feedback_phrases_extend_through_settings(homes: tuple[Path, Path]) -> None:
    s = HarvestSettings(positive_phrases=("add pagination",))
    r = run(homes, settings=s, sources=["claude_code"])
    d = next(d for d in r.digests if d.session_id.startswith("9a8e2c44"))
    assert [f.kind for f in d.feedback] == ["correction"]  # correction still wins over the added phrase


def test_since_last_harvest_bookkeeping(homes: tuple[Path, Path], tmp_path: Path) -> None:
    state = tmp_path / "proj" / ".skillgrad" / "sleep" / "state.json"
    now = datetime(2026, 3, 6, 12, 0, tzinfo=UTC)
    first = since_for(state, lookback_hours=72, now=now)
    assert first == datetime(2026, 3, 3, 12, 0, tzinfo=UTC) and not state.exists()
    r = run(homes, since=datetime(2026, 3, 1, tzinfo=UTC))
    state.parent.mkdir(parents=True)
    state.write_text(json.dumps({"night": {"n": 3}}))  # another owner's key in the same file
    st = record_harvest(state, cursor=r.cursor, session_ids=[d.session_id for d in r.digests], now=now)
    assert st.cursor == r.cursor and st.runs == 1 and st.sessions_total == 4
    data = json.loads(state.read_text())
    assert data["night"] == {"n": 3} and data["harvest"]["cursor"] == r.cursor
    assert since_for(state, lookback_hours=72, now=now) == datetime(2026, 3, 3, 12, 0, tzinfo=UTC)  # lookback applies
    since = since_for(state, lookback_hours=1, now=now)  # the cursor is older than an hour back: it starts there
    assert since == datetime(2026, 3, 4, 9, 20, 9, 1000, tzinfo=UTC)
    again = run(homes, since=since)
    assert [d.session_id[:8] for d in again.digests] == ["5a1b2c3d"]  # only the session with no end time
    # an older cursor never moves the state backwards
    assert record_harvest(state, cursor="2020-01-01T00:00:00Z", session_ids=[], now=now).cursor == r.cursor
    assert load_state(state).runs == 2
    assert not list(state.parent.glob("*.tmp"))


def test_corrupt_state_file_is_a_usage_error(tmp_path: Path) -> None:
    p = tmp_path / "state.json"
    p.write_text("{not json")
    with pytest.raises(UsageError, match=r"state\.json.*(fix or delete|move it aside)"):
        since_for(p, lookback_hours=1)
