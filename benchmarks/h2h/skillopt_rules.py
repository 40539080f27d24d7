"""SkillOpt's own trainer on the suite's rule-judged skills: a SkillOpt environment registered from outside.

    <peers venv python> benchmarks/h2h/skillopt_rules.py --config skillopt.yaml     (run by run_skillopt.py)

SkillOpt 0.2.0 adds an environment by registering an `EnvAdapter` subclass in the `_ENV_REGISTRY` of its
`scripts/train.py` (its envs/_template README). This file does that without touching SkillOpt's tree, then calls
that module's `main`. The adapter subclasses SkillOpt's SearchQA adapter, so the split_dir data loading,
batching, analyst reflection (with SkillOpt's generic prompts) and the whole training loop stay SkillOpt's; only
the rollout differs: the student gets the skill as its system text and the task as its user message through
SkillOpt's own target client (`chat_target`), with the item's reply cap, and the reply is scored by skillgrad's
rule checks (src/skillgrad/envs/tasks/checks.py, loaded by path: it needs only pydantic, which SkillOpt's openai
dependency brings). The conversation and its verdict go where SkillOpt's reflection reads them.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

CHECKS_PY = Path(__file__).resolve().parents[2] / "src" / "skillgrad" / "envs" / "tasks" / "checks.py"
ENV_NAME = "skillgrad_rules"


def load_checks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("h2h_rule_checks", CHECKS_PY)
    assert spec is not None and spec.loader is not None, CHECKS_PY
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # pydantic resolves the models' annotations through sys.modules
    spec.loader.exec_module(mod)
    return mod


def rollout_one(item: dict[str, Any], skill: str, out_dir: Path, checks: ModuleType) -> dict[str, Any]:
    from skillopt.model import chat_target

    rules = [checks.Check.model_validate(c) for c in item["checks"]]
    res: dict[str, Any] = {"id": str(item["id"]), "question": item["question"], "task_description": item["question"],
                           "gold_answers": item.get("answers", []), "hard": 0, "soft": 0.0, "response": "",
                           "fail_reason": "", "agent_ok": False, "n_turns": 0}
    pred = out_dir / "predictions" / res["id"]
    pred.mkdir(parents=True, exist_ok=True)
    try:
        reply, _ = chat_target(system=skill, user=item["question"], max_completion_tokens=int(item["max_tokens"]),
                               retries=2, stage="rollout")
        hard, soft, reason = checks.score_checks(rules, reply.strip())
        res.update(response=reply, hard=int(hard), soft=float(soft), fail_reason="" if hard else reason,
                   agent_ok=True, n_turns=1)
    except Exception as e:  # noqa: BLE001 - a failed call is a failed, scored item (SkillOpt's rollouts do the same)
        res["fail_reason"] = f"error: {type(e).__name__}: {e}"
    verdict = f"[EVALUATION RESULT]\nhard: {res['hard']}  soft: {res['soft']:.2f}\n{res['fail_reason'] or 'all checks pass'}"
    (pred / "target_system_prompt.txt").write_text(skill, encoding="utf-8")
    (pred / "target_user_prompt.txt").write_text(item["question"], encoding="utf-8")
    (pred / "conversation.json").write_text(json.dumps(
        [{"type": "message", "turn": 1, "content": res["response"]}, {"role": "system", "content": verdict}],
        indent=1), encoding="utf-8")
    return res


def main() -> None:
    from skillopt.envs.searchqa.adapter import SearchQAAdapter

    from scripts import train  # type: ignore[attr-defined]  # SkillOpt's trainer (`skillopt-train`)

    checks = load_checks()

    class RulesAdapter(SearchQAAdapter):
        def rollout(self, env_manager: Any, skill_content: str, out_dir: str, **kwargs: Any) -> list[dict[str, Any]]:
            return [rollout_one(it, skill_content, Path(out_dir), checks) for it in env_manager]

        def get_task_types(self) -> list[str]:
            return ["rules"]

    train._ENV_REGISTRY[ENV_NAME] = RulesAdapter
    train.main()


if __name__ == "__main__":
    main()
