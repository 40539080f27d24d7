"""Harvesters for VS Code Copilot Chat, Copilot CLI, OpenCode, Gemini CLI and Cursor (issue 21), each on our own
fixture written in the agent's real on-disk format (tests/fixtures/sessions/README.md says which real files
were studied); `--source` selects; the same filters and redaction as Claude Code and Codex."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillgrad.errors import UsageError
from skillgrad.sleep.harvest import (
    HarvestSettings,
    copilot_cli,
    cursor,
    gemini_cli,
    harvest,
    opencode,
    vscode_copilot,
)
from skillgrad.sleep.mine import mine_heuristic

FIX = Path(__file__).parent / "fixtures" / "sessions"
NOTES = Path("/home/dev/work/notes")
S = HarvestSettings()


def test_vscode_copilot_chat_json_and_jsonl_patches() -> None:
    paths = vscode_copilot.find_sessions(FIX / "vscode_copilot" / "User")
    json_file, jsonl_file = sorted(paths, key=lambda p: p.suffix)
    d = vscode_copilot.parse_session(json_file, S)
    assert (d.agent, d.project, d.model) == ("vscode_copilot", str(NOTES), "copilot/gpt-5-mini")
    assert d.prompts == ["How do I run the tests of the export module?",
                         "No, use pnpm, not npm. Then add a header row to the CSV."]
    assert d.turns[0].answer == "Run `npm test -- export`." and d.turns[0].tools == ["run_in_terminal"]
    assert d.files_touched == ["src/export.ts"] and [f.kind for f in d.feedback] == ["correction"]
    patched = vscode_copilot.parse_session(jsonl_file, S)  # kind 0 state, kind 2 appends, kind 1 sets
    assert patched.prompts == ["Reply in JSON: which CSV columns does the export write?"]
    assert patched.turns[0].answer == '{"columns": ["id", "title", "created_at"]}'
    assert patched.skipped_records == 1 and patched.ended_at.startswith("2026-03-07T11:00:30")


def test_copilot_cli_reads_what_the_person_typed() -> None:
    (path,) = copilot_cli.find_sessions(FIX / "copilot_cli")
    d = copilot_cli.parse_session(path, S)
    assert (d.session_id, d.project, d.branch, d.version) == (
        "7e1d2c3b-4a59-4687-9a0b-c1d2e3f4a5b6", str(NOTES), "main", "0.0.372")
    assert d.prompts == ["Start every reply with DONE: and list the failing tests."]  # not transformedContent
    assert d.turns[0].answer == "DONE: 2 tests fail: export quotes, header row." and d.turns[0].tools == ["bash"]


def test_opencode_parts_synthetic_text_and_subagent_sessions() -> None:
    paths = opencode.find_sessions(FIX / "opencode")
    main, child = (opencode.parse_session(p, S) for p in sorted(paths, key=lambda p: "0K" in p.name))
    assert main.prompts == ["Quote CSV fields that contain commas; use `csv-stringify` instead of hand-written joins."]
    assert main.turns[0].answer.startswith("Switched the writer") and main.turns[0].tools == ["edit"]
    assert main.files_touched == ["src/export.ts"] and main.n_subagent_sessions == 1 and main.project == str(NOTES)
    assert child.turns == []  # the sub-agent's own session is never the user's prompts


def test_gemini_cli_session_belongs_to_the_project_by_hash() -> None:
    r = harvest(project=NOTES, claude_home=Path("/nonexistent"), codex_home=Path("/nonexistent"),
                sources=["gemini"], since=None, max_sessions=10, homes={"gemini_cli": FIX / "gemini_cli"})
    (d,) = r.digests
    assert d.project == str(NOTES) and r.skipped_counts() == {"other_project": 1}
    assert d.prompts == ["Add a header row to the CSV export.", "Thanks. Never use var in the export code."]
    assert d.turns[0].answer == "Added the header row `id,title,created_at`." and d.turns[0].tools == ["replace"]
    assert d.model == "gemini-2.5-pro" and d.files_touched == [f"{NOTES}/src/export.ts"]  # no cwd in the file
    assert gemini_cli.project_hash(NOTES) == d.project_hash


def test_cursor_composers_from_the_sqlite_store(tmp_path: Path) -> None:
    home = tmp_path / "Cursor" / "User"
    shutil.copytree(FIX / "cursor" / "User", home)
    paths = cursor.find_sessions(home)
    assert len(paths) == 2 and all("#" in p.name for p in paths)
    new = cursor.parse_session(next(p for p in paths if "2f1e0d9c" in str(p)), S)
    assert new.project == str(NOTES) and new.model == "claude-4.5-sonnet"  # via the workspace's composer list
    assert new.prompts == ["Rename `exportCsv` to `writeCsv` and keep the old name as an alias.",
                           "Don't use default exports, we use named exports only."]
    assert new.turns[0].answer == "Renamed to `writeCsv`; `exportCsv` re-exports it." and new.turns[0].tools == ["edit_file"]
    old = cursor.parse_session(next(p for p in paths if "0a1b2c3d" in str(p)), S)  # inline conversation[]
    assert old.prompts == ["Explain the notes schema."] and old.project == ""


def test_source_selects_and_every_agent_mines_the_users_words(tmp_path: Path) -> None:
    homes = {"vscode_copilot": FIX / "vscode_copilot" / "User", "copilot_cli": FIX / "copilot_cli",
             "opencode": FIX / "opencode", "gemini_cli": FIX / "gemini_cli", "cursor": FIX / "cursor" / "User"}
    r = harvest(project=NOTES, claude_home=tmp_path / "none", codex_home=tmp_path / "none",
                sources=["vscode,copilot-cli,opencode,gemini,cursor"], since=None, max_sessions=50, homes=homes)
    assert {d.agent for d in r.digests} == set(homes) and r.errors == []
    checks = {(t.meta["agent"], c.op, c.arg) for t in mine_heuristic(r.digests) for c in t.judge.checks}
    assert ("vscode_copilot", "contains", "pnpm") in checks and ("opencode", "contains", "csv-stringify") in checks
    assert any(a == "copilot_cli" and op == "regex" and "DONE:" in arg for a, op, arg in checks)
    only = harvest(project=NOTES, claude_home=tmp_path / "none", codex_home=tmp_path / "none", sources=["cursor"],
                   since=None, max_sessions=50, homes=homes)
    assert {d.agent for d in only.digests} == {"cursor"}
    with pytest.raises(UsageError, match="--source 'windsurf'"):
        harvest(project=NOTES, claude_home=tmp_path, codex_home=tmp_path, sources=["windsurf"], since=None,
                max_sessions=1)


def test_cli_harvest_with_source_and_home(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    project = tmp_path / "notes"
    project.mkdir()
    home = tmp_path / "copilot"
    shutil.copytree(FIX / "copilot_cli", home)
    events = next(home.rglob("events.jsonl"))
    events.write_text(events.read_text().replace(str(NOTES), str(project)))
    out = tmp_path / "t.jsonl"
    r = subprocess.run([sys.executable, "-m", "skillgrad.cli", "sleep", "harvest", "--output", str(out), "--project",
                        str(project), "--source", "copilot_cli", "--home", f"copilot_cli={home}",
                        "--lookback-hours", "1000000", "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["sessions"] == 1 and "DONE:" in out.read_text()
    bad = subprocess.run([sys.executable, "-m", "skillgrad.cli", "sleep", "harvest", "--output", str(out), "--project",
                          str(project), "--home", "windsurf=/x"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--home windsurf" in bad.stderr
