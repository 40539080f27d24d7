"""`skillgrad configs list|show`: the configs shipped inside the package (`-c skillgrad:NAME` runs one)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

configs_app = typer.Typer(no_args_is_help=True, help="List or print the packaged configs (use one with "
                          "-c skillgrad:NAME).\n\nExample: skillgrad configs list")
out = Console(soft_wrap=True)


def _about(text: str) -> str:
    """The file's opening comment, first sentence: what the config is for."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("# ").strip())
    about = " ".join(lines)
    return about.split(". ")[0].rstrip(".") if about else ""


@configs_app.command("list")
def configs_list() -> None:
    """Show each packaged config, the environment it trains on, and what it is for.

    Example: skillgrad configs list
    """
    import yaml

    from skillgrad.config.loader import packaged_configs, resolve_packaged

    t = Table(show_header=True)
    for col in ("config", "env", "about"):
        t.add_column(col, no_wrap=col == "config")
    for name in packaged_configs():
        text = resolve_packaged(name).read_text(encoding="utf-8")
        env = ((yaml.safe_load(text) or {}).get("env") or {}).get("name", "")
        t.add_row(Text(name), Text(str(env) or ("(base layer)" if "/_base_" in "/" + name.split(":")[1] else "")),
                  Text(_about(text)))
    out.print(t)
    out.print("Run one: skillgrad train -c skillgrad:demo.yaml   Copy one: skillgrad configs show skillgrad:demo.yaml "
              "> my.yaml", markup=False, highlight=False)


@configs_app.command("show")
def configs_show(name: Annotated[str, typer.Argument(help="A packaged config, e.g. skillgrad:demo.yaml.")]) -> None:
    """Print a packaged config's YAML (to read it, or to start your own from it).

    Example: skillgrad configs show skillgrad:demo.yaml
    """
    from skillgrad.config.loader import resolve_packaged

    out.print(resolve_packaged(name).read_text(encoding="utf-8"), markup=False, highlight=False, end="")
