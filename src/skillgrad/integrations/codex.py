"""Install or remove the Codex skill: `~/.agents/skills/skillgrad-sleep/SKILL.md` (home from $HOME).

A marker file records that skillgrad put the folder there, so `uninstall` never deletes a skill the user
wrote themselves and `install` does not overwrite one.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from skillgrad.core.atomic import write_text
from skillgrad.errors import UsageError

SKILL_NAME = "skillgrad-sleep"
MARKER = ".installed-by-skillgrad"


def skill_dir(home: Path | None = None) -> Path:
    return (home or Path.home()) / ".agents" / "skills" / SKILL_NAME


def skill_text() -> str:
    return resources.files("skillgrad.integrations").joinpath("skills", SKILL_NAME, "SKILL.md").read_text("utf-8")


def install(home: Path | None = None) -> Path:
    target = skill_dir(home)
    if target.exists() and not (target / MARKER).exists():
        raise UsageError(f"{target} exists and was not installed by skillgrad; move it away, then rerun "
                         "`skillgrad integrations codex install`")
    write_text(target / "SKILL.md", skill_text())
    write_text(target / MARKER, "This folder is managed by `skillgrad integrations codex install|uninstall`.\n")
    return target


def uninstall(home: Path | None = None) -> Path | None:
    """Remove the installed skill; None when it was not installed."""
    target = skill_dir(home)
    if not target.exists():
        return None
    if not (target / MARKER).exists():
        raise UsageError(f"{target} was not installed by skillgrad; remove it yourself if you mean to")
    for name in ("SKILL.md", MARKER):
        (target / name).unlink(missing_ok=True)
    try:
        target.rmdir()
    except OSError as e:  # the user added files of their own: keep them
        raise UsageError(f"removed skillgrad's files but kept {target}: it holds other files") from e
    return target
