"""`sleep run --student codex / claude_code`: each task replays through the agent CLI in a scratch copy of the
project (bounded; the memory file and skill under training replaced by the candidate), never in the project.

The codex test runs the real Codex CLI (npm @openai/codex) against the embedded SmolLM2 behind
`python -m llama_cpp.server`, through skillgrad's Responses-API bridge; it is skipped when the binary is not
installed. The claude_code test checks only the plumbing (scratch copy, argv, prompt) with a stand-in script:
the real Claude Code path was not run here.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from skillgrad.core.events import EventLog
from skillgrad.envs.tasks.records import TaskRecord, write_tasks
from skillgrad.integrations import responses_bridge as rb
from skillgrad.sleep.harvest import REPLAY_MARKER
from skillgrad.sleep.memory import memory_doc
from skillgrad.sleep.night import (
    SKILL_SCAFFOLD,
    _snapshot,
    engine_config,
    live_paths,
    memory_view,
    open_night,
    per_task_scores,
    replay_workspace,
)
from skillgrad.sleep.scratch import copy_project
from skillgrad.sleep.settings import SleepSettings

FAKES = Path(__file__).parent / "fixtures" / "fake_agents"
BLOCK = "<!-- SKILLGRAD:LEARNED START -->\n<!-- SKILLGRAD:LEARNED END -->\n"
CANDIDATE = "- Use pnpm, never npm: `pnpm add lodash --filter web`."
TASK = "How do I add lodash to the web app?"


def make_project(root: Path, memory_name: str) -> Path:
    project = root / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.ts").write_text("export const x = 1;\n")
    (project / memory_name).write_text(f"# Ledgerline\n\nTypeScript monorepo.\n\n{BLOCK}")
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (project / "node_modules" / "lodash").mkdir(parents=True)
    (project / "node_modules" / "lodash" / "index.js").write_text("module.exports = {};\n")
    (project / "big.log").write_text("x" * (600 * 1024))
    (project / "logo.png").write_bytes(b"\x89PNG\0\0binary")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text('{"hooks": {"Stop": [{"command": "curl example.com"}]}}')
    (project / "passwd").symlink_to("/etc/passwd")
    return project


def test_copy_project_is_bounded(tmp_path: Path) -> None:
    project = make_project(tmp_path, "CLAUDE.md")
    report = copy_project(project, tmp_path / "copy")
    copied = sorted(p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*") if p.is_file())
    assert copied == ["CLAUDE.md", "src/app.ts"]
    assert report.files == 2
    assert set(report.skipped) == {"folder .git", "folder node_modules", "over 512 KB", "binary",
                                   "settings that can run commands", "link out of the project"}


def test_the_memory_target_follows_the_student_and_links_are_kept(tmp_path: Path) -> None:
    """Issue 32 finding 4: Codex reads AGENTS.md (here a link to CLAUDE.md, as in one of the reporter's real
    projects), never CLAUDE.md; the replay copy keeps the link, so the candidate written into the trained file
    is what Codex reads."""
    project = make_project(tmp_path, "CLAUDE.md")
    (project / "AGENTS.md").symlink_to("CLAUDE.md")
    (project / "docs").mkdir()
    (project / "docs" / "guide.md").write_text("# Guide\n")
    (project / "GUIDE.md").symlink_to("docs/guide.md")
    codex = SleepSettings(project=str(project), student={"provider": "codex"})
    claude = SleepSettings(project=str(project), student={"provider": "claude_code"})
    assert live_paths(codex, project)[1] == (project / "CLAUDE.md").resolve()  # AGENTS.md, trained at its target
    assert live_paths(claude, project)[1] == (project / "CLAUDE.md").resolve()
    (project / "AGENTS.md").unlink()
    assert live_paths(codex, project)[1] is None  # Codex never reads CLAUDE.md: nothing to train for it
    (project / "AGENTS.md").symlink_to("CLAUDE.md")

    report = copy_project(project, tmp_path / "copy")
    copy = tmp_path / "copy"
    assert (copy / "AGENTS.md").is_symlink() and (copy / "GUIDE.md").read_text() == "# Guide\n"
    assert report.links == 2 and not (copy / "passwd").exists()  # a link out of the project is not copied
    (copy / "CLAUDE.md").write_text(f"# Ledgerline\n\n{CANDIDATE}\n")
    assert CANDIDATE in (copy / "AGENTS.md").read_text()  # what Codex reads in the replay


def night_config(project: Path, student: dict[str, Any], tasks: list[TaskRecord]) -> tuple[Any, Path, EventLog]:
    """What `run_night` does before training: pin the live files, copy the project, configure the memory target."""
    settings = SleepSettings(project=str(project), student=student, min_heldout=1)
    night = open_night(project, fresh=True)
    emit = EventLog(night.root / "events.jsonl")
    skill_live, memory_live = live_paths(settings, project)
    skill_snap = _snapshot(night, skill_live, "SKILL.md", SKILL_SCAFFOLD)
    assert memory_live is not None and skill_snap is not None
    doc = memory_doc(memory_live)
    mem_snap = _snapshot(night, doc.home, doc.home.name, "")
    assert mem_snap is not None
    view = memory_view(settings, night, doc, mem_snap[0], tasks, emit)
    replay_workspace(settings, night, project, doc.home)
    tasks_file = night.root / "tasks.jsonl"
    write_tasks(tasks_file, tasks)
    cfg = engine_config(settings, night, run_dir=night.root / "memory", tasks_file=tasks_file,
                        skill_file=skill_snap[0], memory_file=view, target="memory", n_train=1)
    return cfg, night.root, emit


def pnpm_task() -> TaskRecord:
    return TaskRecord.model_validate({"task_id": "t1", "task": TASK, "split": "test", "judge": {
        "kind": "rule", "checks": [{"op": "contains", "arg": "pnpm"}]}})


def install(bin_dir: Path, src: Path, name: str) -> None:
    bin_dir.mkdir(exist_ok=True)
    target = bin_dir / name
    target.write_text(f"#!{sys.executable}\n" + src.read_text())
    target.chmod(target.stat().st_mode | stat.S_IXUSR)


def test_claude_code_replays_in_a_scratch_copy_plumbing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Plumbing only, with a stand-in script for `claude`: what reaches the agent and where it runs."""
    project = make_project(tmp_path, "CLAUDE.md")
    live_memory = (project / "CLAUDE.md").read_bytes()
    install(tmp_path / "bin", FAKES / "claude_replay.py", "claude")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    cfg, night_root, emit = night_config(project, {"provider": "claude_code"}, [pnpm_task()])
    assert cfg.env.options()["replay_memory_path"] == "CLAUDE.md"

    before = asyncio.run(per_task_scores(cfg, "", emit))
    after = asyncio.run(per_task_scores(cfg, CANDIDATE, emit))
    assert before["t1"][0] == 0.0 and after["t1"][0] == 1.0  # the candidate block reached the agent's CLAUDE.md
    assert "pnpm add lodash" in after["t1"][2]

    traces = [e for e in map(json.loads, (night_root / "events.jsonl").read_text().splitlines())
              if e.get("event") == "llm_call"]
    assert len(traces) == 2 and all(e["provider"] == "claude_code" for e in traces)
    assert (project / "CLAUDE.md").read_bytes() == live_memory  # the live project is never written
    copy = json.loads((night_root / "night.json").read_text())["replay"]["copy"]
    assert copy["files"] == 2 and "folder node_modules" in copy["skipped"]


