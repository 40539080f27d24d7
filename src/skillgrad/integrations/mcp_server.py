"""`skillgrad mcp`: an MCP server on stdio for any MCP client (Claude Desktop, Claude Code, Cursor, Copilot).

Each tool is one `skillgrad` command run in the project the server was started for (run_summary and
runs_list read run folders directly). Long commands report progress from the run's own events.jsonl as MCP
progress notifications; a cancelled call interrupts the command as Ctrl-C would (SIGINT), so its state
stays and the same call later continues it. Only `sleep_adopt` adopts; every path must lie in the project.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process

from skillgrad.core.records import RunFiles
from skillgrad.errors import UsageError

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations
except ModuleNotFoundError as e:  # optional extra
    raise UsageError("`skillgrad mcp` needs the MCP SDK (mcp>=2); install it with `pip install 'skillgrad[mcp]'`") \
        from e

INSTRUCTIONS = (
    "skillgrad improves this project's SKILL.md and CLAUDE.md/AGENTS.md from past agent sessions (sleep) and "
    "trains skills on task files (train, eval). Start with sleep_status or sleep_dry_run. Never call "
    "sleep_adopt unless the user explicitly asked to adopt a proposal they reviewed. A result with status "
    "'answers_needed' (handoff mode) lists prompt files: write each reply to its answer_file and call the "
    "same tool again.")
# The MCP revisions this server speaks (the official SDK's, mcp 2.x): the initialize handshake revisions and the
# stateless revision a client reaches with `server/discover`. tests/test_mcp_protocol.py connects with the newest.
PROTOCOL_REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
STOP_GRACE_S = 20.0  # after SIGINT, how long a command may take to save its state before SIGTERM
KILL_GRACE_S = 10.0  # after SIGTERM, how long before SIGKILL
POLL_S = 0.5
_PROMPTS_AT = re.compile(r" in (.+PROMPTS\.md);")
PROGRESS_KEYS = ("phase", "stage", "step", "target", "status", "n_tasks", "accepted", "reason")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False)
LONG = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
LIVE_FILES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)


def describe(ev: dict[str, Any]) -> str:
    """One short progress line from an event."""
    parts = [str(ev.get("event", "?"))]
    parts += [f"{k}={ev[k]}" for k in PROGRESS_KEYS if k in ev and not isinstance(ev[k], (dict, list))]
    return " ".join(parts)[:200]


@dataclass
class EventTail:
    """New lines of every events.jsonl under a folder, from where each file stood when the call began."""

    root: Path
    offsets: dict[Path, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for f in self._files():
            self.offsets[f] = f.stat().st_size

    def _files(self) -> list[Path]:
        return sorted(self.root.rglob("events.jsonl")) if self.root.is_dir() else []

    def read(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for f in self._files():
            start = self.offsets.get(f, 0)
            with open(f, "rb") as fh:
                fh.seek(start)
                data = fh.read()
            end = data.rfind(b"\n") + 1  # complete lines only; a line being written waits for the next poll
            self.offsets[f] = start + end
            for line in data[:end].splitlines():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return out


@dataclass
class Shell:
    """Runs `skillgrad` commands for one project."""

    project: Path
    python: str = sys.executable

    def path(self, value: str, what: str, *, must_exist: bool = False) -> Path:
        p = Path(value).expanduser()
        p = (p if p.is_absolute() else self.project / p).resolve()
        if p != self.project and self.project not in p.parents:
            raise ToolError(f"{what}: {value} is outside the project {self.project}; this server only works on "
                            "the project's own files")
        if must_exist and not p.exists():
            raise ToolError(f"{what}: not found: {value}")
        return p

    async def run(self, args: list[str], ctx: Context | None, *, watch: Path | None = None) -> dict[str, Any]:
        """Run `skillgrad <args>` in the project; progress from events under `watch`; SIGINT on cancel."""
        tail = EventTail(watch) if watch is not None else None
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        proc = await anyio.open_process([self.python, "-m", "skillgrad.cli", *args], cwd=self.project, env=env,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        out, err = bytearray(), bytearray()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_drain, proc.stdout, out)
                tg.start_soon(_drain, proc.stderr, err)
                seen = 0
                while proc.returncode is None:
                    with anyio.move_on_after(POLL_S):
                        await proc.wait()
                    for ev in tail.read() if tail is not None else []:
                        seen += 1
                        if ctx is not None:
                            await ctx.report_progress(seen, None, describe(ev))
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await _interrupt(proc)
            raise
        return self.result(proc.returncode or 0, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))

    def result(self, code: int, stdout: str, stderr: str) -> dict[str, Any]:
        last = next((ln for ln in reversed(stderr.strip().splitlines()) if ln.strip()), "")
        if code == 3:
            return answers_needed(last)
        if code not in (0, 4):
            raise ToolError(f"skillgrad exited with {code}: {last or stdout.strip()[-300:]}")
        # exit 4, stopped by its budget: a result (the run or night continues with a raised budget), not an error
        stopped = {"ok": False, "stopped": "budget", "message": last} if code == 4 else {"ok": True}
        try:
            return {**stopped, "result": json.loads(stdout)}
        except json.JSONDecodeError:
            return {**stopped, "output": stdout.strip()[-4000:]}


async def _drain(stream: Any, buf: bytearray) -> None:
    if stream is None:
        return
    async for chunk in stream:
        buf.extend(chunk)


async def _interrupt(proc: Process, grace_s: float = STOP_GRACE_S, kill_grace_s: float = KILL_GRACE_S) -> None:
    """Ctrl-C for the command: it saves its state and exits. SIGTERM if it has not after `grace_s` (a command
    started with SIGINT ignored stops on it the same way), SIGKILL after `kill_grace_s` more."""
    if proc.returncode is not None:
        return
    for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGTERM, kill_grace_s)):
        proc.send_signal(sig)
        with anyio.move_on_after(wait_s):
            await proc.wait()
            return
    proc.kill()
    await proc.wait()


def _not_locked(run_dir: Path) -> None:
    """No second writer on a run another process writes (its run.lock names it)."""
    from skillgrad.runs.lock import RunLocked, refuse_if_locked

    try:
        refuse_if_locked(run_dir, "another writer from MCP")
    except RunLocked as e:
        raise ToolError(str(e)) from None


def answers_needed(message: str) -> dict[str, Any]:
    """Exit 3 (handoff): the prompts waiting for the client's agent, read from pending.json."""
    m = _PROMPTS_AT.search(message)
    prompts_md = Path(m.group(1)) if m else None
    pending: list[dict[str, Any]] = []
    if prompts_md is not None and (prompts_md.parent / "pending.json").is_file():
        data = json.loads((prompts_md.parent / "pending.json").read_text(encoding="utf-8"))
        pending = [{k: p.get(k) for k in ("id", "role", "stage", "structured", "prompt_file", "answer_file")}
                   for p in data.get("pending", [])]
    return {"ok": False, "status": "answers_needed", "message": message,
            "prompts_md": str(prompts_md) if prompts_md else None, "pending": pending,
            "next": "write each reply (only the reply) to its answer_file, then call the same tool again"}


