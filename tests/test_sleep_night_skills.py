"""A night evolves the user's own skills: sessions (Claude Code 2.1 layout) that used the project's `status`
skill (the Skill tool, or a Read of its SKILL.md) train that skill's learned block, with the embedded model
end to end through the CLI; the memory file trains on every task; the night's default skill gets none (every
task used a skill of the user's). The proposal holds every accepted file and `adopt --only` takes a subset."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "sleep_sessions" / "claude_code" / "projects" / \
    "-home-dev-work-status-app"
FIXTURE_CWD = "/home/dev/work/status-app"
HAND_SKILL = b"---\nname: status\ndescription: Team status replies.\n---\n# Status replies\n\nKeep replies short.\n"
HAND_MEMORY = b"# Project notes\n\nWe deploy on Fridays.\n"


def _with_skill(lines: list[str], project: Path, n: int) -> list[str]:
    """The session's first request used the `status` skill: the model called the Skill tool (even sessions) or
    read the SKILL.md (odd ones), recorded as Claude Code 2.1 writes it, right after the prompt."""
    first = json.loads(lines[0])
    common = {k: first[k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch")}
    at = first["timestamp"].replace(":00.000Z", ":01.000Z")
    skill_dir = project / ".claude" / "skills" / "status"
    if n % 2 == 0:
        use = {"type": "tool_use", "id": f"toolu_sk{n}", "name": "Skill", "input": {"skill": "status"}}
        back = [{"tool_use_id": f"toolu_sk{n}", "type": "tool_result", "content": "Launching skill: status"}]
        extra = [{**common, "type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": f"Base directory for this skill: {skill_dir}\n\n# Status replies"}]},
            "isMeta": True, "uuid": f"00000000-0000-4000-9000-{n:06d}000003", "timestamp": at}]
    else:
        use = {"type": "tool_use", "id": f"toolu_sk{n}", "name": "Read",
               "input": {"file_path": str(skill_dir / "SKILL.md")}}
        back = [{"tool_use_id": f"toolu_sk{n}", "type": "tool_result", "content": "1\t---"}]
        extra = []
    recs = [{**common, "message": {"model": "claude-sonnet-4-5-20250929", "id": f"msg_sk{n}", "type": "message",
                                   "role": "assistant", "content": [use], "stop_reason": "tool_use"},
             "type": "assistant", "uuid": f"00000000-0000-4000-9000-{n:06d}000001", "timestamp": at},
            {**common, "type": "user", "message": {"role": "user", "content": back},
             "uuid": f"00000000-0000-4000-9000-{n:06d}000002", "timestamp": at}, *extra]
    return [lines[0], *(json.dumps(r, separators=(",", ":")) for r in recs), *lines[1:]]


def _setup(tmp_path: Path, gguf: Path) -> tuple[Path, Path, Path]:
    project = tmp_path / "status-app"
    (project / ".claude" / "skills" / "status").mkdir(parents=True)
    (project / ".claude" / "skills" / "status" / "SKILL.md").write_bytes(HAND_SKILL)
    (project / "CLAUDE.md").write_bytes(HAND_MEMORY)
    home = tmp_path / "claude"
    dst = home / "projects" / ("-" + str(project).strip("/").replace("/", "-"))
    dst.mkdir(parents=True)
    for n, f in enumerate(sorted(FIXTURES.glob("*.jsonl"))):
        lines = f.read_text(encoding="utf-8").replace(FIXTURE_CWD, str(project)).splitlines()
        (dst / f.name).write_text("\n".join(_with_skill(lines, project, n)) + "\n", encoding="utf-8")
    config = tmp_path / "sleep.yaml"
    role = {"provider": "local", "model": str(gguf), "threads": 1}
    config.write_text(json.dumps({
        "student": role, "teacher": {**role, "max_tokens": 120}, "max_tasks": 10, "batch_size": 4, "min_heldout": 1,
        "val_fraction": 0.25, "test_fraction": 0.25, "task_max_tokens": 12,
        "budget": {"max_minutes": 15, "max_tokens": 300000}}), encoding="utf-8")
    return project, home, config


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "skillgrad.cli", "sleep", *args]


@pytest.mark.slow
def test_a_night_trains_the_skill_the_tasks_used_and_adopts_a_chosen_file(tmp_path, gguf_path):
    project, home, config = _setup(tmp_path, gguf_path)
    skill = project / ".claude" / "skills" / "status" / "SKILL.md"
    run = subprocess.run(_cli("run", "--project", str(project), "--config", str(config), "--claude-home", str(home),
                              "--codex-home", str(tmp_path / "no-codex"), "--source", "claude_code",
                              "--lookback-hours", "1000000", "--json"), capture_output=True, timeout=900)
    assert run.returncode == 0, run.stderr.decode()[-3000:]
    result = json.loads(run.stdout)
    night = Path(result["night_dir"])
    tasks = [json.loads(line) for line in (night / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(tasks) >= 6 and all(t["meta"]["skills"] == ["status"] for t in tasks)
    targets = result["targets"]
    # grouped per file: the user's skill got every task (it was used in each), the default skill none
    assert targets["skill:status"]["live"] == str(skill) and targets["skill:status"]["n_tasks"] == len(tasks)
    assert targets["skill"]["reason"] == "not trained: every task used one of your own skills"
    assert targets["memory"]["n_tasks"] == len(tasks)
    events = [json.loads(line) for line in (night / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    trained = [e["target"] for e in events if e["event"] == "sleep_consolidate"]
    assert trained == ["skill:status", "memory"]  # the engine ran for each file (its own run directory)
    assert (night / "skills" / "status" / "summary.json").is_file() and (night / "memory" / "summary.json").is_file()
    assert not (night / "summary.json").exists()  # the default skill's run never started
    assert skill.read_bytes() == HAND_SKILL and (project / "CLAUDE.md").read_bytes() == HAND_MEMORY
    if result["status"] != "staged":
        pytest.fail(f"nothing staged: {result['message']} {targets}")
    assert targets["skill:status"]["accepted"], targets["skill:status"]
    manifest = json.loads((Path(result["stage_dir"]) / "manifest.json").read_text(encoding="utf-8"))
    lives = [f["live"] for f in manifest["files"]]
    assert str(skill) in lives and str(project / ".claude" / "skills" / "project-preferences" / "SKILL.md") not in lives
    proposed = (Path(result["stage_dir"]) / manifest["files"][lives.index(str(skill))]["proposed"]).read_bytes()
    assert proposed.startswith(HAND_SKILL) and b"SKILLGRAD:LEARNED START" in proposed

    # adopt only the skill: the memory file (if proposed too) stays as it was; undo restores the skill
    adopt = subprocess.run(_cli("adopt", "--project", str(project), "--only", "status", "--json"),
                           capture_output=True, timeout=60)
    assert adopt.returncode == 0, adopt.stderr.decode()
    assert skill.read_bytes() == proposed and (project / "CLAUDE.md").read_bytes() == HAND_MEMORY
    status = json.loads(subprocess.run(_cli("status", "--project", str(project), "--json"), capture_output=True,
                                       timeout=60).stdout)
    assert status["proposals"][0]["status"] == ("partial" if len(lives) > 1 else "adopted")
    undo = subprocess.run(_cli("undo", "--project", str(project)), capture_output=True, timeout=60)
    assert undo.returncode == 0 and skill.read_bytes() == HAND_SKILL
