"""The documentation site builds cleanly, and every `skillgrad` command shown in it parses.

`mkdocs build --strict` fails on a page missing from the nav, a link to a missing page or anchor, and any
other warning. The command check parses each documented command line with the real CLI (options, values,
subcommands), so a renamed option or command breaks this test instead of a reader's first try.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from skillgrad.cli import _normalise_argv, app
from tests.conftest import require

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
PROGRAM = re.compile(r"^(?:[A-Z_]+=\S+\s+)*(?:\.venv/bin/)?skillgrad(?:\s|$)")


def test_mkdocs_build_strict(tmp_path):
    require(importlib.util.find_spec("mkdocs"), "mkdocs (pip install -e '.[dev]')")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for page in ("index", "quickstart", "configuration", "sleep", "guide/training"):
        assert (tmp_path / "site" / page / "index.html").is_file() or page == "index"
    assert "out_root" in (tmp_path / "site" / "configuration" / "index.html").read_text(encoding="utf-8")


def documented_commands(text: str) -> list[str]:
    """`skillgrad ...` lines of the bash blocks, comments cut, `\\` continuations joined."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = re.sub(r"\s+#\s.*$", "", line).strip()
            if PROGRAM.match(line):
                commands.append(line)
    return commands


def parse_with_cli(line: str) -> None:
    """Parse one command line with the real click command tree (no command runs)."""
    words = shlex.split(line)
    while "=" in words[0] and not words[0].startswith("-"):  # VAR=value prefixes
        words = words[1:]
    args = _normalise_argv(words[1:])
    command = typer.main.get_command(app)
    ctx = command.make_context("skillgrad", list(args))
    while hasattr(command, "resolve_command"):
        protected = getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", [])  # click 8.2 renamed it
        rest = [*protected, *ctx.args]
        assert rest, f"{line!r} names a group, not a command"
        name, command, rest = command.resolve_command(ctx, rest)
        ctx = command.make_context(name, rest, parent=ctx)


def test_documentation_shows_many_commands():
    found = {page.name: documented_commands(page.read_text(encoding="utf-8")) for page in PAGES}
    assert sum(len(v) for v in found.values()) >= 40
    assert found["README.md"] and found["quickstart.md"] and found["sleep.md"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_commands_parse(page):
    bad = []
    for line in documented_commands(page.read_text(encoding="utf-8")):
        try:
            parse_with_cli(line)
        except Exception as e:  # click's usage errors; collected so one run names them all
            bad.append(f"{line}\n    -> {type(e).__name__}: {getattr(e, 'message', e)}")
    assert not bad, f"{page.name}: documented commands the CLI rejects:\n" + "\n".join(bad)


def test_a_wrong_option_is_caught():
    with pytest.raises(Exception, match="no_such"):
        parse_with_cli("skillgrad train --config my.yaml --no_such 1")
    with pytest.raises(Exception, match="nosuchcommand"):
        parse_with_cli("skillgrad runs nosuchcommand x")


def test_readme_links_reach_existing_pages():
    """The README is not part of the site build, so its links to docs pages are checked here."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = [t.split("#", 1)[0] for t in re.findall(r"\]\(([^)]+)\)", text) if "://" not in t and not t.startswith("#")]
    assert len(links) >= 10
    missing = [t for t in links if not (ROOT / t).is_file()]
    assert not missing, f"README links to missing files: {missing}"
