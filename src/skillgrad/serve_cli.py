"""`skillgrad serve-model`: the embedded model (or any GGUF) as an OpenAI-compatible server on loopback.

It runs `python -m llama_cpp.server` in place of this process (so Ctrl-C and exit codes are the server's), after
checking what would otherwise fail later and less clearly: the model file, the port, and the server's own
packages (the `server` extra). A config then points a role at it: `provider: openai`, `model: <alias>`,
`base_url: http://127.0.0.1:<port>/v1`; its calls are priced as a local model's (free).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from skillgrad.errors import UsageError

DEFAULT_ALIAS = "smollm2"


def _server_missing() -> str | None:
    """The module llama_cpp.server needs that does not import (its `server` extra), or None."""
    try:
        import llama_cpp.server.app  # noqa: F401 - imports fastapi, uvicorn, sse_starlette, starlette_context
    except ImportError as e:
        return e.name or str(e)
    return None


def serve_command(model: str, alias: str, port: int, threads: int, n_ctx: int) -> list[str]:
    """The llama_cpp.server command line, bound to 127.0.0.1 (a model server has no authentication)."""
    return [sys.executable, "-m", "llama_cpp.server", "--model", model, "--model_alias", alias,
            "--host", "127.0.0.1", "--port", str(port), "--n_threads", str(threads), "--n_ctx", str(n_ctx)]


def serve_model(
    model: Annotated[str, typer.Option("--model", help="A .gguf file ('' = the bundled SmolLM2-135M).")] = "",
    alias: Annotated[str, typer.Option("--alias", help="The model name clients send (model.<role>.model).")]
    = DEFAULT_ALIAS,
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1.")] = 8080,
    threads: Annotated[int, typer.Option("--threads", help="CPU threads for generation.")] = 2,
    n_ctx: Annotated[int, typer.Option("--n-ctx", help="Context window in tokens.")] = 4096,
) -> None:
    """Serve the embedded model (or a GGUF) at http://127.0.0.1:PORT/v1, OpenAI-compatible, until Ctrl-C.

    A role then uses it with provider openai, model smollm2 (the --alias) and base_url
    http://127.0.0.1:8080/v1 (docs/guide/providers.md).

    Example: skillgrad serve-model --port 8080
    """
    from skillgrad.models.providers.local import resolve_gguf
    from skillgrad.ui.cli import check_port

    if threads < 1 or n_ctx < 256:
        raise UsageError("--threads must be at least 1 and --n-ctx at least 256")
    if not alias.strip():
        raise UsageError("--alias is empty; give the model name clients will send, e.g. --alias smollm2")
    try:
        gguf = resolve_gguf(model or "smollm2", "serve")
    except Exception as e:  # noqa: BLE001 - resolve_gguf names the field; here it is the option
        raise UsageError(f"--model: {str(e).split(': ', 1)[-1]}") from None
    if port == 0:
        raise UsageError("--port 0: give a fixed port, since your config names it in base_url (e.g. --port 8080)")
    check_port("127.0.0.1", port)
    missing = _server_missing()
    if missing is not None:
        raise UsageError(f"serving needs llama-cpp-python's server packages ({missing} is missing): "
                         "pip install 'skillgrad[server]'")
    import signal

    for sig in (signal.SIGINT, signal.SIGTERM):  # from here on the server's: not the CLI's "the run is saved"
        signal.signal(sig, signal.SIG_DFL)
    typer.echo(f"skillgrad serve-model: {Path(gguf).name} as model {alias!r} at http://127.0.0.1:{port}/v1 "
               f"(Ctrl-C stops it)\n  use it: model.student: {{provider: openai, model: {alias}, "
               f"base_url: http://127.0.0.1:{port}/v1}}", err=True)
    sys.stderr.flush()
    sys.stdout.flush()
    cmd = serve_command(str(gguf), alias, port, threads, n_ctx)
    os.execv(cmd[0], cmd)
