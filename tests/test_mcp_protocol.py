"""The MCP server's protocol revisions: the ones it states are the installed SDK's, and a client of the newest
revision (`server/discover` at the SDK's latest) and a client of the initialize handshake both connect over stdio
and list the tools. No model is called."""

from __future__ import annotations

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
                                                                 str(tmp_path)], cwd=str(tmp_path))

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
