"""One candidate pipeline (engine/candidate.py): every way a skill can change - step, meta reflect, slow update,
edit credit, final promotion - is judged by the same gate (evaluation.gate_test, min_delta, no_regression) on
the selection split, with its origin recorded. Plumbing with the toy environment and a scripted teacher; the
real-model runs are in test_teacher_paths_real.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_engine_plumbing import WORDS, Scripted, events, run

from skillgrad.models.base import Completion, Usage

ALL_WORDS = "- alpha bravo charlie delta"  # solves all 4 selection items at once: McNemar p = 0.5**4 = 0.0625


def state(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "runtime_state.json").read_text())


def test_meta_candidate_cannot_pass_on_the_plain_strict_rule(tmp_path: Path) -> None:
    # steps gain 1 of 4 items (p = 0.5, rejected); the meta candidate gains 4 (p = 0.0625): not below 0.05 either
    meta = {"edits": [{"op": "append", "content": ALL_WORDS}], "meta_summary": "all words"}
    teacher = Scripted("teacher", {"MetaReflect": meta})
    run_dir, summary, _ = run(tmp_path, "train.num_epochs=1", "evaluation.gate_test=mcnemar",
                              "optimizer.use_meta_reflect=true", "optimizer.use_slow_update=false",
                              "evaluation.edit_credit=false", teacher=teacher)
    gate = json.loads((run_dir / "meta_reflect/epoch_01/gate_result.json").read_text())
    assert gate["gate_score"] > gate["score_before"]  # the strict rule alone would have made it best
    assert gate["action"] == "reject" and gate["origin"] == "meta_reflect_epoch_01"
    assert gate["rule"]["decided_by"] == "mcnemar" and gate["rule"]["p_value"] == 0.0625
    assert "alpha bravo" not in (run_dir / "best_skill.md").read_text()
    assert state(run_dir)["best_origin"] == "initial_skill" and summary["test_hard"] == 0.0


def test_slow_update_gated_and_force_accepted_then_promotion_all_pass_the_same_gate(tmp_path: Path) -> None:
    slow = {"slow_update_content": "Words: alpha bravo charlie delta"}
    args = ("train.num_epochs=2", "evaluation.gate_test=mcnemar", "evaluation.edit_credit=false",
            "optimizer.use_meta_skill=false")
    gated, _, _ = run(tmp_path / "gated", *args, "optimizer.slow_update_gate_with_selection=true",
                      teacher=Scripted("teacher", {"SlowUpdate": slow}))
    action = json.loads((gated / "slow_update/epoch_02/slow_action.json").read_text())
    assert action["action"] == "reject" and action["rule"]["decided_by"] == "mcnemar"
    assert action["origin"] == "slow_update_epoch_02"
    assert "alpha bravo" not in (gated / "best_skill.md").read_text()

    # SkillOpt's default: the slow update is force-accepted into current (never into best) ...
    forced, summary, _ = run(tmp_path / "forced", *args, teacher=Scripted("teacher", {"SlowUpdate": slow}))
    action = json.loads((forced / "slow_update/epoch_02/slow_action.json").read_text())
    assert action["action"] == "force_accept" and action["rule"]["decided_by"] == "force"
    assert "alpha bravo" in state(forced)["current_skill"]
    # ... and the run-end promotion of that current skill is judged by the same McNemar gate against best
    promo = [e for e in events(forced) if e["event"] == "final_promotion"]
    assert promo and promo[0]["promoted"] is False and promo[0]["decided_by"] == "mcnemar"
    assert promo[0]["p_value"] == 0.0625 and promo[0]["origin"] == "slow_update_epoch_02"
    assert "alpha bravo" not in (forced / "best_skill.md").read_text() and summary["test_hard"] == 0.0


OPENING = "Thank you so much for your question, I am always happy to help you with words like this one:"


class GameableStudent(Scripted):
    """Answers word k when the skill lists it; a skill line `ANSWER ALL: ...` makes it reply that for every task,
    `OPEN ALL` makes it answer every task right behind the same long opening."""

    async def complete(self, messages: list[dict[str, Any]], **kw: Any) -> Completion:
        skill, question = str(messages[0]["content"]), str(messages[-1]["content"])
        k = int(question.rsplit(" ", 1)[-1].rstrip("?"))
        if "ANSWER ALL:" in skill:
            text = skill.split("ANSWER ALL:", 1)[1].splitlines()[0].strip()
        elif "OPEN ALL" in skill:  # the right word, behind the student's own long stock opening
            text = f"{OPENING} {WORDS[k]}"
        else:
            text = WORDS[k] if f"- {WORDS[k]}" in skill else f"I do not know word number {k}"
        return Completion(text=text, usage=Usage(5, 5))


@pytest.mark.parametrize("line,reason,kind", [
    ("ANSWER ALL: alpha bravo charlie delta", "same short reply for 4 of 4", "same short reply"),
    ("OPEN ALL", "4 of 4 replies open with the same", "shared opening")])
def test_a_candidate_whose_replies_turn_degenerate_is_blocked_whatever_its_score(tmp_path: Path, line: str,
                                                                                 reason: str, kind: str) -> None:
    meta = {"edits": [{"op": "append", "content": line}], "meta_summary": ""}
    run_dir, summary, _ = run(tmp_path, "train.num_epochs=1", "optimizer.use_meta_reflect=true",
                              "optimizer.use_slow_update=false", "evaluation.edit_credit=false",
                              teacher=Scripted("teacher", {"MetaReflect": meta}), student=GameableStudent("student"))
    steps = json.loads((run_dir / "history.json").read_text())
    assert steps[0]["action"] == "accept_new_best"  # a real one-word gain is not blocked
    gate = json.loads((run_dir / "meta_reflect/epoch_01/gate_result.json").read_text())
    assert gate["gate_score"] == 1.0 > gate["score_before"]  # every selection item "passes" ...
    assert gate["action"] == "blocked" and gate["rule"]["decided_by"] == "degenerate"  # ... with one reply
    assert reason in gate["rule"]["reason"]
    assert line.split(":")[0] not in (run_dir / "best_skill.md").read_text() and summary["status"] == "completed"
    assert summary["degenerate_blocked"] == 1 and summary["degenerate_by_kind"] == {kind: 1}
