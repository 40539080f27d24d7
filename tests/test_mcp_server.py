"""`skillgrad mcp` driven by the MCP SDK's own client over stdio, as Claude Desktop or Cursor would: the tools
are listed, a night on fixture sessions with the embedded model reports progress and is cancelled mid-way
(SIGINT: the night stays resumable), a dry-run continues that same night to its end, status and run files are
read, and paths outside the project are refused."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import require
from test_sleep_night import HAND_SKILL, _setup

require(importlib.util.find_spec("mcp") is not None, "the MCP SDK (pip install 'skillgrad[mcp]')")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

TOOLS = {"sleep_status", "sleep_dry_run", "sleep_run", "sleep_adopt", "sleep_undo", "sleep_harvest", "train",
         "eval", "runs_list", "run_summary"}


def _project(tmp_path: Path, gguf: Path) -> tuple[Path, Path]:
    project, home, outside = _setup(tmp_path, gguf)
    settings = json.loads(outside.read_text(encoding="utf-8"))
    settings.update(claude_home=str(home), codex_home=str(tmp_path / "no-codex"), source="claude_code",
                    lookback_hours=1_000_000, max_tasks=6, batch_size=3)
    config = project / "sleep.yaml"  # inside the project: the server refuses paths outside it
    config.write_text(json.dumps(settings), encoding="utf-8")
    return project, config


def _night_commands(project: Path) -> list[str]:
    """`skillgrad sleep run|dry-run` processes working on `project` (from /proc)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "sleep" in args and str(project) in args and ("run" in args or "dry-run" in args):
            found.append(cmdline.parent.name)
    return found


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    return result.structured_content.get("result", result.structured_content)


@pytest.mark.slow
def test_mcp_server_over_stdio(tmp_path: Path, gguf_path: Path) -> None:
    project, config = _project(tmp_path, gguf_path)
    nights = project / ".skillgrad" / "sleep" / "nights"
    params = StdioServerParameters(command=sys.executable, args=["-m", "skillgrad.cli", "mcp", "--project",
                                                                 str(project)], cwd=str(tmp_path))

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            assert {t.name for t in listed.tools} == TOOLS
            adopt = next(t for t in listed.tools if t.name == "sleep_adopt")
            assert adopt.annotations.destructive_hint and "explicit" in (adopt.description or "")

            status = _data(await session.call_tool("sleep_status", {}))
            assert status["proposals"] == [] and not status["last_night"]

            # Out-of-project paths are refused before anything runs.
            refused = await session.call_tool("sleep_dry_run", {"config": str(tmp_path / "sleep.yaml")})
            assert refused.is_error and "outside the project" in refused.content[0].text

            # A night cancelled once training has begun: the command is interrupted, the night stays open.
            progress: list[tuple[float, str]] = []

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                progress.append((p, message or ""))

            with anyio.move_on_after(240) as scope:
                async with anyio.create_task_group() as tg:
                    async def night() -> None:
                        await session.call_tool("sleep_run", {"config": "sleep.yaml"}, progress_callback=on_progress)
                    tg.start_soon(night)
                    while not any(m.startswith("run_start") for _, m in progress):
                        await anyio.sleep(0.2)
                    tg.cancel_scope.cancel()
            assert not scope.cancelled_caught, f"no training began: {progress[-5:]}"
            assert any(m.startswith("sleep_night") for _, m in progress)
            assert [p for p, _ in progress] == sorted(p for p, _ in progress)
            for _ in range(150):  # SIGINT: the command saves its state and exits
                if not _night_commands(project):
                    break
                await anyio.sleep(0.2)
            assert not _night_commands(project), "the cancelled night is still running"
            (night_dir,) = list(nights.iterdir())
            state = json.loads((night_dir / "night.json").read_text(encoding="utf-8"))
            assert state["status"] == "training", state  # unfinished: the next call continues it

            # The dry-run continues the same night to its end; nothing is staged, nothing live changes.
            progress.clear()
            result = _data(await session.call_tool("sleep_dry_run", {"config": "sleep.yaml"},
                                                   progress_callback=on_progress))
            assert result["night_dir"] == str(night_dir) and result["dry_run"]
            assert result["status"] in ("dry_run", "no_improvement"), result
            assert any("phase=end" in m for _, m in progress)
            assert not [p for p in (project / ".skillgrad" / "sleep").iterdir() if p.name[:1].isdigit()]
            assert (project / ".claude" / "skills" / "status" / "SKILL.md").read_bytes() == HAND_SKILL

            status = _data(await session.call_tool("sleep_status", {}))
            assert status["last_night"]["status"] == result["status"] and status["proposals"] == []
            summary = _data(await session.call_tool("run_summary", {"run_dir": str(night_dir)}))
            assert summary["info"]["steps_done"] >= 1
            assert len(json.dumps(summary)) < 4096 and "full=true" in summary["full"]  # compact by default
            whole = _data(await session.call_tool("run_summary", {"run_dir": str(night_dir), "full": True}))
            assert whole["info"] == summary["info"] and "runtime_state" in whole
            runs = _data(await session.call_tool("runs_list", {"root": str(nights)}))
            assert [r["name"] for r in runs] == [night_dir.name]
            undo = await session.call_tool("sleep_undo", {})
            assert undo.is_error and "no adoption to undo" in undo.content[0].text

    anyio.run(main)


def test_handoff_training_through_mcp_is_answered_by_the_client(tmp_path: Path) -> None:
    """The client's own agent is the model: `train` returns status answers_needed with the prompt files, the
    client writes the answers and calls `train` again until the run completes."""
    from handoff_answerer import answer_all
    from test_handoff import _config

    project = tmp_path / "proj"
    project.mkdir()
    config = _config(project)
    params = StdioServerParameters(command=sys.executable, args=["-m", "skillgrad.cli", "mcp", "--project",
                                                                 str(project)], cwd=str(tmp_path))

    async def main() -> list[int]:
        rounds: list[int] = []
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(10):
                res = _data(await session.call_tool("train", {"config": config.name, "out": "runs/h"}))
                if res.get("ok"):
                    assert res["summary"]["status"] == "completed" and res["summary"]["test_hard"] == 1.0
                    return rounds
                assert res["status"] == "answers_needed" and res["pending"], res
                assert all(Path(p["answer_file"]).parent.parent == project / "runs" / "h" / "handoff"
                           for p in res["pending"])
                rounds.append(answer_all(Path(res["prompts_md"]).parent))
        raise AssertionError(f"no finish: {rounds}")

    rounds = anyio.run(main)
    assert rounds[:3] == [6, 3, 4] and len(rounds) <= 8  # student probe, held-out, train batch
