"""docs/guide/capable-models.md: the documented skillgrad role for a handoff server gives the agent a capable
teacher's window. Without `n_ctx` an `openai` role named `agent` (a name the model table does not know) got the
4,096-token default, and with it the small-teacher prompts (engine/teacher.py SMALL_WINDOW)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from skillgrad.config.schema import RoleConfig
from skillgrad.engine.teacher import SMALL_WINDOW
from skillgrad.models.factory import build_llm

DOC = Path(__file__).resolve().parents[1] / "docs" / "guide" / "capable-models.md"


def test_the_documented_handoff_teacher_role_gets_a_capable_window() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    roles = [b for b in (yaml.safe_load(x) for x in blocks) if b.get("model", {}).get("teacher", {}).get("model") == "agent"]
    assert len(roles) == 1, "capable-models.md should document one `model: agent` teacher role"
    teacher = build_llm(RoleConfig(**{**roles[0]["model"]["teacher"], "api_key": "x"}), "teacher")
    assert teacher.context_window > SMALL_WINDOW
