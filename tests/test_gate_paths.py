"""One gate on every path to a new best (engine/gate/__init__.py), tested on the real path: `judge_candidate` ->
`RunContext.evaluate` -> the local pool, and a whole toy run through the trainer.

- a tie goes to the tie-break only when it passes every other test (gate_test, gate_min_delta, gate_no_regression);
- a candidate becomes the new best only by passing the gate's tests against the best skill, so after a forced
  update (current below best) a candidate that beats current but not best by min_delta is accepted, not best;
- a forced update never becomes best."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
from test_gate_early_stop import CountingStudent, TableEnv, _ctx
from test_gate_tiebreak import _run

from skillgrad.engine.candidate import Verdict, judge_candidate
from skillgrad.engine.gate import gate_score

BEST, CURRENT, CAND = "# best skill\n\nA.\n", "# current skill\n\nB.\n", "# candidate skill\n\nC.\n"


def _head(skill: str) -> str:
    return skill.splitlines()[0]


async def _judge(root: Path, table: dict[str, list[float]], overrides: list[str], *, current: str = BEST,
                 force: bool = False, tiebreak_says: bool | None = None) -> tuple[Verdict, list[str], Any]:
    """Score BEST (and CURRENT), make them best and current, then judge CAND against current."""
    n = len(table[BEST])
    env = TableEnv({_head(k): [(x, x) for x in v] for k, v in table.items()}, n, 0, random.Random(0), set())
    ctx = _ctx(root, env, CountingStudent(), [f"evaluation.sel_env_num={n}", "evaluation.incumbent_reeval=false",
                                              *overrides])
    best = await ctx.evaluate("best_eval", BEST, stage="baseline")
    cur = await ctx.evaluate("current_eval", current, stage="baseline")
    st = ctx.state
    st.best_skill, st.best_score, st.current_skill, st.current_score = BEST, best.score, current, cur.score
    asked: list[str] = []

    async def tiebreak(incumbent: str, candidate: str) -> tuple[bool, dict[str, Any]]:
        asked.append(candidate)
        return bool(tiebreak_says), {"decided_by": "train_tiebreak", "reason": "stub"}

    v = await judge_candidate(ctx, CAND, "step_0002", folder="steps/step_0002", stage="gate", step=2, epoch=1,
                              force=force, tiebreak=None if tiebreak_says is None else tiebreak)
    return v, asked, st


@pytest.mark.parametrize("overrides,decided_by", [
    (["evaluation.gate_no_regression=true"], "no_regression"),
    (["evaluation.gate_min_delta=0.1"], "min_delta"),
    (["evaluation.gate_test=mcnemar"], "mcnemar"),
])
def test_a_tie_reaches_the_tie_break_only_through_the_other_tests(tmp_path: Path, overrides: list[str],
                                                                  decided_by: str) -> None:
    # a tie at 0.5 that loses item 0 and gains item 2; the tie-break would accept it
    table = {BEST: [1, 1, 0, 0], CAND: [0, 1, 1, 0]}
    v, asked, st = asyncio.run(_judge(tmp_path, table, overrides, tiebreak_says=True))
    assert v.action == "reject" and v.rule["decided_by"] == decided_by and v.rule["tie"] is True
    assert asked == [] and st.best_skill == BEST
    # with none of those tests switched on, the same tie goes to the tie-break, which decides it
    v, asked, st = asyncio.run(_judge(tmp_path / "plain", table, [], tiebreak_says=True))
    assert v.action == "accept_new_best" and asked == [CAND] and st.best_skill == CAND


def test_a_tie_at_the_ceiling_with_min_delta_and_no_regression_never_becomes_best(tmp_path: Path) -> None:
    """The issue's run: with gate_min_delta 0.5 and gate_no_regression, steps 2-4 became the new best at
    validation 1.0 -> 1.0 through the training-task tie-break. Now only step 1's real gain does."""
    history, _ = _run(tmp_path, "evaluation.gate_min_delta=0.5", "evaluation.gate_no_regression=true")
    assert history[0]["action"] == "accept_new_best"
    later = history[1:]
    assert later and all(h["action"] == "reject" for h in later)
    assert all(h["gate_rule"]["decided_by"] == "min_delta" and h["gate_rule"].get("tie") for h in later)


