"""Agent-harness students: Codex CLI (`codex exec`) and Claude Code (`claude -p`).

Contract with environments: the first system message of a request is the skill; the remaining
messages are the task. Each call gets a fresh temporary workspace holding the skill as SKILL.md
(with YAML front-matter) where that agent looks for skills, plus `task.md`; the agent runs there as a
subprocess under a wall-clock limit, with a minimal environment, and the workspace is removed after.

Failures split two ways. A missing binary, an auth failure or a non-zero exit is `ProviderFatal`: the
run stops with one clear line instead of scoring every task 0. A timeout is `ProviderError`
(retryable=False): that task fails, the run goes on.

Claude Code isolation: `--setting-sources ""` loads no user, project or local settings (so the
user's CLAUDE.md, hooks and plugins stay out of the "frozen" student) and `--strict-mcp-config` with no
`--mcp-config` loads no MCP servers. With no project settings the skill is not auto-discovered, so the
prompt tells the agent to read SKILL.md itself (codex gets the same instruction).

Project replay (`extra["project"] = {"root": DIR, "files": {relpath: text}}`, used by `skillgrad sleep`): the
workspace is a copy of DIR (a bounded snapshot of the user's project) with `files` written over it (the
memory file and skill under training, as the candidate has them), and the agent gets the user's request
itself as its prompt, as in the session being replayed. Claude Code then loads project settings sources
(`--setting-sources project`: the copy's CLAUDE.md and .claude/skills, never the user's own settings);
codex reads the copy's AGENTS.md as it does in any folder.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from skillgrad.config.schema import RoleConfig
from skillgrad.errors import ProviderError, ProviderFatal, UsageError
from skillgrad.models.base import Completion, Message, Request, Usage

SKILL_NAME = "skillgrad-target"
SKILL_DESCRIPTION = "Guidance for solving the task in task.md; read it fully before starting the task."
HARNESS_VERSION = "1"  # bump when the workspace layout or prompt changes (it is part of the cache key)
STDERR_TAIL = 4000

# Variables every agent may need (locale, temp dir, proxies, CA bundles); nothing else leaks through.
_BASE_ENV = (
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "SYSTEMROOT",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
    "http_proxy", "https_proxy", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
)
_AUTH_FAILURE = re.compile(
    r"not logged in|please run /login|run `?(codex|claude) login|invalid api key|invalid x-api-key|"
    r"unauthori[sz]ed|\b401\b|authentication[_ ](failed|error)|api key .{0,20}not (set|found)|"
    r"no api key|oauth token (has )?expired",
    re.I,
)
_DATA_URI = re.compile(r"^data:image/(?P<ext>[\w.+-]+);base64,(?P<data>.*)$", re.S)


def create(role_cfg: RoleConfig, role: str = "", *, environ: Mapping[str, str] | None = None) -> AgentStudent:
    """Factory entry for providers `codex` and `claude_code` (chosen by role_cfg.provider)."""
    env = os.environ if environ is None else environ
    cls = {"codex": CodexStudent, "claude_code": ClaudeCodeStudent}.get(role_cfg.provider or "")
    if cls is None:
        raise UsageError(
            f"model.{role or 'student'}.provider {role_cfg.provider!r} is not an agent harness; use codex or claude_code"
        )
    return cls(role_cfg, role, environ=env)


@dataclass
class AgentTask:
    skill: str
    prompt: str
    images: list[tuple[str, bytes]] = field(default_factory=list)  # (file name, bytes)


def _text_and_images(content: Any, images: list[tuple[str, bytes]]) -> str:
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for part in content or []:
        if isinstance(part, str):
            texts.append(part)
        elif part.get("type") == "text":
            texts.append(part.get("text", ""))
        elif part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url", "") if isinstance(image, dict) else str(image)
            m = _DATA_URI.match(url)
            if m is None:
                texts.append(f"(image: {url})")
                continue
            try:
                data = base64.b64decode(m["data"], validate=False)
            except (binascii.Error, ValueError):
                continue
            name = f"image_{len(images) + 1}.{m['ext'].replace('jpeg', 'jpg')}"
            images.append((name, data))
            texts.append(f"(see attachments/{name})")
    return "\n".join(t for t in texts if t)


def split_request(messages: list[Message]) -> AgentTask:
    """First system message = skill; everything else (in order) = the task prompt."""
    skill: str | None = None
    images: list[tuple[str, bytes]] = []
    parts: list[str] = []
    for m in messages:
        text = _text_and_images(m.get("content"), images)
        role = m.get("role", "user")
        if role == "system" and skill is None:
            skill = text
        elif role == "assistant":
            parts.append(f"(your earlier reply)\n{text}")
        elif text:
            parts.append(text)
    return AgentTask(skill=skill or "", prompt="\n\n".join(parts), images=images)


def skill_document(skill: str) -> str:
    return f"---\nname: {SKILL_NAME}\ndescription: {SKILL_DESCRIPTION}\n---\n\n{skill.strip()}\n"


def _safe_relpath(rel: str) -> PurePosixPath:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise UsageError(f"workspace file path {rel!r} must be relative and stay inside the workspace")
    return p


def prepare_workspace(ws: Path, task: AgentTask, skill_dir: str, files: Mapping[str, Any] | None = None) -> list[str]:
    """Write SKILL.md, task.md, attachments and extra files; return the attachment paths (relative)."""
    skill_path = ws / skill_dir / SKILL_NAME / "SKILL.md"
    skill_path.parent.mkdir(parents=True, exist_ok=True)
    skill_path.write_text(skill_document(task.skill), encoding="utf-8")
    attachments: list[str] = []
    for name, data in task.images:
        (ws / "attachments").mkdir(exist_ok=True)
        (ws / "attachments" / name).write_bytes(data)
        attachments.append(f"attachments/{name}")
    body = task.prompt.strip() + "\n"
    if attachments:
        body += "\n## Attachments\n\n" + "".join(f"- {a}\n" for a in attachments)
    (ws / "task.md").write_text(body, encoding="utf-8")
    for rel, content in (files or {}).items():
        target = ws / _safe_relpath(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(str(content), encoding="utf-8")
    return attachments


def prepare_project(ws: Path, messages: list[Message], project: Mapping[str, Any]) -> str:
    """Copy the project snapshot into the workspace, write the candidate's files over it, return the prompt:
    the last user message (worked examples already live in the written files)."""
    root = Path(str(project.get("root", "")))
    if not root.is_dir():
        raise UsageError(f"replay project snapshot {root} is not a directory")
    shutil.copytree(root, ws, symlinks=True, dirs_exist_ok=True)
    for rel, content in (project.get("files") or {}).items():
        target = ws / _safe_relpath(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(str(content), encoding="utf-8")
    images: list[tuple[str, bytes]] = []
    last = next((m for m in reversed(messages) if m.get("role", "user") == "user"), None)
    prompt = _text_and_images(last.get("content") if last else "", images)
    for name, data in images:
        (ws / "attachments").mkdir(exist_ok=True)
        (ws / "attachments" / name).write_bytes(data)
    return prompt.strip()


def minimal_env(environ: Mapping[str, str], prefixes: tuple[str, ...]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k in _BASE_ENV or k.startswith(prefixes)}


def _json_lines(text: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            obj = None
        events.append(obj if isinstance(obj, dict) else {"type": "stdout", "text": line})
    return events


def _first_line(text: str, limit: int = 300) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return (lines[-1] if lines else "")[:limit]


class AgentStudent:
    """Shared harness: workspace, subprocess, limits, error mapping. Subclasses build argv and parse."""

    is_agent = True
    name = ""
    binary_name = ""
    skill_dir = ""
    env_prefixes: tuple[str, ...] = ()
    login_hint = ""

    def __init__(self, role_cfg: RoleConfig, role: str, *, environ: Mapping[str, str]) -> None:
        if role == "teacher":
            raise UsageError(
                f"model.teacher.provider {self.name} is an agent harness and can only be the student; "
                "pick a chat provider for the teacher"
            )
        self.role = role
        self.model = role_cfg.model
        self.supports_vision = True if role_cfg.vision is None else role_cfg.vision
        self._cfg = role_cfg
        self._environ = dict(environ)
        self._running: set[asyncio.subprocess.Process] = set()

    def params(self) -> dict[str, Any]:
        return {"harness": HARNESS_VERSION, "sandbox": self._cfg.sandbox, "profile": self._cfg.profile,
                "reasoning_effort": self._cfg.reasoning_effort, "approval_policy": self._cfg.approval_policy,
                "network_access": self._cfg.network_access, "web_search": self._cfg.web_search,
                "max_thinking_tokens": self._cfg.max_thinking_tokens}

    # -- subclass hooks -------------------------------------------------------------------------
    def _argv(self, binary: str, ws: Path, prompt: str, out_file: Path, attachments: list[str],
              replay: bool = False) -> list[str]:
        raise NotImplementedError

    def _stdin(self, prompt: str) -> bytes | None:
        return None

    def _env(self) -> dict[str, str]:
        return minimal_env(self._environ, self.env_prefixes)

    def _parse(self, stdout: str, stderr: str, out_file: Path) -> Completion:
        raise NotImplementedError

    def _reported_error(self, stdout: str) -> str:
        """An error the agent reported on stdout (claude's JSON result), for the fatal message."""
        return ""

    async def _setup(self, binary: str) -> None:
        """Before a call: learn what this binary supports (once)."""

    # -- harness --------------------------------------------------------------------------------
    def _prompt(self, attachments: list[str]) -> str:
        skill = f"{self.skill_dir}/{SKILL_NAME}/SKILL.md"
        extra = " The task's attachments are in attachments/." if attachments else ""
        return (
            f"Read the skill file {skill} and then task.md, both in the current directory, and solve the "
            f"task by following the skill.{extra} Read these files directly; do not call a Skill tool. "
            "When you are done, reply with only the final answer, in the format the task asks for."
        )

    def _binary(self) -> str:
        configured = self._cfg.binary
        found = shutil.which(configured or self.binary_name, path=self._environ.get("PATH"))
        if found is None:
            what = f"binary {configured!r}" if configured else f"{self.binary_name!r} on PATH"
            raise ProviderFatal(
                f"{self.name}: agent {what} not found; install it or set model.student.binary to its path",
                provider=self.name,
            )
        return found

    async def __call__(self, req: Request) -> Completion:
        binary = self._binary()
        task = split_request(list(req.messages))
        root = Path(tempfile.mkdtemp(prefix=f"skillgrad-{self.name}-"))
        try:
            ws = root / "workspace"
            ws.mkdir()
            project = req.extra.get("project")
            await self._setup(binary)
            if project:  # replay in a copy of the user's project, the request as the prompt
                prompt, attachments = prepare_project(ws, list(req.messages), project), []
            else:
                attachments = prepare_workspace(ws, task, self.skill_dir, req.extra.get("workspace_files"))
                prompt = self._prompt(attachments)
            out_file = root / "last_message.txt"
            argv = self._argv(binary, ws, prompt, out_file, attachments, replay=bool(project))
            start = time.monotonic()
            rc, stdout, stderr = await self._run(argv, ws, self._stdin(prompt))
            if rc != 0:
                raise self._failure(rc, stdout, stderr)
            completion = self._parse(stdout, stderr, out_file)
            completion.seconds = time.monotonic() - start
            completion.provider = self.name
            completion.model = completion.model or self.model or self.name
            return completion
        finally:
            shutil.rmtree(root, ignore_errors=True)

    async def _run(self, argv: list[str], ws: Path, stdin: bytes | None) -> tuple[int, str, str]:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=ws, env=self._env(),
                stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # own process group, so a timeout kills the agent's children too
            )
        except (FileNotFoundError, PermissionError, OSError) as exc:
            raise ProviderFatal(
                f"{self.name}: cannot start agent {argv[0]!r} ({exc.strerror or exc}); "
                "check model.student.binary", provider=self.name,
            ) from None
        self._running.add(proc)
        timeout = self._cfg.exec_timeout_s
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin), timeout)
        except TimeoutError:
            await self._kill(proc)
            raise ProviderError(f"{self.name}: agent timed out after {timeout:g} s",
                                provider=self.name, retryable=False) from None
        except asyncio.CancelledError:
            await self._kill(proc)
            raise
        finally:
            self._running.discard(proc)
        return proc.returncode or 0, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")

    @staticmethod
    async def _kill(proc: asyncio.subprocess.Process) -> None:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if hasattr(os, "killpg"):
                    os.killpg(proc.pid, signal.SIGKILL)
                else:  # pragma: no cover - not POSIX
                    proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 10)

    def _failure(self, rc: int, stdout: str, stderr: str) -> ProviderFatal:
        reported = self._reported_error(stdout)
        text = "\n".join(t for t in (stderr, reported) if t)
        if _AUTH_FAILURE.search(text):
            line = next((ln.strip() for ln in text.splitlines() if _AUTH_FAILURE.search(ln)), "")
            return ProviderFatal(
                f"{self.name}: authentication failed ({line[:200]}); {self.login_hint}",
                provider=self.name, status=401,
            )
        detail = _first_line(reported or stderr) or "no error output"
        return ProviderFatal(f"{self.name}: agent exited with status {rc}: {detail}", provider=self.name)

    async def aclose(self) -> None:
        for proc in list(self._running):
            await self._kill(proc)