def test_claude_code_replay_sees_the_request_and_the_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in reports its cwd, files and prompt in its trace; the trace is what the student returns."""
    from skillgrad.envs.registry import create_env
    from skillgrad.models.factory import build_models

    project = make_project(tmp_path, "CLAUDE.md")
    install(tmp_path / "bin", FAKES / "claude_replay.py", "claude")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    cfg, _, emit = night_config(project, {"provider": "claude_code"}, [pnpm_task()])
    env = create_env(cfg.env)
    item = env.load_splits().test[0]

    async def replay() -> Any:
        models = build_models(cfg, cache_path=None, emit=emit, env=env)
        try:
            return await models.student.complete([{"role": "user", "content": "x"}], max_tokens=64,
                                                 extra=env.replay_extra(CANDIDATE, models.student))
        finally:
            await models.aclose()
    seen = asyncio.run(replay()).trace[0]
    assert not Path(seen["cwd"]).resolve().is_relative_to(project.resolve())  # outside the live project
    assert seen["files"] == [".claude/skills/project-preferences/SKILL.md", "CLAUDE.md", "src/app.ts"]
    assert CANDIDATE in seen["memory"] and "TypeScript monorepo." in seen["memory"]
    assert seen["skills"]["project-preferences"].startswith("---\nname: project-preferences")
    trajectory = asyncio.run(_run_task(cfg, env, item, emit))
    assert trajectory.hard == 1.0
    assert trajectory.messages[1]["content"].startswith(REPLAY_MARKER) and TASK in trajectory.messages[1]["content"]


async def _run_task(cfg: Any, env: Any, item: Any, emit: EventLog) -> Any:
    from skillgrad.models.factory import build_models

    models = build_models(cfg, cache_path=None, emit=emit, env=env)
    try:
        return await env.run_task(item, CANDIDATE, models.student)
    finally:
        await models.aclose()


def codex_binary() -> str | None:
    return os.environ.get("SKILLGRAD_CODEX_BIN") or shutil.which("codex")


@pytest.mark.skipif(codex_binary() is None, reason="the Codex CLI is not installed (npm install -g @openai/codex, "
                    "or set SKILLGRAD_CODEX_BIN); the real-codex replay is not run")
def test_codex_replays_through_the_real_cli_on_the_embedded_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llama_server: str) -> None:
    """One replay through the real `codex exec`: Codex talks the Responses API to skillgrad's bridge, which asks
    the embedded SmolLM2 behind llama_cpp.server; the project copy's AGENTS.md carries the candidate block."""
    seen: list[dict[str, Any]] = []

    class Recording(rb.Bridge):
        def complete(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            seen.append(body)
            return super().complete(body)

    server, _ = rb.serve(Recording(llama_server, model="smollm2", max_tokens=24))
    try:
        home = tmp_path / "codex_home"
        home.mkdir()
        (home / "instructions.md").write_text("You are a coding agent. Follow AGENTS.md. Answer in one line.\n")
        (home / "config.toml").write_text(
            f'model = "smollm2"\nmodel_provider = "bridge"\nmodel_instructions_file = "{home / "instructions.md"}"\n'
            f'[model_providers.bridge]\nname = "bridge"\nbase_url = "http://127.0.0.1:{server.server_address[1]}/v1"\n'
            'wire_api = "responses"\n')
        monkeypatch.setenv("CODEX_HOME", str(home))
        binary = Path(str(codex_binary()))
        monkeypatch.setenv("PATH", f"{binary.parent}{os.pathsep}{os.environ['PATH']}")
        project = make_project(tmp_path, "AGENTS.md")
        cfg, night_root, emit = night_config(project, {"provider": "codex"}, [pnpm_task()])
        assert cfg.env.options()["replay_memory_path"] == "AGENTS.md"
        scores = asyncio.run(per_task_scores(cfg, CANDIDATE, emit))
    finally:
        server.shutdown()
    hard, _, reply = scores["t1"]
    assert reply.strip() and hard in (0.0, 1.0)  # the small model's answer, scored by the task's check
    texts = [json.dumps(item) for body in seen for item in body.get("input", [])]
    assert any("AGENTS.md instructions" in t and "pnpm add lodash --filter web" in t for t in texts)
    assert any(TASK in t and "skillgrad:replay" in t for t in texts)
    calls = [e for e in map(json.loads, (night_root / "events.jsonl").read_text().splitlines())
             if e.get("event") == "llm_call"]
    assert calls and calls[0]["provider"] == "codex" and calls[0]["prompt_tokens"] > 0
    assert not list((home / "sessions").rglob("*.jsonl"))  # --ephemeral: no replay in the user's session history


@pytest.mark.slow
def test_sleep_run_student_claude_code_replays_every_task_in_a_copy(tmp_path: Path, gguf_path: Path) -> None:
    """`skillgrad sleep dry-run --student claude_code` through the real CLI, the embedded model as teacher and the
    stand-in as `claude` (plumbing only): every replay of the night ran in a copy outside the project that had the
    project's files and the memory file, with the user's request as its prompt."""
    import subprocess

    fixture = Path(__file__).parent / "fixtures" / "sleep_sessions" / "claude_code" / "projects" / \
        "-home-dev-work-status-app"
    project = make_project(tmp_path, "CLAUDE.md")
    home = tmp_path / "claude_home"
    dst = home / "projects" / ("-" + str(project).strip("/").replace("/", "-"))
    dst.mkdir(parents=True)
    for f in fixture.glob("*.jsonl"):
        (dst / f.name).write_text(f.read_text().replace("/home/dev/work/status-app", str(project)))
    install(tmp_path / "bin", FAKES / "claude_replay.py", "claude")
    role = {"provider": "local", "model": str(gguf_path), "threads": 1}
    config = tmp_path / "sleep.yaml"
    config.write_text(json.dumps({"teacher": {**role, "max_tokens": 96}, "max_tasks": 8, "batch_size": 4,
                                  "min_heldout": 1, "task_max_tokens": 12, "evolve_memory": False,
                                  "budget": {"max_minutes": 10}}))
    log = tmp_path / "replays.jsonl"
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}", "CLAUDE_REPLAY_LOG": str(log)}
    live = (project / "CLAUDE.md").read_bytes()
    r = subprocess.run([sys.executable, "-m", "skillgrad.cli", "sleep", "dry-run", "--project", str(project),
                        "--config", str(config), "--claude-home", str(home), "--codex-home", str(tmp_path / "none"),
                        "--source", "claude_code", "--lookback-hours", "1000000", "--student", "claude_code",
                        "--json"], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    result = json.loads(r.stdout)
    seen = [json.loads(x) for x in log.read_text().splitlines()]
    assert result["tasks"]["test"] >= 1 and sum(result["tasks"].values()) >= 4, result
    assert len(seen) >= sum(result["tasks"].values())  # every task replayed at least once, all in copies
    for s in seen:
        assert not Path(s["cwd"]).resolve().is_relative_to(project.resolve())
        assert "src/app.ts" in s["files"] and "CLAUDE.md" in s["files"] and "node_modules/lodash/index.js" not in s["files"]
        assert s["prompt"].startswith(REPLAY_MARKER) and "TypeScript monorepo." in s["memory"]
    assert (project / "CLAUDE.md").read_bytes() == live
    night = json.loads((Path(result["night_dir"]) / "night.json").read_text())
    assert night["replay"]["memory_path"] == "CLAUDE.md" and night["replay"]["copy"]["files"] == 2
