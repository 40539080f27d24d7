"""`skillgrad ui` (the dashboard) and `skillgrad export mlflow` (registered in skillgrad/cli.py).

Web and MLflow imports happen inside the commands, so the CLI starts without the optional extras.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skillgrad.errors import UsageError

export_app = typer.Typer(no_args_is_help=True, help="Export a run to an experiment tracker.\n\n"
                         "Example: skillgrad export mlflow runs/demo-seed1 --tracking-uri file:./mlruns")


# What the dashboard imports, as (import names, pip name): checked before serving, because starlette imports
# python-multipart only when the first form arrives, and then every POST answered a bare 500.
UI_PACKAGES = ((("uvicorn",), "uvicorn"), (("starlette",), "starlette"), (("sse_starlette",), "sse-starlette"),
               (("jinja2",), "jinja2"), (("python_multipart", "multipart"), "python-multipart"))


def missing_ui_package() -> str | None:
    """The pip name of the first package the dashboard needs that does not import, or None."""
    import importlib

    for modules, dist in UI_PACKAGES:
        for module in modules:
            try:
                importlib.import_module(module)
                break
            except ImportError:
                continue
        else:
            return dist
    return None


def check_port(host: str, port: int) -> None:
    """A port number in range and free on `host`, or one line saying what to pass instead."""
    import socket

    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: not a port number; use 1-65535, or 0 for any free port")
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT is no conflict
        try:
            s.bind((host, port))
        except OSError as e:
            raise UsageError(f"--port {port}: cannot listen on {host}:{port} ({e.strerror}); the dashboard may "
                             "already be running there; pass another --port, or 0 for any free port") from None


def ui(
    root: Annotated[Path, typer.Option("--root", help="Folder holding run directories.")] = Path("runs"),
    project: Annotated[Path | None, typer.Option("--project", help="Project whose Sleep proposals to show.")] = None,
    host: Annotated[str, typer.Option("--host", help="Bind address; beyond loopback a token is required.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0 = any free port).")] = 8765,
    token: Annotated[str | None, typer.Option("--token", help="Require this token on every request "
                                                              "(generated when binding beyond loopback).")] = None,
) -> None:
    """Web dashboard: watch, inspect, compare and launch runs; adopt Sleep proposals.

    Example: skillgrad ui --root runs --project .
    """
    missing = missing_ui_package()
    if missing is not None:
        raise UsageError(f"the dashboard needs {missing}, which is not installed: pip install 'skillgrad[ui]' "
                         f"(or pip install {missing})")
    import uvicorn

    from skillgrad.ui.app import create_app
    from skillgrad.ui.safety import is_loopback, new_token

    if not root.is_dir():
        raise UsageError(f"--root {root}: no such folder; pass the folder holding your run directories")
    check_port(host, port)
    if project is not None and not project.is_dir():
        raise UsageError(f"--project {project}: no such folder")
    loopback = is_loopback(host)
    if not loopback and not token:
        token = new_token()
    app = create_app(root, project=project, token=token, loopback=loopback)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)

    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host  # noqa: S104 - printing, not binding

    def announce() -> None:
        bound = server.servers[0].sockets[0].getsockname()[1] if server.servers else port
        suffix = f"/?token={token}" if token else "/"
        typer.echo(f"skillgrad ui: http://{shown}:{bound}{suffix}  (root {root.resolve()})", err=True)
        if not loopback:
            typer.echo("bound beyond loopback: every request must carry the token above", err=True)

    original = server.startup

    async def startup(sockets: list | None = None) -> None:  # type: ignore[type-arg]
        await original(sockets=sockets)
        announce()

    server.startup = startup  # type: ignore[method-assign]
    server.run()


@export_app.command("mlflow")
def export_mlflow(
    run_dir: Annotated[Path, typer.Argument(help="Run directory.")],
    tracking_uri: Annotated[str, typer.Option("--tracking-uri", help="MLflow tracking URI (file:, http:, ...).")],
    experiment: Annotated[str, typer.Option("--experiment", help="Experiment name.")] = "skillgrad",
) -> None:
    """Log a run to MLflow: config as params, per-step scores and usage as metrics, skills and report as artifacts.

    Example: skillgrad export mlflow runs/demo-seed1 --tracking-uri file:./mlruns
    """
    from skillgrad.ui.mlflow_export import export_run

    run_id = export_run(run_dir, tracking_uri, experiment)
    typer.echo(f"exported {run_dir} to {tracking_uri} (experiment {experiment}, run {run_id})")
