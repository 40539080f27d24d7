"""Training a skill folder (`skillgrad train --skill DIR`): the run, the skill-eval workspace, the description
optimizer, and `skillgrad skill check|adopt|undo`. The formats and the environment live in envs/skillfolder/."""
