"""Grouping a night's tasks per file: each of the user's skills gets the tasks that used it, the night's skill
the others, the memory file all; plugin and built-in skills are never targets."""

from __future__ import annotations

from pathlib import Path

from skillgrad.envs.tasks.checks import Check
from skillgrad.envs.tasks.records import Judge, TaskRecord
from skillgrad.sleep.targets import plan_targets, skill_file


def _task(i: int, skills: list[str], files: dict[str, str] | None = None, project: str = "") -> TaskRecord:
    meta = {"skills": skills, "skill_files": files or {}, "project": project} if skills else {}
    return TaskRecord(task_id=f"t{i}", task=f"task {i}", split="train",
                      judge=Judge(kind="rule", checks=[Check(op="no_refusal")]), meta=meta)


def _skill(root: Path, name: str) -> Path:
    p = root / "skills" / name / "SKILL.md"
    p.parent.mkdir(parents=True)
    p.write_text(f"# {name}\n")
    return p.resolve()


def test_tasks_are_grouped_per_skill_file(tmp_path: Path) -> None:
    project, claude, codex = tmp_path / "proj", tmp_path / "claude", tmp_path / "codex"
    mig = _skill(project / ".claude", "db-migrations")
    notes = _skill(claude, "changelog")
    todo = _skill(project / ".codex", "todo-format")
    plugin = _skill(claude / "plugins" / "cache" / "superpowers", "code-review")
    default = project / ".claude" / "skills" / "skillgrad-learned" / "SKILL.md"
    tasks = [_task(0, ["db-migrations"]), _task(1, ["changelog", "db-migrations"]),
             _task(2, ["todo-format"], {"todo-format": ".codex/skills/todo-format/SKILL.md"}, str(project)),
             _task(3, ["superpowers:code-review"], {"superpowers:code-review": str(plugin)}),
             _task(4, []), _task(5, ["gone"])]
    targets = plan_targets(tasks, project=project, default_skill=default, memory=project / "CLAUDE.md",
                           claude_home=claude, codex_home=codex)
    got = {t.key: (t.live, [x.task_id for x in t.tasks]) for t in targets}
    assert got == {"skill:changelog": (notes, ["t1"]), "skill:db-migrations": (mig, ["t0", "t1"]),
                   "skill:todo-format": (todo, ["t2"]), "skill": (default, ["t3", "t4", "t5"]),
                   "memory": (project / "CLAUDE.md", [f"t{i}" for i in range(6)])}
    assert [t.key for t in targets][-2:] == ["skill", "memory"]  # memory last: under the improved skills
    assert skill_file("code-review", {"skill_files": {"code-review": str(plugin)}}, project, claude, codex) is None
    system = _skill(codex / "skills" / ".system", "imagegen")
    assert skill_file("imagegen", {"skill_files": {"imagegen": str(system)}}, project, claude, codex) is None


def test_the_nights_own_skill_used_in_a_session_is_the_default_target(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    status = _skill(project / ".claude", "status")
    targets = plan_targets([_task(0, ["status"])], project=project, default_skill=status, memory=None,
                           claude_home=tmp_path / "c", codex_home=tmp_path / "x")
    assert [(t.key, len(t.tasks)) for t in targets] == [("skill", 1)]


def test_a_night_reports_user_skills_it_cannot_train_and_never_fails_on_them(tmp_path: Path) -> None:
    """A skill with a broken learned-block marker, and one with too few tasks for train, selection and held-out:
    each target says why it was not trained; nothing is trained, nothing staged, no live file touched."""
    import asyncio

    from skillgrad.envs.tasks.records import write_tasks
    from skillgrad.sleep.night import run_night
    from skillgrad.sleep.settings import load_settings

    project = tmp_path / "proj"
    broken = project / ".claude" / "skills" / "broken" / "SKILL.md"
    small = _skill(project / ".claude", "small")
    broken.parent.mkdir(parents=True)
    broken.write_text("# broken\n<!-- SKILLGRAD:LEARNED START -->\nhalf a block\n")
    words = ["alpha rollout", "billing export", "cache warmup", "deploy window", "email relay", "feature flags"]
    splits = ["train", "val", "test", "train", "train", "test"]
    tasks = [_task(i, ["broken"] if i < 4 else ["small"]).model_copy(update={"task": f"status of {w}", "split": s})
             for i, (w, s) in enumerate(zip(words, splits, strict=True))]
    tasks_file = tmp_path / "tasks.jsonl"
    write_tasks(tasks_file, tasks)
    settings = load_settings(None, {"project": str(project), "evolve_memory": False, "min_heldout": 1,
                                    "claude_home": str(tmp_path / "claude"), "codex_home": str(tmp_path / "codex")})
    before = broken.read_bytes(), small.read_bytes()
    result = asyncio.run(run_night(settings, tasks_file=tasks_file))
    targets = result["targets"]
    assert "restore the marker" in targets["skill:broken"]["reason"]
    assert targets["skill:small"]["reason"] == ("not trained: 2 task(s) concern it: need train, selection and "
                                                "held-out ones (have 1, 0, 1)")
    assert targets["skill"]["reason"] == "not trained: every task used one of your own skills"
    assert result["status"] == "no_improvement" and "stage_dir" not in result
    assert (broken.read_bytes(), small.read_bytes()) == before


def test_a_user_skill_folder_with_evals_trains_on_them_too(tmp_path: Path) -> None:
    """A user's skill folder that ships evals/evals.json (a real public one) adds those evals as real tasks of its
    target: rule assertions as checks, sentences as a rubric."""
    import shutil

    fixtures = Path(__file__).parent / "fixtures" / "skills"
    project = tmp_path / "proj"
    for name in ("pr-naming-convention", "requirements-engineering"):
        shutil.copytree(fixtures / name, project / ".claude" / "skills" / name)
    targets = plan_targets([_task(0, ["pr-naming-convention"]), _task(1, ["requirements-engineering"])],
                           project=project, default_skill=project / "x" / "SKILL.md", memory=None,
                           claude_home=tmp_path / "c", codex_home=tmp_path / "x")
    got = {t.key: t.tasks for t in targets}
    pr = got["skill:pr-naming-convention"]
    assert [t.task_id for t in pr][:3] == ["t0", "evals:pr-naming-convention:valid-title-standard",
                                           "evals:pr-naming-convention:invalid-title-missing-ticket"]
    assert len(pr) == 7 and all(t.judge.kind == "rule" for t in pr[1:])
    assert pr[-1].judge.checks[0].op == "contains" and pr[-1].judge.checks[0].arg == "[TEAM-42]"
    req = got["skill:requirements-engineering"]
    assert len(req) == 4 and req[1].judge.kind == "rubric" and "Data (Input)" in req[1].judge.rubric
    assert all(t.origin == "real" for t in pr + req)
