"""Edit-level credit with the real embedded student: an invented line that rode along with helpful facts is
dropped, the facts stay, and the pruned skill scores at least what the accepted candidate scored.

The teacher is scripted so that the two edits are known (a block of true facts, one invented sentence); the
student, the environment, the scoring and the credit stage are all real."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from conftest import local_role
from test_engine_plumbing import Scripted

from skillgrad.config.loader import load_config
from skillgrad.core.events import EventLog
from skillgrad.engine.trainer import Trainer
from skillgrad.envs.facts.env import FactsEnv, FactsOptions
from skillgrad.models.budget import Budget
from skillgrad.models.factory import Models, build_llm
from skillgrad.models.meter import Meter
from skillgrad.runs.store import RunStore

INVENTED = "- The Zorblax team loves mangoes!"


@pytest.mark.slow
def test_credit_drops_an_invented_edit_with_the_embedded_student(tmp_path: Path, gguf_path: Path) -> None:
    cfg = load_config(None, ["env.name=facts", "env.limit=4", "env.workers=1", "env.max_tokens=32",
                             "train.batch_size=4", "train.num_epochs=1", "gradient.merge_mode=concat",
                             "gradient.failure_only=true", "optimizer.use_slow_update=false",
                             "optimizer.use_meta_skill=false", "optimizer.learning_rate=4",
                             "optimizer.min_learning_rate=2", "evaluation.gate_metric=hard",
                             "evaluation.edit_credit=true",
                             # the scripted edits alone: a verified worked example would be credited too
                             "optimizer.demonstrations=0", "optimizer.start_from=initial"])
    env = FactsEnv(cfg.env, FactsOptions(n_facts=10))
    facts = "\n".join(f"- {f.sentence}" for f in env.facts[:2])
    # every analyst call proposes the same two edits: two facts the questions need, and an invented sentence
    teacher = Scripted("teacher", {"AnalystOutput": {"edits": [{"op": "append", "content": facts},
                                                               {"op": "append", "content": INVENTED}]}})
    student = build_llm(local_role(gguf_path, max_tokens=32), "student")
    models = Models(teacher=teacher, student=student, meter=Meter(), budget=Budget(), cache=None)
    run_dir = tmp_path / "run"
    summary = asyncio.run(Trainer(cfg, env, models, RunStore(run_dir), EventLog(run_dir / "events.jsonl")).run())

    step = json.loads((run_dir / "steps/step_0001/step_record.json").read_text())
    assert step["action"] == "accept_new_best"
    cand = (run_dir / "steps/step_0001/candidate_skill.md").read_text()
    assert INVENTED in cand and facts in cand  # both edits were applied and the pair passed the gate
    credit = json.loads((run_dir / "steps/step_0001/edit_credit.json").read_text())
    decisions = {d["text"]: d for d in credit["decisions"]}
    assert decisions[INVENTED]["action"] == "dropped"
    assert decisions[INVENTED]["score_without"] >= decisions[INVENTED]["score_with"]
    kept = [t for t, d in decisions.items() if d["action"] == "kept"]
    assert kept and all(t.lstrip("- ") in facts for t in kept)
    for t in kept:  # each kept line was measured: removing it lowered the selection score
        assert decisions[t]["score_without"] < decisions[t]["score_with"]
    assert credit["score"] >= credit["base_score"] > summary["baseline_selection_gate_score"]
    best = (run_dir / "best_skill.md").read_text()
    assert INVENTED not in best and all(t in best for t in kept)
    # the trials were real student runs on the 4 validation items
    trials = list((run_dir / "steps/step_0001/edit_credit").glob("without_*/results.jsonl"))
    assert trials and all(len(p.read_text().splitlines()) == 4 for p in trials)
    assert summary["final_edit_credit"] is not None and summary["sealed_test"]["sealed"] is True
    print("credit decisions:", json.dumps(credit["decisions"], indent=1))
