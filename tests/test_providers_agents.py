"""Agent-harness students against fake `codex` / `claude` executables run as real subprocesses."""

from __future__ import annotations

import asyncio
import base64
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from skillgrad.config.schema import RoleConfig
from skillgrad.errors import ProviderError, ProviderFatal, UsageError
from skillgrad.models.base import Request
from skillgrad.models.providers import agents

FAKES = Path(__file__).parent / "fixtures" / "fake_agents"
SKILL = "# Skill\n\nAlways answer in UPPER CASE."


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """The fake agents, installed as `codex` and `claude` with a shebang for this interpreter."""
    d = tmp_path / "bin"
    d.mkdir()
    for src, name in (("codex.py", "codex"), ("claude.py", "claude")):
        target = d / name
        target.write_text(f"#!{sys.executable}\n" + (FAKES / src).read_text())
        target.chmod(target.stat().st_mode | stat.S_IXUSR)
    return d


def _environ(bin_dir: Path, tmp_path: Path) -> dict[str, str]:
    return {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", "HOME": str(tmp_path),
            "SKILLGRAD_PLANTED_SECRET": "must-not-leak", "CODEX_HOME": str(tmp_path / ".codex"),
            "ANTHROPIC_API_KEY": "sk-ant-for-claude"}


def _student(provider: str, bin_dir: Path, tmp_path: Path, **cfg: object) -> agents.AgentStudent:
    role_cfg = RoleConfig(provider=provider, **cfg)  # type: ignore[arg-type]
    return agents.create(role_cfg, "student", environ=_environ(bin_dir, tmp_path))


def _request(task: str, **extra: object) -> Request:
    return Request(messages=[{"role": "system", "content": SKILL}, {"role": "user", "content": task}],
                   stage="rollout", role="student", extra=dict(extra))


def _call(student: agents.AgentStudent, req: Request):
    async def go():
        try:
            return await student(req)
        finally:
            await student.aclose()

    return asyncio.run(go())


def test_codex_success_answers_from_installed_skill(bin_dir: Path, tmp_path: Path) -> None:
    student = _student("codex", bin_dir, tmp_path, sandbox="workspace-write", model="gpt-fake",
                       reasoning_effort="low")
    assert student.is_agent and student.name == "codex"
    out = _call(student, _request("What is 2+2?"))
    assert out.text == "SKILL SAYS: # Skill\n\nAlways answer in UPPER CASE."
    assert out.provider == "codex" and out.model == "gpt-fake" and out.finish_reason == "stop"
    assert (out.usage.prompt_tokens, out.usage.cached_tokens, out.usage.completion_tokens) == (120, 20, 7)
    inv = next(e for e in out.trace if e.get("type") == "fake.invocation")
    argv = inv["argv"]
    assert argv[argv.index("--sandbox") + 1] == "workspace-write"
    assert argv[argv.index("-m") + 1] == "gpt-fake"
    assert 'model_reasoning_effort="low"' in argv
    assert argv[argv.index("-C") + 1] == inv["cwd"]
    assert "SKILL.md" in argv[-1] and "task.md" in argv[-1]
    assert "name: skillgrad-target" in inv["front_matter"] and "description:" in inv["front_matter"]
    assert "task.md" in inv["files"]
    # minimal environment: the planted variable stays out, codex's own variables get through
    assert "SKILLGRAD_PLANTED_SECRET" not in inv["env_keys"] and "CODEX_HOME" in inv["env_keys"]
    assert "ANTHROPIC_API_KEY" not in inv["env_keys"]
    assert {"type": "stdout", "text": "a line that is not JSON"} in out.trace
    assert any(e.get("type") == "stderr" and "reading SKILL.md" in e["text"] for e in out.trace)
    assert not Path(inv["cwd"]).exists(), "workspace must be removed after the call"


def test_codex_every_call_is_ephemeral_when_the_binary_supports_it(bin_dir: Path, tmp_path: Path) -> None:
    """A probe or rollout (no project replay) must not land in the user's Codex history either (issue 32, 4)."""
    student = _student("codex", bin_dir, tmp_path)
    out = _call(student, _request("Read the skill file and answer: what is 2+2?"))
    inv = next(e for e in out.trace if e.get("type") == "fake.invocation")
    assert "--ephemeral" in inv["argv"]


def test_claude_code_success(bin_dir: Path, tmp_path: Path) -> None:
    student = _student("claude_code", bin_dir, tmp_path)
    out = _call(student, _request("Name a colour."))
    assert out.text == "SKILL SAYS: # Skill\n\nAlways answer in UPPER CASE."
    assert out.provider == "claude_code" and out.model == "claude-fake-1"
    assert (out.usage.prompt_tokens, out.usage.cached_tokens, out.usage.completion_tokens) == (105, 90, 6)
    assert out.cost == pytest.approx(0.0125)
    init = out.trace[0]
    argv = init["argv"]
    assert argv[argv.index("--permission-mode") + 1] == "bypassPermissions"
    assert argv[argv.index("--allowedTools") + 1] == "Read,Bash"
    assert "--strict-mcp-config" in argv and "--model" not in argv
    assert ".claude/skills/skillgrad-target/SKILL.md" in init["prompt"]
    assert "ANTHROPIC_API_KEY" in init["env_keys"] and "SKILLGRAD_PLANTED_SECRET" not in init["env_keys"]
    assert [e["type"] for e in out.trace] == ["system", "assistant", "result"]
    assert not Path(init["cwd"]).exists()