def _opt(flag: str, value: Any) -> list[str]:
    return [] if value is None or value == "" else [flag, str(value)]


def build_server(project: Path) -> MCPServer:
    shell = Shell(project.expanduser().resolve())
    nights = shell.project / ".skillgrad" / "sleep" / "nights"
    server = MCPServer("skillgrad", instructions=INSTRUCTIONS)

    def night_args(config: str | None, tasks_file: str | None, student: str | None, teacher: str | None,
                   max_tasks: int | None, max_minutes: float | None, max_calls: int | None, fresh: bool) -> list[str]:
        args = ["--project", str(shell.project), "--json"]
        if config:
            args += ["--config", str(shell.path(config, "config", must_exist=True))]
        if tasks_file:
            args += ["--tasks-file", str(shell.path(tasks_file, "tasks_file", must_exist=True))]
        args += _opt("--student", student) + _opt("--teacher", teacher) + _opt("--max-tasks", max_tasks)
        args += _opt("--max-minutes", max_minutes) + _opt("--max-calls", max_calls)
        return args + (["--fresh"] if fresh else [])

    @server.tool(annotations=READ_ONLY)
    async def sleep_status(ctx: Context) -> dict[str, Any]:
        """Staged sleep proposals (newest first, with held-out scores) and the last night's outcome."""
        return await shell.run(["sleep", "status", "--project", str(shell.project), "--json"], ctx)

    @server.tool(annotations=LONG)
    async def sleep_dry_run(ctx: Context, config: str | None = None, tasks_file: str | None = None,
                            student: str | None = None, teacher: str | None = None, max_tasks: int | None = None,
                            max_minutes: float | None = None, max_calls: int | None = None,
                            fresh: bool = False) -> dict[str, Any]:
        """Run a night without staging anything: harvest, mine, replay, consolidate, gate. Returns what it would
        propose. student/teacher: provider[:model] (local, handoff, claude_code, codex, openai:MODEL)."""
        args = night_args(config, tasks_file, student, teacher, max_tasks, max_minutes, max_calls, fresh)
        _not_locked(nights.parent)
        return await shell.run(["sleep", "dry-run", *args], ctx, watch=nights)

    @server.tool(annotations=LONG)
    async def sleep_run(ctx: Context, config: str | None = None, tasks_file: str | None = None,
                        student: str | None = None, teacher: str | None = None, max_tasks: int | None = None,
                        max_minutes: float | None = None, max_calls: int | None = None,
                        fresh: bool = False) -> dict[str, Any]:
        """Run (or continue) a night and stage a proposal for review. Live files are not changed."""
        args = night_args(config, tasks_file, student, teacher, max_tasks, max_minutes, max_calls, fresh)
        _not_locked(nights.parent)  # the project's night lock
        return await shell.run(["sleep", "run", *args], ctx, watch=nights)

    @server.tool(annotations=LIVE_FILES)
    async def sleep_adopt(ctx: Context, stage: str | None = None, only: list[str] | None = None) -> dict[str, Any]:
        """Adopt a staged proposal into the live files (atomic, backed up, undoable). Only on the user's
        explicit request, after they reviewed it. stage: the stage folder (default: the newest staged);
        only: the files of the proposal to adopt (a path or a skill's name; default all)."""
        args = ["sleep", "adopt", "--project", str(shell.project), "--json",
                *(a for f in only or [] for a in ("--only", f))]
        if stage:
            args.insert(2, str(shell.path(stage, "stage", must_exist=True)))
        return await shell.run(args, ctx)

    @server.tool(annotations=LIVE_FILES)
    async def sleep_undo(ctx: Context) -> dict[str, Any]:
        """Restore the live files of the last adoption byte for byte."""
        return await shell.run(["sleep", "undo", "--project", str(shell.project), "--json"], ctx)

    @server.tool(annotations=LONG)
    async def sleep_harvest(ctx: Context, output: str = ".skillgrad/sleep/tasks.jsonl", config: str | None = None,
                            max_tasks: int | None = None) -> dict[str, Any]:
        """Harvest sessions and mine tasks into a JSONL file to review and edit; then sleep_run(tasks_file=...)."""
        args = ["sleep", "harvest", "--output", str(shell.path(output, "output")), "--project", str(shell.project),
                "--json", *_opt("--max-tasks", max_tasks)]
        if config:
            args += ["--config", str(shell.path(config, "config", must_exist=True))]
        return await shell.run(args, ctx)

    @server.tool(annotations=LONG)
    async def train(ctx: Context, config: str | None = None, out: str | None = None,
                    overrides: list[str] | None = None, fresh: bool = False, skill: str | None = None,
                    target: str = "body") -> dict[str, Any]:
        """Train a skill with a config (SkillOpt format accepted), or an Agent Skills folder on its own
        evals/evals.json with skill=<folder> (target: body, or description for trigger F1; config optional).
        Calling it again after a cancel continues the run. overrides: key=value strings (e.g.
        train.num_epochs=2). Returns the run's summary.json (and skill_folder.json for a folder)."""
        cfg = shell.path(config, "config", must_exist=True) if config else None
        folder = shell.path(skill, "skill", must_exist=True) if skill else None
        named = folder or cfg
        if named is None:
            raise ToolError("train: give config (a YAML config) or skill (a skill folder)")
        run_dir = shell.path(out or f"runs/mcp-{named.stem}", "out")
        _not_locked(run_dir)
        args = ["train", *(["-c", str(cfg)] if cfg else []), "--out", str(run_dir), "-q",
                *(["--fresh"] if fresh else []), *(["--skill", str(folder), "--target", target] if folder else [])]
        for o in overrides or []:
            args += ["-o", o]
        res = await shell.run(args, ctx, watch=run_dir)
        summary = RunFiles(run_dir).summary()
        return {**res, "run_dir": str(run_dir), "summary": summary.as_dict() if summary else None,
                "skill_folder": RunFiles(run_dir).json("skill_folder.json") if folder else None}

    @server.tool(name="eval", annotations=LONG)
    async def eval_skill(ctx: Context, config: str, skill: str, split: str = "test", out: str | None = None,
                   overrides: list[str] | None = None) -> dict[str, Any]:
        """Score a skill file on a split (train, val, test or all) with the config's student model."""
        cfg, sk = shell.path(config, "config", must_exist=True), shell.path(skill, "skill", must_exist=True)
        target = shell.path(out or f"runs/evals/mcp-{sk.stem}-{split}", "out")
        _not_locked(target)
        args = ["eval", "-c", str(cfg), "--skill", str(sk), "--split", split, "--out", str(target), "-q"]
        for o in overrides or []:
            args += ["-o", o]
        res = await shell.run(args, ctx, watch=target)
        return {**res, "out": str(target), "summary": RunFiles(target).json("eval_summary.json")}

    @server.tool(annotations=READ_ONLY)
    def runs_list(root: str = "runs") -> list[dict[str, Any]]:
        """Run folders under root: env, status, steps, best validation score, test delta."""
        from skillgrad.runs.listing import list_runs

        try:
            return [r.to_dict() for r in list_runs(shell.path(root, "root"))]
        except UsageError as e:
            raise ToolError(str(e)) from None

    @server.tool(annotations=READ_ONLY)
    def run_summary(run_dir: str, full: bool = False) -> dict[str, Any]:
        """A run's status, headline scores, last steps and file paths (a few hundred bytes); full=true adds the
        whole summary.json, runtime state and step records (can be large)."""
        from skillgrad.runs.listing import compact_run, show_run

        try:
            path = shell.path(run_dir, "run_dir", must_exist=True)
            return dict(json.loads(json.dumps(show_run(path) if full else compact_run(path), default=str)))
        except UsageError as e:
            raise ToolError(str(e)) from None

    return server


def serve(project: Path) -> None:
    if not project.is_dir():
        raise UsageError(f"--project {project}: not a directory")
    build_server(project).run("stdio")
