"""Each benchmark ships its own failure analyst prompt (found before the generic one) and an initial skill
that is a starting point for the task (procedure, output format, pitfalls), not a stub."""

from __future__ import annotations

import pytest

from skillgrad.config.schema import EnvSection
from skillgrad.engine.prompts import PromptLibrary
from skillgrad.engine.schemas import analyst_model
from skillgrad.envs.registry import env_class

BENCHMARKS = ["searchqa", "livemathematicianbench", "docvqa", "officeqa", "spreadsheetbench", "alfworld",
              "textworld"]


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_analyst_prompt_and_initial_skill(name: str) -> None:
    env = env_class(name)(EnvSection(name=name))
    lib = PromptLibrary(env.prompt_dirs())
    tpl = lib.get("analyst_error")
    assert tpl.source.endswith(f"/{env.package_dir.name}/prompts/analyst_error.md")
    system, user = tpl.render(skill="SKILL", budget=3, buffer="", meta="", n=2, trajectories="TRAJ")
    assert "at most 3 edits" in " ".join(system.split()) and "Failure types in this benchmark" in system
    assert "SKILL" in user and "TRAJ" in user
    # every failure_kind the prompt names is one the analyst schema accepts
    kinds = set(analyst_model(3, 600).model_json_schema()["$defs"]["EditProposal"]["properties"]["failure_kind"]["enum"])
    named = {k.split('"')[0] for k in system.split('failure_kind "')[1:]}
    assert named and named <= kinds, named - kinds
    skill = env.initial_skill()
    assert "No rules yet" not in skill and len(skill) > 600
    for heading in ("## Procedure", "## Output format", "## Pitfalls"):
        assert heading in skill, (name, heading)
    # the generic success analyst is still used (no env override needed)
    assert lib.get("analyst_success").source == "skillgrad/prompts/analyst_success.md"
