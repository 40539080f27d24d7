"""Which digests are the user's own work: not skillgrad's replays, not empty or instant sessions, in the project."""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

from skillgrad.sleep.harvest.build import parse_time
from skillgrad.sleep.harvest.digest import SessionDigest
from skillgrad.sleep.harvest.settings import HarvestSettings


def is_replay(d: SessionDigest, settings: HarvestSettings) -> bool:
    """Started by skillgrad: a replay marker in a prompt, or a workspace under a `.skillgrad` folder."""
    if any(m and m in t.prompt for t in d.turns for m in settings.replay_markers):
        return True
    return ".skillgrad" in _parts(d.project)


def skip_reason(d: SessionDigest, settings: HarvestSettings, project: Path | None) -> str | None:
    """Why `d` is not harvested (a short reason for the report), or None when it is."""
    if is_replay(d, settings):
        return "replay"
    if not d.turns:
        return "no_prompt"
    start, end = parse_time(d.started_at), parse_time(d.ended_at)
    if start and end and (end - start).total_seconds() < settings.min_session_seconds:
        return "too_short"
    if project is not None and not under_project(d.project, project):
        return "other_project"
    return None


def _parts(path: str) -> tuple[str, ...]:
    if not path:
        return ()
    pure = PureWindowsPath(path) if (":" in path[:3] or "\\" in path) else PurePosixPath(path)
    return pure.parts


def under_project(cwd: str, project: Path) -> bool:
    """True when the session's working directory is the project or inside it (symlinks resolved), or inside a git
    worktree of the project's repository: a `.git` file pointing into `<project>/.git/worktrees/`, or, for a
    worktree since removed, a sibling folder named `<project>-worktrees` / `<project>.worktrees` (git-worktree
    runners' layout)."""
    if not cwd:
        return False
    try:
        root = project.expanduser().resolve()
        here = Path(cwd).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return False
    if here == root or here.is_relative_to(root):
        return True
    main = _worktree_main(here)
    if main is not None:
        return main == root or main.is_relative_to(root)
    return any(here.is_relative_to(root.parent / f"{root.name}{sep}worktrees") for sep in ("-", ".", "_"))


def _worktree_main(here: Path) -> Path | None:
    """The main checkout of the git worktree holding `here`, from its `.git` file; None when it is not one."""
    for d in (here, *here.parents):
        dot = d / ".git"
        try:
            if dot.is_dir():
                return None
            if dot.is_file():
                line = dot.read_text(encoding="utf-8", errors="replace").strip()
                gitdir = Path(line.removeprefix("gitdir:").strip())
                gitdir = (d / gitdir).resolve() if not gitdir.is_absolute() else gitdir.resolve()
                parts = gitdir.parts
                if ".git" in parts and "worktrees" in parts:
                    return Path(*parts[:parts.index(".git")])
                return None
        except OSError:
            return None
    return None