class CodexStudent(AgentStudent):
    name = "codex"
    binary_name = "codex"
    skill_dir = ".agents/skills"
    env_prefixes = ("CODEX_", "OPENAI_", "AZURE_OPENAI_")
    login_hint = "run `codex login` or set OPENAI_API_KEY"

    def __init__(self, role_cfg: RoleConfig, role: str, *, environ: Mapping[str, str]) -> None:
        super().__init__(role_cfg, role, environ=environ)
        self._ephemeral: dict[str, bool] = {}  # binary -> whether `codex exec` has --ephemeral (no session file)

    async def _setup(self, binary: str) -> None:
        """A run or a night makes dozens of calls (probes, rollouts, replays): with `--ephemeral` none of them piles
        up in the user's own session history ($CODEX_HOME/sessions). Older versions without the flag write them as
        before (harvest skips them)."""
        cache = self._ephemeral
        if binary in cache:
            return
        try:
            proc = await asyncio.create_subprocess_exec(
                binary, "exec", "--help", env=self._env(), stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
        except OSError:
            cache[binary] = False
            return
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), 30)
            cache[binary] = b"--ephemeral" in out
        except TimeoutError:
            await self._kill(proc)
            cache[binary] = False

    def _argv(self, binary: str, ws: Path, prompt: str, out_file: Path, attachments: list[str],
              replay: bool = False) -> list[str]:
        cfg = self._cfg
        argv = [binary, "exec", "--skip-git-repo-check", "--color", "never", "-C", str(ws), "--sandbox", cfg.sandbox]
        if cfg.profile:
            argv += ["-p", cfg.profile]
        if cfg.model:
            argv += ["-m", cfg.model]
        if cfg.reasoning_effort:
            argv += ["-c", f'model_reasoning_effort="{cfg.reasoning_effort}"']
        # SkillOpt's codex_exec_approval_policy / _network_access / _web_search, as codex config overrides.
        if cfg.approval_policy:
            argv += ["-c", f'approval_policy="{cfg.approval_policy}"']
        if cfg.network_access is not None:
            argv += ["-c", f"sandbox_workspace_write.network_access={str(cfg.network_access).lower()}"]
        if cfg.web_search is not None:
            argv += ["-c", f"tools.web_search={str(cfg.web_search).lower()}"]
        if self._ephemeral.get(binary):
            argv.append("--ephemeral")
        for a in attachments:
            argv += ["--image", str(ws / a)]
        # --json: JSONL events on stdout, the trace and the token usage come from them.
        argv += ["--json", "--output-last-message", str(out_file), prompt]
        return argv

    def _parse(self, stdout: str, stderr: str, out_file: Path) -> Completion:
        events = _json_lines(stdout)
        usage = Usage()
        last_message = ""
        for ev in events:
            if ev.get("type") == "turn.completed" and isinstance(ev.get("usage"), dict):
                u = ev["usage"]
                usage.prompt_tokens += int(u.get("input_tokens") or 0)
                usage.cached_tokens += int(u.get("cached_input_tokens") or 0)
                usage.completion_tokens += int(u.get("output_tokens") or 0)
            item = ev.get("item")
            if ev.get("type") == "item.completed" and isinstance(item, dict) and item.get("type") == "agent_message":
                last_message = str(item.get("text") or "")
        try:
            text = out_file.read_text(encoding="utf-8")
        except OSError:
            text = last_message
        if stderr.strip():
            events.append({"type": "stderr", "text": stderr[-STDERR_TAIL:]})
        return Completion(text=text.strip(), usage=usage, trace=events,
                          finish_reason="stop" if text.strip() else "empty")