def test_a_new_best_passes_the_gate_against_best_not_only_against_current(tmp_path: Path) -> None:
    """After a forced update current (0.2) sits below best (0.6). A candidate at 0.7 clears min_delta 0.2 against
    current but not against best, and fails an item best passed: it becomes current, not best."""
    table = {BEST: [1] * 6 + [0] * 4, CURRENT: [1] * 2 + [0] * 8, CAND: [0] + [1] * 7 + [0] * 2}
    v, _, st = asyncio.run(_judge(tmp_path, table, ["evaluation.gate_min_delta=0.2"], current=CURRENT))
    assert v.action == "accept" and not v.is_new_best
    assert v.rule["vs_best"]["passed"] is False and "min_delta" in v.rule["vs_best"]["reason"]
    assert st.current_skill == CAND and st.best_skill == BEST and st.best_score == pytest.approx(0.6)
    # the same candidate clearing min_delta against best too is the new best
    table[CAND] = [1] * 9 + [0]
    v, _, st = asyncio.run(_judge(tmp_path / "clears", table, ["evaluation.gate_min_delta=0.2"], current=CURRENT))
    assert v.action == "accept_new_best" and v.rule["vs_best"]["passed"] is True and st.best_skill == CAND


def test_a_forced_update_never_becomes_best(tmp_path: Path) -> None:
    table = {BEST: [1] * 2 + [0] * 2, CAND: [1] * 4}
    v, _, st = asyncio.run(_judge(tmp_path, table, [], force=True))
    assert v.action == "force_accept" and not v.is_new_best
    assert st.current_skill == CAND and st.best_skill == BEST
    assert st.best_score == gate_score(0.5, 0.5, "hard", 0.0)


def test_gate_score_metrics() -> None:
    from skillgrad.errors import ConfigError

    assert gate_score(0.5, 0.9, "hard", 0.3) == 0.5
    assert gate_score(0.5, 0.9, "soft", 0.3) == 0.9
    assert gate_score(0.5, 0.9, "mixed", 0.25) == pytest.approx(0.75 * 0.5 + 0.25 * 0.9)
    assert gate_score(0.5, 0.9, "hard", 0.3, density_bonus=0.01) == pytest.approx(0.51)
    with pytest.raises(ConfigError):
        gate_score(0.5, 0.9, "max", 0.3)


def test_a_waived_few_shot_start_is_judged_on_its_score_and_excuses_no_later_candidate(tmp_path: Path) -> None:
    """A candidate the guard flags ("ok" for every item) is blocked against an incumbent whose replies were not;
    with a waiver (a gold few-shot start, engine/baselines.py) it faces the rest of the gate and is accepted with
    the guard's reason on its verdict. Once it is the incumbent, its own flag no longer excuses a later flagged
    candidate, which is blocked although it scores higher, also after the state is saved and read back (resume)."""
    init, few, later = "# initial skill\n\nI.\n", "# fewshot skill\n\nF.\n", "# later skill\n\nL.\n"
    table = {init: [0, 0, 0, 0], few: [1, 1, 0, 0], later: [1, 1, 1, 0]}
    env = TableEnv({_head(k): [(x, x) for x in v] for k, v in table.items()}, 4, 0, random.Random(0),
                   {_head(few), _head(later)})
    overrides = ["evaluation.sel_env_num=4", "evaluation.incumbent_reeval=false"]

    async def go() -> None:
        ctx = _ctx(tmp_path, env, CountingStudent(), overrides)
        ctx.init_state(init)
        ctx.state.current_score = ctx.state.best_score = (await ctx.evaluate("initial", init, stage="baseline")).score

        def judge(c: Any, skill: str, origin: str, waiver: str = "") -> Any:
            return judge_candidate(c, skill, origin, folder=origin, stage="gate", step=0, epoch=0, guard_waiver=waiver)

        unwaived = await judge(ctx, few, "fewshot_unwaived")
        assert unwaived.action == "blocked" and "same short reply for 4 of 4" in unwaived.rule["reason"]
        v = await judge(ctx, few, "fewshot_baseline", "all gold")
        assert v.action == "accept_new_best" and v.rule["decided_by"] != "degenerate"
        assert "same short reply" in v.rule["guard_waived"] and v.rule["guard_waived_why"] == "all gold"
        assert ctx.state.best_skill == few and list(ctx.state.guard_waived.values()) == [v.rule["guard_waived"]]
        assert ctx.state.judgements[-1]["guard_waived"] == v.rule["guard_waived"]
        ctx.save_state()
        resumed = _ctx(tmp_path, env, CountingStudent(), overrides)
        assert resumed.load_state() and resumed.state.guard_waived == ctx.state.guard_waived
        for c in (ctx, resumed):
            w = await judge(c, later, f"step_0001_{id(c)}")
            assert w.score > v.score and w.action == "blocked" and w.rule["decided_by"] == "degenerate"
            assert c.state.best_skill == few

    asyncio.run(go())
