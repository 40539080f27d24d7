"""A skill folder's evals as `tasks` records, so that Sleep trains a user's skill on the author's own test cases
as well as on the tasks mined from sessions (sleep/targets.py).

An eval whose assertions are all plain rules becomes a rule-judged task with those checks; any other becomes a
rubric-judged task whose rubric is its assertions (or its expected output) in words. A folder whose files do not
parse contributes nothing: a night never fails on a user's skill.
"""

from __future__ import annotations

from pathlib import Path

from skillgrad.envs.skillfolder.folder import read_skill_folder
from skillgrad.envs.skillfolder.grading import expected_statement
from skillgrad.envs.tasks.records import Judge, TaskRecord
from skillgrad.errors import DataError

ORIGIN_PREFIX = "evals:"


def eval_tasks(skill_md: Path) -> list[TaskRecord]:
    """The evals of the skill whose SKILL.md is `skill_md`, as real tasks using that skill."""
    root = skill_md.parent
    if not (root / "evals" / "evals.json").is_file():
        return []
    try:
        folder = read_skill_folder(root)
    except DataError:
        return []
    out = []
    for c in folder.cases:
        checks = [a.check for a in c.assertions if a.check is not None]
        if c.assertions and len(checks) == len(c.assertions):
            judge = Judge(kind="rule", checks=checks)
        else:
            words = [a.text for a in c.assertions if a.check is None] or [expected_statement(c)]
            judge = Judge(kind="rubric", rubric=" ".join(words))
        context = [{"path": f, "text": (root / f).read_text(encoding="utf-8", errors="replace")[:4000]}
                   for f in c.files]
        out.append(TaskRecord(task_id=f"{ORIGIN_PREFIX}{folder.name}:{c.id}", task=c.prompt, judge=judge,
                              task_type="skill-eval",
                              meta={"skills": [folder.name], "skill_files": {folder.name: str(skill_md)},
                                    **({"context": context} if context else {})}))
    return out
