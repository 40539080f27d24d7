"""The `tasks` environment: any SKILL.md trained on a JSONL of rule- or rubric-judged tasks (see env.py)."""

from skillgrad.envs.tasks.checks import CHECK_OPS, Check, score_checks
from skillgrad.envs.tasks.env import TasksEnv, TasksOptions
from skillgrad.envs.tasks.records import Judge, TaskRecord, read_tasks, stable_split, write_tasks

__all__ = ["CHECK_OPS", "Check", "Judge", "TaskRecord", "TasksEnv", "TasksOptions", "read_tasks", "score_checks",
           "stable_split", "write_tasks"]
