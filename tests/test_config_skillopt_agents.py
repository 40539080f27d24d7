"""SkillOpt's codex_exec_* / claude_code_exec_* keys reach the real `codex exec` / `claude -p` subprocesses
(the fake agents in tests/fixtures/fake_agents record their argv and environment), and
rewrite_reasoning_effort reaches the rewrite call."""

from __future__ import annotations

import asyncio
import warnings

from skillgrad.config.loader import load_config
from skillgrad.models.factory import resolve_role
from skillgrad.models.providers import agents
from tests.test_config_skillopt_compat import FIX
from tests.test_providers_agents import _call, _environ, _request, bin_dir  # noqa: F401 - fixture


def _student_from(overrides: list[str], bin_dir, tmp_path):  # noqa: F811
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = load_config(FIX / "_base_" / "default.yaml", overrides)
    rc = resolve_role(cfg, "student")
    return agents.create(rc, "student", environ=_environ(bin_dir, tmp_path))


def test_codex_exec_keys_become_codex_flags(bin_dir, tmp_path):  # noqa: F811
    student = _student_from([
        "model.target_backend=codex_exec", "model.target=gpt-fake", "model.codex_exec_sandbox=workspace-write",
        "model.codex_exec_profile=review", "model.codex_exec_reasoning_effort=high",
        "model.codex_exec_approval_policy=never", "model.codex_exec_network_access=false",
        "model.codex_exec_web_search=true", f"model.codex_exec_path={bin_dir / 'codex'}",
    ], bin_dir, tmp_path)
    out = _call(student, _request("What is 2+2?"))
    argv = next(e for e in out.trace if e.get("type") == "fake.invocation")["argv"]
    assert argv[argv.index("--sandbox") + 1] == "workspace-write" and argv[argv.index("-p") + 1] == "review"
    assert argv[argv.index("-m") + 1] == "gpt-fake"
    for flag in ('model_reasoning_effort="high"', 'approval_policy="never"',
                 "sandbox_workspace_write.network_access=false", "tools.web_search=true"):
        assert flag in argv and argv[argv.index(flag) - 1] == "-c"


def test_claude_code_exec_keys_reach_claude(bin_dir, tmp_path):  # noqa: F811
    student = _student_from([
        "model.target_backend=claude_code_exec", "model.claude_code_exec_effort=low",
        "model.claude_code_exec_max_thinking_tokens=1234", f"model.claude_code_exec_path={bin_dir / 'claude'}",
    ], bin_dir, tmp_path)
    out = _call(student, _request("Name a colour."))
    init = out.trace[0]
    argv = init["argv"]
    assert argv[argv.index("--effort") + 1] == "low"
    assert "MAX_THINKING_TOKENS" in init["env_keys"]


def test_rewrite_reasoning_effort_reaches_the_rewrite_call():
    """Plumbing (a recording teacher): the effort travels as the request's `reasoning_effort` extra, which the
    OpenAI provider sends in place of the role's own effort."""
    from skillgrad.engine.modes import MODES
    from skillgrad.engine.stages.update import update

    seen: list[dict] = []

    class Teacher:
        async def ask(self, template, schema, **kw):
            seen.append({"template": template, **kw})

            class Reply:
                parsed = None

                def to_json(self):
                    return {}
            return Reply()

    asyncio.run(update("# S\n", [{"suggestion": "x"}], Teacher(), mode=MODES["rewrite_from_suggestions"],
                       rewrite_reasoning_effort="high"))
    assert seen[0]["template"] == "rewrite_skill" and seen[0]["extra"] == {"reasoning_effort": "high"}
