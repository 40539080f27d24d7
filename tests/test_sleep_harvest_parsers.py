"""Parsers on fixtures written in the real Claude Code and Codex layouts (see tests/fixtures/sessions/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillgrad.sleep.harvest import HarvestSettings, claude_code, codex
from skillgrad.sleep.harvest.digest import SessionDigest

FIX = Path(__file__).parent / "fixtures" / "sessions"
CC = FIX / "claude_code" / "projects" / "-home-dev-work-todo-app"
CX = FIX / "codex"
S = HarvestSettings()


def cc(stem: str) -> SessionDigest:
    return claude_code.parse_session(CC / f"{stem}.jsonl", S)


def cx(glob: str) -> SessionDigest:
    (path,) = list(CX.rglob(glob))
    return codex.parse_session(path, S)


# ---------------------------------------------------------------- Claude Code
def test_discovery_skips_subagent_files() -> None:
    names = [p.name for p in claude_code.find_sessions(FIX / "claude_code")]
    assert names and not any(n.startswith("agent-") for n in names)
    assert all(p.parent.parent.name == "projects" for p in claude_code.find_sessions(FIX / "claude_code"))


def test_v21_session_every_record_type() -> None:
    d = cc("5d0c9a51-2f4e-4b7a-9c1d-7e3f0a6b8c21")
    assert (d.agent, d.session_id, d.project, d.branch, d.version) == (
        "claude_code", "5d0c9a51-2f4e-4b7a-9c1d-7e3f0a6b8c21", "/home/dev/work/todo-app", "feat/due-dates", "2.1.39")
    assert d.model == "claude-sonnet-4-5-20250929"  # the <synthetic> API-error message does not count
    # meta user messages (caveat, /cost, its stdout, skill body, compact summary, interrupt) are not prompts;
    # a text+image prompt and a queued (attachment) prompt are
    assert d.prompts == [
        "Add a due_date field to the Todo model and show overdue items in red in the list view.",
        "It still fails: the overdue rows are not red in the screenshot. Fix the date comparison.",
        "Use is_overdue() from src/dates.py instead of comparing strings.",
        "Thanks, that works. Now run the linter.",
    ]
    # the final answer is the last assistant text of the turn; thinking blocks and tool calls are not answers
    assert d.turns[0].answer.startswith("Added `due_date` to `Todo`")
    assert d.turns[3].answer == "The linter is clean."
    assert d.turns[0].tools == ["Read", "Skill", "Edit", "Write", "MultiEdit", "NotebookEdit", "Bash"]
    assert d.turns[1].interrupted and not d.turns[0].interrupted
    assert d.tools_used["Bash"] == 2
    assert d.skills_used == ["db-migrations"]
    # Edit/Write/MultiEdit/NotebookEdit inputs, toolUseResult.filePath and file-history-snapshot keys, one spelling
    assert d.files_touched == ["src/models.py", "migrations/0002_due_date.py", "src/views/list.html",
                               "notebooks/explore.ipynb"]
    assert [(f.kind, f.turn) for f in d.feedback] == [("negative", 0), ("correction", 1), ("positive", 2)]
    assert d.summaries and d.summaries[0].startswith("This session is being continued")
    assert d.n_subagent_sessions == 1  # subagents/agent-a7f3e21.jsonl; the compaction agent is not one
    assert (d.started_at, d.ended_at) == ("2026-03-02T09:00:00.050Z", "2026-03-02T09:11:05.000Z")
    assert d.skipped_records == 0


def test_v10_inline_sidechain_and_summary_record() -> None:
    d = cc("9a8e2c44-61b0-4d3f-8e57-2b4c6d8f0a13")
    assert d.version == "1.0.43" and d.summaries == ["Pagination for the todo API"]
    # the Task sub-agent's prompt and answer (isSidechain) are not the user's turns
    assert d.prompts == ["Add pagination to GET /todos with limit and offset query parameters.",
                         "No, use page and per_page instead of limit/offset, like the rest of the API."]
    assert "Grep" not in d.tools_used and d.n_subagent_sessions == 1
    assert d.turns[1].answer == "Understood: switched to `page` and `per_page`."  # string content
    assert [f.kind for f in d.feedback] == ["correction"]
    assert d.files_touched == ["src/api.py"]


def test_v20_agent_file_beside_session_counts_only_for_its_parent() -> None:
    d = cc("c3f1e8d2-7a96-4b05-b1e4-5d2a9f7c6e38")
    assert d.n_subagent_sessions == 1  # agent-4e2a91bc.jsonl; agent-9d9d9d9d belongs to another session
    assert d.prompts == ["Write a README section that explains how to run the app locally."]
    assert d.files_touched == ["README.md"]


def test_meta_only_session_has_no_prompt() -> None:
    assert cc("2b3c4d5e-6f70-4a81-9b2c-3d4e5f607182").turns == []


def test_damaged_file_counts_bad_lines() -> None:
    d = cc("3c4d5e6f-7081-4b92-8c3d-4e5f60718293")
    assert d.skipped_records == 3  # not JSON, a JSON array, the truncated last line
    assert d.prompts[0] == "Rename the `done` flag to `completed` everywhere."
    assert d.prompts[1].startswith("caf")  # bad UTF-8 decoded with replacement characters
    assert d.turns[1].answer == "Renamed `done` to `completed` in 4 files."


@pytest.mark.parametrize("text", ["<command-name>/model</command-name>", "/clear", "<local-command-stdout>x",
                                  "Caveat: The messages below were generated by the user",
                                  "<system-reminder>hook</system-reminder>", "Base directory for this skill: /x"])
def test_meta_text(text: str) -> None:
    assert claude_code.is_meta_text(text)


def test_real_prompts_are_not_meta() -> None:
    assert not claude_code.is_meta_text("/clear the cache in src/cache.py please")
    assert not claude_code.is_meta_text("Fix the <command-name> parsing")


# ---------------------------------------------------------------- Codex
def test_codex_discovery_covers_sessions_and_archived() -> None:
    found = {p.parent.name for p in codex.find_sessions(CX)}
    assert "archived_sessions" in found and "04" in found


def test_codex_envelope_every_record_type() -> None:
    d = cx("rollout-2026-03-04T09-15-02-*.jsonl")
    assert (d.session_id, d.project, d.branch, d.model, d.version) == (
        "019cb1a0-3f2e-7a10-9b8c-5d4e3f2a1b0c", "/home/dev/work/todo-app", "fix/overdue-sort", "gpt-5.3-codex",
        "0.104.0")
    # developer text, AGENTS.md, <environment_context> and <turn_aborted> injections are not prompts;
    # user_message events and the response-item copies are not double counted
    assert d.prompts == [
        "Sort the todo list so overdue items come first, then by due date.",
        "That's not what I asked: items without a due date must go last, not first.",
        "Perfect, thanks. Also bump the changelog.",
    ]
    assert d.turns[0].answer == "Overdue items now sort first, then by due date; added a test."
    assert d.turns[0].tools == ["exec_command", "apply_patch", "shell", "local_shell", "web_search"]
    assert d.turns[1].interrupted
    assert [(f.kind, f.turn) for f in d.feedback] == [("correction", 0), ("positive", 1)]
    # apply_patch (custom tool and heredoc in a shell call), sed -i, and a > redirection
    assert d.files_touched == ["src/views.py", "src/sorting.py", "tests/test_views.py", "build.log", "src/version.py"]
    assert d.summaries == ["Summary: sorting todos with overdue first; due-less items last."]
    assert d.skipped_records == 0  # an unknown future record type is ignored, not an error


def test_codex_pre_envelope_format() -> None:
    d = cx("rollout-2025-08-20T13-20-47-*.jsonl")
    assert (d.session_id, d.branch, d.started_at) == ("5a1b2c3d-4e5f-4061-8273-94a5b6c7d8e9", "main",
                                                      "2025-08-20T13:20:47.060Z")
    assert d.project == "/home/dev/work/todo-app"  # from the <environment_context> block
    assert d.prompts == ["Add a --json flag to the `todo list` command.", "Great, that works."]
    assert d.turns[0].answer == "`todo list --json` now prints the todos as a JSON array."
    assert d.turns[0].tools == ["shell", "local_shell"] and d.files_touched == ["src/cli.py"]
    assert [f.kind for f in d.feedback] == ["positive"]
    assert d.ended_at == ""  # bare items carry no time: the end is unknown, not equal to the start


def test_codex_early_envelope_without_events_reads_response_items() -> None:
    d = cx("rollout-2025-10-29T00-59-38-*.jsonl")
    assert d.prompts == ["Why does the invoice total drift by a cent?"]
    assert d.turns[0].answer.startswith("Floats:") and d.model == "gpt-5-codex"


def test_shell_edit_detection() -> None:
    assert codex.shell_edit_files("sed -i.bak 's/a/b/' conf.ini") == ["conf.ini"]
    assert codex.shell_edit_files("echo x | tee -a notes.md") == ["notes.md"]
    assert codex.shell_edit_files("make test 2>&1 > /dev/null") == []
    assert codex.user_text("<environment_context><cwd>/x</cwd></environment_context>") == ""
    assert codex.user_text("fix it <environment_context>x</environment_context>") == "fix it"
