"""`skillgrad integrations codex install|uninstall` and `skillgrad mcp`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

integrations_app = typer.Typer(no_args_is_help=True, help=(
    "Use skillgrad from inside your coding agent.\n\nExample: skillgrad integrations codex install"))
codex_app = typer.Typer(no_args_is_help=True, help="The skillgrad-sleep skill for Codex (~/.agents/skills/).")
integrations_app.add_typer(codex_app, name="codex")
out = Console(soft_wrap=True)


@codex_app.command("install")
def codex_install() -> None:
    """Put the skillgrad-sleep skill in ~/.agents/skills/skillgrad-sleep/ (home from $HOME).

    Example: skillgrad integrations codex install
    """
    from skillgrad.integrations.codex import install

    out.print(f"installed {install() / 'SKILL.md'}; start a new Codex session to use it", markup=False)


@codex_app.command("uninstall")
def codex_uninstall() -> None:
    """Remove the skill that `install` put there (a skill you wrote yourself is never removed).

    Example: skillgrad integrations codex uninstall
    """
    from skillgrad.integrations.codex import skill_dir, uninstall

    removed = uninstall()
    out.print(f"removed {removed}" if removed else f"nothing to remove: {skill_dir()} does not exist", markup=False)


def mcp(project: Annotated[Path, typer.Option("--project", "-p", help="The project the tools work on "
                                                                     "(paths outside it are refused).")] = Path(".")
        ) -> None:
    """Serve skillgrad's tools over MCP on stdio (sleep, train, eval, runs) for Claude Desktop, Cursor, Copilot...

    MCP revisions: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 (initialize) and 2026-07-28 (server/discover).

    Example: skillgrad mcp --project .
    """
    from skillgrad.integrations.mcp_server import serve

    serve(project.expanduser().resolve())
