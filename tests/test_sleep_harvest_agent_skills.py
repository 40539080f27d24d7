"""Which skills a request used, read from OpenCode, GitHub Copilot (CLI and VS Code chat), Cursor and Gemini CLI
sessions in their on-disk formats (tests/fixtures/sessions/README.md names the real files and sources studied),
and the Codex IDE's active file as a file the request named."""

from __future__ import annotations

import shutil
from pathlib import Path

from skillgrad.sleep.harvest import (
    HarvestSettings,
    codex,
    copilot_cli,
    cursor,
    gemini_cli,
    harvest,
    opencode,
    vscode_copilot,
)
from skillgrad.sleep.harvest.build import skill_read

FIX = Path(__file__).parent / "fixtures" / "sessions" / "agent_skills"
NOTES = "/home/dev/work/notes"
S = HarvestSettings()


def test_opencode_skill_tool_and_a_read_of_a_skill_file() -> None:
    (path,) = opencode.find_sessions(FIX / "opencode")
    d = opencode.parse_session(path, S)
    assert d.prompts == ["Write the release notes for v2.1. Start every reply with Notes:",
                         "Sort the open todos by due date, use ISO dates not US dates."]
    assert [t.skills for t in d.turns] == [["release-notes"], ["todo-format"]]  # docs/todo.md is no skill
    assert d.skill_files == {"release-notes": f"{NOTES}/.opencode/skills/release-notes/SKILL.md",
                             "todo-format": f"{NOTES}/.claude/skills/todo-format/SKILL.md"}


def test_copilot_cli_skill_invoked_skill_tool_sub_agents_and_injected_skill_context() -> None:
    (path,) = copilot_cli.find_sessions(FIX / "copilot_cli")
    d = copilot_cli.parse_session(path, S)
    # the `<skill-context>` user.message is the skill's body, not a prompt; the sub-agent's reply is not the answer
    assert d.prompts == ["/release-notes for v2.1, start the reply with Notes:",
                         "Summarize the open todos, never use US dates."]
    assert [t.answer for t in d.turns] == ["Notes: v2.1 quotes CSV fields and adds a header row.",
                                           "Open todos: 2026-03-09 ship, 2026-03-12 review."]
    # a plugin's skill is named `plugin:name` with no path (never trained); the sub-agent's skill is its own
    assert [t.skills for t in d.turns] == [["release-notes"], ["todo-format", "superpowers:commit-style"]]
    assert d.skill_files == {"release-notes": f"{NOTES}/.github/skills/release-notes/SKILL.md",
                             "todo-format": "/home/dev/.copilot/skills/todo-format/SKILL.md"}


def test_vscode_copilot_reading_a_skill_file_is_using_the_skill() -> None:
    (path,) = vscode_copilot.find_sessions(FIX / "vscode_copilot" / "User")
    d = vscode_copilot.parse_session(path, S)
    assert d.project == NOTES and [t.skills for t in d.turns] == [["release-notes"], []]
    assert d.skill_files == {"release-notes": f"{NOTES}/.github/skills/release-notes/SKILL.md"}
    assert skill_read("file:///a%20b/.claude/skills/x/SKILL.md") == ("x", "/a b/.claude/skills/x/SKILL.md")
    assert skill_read("/a/skills/x/README.md") is None and skill_read(None) is None


def test_cursor_read_file_of_a_skill() -> None:
    (path,) = cursor.find_sessions(FIX / "cursor" / "User")
    d = cursor.parse_session(path, S)
    assert d.project == NOTES and d.prompts == ["Write the release notes for v2.1, start the reply with Notes:",
                                                "Now list the open todos."]
    assert [t.skills for t in d.turns] == [["release-notes"], []]
    assert d.skill_files == {"release-notes": ".cursor/skills/release-notes/SKILL.md"}  # relative to the project


def test_gemini_cli_jsonl_log_activate_skill_rewind_and_display_content() -> None:
    paths = gemini_cli.find_sessions(FIX / "gemini_cli")
    assert [p.name for p in paths] == ["session-2026-03-10T10-00-9b8a7c6d.jsonl"]  # the sub-agent's log is not one
    d = gemini_cli.parse_session(paths[0], S)
    # the rewound turn is gone; what the person typed (displayContent), not the expanded @-file
    assert d.prompts == ["Write the release notes for v2.1, start every reply with Notes:",
                         "Summarize the open todos in @docs/todo.md"]
    assert d.turns[0].answer == "Notes: v2.1 quotes CSV fields and adds a header row."  # the rewritten record wins
    assert [t.skills for t in d.turns] == [["release-notes"], ["todo-format"]]
    assert d.skill_files == {"release-notes": f"{NOTES}/.gemini/skills/release-notes/SKILL.md",
                             "todo-format": f"{NOTES}/.gemini/skills/todo-format/SKILL.md"}
    sub = next(FIX.joinpath("gemini_cli").rglob("1f2e3d4c-*.jsonl"))
    assert gemini_cli.parse_session(sub, S).turns == []  # kind: subagent


