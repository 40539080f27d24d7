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


handoff_app = typer.Typer(no_args_is_help=True, help=(
    "Your coding agent as a model: prompts on a board that it answers.\n\n"
    "Example: skillgrad handoff serve --board runs/agent-board --port 8765"))


@handoff_app.command("serve")
def handoff_serve(
    board: Annotated[Path, typer.Option("--board", help="The handoff folder: PROMPTS.md, pending.json and "
                                                        "answers/<id>.md live here (created if missing).")],
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0 = a free one).")] = 8765,
    model: Annotated[str, typer.Option("--model", help="The model name /v1/models lists.")] = "agent",
    wait: Annotated[float, typer.Option("--wait", min=1.0, help="Seconds a request waits for its answer before "
                                                               "HTTP 503 (answer pending; send it again).")] = 570.0,
) -> None:
    """Serve the handoff board as an OpenAI-compatible endpoint (/v1/chat/completions, /v1/models) on 127.0.0.1.

    Any OpenAI client (a skillgrad role with provider openai and base_url, SkillOpt, GEPA, DSPy) then uses your
    coding agent as its model: each request is a prompt in BOARD/PROMPTS.md, answered by writing
    BOARD/answers/<id>.md. Answers are cached by request.

    Example: skillgrad handoff serve --board runs/agent-board --port 8765
    """
    from skillgrad.integrations.handoff_server import make_server

    server = make_server(board.expanduser(), port=port, model=model, wait_s=wait)
    host, bound = str(server.server_address[0]), int(server.server_address[1])
    out.print(f"serving {board} on http://{host}:{bound}/v1 (model {model!r}); pending prompts: "
              f"{board / 'PROMPTS.md'}; Ctrl-C stops", markup=False)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
