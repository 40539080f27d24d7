"""Gate rules, edit credit and the sealed test split inside the trainer, with the toy environment and a scripted
teacher (the mechanics; the real-model evidence is in test_honest_credit.py)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_engine_plumbing import WORDS, Scripted, events, run

from skillgrad.engine.context import RunContext
from skillgrad.engine.sealed import SealedItems, SealedSplitError
from skillgrad.envs.base import Item
from skillgrad.skill.units import edit_units, revert_units

INVENTED = "- The Zorblax team loves mangoes!"


def two_edits(user: str) -> dict:
    golds = re.findall(r"expected: (\w+)", user) or re.findall(r"Expected answer: (\w+)", user)
    return {"edits": [{"op": "append", "content": f"- {golds[0]}"}, {"op": "append", "content": INVENTED}]}


def history(run_dir: Path) -> list[dict]:
    return json.loads((run_dir / "history.json").read_text())


def test_mcnemar_gate_rejects_a_one_item_gain_that_strict_accepts(tmp_path: Path) -> None:
    strict_dir, strict, _ = run(tmp_path / "strict", "train.num_epochs=1", "evaluation.edit_credit=false")
    assert [h["action"] for h in history(strict_dir)] == ["accept_new_best", "accept_new_best"]
    rule = history(strict_dir)[0]["gate_rule"]
    assert rule["rule"] == "strict" and rule["decided_by"] == "strict" and rule["passed"] is True
    assert strict["gate_test"] == "strict"

    run_dir, summary, _ = run(tmp_path / "mcnemar", "train.num_epochs=1", "evaluation.gate_test=mcnemar",
                              "evaluation.edit_credit=false")
    h = history(run_dir)
    # each candidate passes 1 more of 4 items than the incumbent: one-sided exact p = 0.5, not below 0.05
    assert [x["action"] for x in h] == ["reject", "reject"]
    assert h[0]["candidate_gate_score"] > h[0]["score_before"]  # the strict rule alone would have accepted
    assert h[0]["gate_rule"]["decided_by"] == "mcnemar" and h[0]["gate_rule"]["p_value"] == 0.5
    assert h[0]["gate_rule"]["gained"] == 1 and h[0]["gate_rule"]["lost"] == 0
    gates = [e for e in events(run_dir) if e["event"] == "gate" and e.get("step") == 1]
    assert gates[0]["decided_by"] == "mcnemar" and gates[0]["p_value"] == 0.5 and "noise" in gates[0]["reason"]
    assert summary["gate_rule_rejects"] == 2 and summary["test_hard"] == 0.0


def test_min_delta_and_paired_bootstrap_are_wired(tmp_path: Path) -> None:
    run_dir, _, _ = run(tmp_path / "delta", "train.num_epochs=1", "evaluation.gate_min_delta=0.3",
                        "evaluation.edit_credit=false")
    h = history(run_dir)
    assert [x["action"] for x in h] == ["reject", "reject"] and h[0]["gate_rule"]["decided_by"] == "min_delta"
    run_dir, _, _ = run(tmp_path / "boot", "train.num_epochs=1", "evaluation.gate_test=paired_bootstrap",
                        "evaluation.gate_alpha=0.5", "evaluation.edit_credit=false")
    h = history(run_dir)
    # with alpha 0.5 a gain of 1/4 passes: (3/4)^4 ~ 0.32 of resamples show no gain
    assert h[0]["action"] == "accept_new_best" and h[0]["gate_rule"]["decided_by"] == "paired_bootstrap"
    assert 0.2 < h[0]["gate_rule"]["p_value"] < 0.45


def test_incumbent_reeval_scores_both_on_the_spare_validation_items(tmp_path: Path) -> None:
    # the gate sees 2 of the 4 validation items; the 2 others are fresh for the re-evaluation
    run_dir, _, _ = run(tmp_path, "train.num_epochs=1", "evaluation.sel_env_num=2", "evaluation.incumbent_reeval=true",
                        "evaluation.edit_credit=false")
    h = history(run_dir)
    first = next(x for x in h if x["gate_rule"].get("reeval"))
    assert "2 validation items outside" in first["gate_rule"]["reeval"] and first["gate_rule"]["n_items"] == 4
    step = f"steps/step_{first['step']:04d}"
    assert len((run_dir / step / "reeval_candidate/results.jsonl").read_text().splitlines()) == 2


def test_credit_drops_the_invented_edit_riding_along(tmp_path: Path) -> None:
    teacher = Scripted("teacher", {"AnalystOutput": two_edits})
    run_dir, summary, _ = run(tmp_path, "train.num_epochs=1", "optimizer.use_slow_update=false",
                              "gradient.merge_mode=concat", "evaluation.edit_credit=true", teacher=teacher)
    h = history(run_dir)
    assert h[0]["action"] == "accept_new_best"
    assert "Zorblax" in (run_dir / "steps/step_0001/candidate_skill.md").read_text()
    credit = json.loads((run_dir / "steps/step_0001/edit_credit.json").read_text())
    by_action = {d["action"]: d["text"] for d in credit["decisions"]}
    assert "Zorblax" in by_action["dropped"] and "Zorblax" not in by_action["kept"]
    assert credit["score"] >= credit["base_score"]
    best = (run_dir / "best_skill.md").read_text()
    assert "Zorblax" not in best and by_action["kept"].lstrip("- ") in best
    assert sum(w in best for w in WORDS) == 2  # one word per step, both kept
    assert h[0]["edit_credit"]["dropped"] == 1 and summary["edit_credit_dropped"] >= 2
    assert summary["final_edit_credit"]["dropped"] == 0  # nothing left to drop at run end
    assert any(e["event"] == "edit_credit" and e["action"] == "dropped" for e in events(run_dir))


def test_edit_units_revert_exactly() -> None:
    before = "# S\n\nFacts:\n- a\n\nRules:\n- z\n"
    after = "# S\n\nFacts:\n- a\n- b\n\n- c\n\nRules:\n- z (changed)\n"
    units = edit_units(before, after)
    assert [(u.kind, u.label()) for u in units] == [("insert", "- b"), ("insert", "- c"), ("replace", "- z (changed)")]
    assert revert_units(before, after, set()) == after
    assert revert_units(before, after, {0, 1, 2}) == before
    assert revert_units(before, after, {0, 2}) == "# S\n\nFacts:\n- a\n- c\n\nRules:\n- z\n"


def test_sealed_test_split_is_read_only_at_run_end(tmp_path: Path) -> None:
    run_dir, summary, _ = run(tmp_path / "ok", "train.num_epochs=1")
    assert summary["sealed_test"]["sealed"] is True and summary["sealed_test"]["scored_at_run_end"] is True
    assert "scored once, at run end" in summary["sealed_test"]["statement"]
    rows = (run_dir / "test_eval/results.jsonl").read_text().splitlines()
    assert len(rows) == len({json.loads(r)["item_id"] for r in rows}) == 4
    starts = [e for e in events(run_dir) if e["event"] == "stage_start"]
    first_test = next(i for i, e in enumerate(starts) if e["stage"].startswith("test_"))
    assert all(e["stage"].startswith("test_") for e in starts[first_test:])
    assert summary["test_intervals"]["best_vs_initial"]["n"] == 4


def test_a_stage_that_reads_test_items_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a (deliberately broken) stage that gates on test items instead of validation items
    monkeypatch.setattr(RunContext, "val_items", lambda self: self.splits.test[:2])
    with pytest.raises(SealedSplitError):
        run(tmp_path, "train.num_epochs=1")
    sealed = SealedItems([])
    assert len(sealed) == 0 and not sealed


def test_read_before_run_end_is_measured_not_promised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, clean, _ = run(tmp_path / "clean", "train.num_epochs=1", "evaluation.sealed_test=false")
    assert clean["sealed_test"]["read_before_run_end"] is False and clean["sealed_test"]["early_reads"] == 0
    # unsealed, a stage that selects on test items is not stopped, but the summary says so
    monkeypatch.setattr(RunContext, "val_items", lambda self: self.splits.test[:2])
    _, leaky, _ = run(tmp_path / "leaky", "train.num_epochs=1", "evaluation.sealed_test=false")
    assert leaky["sealed_test"]["read_before_run_end"] is True and leaky["sealed_test"]["early_reads"] > 0
    assert "read it" in leaky["sealed_test"]["statement"]
    sealed = SealedItems([Item(id="a", inputs={}, gold="x")])
    for leak in (lambda: [0] + sealed, lambda: sealed + [0], lambda: sealed == [], lambda: sealed * 2,
                 lambda: copy.copy(sealed)):
        with pytest.raises(SealedSplitError):
            leak()
    assert "gold" not in repr(sealed) and sealed.early_reads == 5


@given(st.lists(st.sampled_from(["- a", "- b", "", "# H", "text x", "- c"]), max_size=8),
       st.lists(st.sampled_from(["- a", "- b", "", "# H", "text y", "- d"]), max_size=8),
       st.sets(st.integers(0, 10)))
def test_edit_units_properties(a: list[str], b: list[str], drop: set[int]) -> None:
    before, after = "\n".join(a) + "\n", "\n".join(b) + "\n"
    units = edit_units(before, after)
    assert revert_units(before, after, set()) == after
    everything = revert_units(before, after, {u.index for u in units})
    assert everything.split() == before.split()  # whitespace-only differences are not units
    partial = revert_units(before, after, drop)
    assert edit_units(before, partial) is not None


def test_report_shows_intervals_rule_and_credit(tmp_path: Path) -> None:
    from skillgrad.runs.report import write_report

    teacher = Scripted("teacher", {"AnalystOutput": two_edits})
    run_dir, _, _ = run(tmp_path, "train.num_epochs=1", "optimizer.use_slow_update=false",
                        "gradient.merge_mode=concat", "evaluation.edit_credit=true", teacher=teacher)
    _, md = write_report(run_dir)
    text = md.read_text()
    assert "## Honest gains" in text and "95% bootstrap intervals" in text and "best − initial" in text
    assert "decided by" in text and "rule: strict" in text
    assert "Zorblax" in text.split("Edit credit", 1)[1]  # the dropped line is named
    assert "sealed" in text


def test_credit_resumes_after_a_kill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import skillgrad.engine.credit as credit

    original = credit.credit_edits

    async def killed_after_one_trial(before, after, base, score_fn, **kw):  # type: ignore[no-untyped-def]
        async def once(skill: str, unit: int) -> float:
            if unit > 0:
                raise KeyboardInterrupt("killed during edit credit")
            return await score_fn(skill, unit)
        return await original(before, after, base, once, **kw)

    teacher = Scripted("teacher", {"AnalystOutput": two_edits})
    args = ("train.num_epochs=1", "optimizer.use_slow_update=false", "gradient.merge_mode=concat", "evaluation.edit_credit=true")
    monkeypatch.setattr(credit, "credit_edits", killed_after_one_trial)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, *args, teacher=teacher)
    step = tmp_path / "run/steps/step_0001"
    assert not (step / "edit_credit.json").exists() and (step / "edit_credit/without_00/results.jsonl").exists()
    monkeypatch.setattr(credit, "credit_edits", original)
    run_dir, summary, _ = run(tmp_path, *args, teacher=teacher)
    assert summary["status"] == "completed" and "Zorblax" not in (run_dir / "best_skill.md").read_text()
    assert len((step / "edit_credit/without_00/results.jsonl").read_text().splitlines()) == 4  # reused, not re-run