def test_codex_ide_active_file_is_a_named_file() -> None:
    (path,) = (FIX.parent / "codex_ide").rglob("rollout-*.jsonl")
    d = codex.parse_session(path, S)
    assert [t.named_files for t in d.turns] == [["src/export.ts"], ["/home/dev/Pictures/screenshot.png"]]
    both = ("# Context from my IDE setup:\n\n## Active file: c:\\Users\\dev\\notes\\todo.md\n\n## Open tabs:\n"
            "- todo.md: c:\\Users\\dev\\notes\\todo.md\n\n# Files mentioned by the user:\n\n## a.md: /x/a.md\n\n"
            "## My request for Codex:\nmerge them")
    assert codex.mentioned_files(both) == ["/x/a.md", "c:\\Users\\dev\\notes\\todo.md"]
    assert codex.mentioned_files("## Active file: a.ts\nno IDE context around it") == []


def test_harvest_of_every_agent_trains_each_users_skill(tmp_path: Path) -> None:
    """One project's sessions in five agents: each task that used one of the user's skills goes to that skill's
    target (found in the agent's own skill folder); plugin skills are never targets."""
    from skillgrad.sleep.mine import mine_heuristic
    from skillgrad.sleep.targets import plan_targets

    project = tmp_path / "notes"
    homes = {}
    for agent in ("opencode", "copilot_cli", "vscode_copilot", "cursor", "gemini_cli"):
        src = FIX / agent / ("User" if agent in ("vscode_copilot", "cursor") else "")
        homes[agent] = tmp_path / agent
        shutil.copytree(src, homes[agent])
        for f in homes[agent].rglob("*"):
            if f.is_file() and f.suffix in (".json", ".jsonl"):
                f.write_text(f.read_text(encoding="utf-8").replace(NOTES, str(project)), encoding="utf-8")
    # the two SQLite stores name the project in workspace.json (rewritten above); Gemini by the path's hash
    old, new = gemini_cli.project_hash(Path(NOTES)), gemini_cli.project_hash(project.resolve())
    for f in homes["gemini_cli"].rglob("*.jsonl"):
        f.write_text(f.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    (homes["gemini_cli"] / "tmp" / old).rename(homes["gemini_cli"] / "tmp" / new)
    for d in (".opencode", ".github", ".cursor", ".gemini", ".claude"):
        for name in ("release-notes", "todo-format"):
            (project / d / "skills" / name).mkdir(parents=True, exist_ok=True)
            (project / d / "skills" / name / "SKILL.md").write_text(f"# {name}\n")
    r = harvest(project=project, claude_home=tmp_path / "none", codex_home=tmp_path / "none", sources=["auto"],
                since=None, max_sessions=50, homes=homes)
    assert sorted(d.agent for d in r.digests) == ["copilot_cli", "cursor", "gemini_cli", "opencode", "vscode_copilot"]
    tasks = mine_heuristic(r.digests)  # every request that stated a preference ("start every reply with Notes:")
    targets = {t.key: t for t in plan_targets(tasks, project=project, default_skill=project / "x" / "SKILL.md",
                                              memory=None, claude_home=tmp_path / "none", codex_home=tmp_path / "none")}
    # each agent's own copy of the skill is its own file, trained on the tasks that used it
    by_folder = {k: sorted(t.meta["agent"] for t in v.tasks) for k, v in targets.items() if "release-notes" in k}
    assert by_folder == {"skill:release-notes@.github": ["copilot_cli", "vscode_copilot"],
                         "skill:release-notes@.opencode": ["opencode"], "skill:release-notes@.cursor": ["cursor"],
                         "skill:release-notes@.gemini": ["gemini_cli"]}
    assert targets["skill:release-notes@.cursor"].live == (project / ".cursor/skills/release-notes/SKILL.md").resolve()
    assert not any("superpowers" in k for k in targets) and targets["skill"].tasks == []
