"""A bounded copy of the user's project, for replaying tasks through a real agent CLI (`--student codex`,
`claude_code`) in something that looks like the project without touching it.

The night copies the project once into its folder (`workspace/`); every replay then starts from a fresh copy
of that snapshot in a temporary directory outside the project (so the agent never walks up into the live
project and reads the live CLAUDE.md / AGENTS.md), with the memory file and skill under training replaced
by the candidate's text. Links inside the project are copied as links (AGENTS.md -> CLAUDE.md: the agent reads
what it reads in the project); links that leave it are left out. Left out too: version-control internals,
dependency and build folders, skillgrad's own folder, large and binary-looking files, and anything past the size
and file-count caps. Project
settings that can run commands (`.claude/settings*.json`: hooks) are left out too: a replay must not post
to the user's chat or deploy anything.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".skillgrad", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".tox", ".next", ".nuxt", ".turbo", ".cache", "dist", "build", "target",
    ".gradle", ".idea", "coverage", ".terraform"})
SKIP_FILES = frozenset({".claude/settings.json", ".claude/settings.local.json"})
MAX_FILE_BYTES = 512 * 1024
MAX_TOTAL_BYTES = 32 * 1024 * 1024
MAX_FILES = 5000


@dataclass
class CopyReport:
    files: int = 0
    bytes: int = 0
    links: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # why -> how many

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def to_json(self) -> dict[str, object]:
        return {"files": self.files, "bytes": self.bytes, "links": self.links,
                "skipped": dict(sorted(self.skipped.items()))}


def _binary(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return b"\0" in f.read(4096)
    except OSError:
        return True


def copy_project(src: Path, dest: Path, *, max_file_bytes: int = MAX_FILE_BYTES,
                 max_total_bytes: int = MAX_TOTAL_BYTES, max_files: int = MAX_FILES) -> CopyReport:
    """Copy the text files of `src` into `dest` (created), within the caps; never follows a link."""
    report = CopyReport()
    dest.mkdir(parents=True, exist_ok=True)
    for root, dirs, files in os.walk(src, followlinks=False):
        here = Path(root)
        kept = []
        for d in sorted(dirs):
            if d in SKIP_DIRS:
                report.skip(f"folder {d}")
            elif (here / d).is_symlink():
                _link(here / d, src, dest, report)
            else:
                kept.append(d)
        dirs[:] = kept
        for name in sorted(files):
            path = here / name
            rel = path.relative_to(src)
            if rel.as_posix() in SKIP_FILES:
                report.skip("settings that can run commands")
                continue
            if path.is_symlink():
                _link(path, src, dest, report)
                continue
            if not path.is_file():
                report.skip("special file")
                continue
            size = path.stat().st_size
            if size > max_file_bytes:
                report.skip(f"over {max_file_bytes // 1024} KB")
                continue
            if report.files >= max_files or report.bytes + size > max_total_bytes:
                report.skip("over the copy's size cap")
                continue
            if _binary(path):
                report.skip("binary")
                continue
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            report.files += 1
            report.bytes += size
    return report


def _link(path: Path, src: Path, dest: Path, report: CopyReport) -> None:
    """A link whose target lies inside the project, made again in the copy as a relative link; others skipped."""
    try:
        target = path.resolve(strict=True)
        target.relative_to(src.resolve())
    except (OSError, ValueError, RuntimeError):
        report.skip("link out of the project")
        return
    rel = path.relative_to(src)
    if target.is_dir() and any(part in SKIP_DIRS for part in target.relative_to(src.resolve()).parts):
        report.skip(f"folder {target.name}")
        return
    link = dest / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(dest / target.relative_to(src.resolve()), link.parent), link)
    report.links += 1


def project_relative(path: Path, project: Path) -> str | None:
    """`path` as a POSIX path inside `project`, or None when it lies outside."""
    try:
        return path.resolve().relative_to(project.resolve()).as_posix()
    except ValueError:
        return None
