"""The MCP server's protocol revisions: the ones it states are the installed SDK's, and a client of the newest
revision (`server/discover` at the SDK's latest) and a client of the initialize handshake both connect over stdio
and list the tools. No model is called."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

mcp = pytest.importorskip("mcp")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp_types.version import (  # noqa: E402
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_MODERN_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)

from skillgrad.integrations.mcp_server import PROTOCOL_REVISIONS  # noqa: E402


def test_stated_revisions_are_the_sdks() -> None:
    assert PROTOCOL_REVISIONS == (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
    from skillgrad.integrations.cli import mcp as mcp_command

    assert all(v in (mcp_command.__doc__ or "") for v in PROTOCOL_REVISIONS)


@pytest.mark.parametrize("era", ["discover", "initialize"])
def test_a_client_of_each_era_connects(tmp_path: Path, era: str) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "skillgrad.cli", "mcp", "--project",
                                                                 str(tmp_path)], cwd=str(tmp_path), env=dict(os.environ))

    async def main() -> tuple[str | None, set[str]]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            if era == "discover":
                await session.discover()
            else:
                await session.initialize()
            tools = await session.list_tools()
            return session.protocol_version, {t.name for t in tools.tools}

    version, tools = anyio.run(main)
    assert version == (LATEST_MODERN_VERSION if era == "discover" else LATEST_HANDSHAKE_VERSION)
    assert {"train", "eval", "sleep_status", "runs_list"} <= tools


def test_train_tool_takes_a_skill_folder(tmp_path: Path) -> None:
    """`train(skill=...)` runs `skillgrad train --skill`: a folder whose frontmatter breaks the specification is
    refused with the CLI's lines (no model is called), and a call with neither config nor skill is an error."""
    folder = tmp_path / "my-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: My_Skill\ndescription: d\n---\nbody\n", encoding="utf-8")
    params = StdioServerParameters(command=sys.executable, args=["-m", "skillgrad.cli", "mcp", "--project",
                                                                 str(tmp_path)], cwd=str(tmp_path), env=dict(os.environ))

    async def main() -> tuple[str, str]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            bad = await session.call_tool("train", {"skill": "my-skill"})
            none = await session.call_tool("train", {})
            assert bad.is_error and none.is_error
            return bad.content[0].text, none.content[0].text  # type: ignore[union-attr]

    bad, none = anyio.run(main)
    assert "exited with 2" in bad and "My_Skill" in bad
    assert "give config" in none