class ClaudeCodeStudent(AgentStudent):
    name = "claude_code"
    reports_cost = True  # `claude -p` reports total_cost_usd per task: budget.max_usd can count it
    binary_name = "claude"
    skill_dir = ".claude/skills"
    env_prefixes = ("ANTHROPIC_", "CLAUDE_", "AWS_", "CLOUD_ML_", "VERTEX_", "GOOGLE_", "IS_SANDBOX")
    login_hint = "run `claude` and log in, or set ANTHROPIC_API_KEY"

    def _argv(self, binary: str, ws: Path, prompt: str, out_file: Path, attachments: list[str],
              replay: bool = False) -> list[str]:
        cfg = self._cfg
        # --verbose makes the json output the full event list (the trace), not just the result object.
        argv = [binary, "-p", "--output-format", "json", "--verbose"]
        if cfg.model:
            argv += ["--model", cfg.model]
        if cfg.reasoning_effort:
            argv += ["--effort", cfg.reasoning_effort]
        argv += ["--permission-mode", "bypassPermissions", "--allowedTools", "Read,Bash",
                 "--setting-sources", "project" if replay else "", "--strict-mcp-config"]
        return argv

    def _stdin(self, prompt: str) -> bytes | None:
        return prompt.encode("utf-8")

    def _env(self) -> dict[str, str]:
        env = super()._env()
        if self._cfg.max_thinking_tokens:  # Claude Code reads its thinking budget from this variable
            env["MAX_THINKING_TOKENS"] = str(self._cfg.max_thinking_tokens)
        return env

    @staticmethod
    def _events(stdout: str) -> list[dict[str, Any]]:
        try:
            data = json.loads(stdout)
        except json.JSONDecodeError:
            return _json_lines(stdout)
        if isinstance(data, list):
            return [e if isinstance(e, dict) else {"type": "value", "value": e} for e in data]
        return [data] if isinstance(data, dict) else [{"type": "value", "value": data}]

    @staticmethod
    def _result(events: list[dict[str, Any]]) -> dict[str, Any] | None:
        return next((e for e in reversed(events) if e.get("type") == "result"), None)

    def _reported_error(self, stdout: str) -> str:
        result = self._result(self._events(stdout)) if stdout.strip() else None
        if result and result.get("is_error"):
            return str(result.get("result") or result.get("subtype") or "")
        return ""

    def _parse(self, stdout: str, stderr: str, out_file: Path) -> Completion:
        events = self._events(stdout)
        result = self._result(events) or {}
        if result.get("is_error") and _AUTH_FAILURE.search(str(result.get("result", ""))):
            raise self._failure(0, stdout, stderr)
        raw_usage = result.get("usage")
        u: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
        cache_read = int(u.get("cache_read_input_tokens") or 0)
        usage = Usage(
            prompt_tokens=int(u.get("input_tokens") or 0) + cache_read + int(u.get("cache_creation_input_tokens") or 0),
            completion_tokens=int(u.get("output_tokens") or 0),
            cached_tokens=cache_read,
        )
        cost = result.get("total_cost_usd")
        models = result.get("modelUsage")
        model = self.model or (next(iter(models)) if isinstance(models, dict) and models else "")
        if stderr.strip():
            events.append({"type": "stderr", "text": stderr[-STDERR_TAIL:]})
        text = str(result.get("result") or "").strip()
        return Completion(
            text=text, usage=usage, trace=events, model=model,
            cost=float(cost) if isinstance(cost, (int, float)) else None,
            finish_reason=str(result.get("subtype") or ("stop" if text else "empty")),
        )
