"""Harvest defects found on real Claude Code 2.1.39 and Codex IDE sessions (issue 21), each on a fixture in the
real layout: background-task notices, slash-command requests, IDE wrappers, cursors, damaged files."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from skillgrad.sleep.harvest import HarvestSettings, claude_code, codex, harvest

FIX = Path(__file__).parent / "fixtures" / "sessions"
NOTES = FIX / "claude_code_background" / "projects" / "-home-dev-work-notes" / "6e1f0b7a-3c2d-4e5f-8a9b-0c1d2e3f4a5b.jsonl"
S = HarvestSettings()


def test_background_task_notice_keeps_the_turns_answer() -> None:
    d = claude_code.parse_session(NOTES, S)
    # the agent's reply to `<task-notification>` ("All 42 tests passed.") is not the answer to the user
    assert d.turns[0].answer.startswith("The CSV writer closed the stream")
    assert all("42 tests" not in t.answer for t in d.turns)


def test_slash_command_arguments_are_the_request() -> None:
    d = claude_code.parse_session(NOTES, S)
    assert d.prompts == [
        "/fix-issue the export button downloads an empty CSV; use pnpm, not npm, for the test run",
        "Don't call it 'done' before the tests ran. Now add a header row to the CSV.",
    ]  # the command file's expansion (isMeta) and `/model sonnet` (a built-in's setting) are not prompts
    assert claude_code.command_request("<command-name>/model</command-name><command-args>opus</command-args>") == ""
    assert claude_code.command_request("<command-name>/w</command-name><command-args> </command-args>") == ""


def test_expansion_without_is_meta_is_not_a_second_prompt(tmp_path: Path) -> None:
    lines = NOTES.read_text().splitlines()
    lines[1] = lines[1].replace(',"isMeta":true', "")  # older versions wrote the expansion as plain user text
    f = tmp_path / NOTES.name
    f.write_text("\n".join(lines) + "\n")
    assert claude_code.parse_session(f, S).prompts[0].startswith("/fix-issue the export button")
    assert len(claude_code.parse_session(f, S).prompts) == 2


def test_compaction_agent_is_not_a_subagent() -> None:
    cc = FIX / "claude_code" / "projects" / "-home-dev-work-todo-app"
    d = claude_code.parse_session(cc / "5d0c9a51-2f4e-4b7a-9c1d-7e3f0a6b8c21.jsonl", S)
    assert d.n_subagent_sessions == 1  # subagents/agent-a7f3e21.jsonl; agent-acompact-4c1d2e.jsonl is compaction


def test_codex_ide_wrapper_leaves_the_request() -> None:
    (path,) = (FIX / "codex_ide").rglob("rollout-*.jsonl")
    d = codex.parse_session(path, S)
    assert d.prompts == ["Make the CSV export quote fields that contain commas.",
                         "The header row is still missing, see the screenshot."]
    assert codex.user_text("## My request for Codex:\nkeep") == "## My request for Codex:\nkeep"  # no wrapper head


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Path, Path]:
    claude, cdx = tmp_path / "claude", tmp_path / "codex"
    shutil.copytree(FIX / "claude_code", claude)
    shutil.copytree(FIX / "claude_code_background", claude, dirs_exist_ok=True)
    shutil.copytree(FIX / "codex", cdx)
    return claude, cdx


def test_cursor_is_the_projects_newest_session(homes: tuple[Path, Path]) -> None:
    r = harvest(project=Path("/home/dev/work/todo-app"), claude_home=homes[0], codex_home=homes[1],
                sources=["claude_code", "codex"], since=None, max_sessions=50)
    # the notes session (2026-03-07) and the /tmp replay (03-05) are other projects: they do not move this cursor
    newest = max(datetime.fromisoformat(d.ended_at.replace("Z", "+00:00")) for d in r.digests if d.ended_at)
    assert datetime.fromisoformat(r.cursor.replace("Z", "+00:00")) == newest
    assert newest < datetime(2026, 3, 5, tzinfo=UTC)


def test_unreadable_and_damaged_files_are_named(homes: tuple[Path, Path]) -> None:
    proj = homes[0] / "projects" / "-home-dev-work-todo-app"
    (proj / "dddddddd-0000-4000-8000-000000000000.jsonl").symlink_to(proj / "missing.jsonl")
    r = harvest(project=Path("/home/dev/work/todo-app"), claude_home=homes[0], codex_home=homes[1],
                sources=["claude_code"], since=None, max_sessions=50)
    lines = r.problems()
    assert any("dddddddd" in ln and "FileNotFoundError" in ln for ln in lines)
    assert any("3c4d5e6f-7081-4b92-8c3d-4e5f60718293.jsonl" in ln and "unreadable line" in ln for ln in lines)


def test_digests_use_the_one_redactor_prose_kept_secrets_gone(tmp_path: Path) -> None:
    lines = NOTES.read_text().splitlines()
    secret = ("**Token Efficiency**: fine. Post to https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/"
              "cccccccccccccccccccccccc with AccountKey=abcdEFGHijklMNOPqrstUVWXyz0123456789abcdEFGHijkl== and "
              "ya29.a0AfH6SMBxabcdefghijklmnopqrstuvwxyz0123456789")
    lines[8] = lines[8].replace("Now add a header row to the CSV.", secret)
    f = tmp_path / NOTES.name
    f.write_text("\n".join(lines) + "\n")
    prompt = claude_code.parse_session(f, S).prompts[-1]
    assert "**Token Efficiency**: fine." in prompt  # prose with a colon is not a secret
    assert "hooks.slack.com/services/T0" not in prompt and "abcdEFGH" not in prompt and "ya29.a0" not in prompt


def test_ide_notes_are_not_the_users_words(tmp_path: Path) -> None:
    lines = NOTES.read_text().splitlines()
    note = ("<ide_opened_file>The user opened the file /home/dev/work/notes/src/export.ts in the IDE. This may or may "
            "not be related to the current task.</ide_opened_file>")
    lines[8] = lines[8].replace('"content":"Don', '"content":"' + note.replace('"', '\\"') + '\\nDon')
    f = tmp_path / NOTES.name
    f.write_text("\n".join(lines) + "\n")
    assert claude_code.parse_session(f, S).prompts[-1].startswith("Don't call it 'done'")
