"""What a night trains: one target per live file, each with the tasks that concern it.

- each of the user's own skills a task used (the `Skill` tool, a SKILL.md read, Codex `$name`): its SKILL.md,
  trained on the tasks that used it;
- the night's skill (`--skill`, default `.claude/skills/project-preferences/SKILL.md`): the tasks that used none
  of the user's skills (and the tasks that used this very skill);
- the memory file (CLAUDE.md / AGENTS.md, where its instructions live): every task, since every session reads it.

Only the learned block of each file is trained. A skill is the user's when its SKILL.md exists in the project or
in the agent's home skill folder; plugin skills (`~/.claude/plugins/...`) and Codex's built-in `.system` skills
are someone else's and never edited.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgrad.envs.skillfolder.tasks import eval_tasks
from skillgrad.envs.tasks.records import TaskRecord

DEFAULT = "skill"
MEMORY = "memory"
SKILL_PREFIX = "skill:"


@dataclass
class Target:
    key: str                       # "skill", "memory" or "skill:<name>"
    live: Path                     # the file an adoption would change
    tasks: list[TaskRecord] = field(default_factory=list)

    @property
    def engine_target(self) -> str:
        """The tasks env's train_target: whose learned block trains."""
        return MEMORY if self.key == MEMORY else "skill"

    @property
    def slug(self) -> str:
        """A folder name for the target's run and live copy (`skills/<name>`)."""
        return "skills/" + re.sub(r"[^\w.-]", "_", self.key.removeprefix(SKILL_PREFIX))

    def counts(self) -> dict[str, int]:
        return {s: sum(t.split == s for t in self.tasks) for s in ("train", "val", "test")}


# The project folders where the agents look for skills (`<folder>/skills/<name>/SKILL.md`): Claude Code, Codex,
# the shared `.agents`, OpenCode, GitHub Copilot (VS Code and CLI), Cursor and Gemini CLI.
PROJECT_SKILL_DIRS = (".claude", ".codex", ".agents", ".opencode", ".github", ".cursor", ".gemini")


def _theirs(path: Path, claude_home: Path) -> bool:
    """A plugin's, an extension's or a built-in skill: installed by someone else, overwritten on update."""
    parts = path.parts
    return ".system" in parts or "node_modules" in parts or _inside(path, claude_home / "plugins") or any(
        a in (".claude", ".codex", ".copilot") and b == "plugins" or a == ".gemini" and b == "extensions"
        for a, b in zip(parts, parts[1:], strict=False))


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def skill_file(name: str, meta: dict[str, Any], project: Path, claude_home: Path, codex_home: Path) -> Path | None:
    """The live SKILL.md of a skill a task used: the path the session showed (any agent's home folder), else the
    project's skill folders of every agent, then Claude Code's and Codex's home. None for a skill that is not the
    user's or not found."""
    raw = meta.get("skill_files")
    seen: dict[str, Any] = raw if isinstance(raw, dict) else {}
    cwd = Path(str(meta.get("project") or project))
    found: list[Path] = []
    if isinstance(seen.get(name), str) and seen[name]:
        p = Path(seen[name]).expanduser()
        found.append(p if p.is_absolute() else cwd / p)
    if ":" not in name:  # `plugin:name` is a plugin's skill
        for base in (*(project / d for d in PROJECT_SKILL_DIRS), claude_home, codex_home):
            found.append(base / "skills" / name / "SKILL.md")
    for p in found:
        p = p.resolve()
        if p.is_file() and not _theirs(p, claude_home.resolve()):
            return p
    return None


def plan_targets(tasks: Sequence[TaskRecord], *, project: Path, default_skill: Path, memory: Path | None,
                 claude_home: Path, codex_home: Path) -> list[Target]:
    """The night's targets in training order: the user's skills, the night's skill, then the memory file
    (consolidated last, under the improved skills)."""
    users: dict[Path, Target] = {}
    default = Target(DEFAULT, default_skill)
    for t in tasks:
        used = t.meta.get("skills")
        names: list[Any] = used if isinstance(used, list) else []
        paths = {p for n in names if isinstance(n, str)
                 for p in [skill_file(n, t.meta, project, claude_home, codex_home)] if p is not None}
        if not paths or default_skill in paths:
            default.tasks.append(t)
        for p in sorted(paths - {default_skill}):
            name = next(n for n in names if skill_file(n, t.meta, project, claude_home, codex_home) == p)
            users.setdefault(p, Target(SKILL_PREFIX + name, p)).tasks.append(t)
    for u in users.values():  # the skill author's own test cases (evals/evals.json) train it too
        seen = {t.task_id for t in u.tasks}
        u.tasks += [t for t in eval_tasks(u.live) if t.task_id not in seen]
    names = [u.key for u in users.values()]
    for u in users.values():  # one name in two agents' folders (`.github/skills/x`, `.opencode/skills/x`): two files
        if names.count(u.key) > 1:
            u.key = f"{u.key}@{u.live.parent.parent.parent.name}"
    out = sorted(users.values(), key=lambda x: x.key)
    out.append(default)
    if memory is not None:
        out.append(Target(MEMORY, memory, list(tasks)))
    return out
