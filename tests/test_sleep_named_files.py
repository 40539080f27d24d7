"""The replayed task has the context the user had: files a request named (@-mention, Codex "Files mentioned",
a project path in plain words) are read at harvest time into the task (bounded, redacted) and put in front of
the request the student gets."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from skillgrad.config.schema import EnvSection
from skillgrad.envs.tasks.checks import Check
from skillgrad.envs.tasks.env import TasksEnv, TasksOptions, to_item
from skillgrad.sleep import mine, named_files, review
from skillgrad.sleep.harvest import HarvestSettings, claude_code, codex

FIX = Path(__file__).parent / "fixtures" / "sessions"
SECRET = "sk-ant-api03-" + "x" * 40


def _session(src: Path, old_cwd: str, project: Path, tmp: Path, parser):  # noqa: ANN001
    f = tmp / src.name
    f.write_text(src.read_text(encoding="utf-8").replace(old_cwd, str(project)), encoding="utf-8")
    return parser.parse_session(f, HarvestSettings())


def _tasks(d):  # noqa: ANN001, ANN202
    return [mine.to_record(d, t.prompt, [Check(op="no_refusal"), Check(op="min_chars", arg="5")], "", "heuristic",
                           [], i) for i, t in enumerate(d.turns)]


def test_named_files_are_read_into_the_task_bounded_and_redacted(tmp_path: Path) -> None:
    project = tmp_path / "todo-app"
    (project / "src" / "db").mkdir(parents=True)
    (project / "src" / "db" / "schema.ts").write_text(f"export const due = 'date';\nconst key = '{SECRET}';\n")
    (project / "src" / "export.ts").write_text("export function toCsv() {\n" + "  // row\n" * 400 + "}\n")
    d = _session(next((FIX / "claude_code_skills").rglob("*.jsonl")), "/home/dev/work/todo-app", project, tmp_path,
                 claude_code)
    tasks = named_files.with_named_files(_tasks(d), [d])
    ctx = [t.meta.get("context", []) for t in tasks]
    assert [[f["path"] for f in c] for c in ctx] == [["src/db/schema.ts"], [], ["src/export.ts"], []]
    schema = ctx[0][0]
    assert "export const due" in schema["text"] and SECRET not in schema["text"] and "[REDACTED]" in schema["text"]
    big = ctx[2][0]  # a long file is cut to the per-file bound and says so
    assert big["truncated"] and len(big["text"]) <= named_files.MAX_FILE_CHARS
    assert tasks[0].meta["skills"] == ["db-migrations"] and tasks[1].meta["skills"] == ["changelog"]
    assert review.uses_text(tasks[0]) == "skills: db-migrations; files: src/db/schema.ts"  # the --review table
    assert review.uses_text(tasks[2]) == "files: src/export.ts"


def test_codex_files_mentioned_outside_or_missing_or_secret_are_left_out(tmp_path: Path) -> None:
    project = tmp_path / "notes"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "todo.md").write_text("- [ ] ship (due 03-09)\n- [ ] tests (due 03-08)\n")
    (project / ".env").write_text(f"KEY={SECRET}\n")
    d = _session(next((FIX / "codex_skills").rglob("rollout-*.jsonl")), "/home/dev/work/notes", project, tmp_path,
                 codex)
    tasks = named_files.with_named_files(_tasks(d), [d])
    assert tasks[1].meta["context"] == [{"path": "docs/todo.md", "truncated": False,
                                         "text": "- [ ] ship (due 03-09)\n- [ ] tests (due 03-08)\n"}]
    assert named_files.read_named_files(str(project), "read .env and ../../etc/passwd and /etc/hosts", []) == []
    (project / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    assert named_files.read_named_files(str(project), "see @logo.png", ["logo.png"]) == []


def test_the_replay_prompt_holds_the_named_files_before_the_request(tmp_path: Path, embedded_student) -> None:
    project = tmp_path / "todo-app"
    (project / "src" / "db").mkdir(parents=True)
    (project / "src" / "db" / "schema.ts").write_text("export const due = 'date';\n")
    d = _session(next((FIX / "claude_code_skills").rglob("*.jsonl")), "/home/dev/work/todo-app", project, tmp_path,
                 claude_code)
    task = named_files.with_named_files(_tasks(d), [d])[0]
    env = TasksEnv(EnvSection(name="tasks"), TasksOptions(max_tokens=8))
    traj = asyncio.run(env.run_task(to_item(task), "Answer briefly.", embedded_student))
    asked = [m["content"] for m in traj.messages if m["role"] == "user"][0]
    assert asked.startswith("Files I named:\n\nsrc/db/schema.ts:\n```\nexport const due = 'date';\n```")
    assert asked.endswith(task.task) and traj.answer  # the embedded model answered the request with the file
    shutil.rmtree(project)
