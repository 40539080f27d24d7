"""Agent Skills folders: SKILL.md + evals/evals.json trained as a task set, the skill-eval workspace, and
trigger evaluation of the description."""

from skillgrad.envs.skillfolder.env import SkillFolderEnv

__all__ = ["SkillFolderEnv"]