def test_images_and_workspace_files_are_installed(bin_dir: Path, tmp_path: Path) -> None:
    png = base64.b64encode(b"\x89PNG fake").decode()
    req = Request(messages=[
        {"role": "system", "content": SKILL},
        {"role": "user", "content": [{"type": "text", "text": "Read the chart."},
                                     {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}}]},
    ], extra={"workspace_files": {"data/input.csv": "a,b\n1,2\n"}})
    out = _call(_student("codex", bin_dir, tmp_path), req)
    inv = next(e for e in out.trace if e.get("type") == "fake.invocation")
    assert inv["attachments"] == ["image_1.png"]
    assert "--image" in inv["argv"] and "data" in inv["files"]


def test_workspace_file_outside_workspace_is_refused(bin_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="relative"):
        _call(_student("codex", bin_dir, tmp_path), _request("x", workspace_files={"../escape.txt": "x"}))


@pytest.mark.parametrize("provider,binary", [("codex", "codex"), ("claude_code", "claude")])
def test_missing_binary_is_fatal_and_names_config_key(tmp_path: Path, provider: str, binary: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    student = _student(provider, empty, tmp_path)
    with pytest.raises(ProviderFatal) as err:
        _call(student, _request("hi"))
    assert binary in str(err.value) and "model.student.binary" in str(err.value)


def test_configured_binary_path_missing_is_fatal(bin_dir: Path, tmp_path: Path) -> None:
    student = _student("codex", bin_dir, tmp_path, binary=str(tmp_path / "nowhere" / "codex"))
    with pytest.raises(ProviderFatal, match="model.student.binary"):
        _call(student, _request("hi"))


def test_configured_binary_path_is_used(bin_dir: Path, tmp_path: Path) -> None:
    student = _student("claude_code", tmp_path / "not-on-path", tmp_path, binary=str(bin_dir / "claude"))
    assert _call(student, _request("hi")).text.startswith("SKILL SAYS:")


@pytest.mark.parametrize("provider", ["codex", "claude_code"])
def test_auth_failure_is_fatal(bin_dir: Path, tmp_path: Path, provider: str) -> None:
    with pytest.raises(ProviderFatal) as err:
        _call(_student(provider, bin_dir, tmp_path), _request("[fake:auth] hi"))
    msg = str(err.value)
    assert "authentication failed" in msg and "\n" not in msg
    assert err.value.status == 401


@pytest.mark.parametrize("provider,status,detail", [("codex", 3, "does not exist"), ("claude_code", 4, "broke")])
def test_nonzero_exit_is_fatal(bin_dir: Path, tmp_path: Path, provider: str, status: int, detail: str) -> None:
    with pytest.raises(ProviderFatal) as err:
        _call(_student(provider, bin_dir, tmp_path), _request("[fake:crash] hi"))
    assert f"exited with status {status}" in str(err.value) and detail in str(err.value)
    assert "authentication" not in str(err.value)


def test_timeout_is_retryable_false_and_kills_the_agent(bin_dir: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "agent.pid"
    student = _student("codex", bin_dir, tmp_path, exec_timeout_s=1.5)
    start = time.monotonic()
    with pytest.raises(ProviderError) as err:
        _call(student, _request(f"[fake:sleep pidfile={pidfile}]"))
    assert time.monotonic() - start < 15
    assert not isinstance(err.value, ProviderFatal)
    assert err.value.retryable is False
    assert "agent timed out after 1.5 s" in str(err.value)
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_agent_cannot_be_teacher(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="only be the student"):
        agents.create(RoleConfig(provider="codex"), "teacher", environ={})


def test_split_request_and_params() -> None:
    task = agents.split_request([
        {"role": "system", "content": "THE SKILL"},
        {"role": "system", "content": "extra rules"},
        {"role": "user", "content": "the task"},
    ])
    assert task.skill == "THE SKILL" and task.prompt == "extra rules\n\nthe task"
    doc = agents.skill_document("body")
    assert doc.startswith("---\nname: skillgrad-target\ndescription: ") and doc.endswith("---\n\nbody\n")
    student = agents.create(RoleConfig(provider="codex", sandbox="read-only"), "student", environ={})
    assert student.params()["sandbox"] == "read-only"


def test_provider_loader_finds_agents_module() -> None:
    from skillgrad.models.providers import load_provider_module

    for name in ("codex", "claude_code"):
        assert load_provider_module(name).create is agents.create
