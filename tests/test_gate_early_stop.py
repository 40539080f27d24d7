"""The gate's early stop (engine/gate/early.py, `evaluation.gate_early_stop`): a candidate stops being scored on the
selection split once the items scored cap it where the strict rule rejects it.

The evidence that it never changes a verdict: the real candidate pipeline (`judge_candidate` -> `RunContext.evaluate`
-> `run_items` -> the local pool) runs with the early stop on and off on many random per-item score tables, under
every rule the config allows (hard / soft / mixed metric, semantic-density bonus, strict / paired_bootstrap /
mcnemar, min_delta, no_regression, incumbent re-evaluation, the training-task tie-break, promotion to best, the
gate off, force), with random completion orders and pool sizes, and with part of the candidate's items already
saved (a resumed run). Plumbing with a table-driven environment; the measured runs with the embedded model are in
docs/benchmarks.md ("Head to head")."""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
from pathlib import Path
from typing import Any, ClassVar

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_engine_plumbing import WORDS, Scripted, events, run

from skillgrad.config.loader import load_config
from skillgrad.core.events import EventLog
from skillgrad.engine.candidate import judge_candidate
from skillgrad.engine.context import RunContext
from skillgrad.engine.gate import gate_score
from skillgrad.engine.gate.early import StopRule
from skillgrad.engine.stages.rollout import RolloutResult
from skillgrad.envs.base import EnvOptions, Item, Splits, Trajectory
from skillgrad.models.base import Completion, Usage
from skillgrad.models.budget import Budget
from skillgrad.models.factory import Models
from skillgrad.models.meter import Meter
from skillgrad.runs.store import RunStore

INCUMBENT, CANDIDATE = "# incumbent skill\n\nBe brief.\n", "# candidate skill\n\nBe brief and exact.\n"
SCORES = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]) | st.floats(0.0, 1.0)
HARD = st.sampled_from([0.0, 1.0]) | SCORES
ITEM = st.tuples(HARD, SCORES) | st.sampled_from([(0.0, 0.0), (1.0, 1.0), (1.0, 1.0), (0.0, 0.5)])
WEAK = st.sampled_from([(0.0, 0.0), (0.0, 0.0), (0.0, 0.25), (1.0, 1.0)])  # a candidate that breaks most items
VOCAB = ("amber basin cedar delta ember fjord garnet harbor island jasper kettle lagoon meadow nickel orchid "
         "pepper quartz raven saddle timber umber velvet walnut yonder zephyr anchor bramble cobalt dune falcon").split()


def _reply(i: int, ok: bool) -> str:
    """A reply of its own for every item (the degenerate-reply check sees no template)."""
    return " ".join(VOCAB[(i * 7 + k * 3) % len(VOCAB)] for k in range(6)) + (" indeed" if ok else " perhaps")


class CountingStudent:
    name, supports_vision, is_agent, context_window = "counting", False, False, 100_000

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], **kw: Any) -> Completion:
        head = str(messages[0]["content"]).splitlines()[0]
        self.calls[head] = self.calls.get(head, 0) + 1
        return Completion(text="ok", usage=Usage(3, 2))


class TableEnv:
    """Item i of skill s scores table[s][i] (hard, soft); items finish after a random number of loop turns."""

    name: ClassVar[str] = "table"
    Options: ClassVar[type[EnvOptions]] = EnvOptions

    def __init__(self, table: dict[str, list[tuple[float, float]]], n_sel: int, n_spare: int, delays: random.Random,
                 degenerate: set[str]) -> None:
        self.table, self.delays, self.degenerate = table, delays, degenerate
        items = [Item(id=f"v{i}", inputs={"question": f"Question number {i} about topic {i * 7}?"}, gold=f"g{i}")
                 for i in range(n_sel + n_spare)]
        self.splits = Splits(train=items[:2], val=items, test=[])

    def load_splits(self) -> Splits:
        return self.splits

    async def run_task(self, item: Item, skill: str, student: Any, *, sample: int = 0, temperature: float = 0.0,
                       feedback: bool = True) -> Trajectory:
        msgs = [{"role": "system", "content": skill}, {"role": "user", "content": item.inputs["question"]}]
        for _ in range(self.delays.randrange(6)):
            await asyncio.sleep(0)
        await student.complete(msgs)
        head = skill.splitlines()[0]
        hard, soft = self.table[head][int(item.id[1:])]
        answer = "ok" if head in self.degenerate else _reply(int(item.id[1:]), hard >= 1)
        return Trajectory(item_id=item.id, messages=msgs, answer=answer, gold=item.gold, hard=hard, soft=soft,
                          question=item.inputs["question"], fail_reason="" if hard >= 1 else "wrong")


class _Count:
    @staticmethod
    def count(text: str) -> int:
        return len(text) // 4


def _ctx(root: Path, env: TableEnv, student: CountingStudent, overrides: list[str]) -> RunContext:
    cfg = load_config(None, ["env.name=toy", *overrides])
    models = Models(teacher=Scripted("teacher"), student=student, meter=Meter(), budget=Budget(), cache=None)  # type: ignore[arg-type]
    ctx = RunContext(cfg, env, models, RunStore(root), EventLog(root / "events.jsonl"), _Count())  # type: ignore[arg-type]
    ctx.splits = env.load_splits()
    return ctx


@st.composite
def cases(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(3, 8))
    spare = draw(st.sampled_from([0, 0, 2]))
    def vec(item: Any) -> Any:
        return st.lists(item, min_size=n + spare, max_size=n + spare)

    metric = draw(st.sampled_from(["hard", "soft", "mixed"]))
    return {
        "incumbent": draw(vec(ITEM)), "candidate": draw(vec(draw(st.sampled_from([ITEM, WEAK])))), "n": n,
        "spare": spare,
        "overrides": [f"evaluation.gate_metric={metric}",
                      f"evaluation.gate_mixed_weight={draw(st.sampled_from([0.0, 0.3, 0.5, 1.0]))}",
                      f"evaluation.use_semantic_density={draw(st.booleans())}",
                      f"evaluation.gate_test={draw(st.sampled_from(['strict', 'paired_bootstrap', 'mcnemar']))}",
                      f"evaluation.gate_min_delta={draw(st.sampled_from([0.0, 0.0, 0.1]))}",
                      f"evaluation.gate_no_regression={draw(st.booleans())}",
                      f"evaluation.incumbent_reeval={draw(st.booleans())}",
                      f"evaluation.use_gate={draw(st.sampled_from([True, True, True, False]))}",
                      f"evaluation.sel_env_num={n}", f"env.workers={draw(st.integers(1, 4))}"],
        "tiebreak": draw(st.sampled_from([None, True, False])),  # the stub's verdict on a tie (None: no tie-break)
        "target": draw(st.sampled_from(["current", "current", "best"])),
        "force": draw(st.sampled_from([False, False, False, True])),
        "saved": draw(st.sets(st.integers(0, n - 1), max_size=n)),  # candidate items a killed run already scored
        "degenerate": draw(st.sampled_from([False, False, True])),
        "seed": draw(st.integers(0, 10_000)),
    }


async def _judge(root: Path, case: dict[str, Any], early: bool) -> dict[str, Any]:
    table = {INCUMBENT.splitlines()[0]: case["incumbent"], CANDIDATE.splitlines()[0]: case["candidate"]}
    env = TableEnv(table, case["n"], case["spare"], random.Random(case["seed"] + early),
                   {CANDIDATE.splitlines()[0]} if case["degenerate"] else set())
    student = CountingStudent()
    ctx = _ctx(root, env, student, [*case["overrides"], f"evaluation.gate_early_stop={early}"])
    base = await ctx.evaluate("selection_eval_baseline", INCUMBENT, stage="baseline")
    ctx.state.current_skill = ctx.state.best_skill = INCUMBENT
    ctx.state.current_score = ctx.state.best_score = base.score
    sel = ctx.val_items()
    if case["saved"]:  # what a killed run had written before it stopped
        await ctx.run_items("steps/step_0001/selection_eval", [sel[i] for i in sorted(case["saved"])], CANDIDATE,
                            stage="gate", train=False)
    student.calls.clear()

    async def tiebreak(incumbent: str, candidate: str) -> tuple[bool, dict[str, Any]]:
        return bool(case["tiebreak"]), {"decided_by": "train_tiebreak", "reason": "stub"}

    v = await judge_candidate(ctx, CANDIDATE, "step_0001", folder="steps/step_0001", stage="gate", step=1, epoch=1,
                              target=case["target"], force=case["force"],
                              tiebreak=None if case["tiebreak"] is None else tiebreak)
    assert asyncio.all_tasks() == {asyncio.current_task()}, "a rollout task was left behind"
    return {"v": v, "calls": student.calls.get(CANDIDATE.splitlines()[0], 0), "state": ctx.state,
            "root": root, "n_sel": len(sel)}


def _both(case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    with tempfile.TemporaryDirectory() as d:
        full = asyncio.run(_judge(Path(d) / "full", case, False))
        early = asyncio.run(_judge(Path(d) / "early", case, True))
        early["files"] = {p.name: p.read_text() for p in (Path(d) / "early/steps/step_0001/selection_eval").glob("*.json")}
    return full, early


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_early_stop_gives_the_full_gates_verdict(case: dict[str, Any]) -> None:
    full, early = _both(case)
    vf, ve = full["v"], early["v"]
    event(f"stopped early: {ve.upper_bound}; full verdict: {vf.action}")
    assert ve.accepted == vf.accepted and ve.is_new_best == vf.is_new_best and ve.target == vf.target
    sf, se = full["state"], early["state"]
    assert (se.current_skill, se.current_score, se.best_skill, se.best_score) == (
        sf.current_skill, sf.current_score, sf.best_skill, sf.best_score)
    assert early["calls"] <= full["calls"]
    if not ve.upper_bound:  # scored in full: the very same verdict and record
        assert ve.action == vf.action and ve.rule == vf.rule and ve.score == vf.score
        assert ve.n_scored == ve.n_items == early["n_sel"] and "early_stop.json" not in early["files"]
        return
    # stopped early: a reject whatever the rest scored (the full gate may call the same reject "blocked": its
    # degenerate-reply check needs every reply), with an upper bound that holds and a record that says so
    assert vf.action in ("reject", "blocked") and ve.action == "reject" and ve.rule["decided_by"] == "early_stop"
    assert not case["force"]
    assert ve.score >= vf.score and ve.hard >= vf.hard and ve.soft >= vf.soft
    assert ve.n_scored < ve.n_items == early["n_sel"]
    assert early["calls"] <= ve.n_scored - len(case["saved"]) + 3  # at most the pool's other workers ran past it
    rec = json.loads(early["files"]["early_stop.json"])
    assert rec["n_scored"] == ve.n_scored and rec["score_upper_bound"] == ve.score
    sj = ve.scores_json()
    assert sj["gate_score"] is None and sj["selection_hard"] is None and sj["gate_early_stop"] is True
    assert sj["gate_score_upper_bound"] == ve.score
    assert all(j["score"] is None for j in early["state"].judgements)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(HARD, SCORES), min_size=1, max_size=12), st.data())
def test_the_cap_bounds_every_completion_of_the_scored_items(per: list[tuple[float, float]], data: Any) -> None:
    """The cap of a partial score vector is >= the full score of every way the rest could score, computed the
    way the gate computes it (RolloutResult means in item order, gate_score, the bonus), float for float."""
    metric = data.draw(st.sampled_from(["hard", "soft", "mixed"]))
    w, bonus = data.draw(st.floats(0.0, 1.0)), data.draw(st.sampled_from([0.0, 0.0, 0.0123, 0.05]))
    seen = data.draw(st.sets(st.integers(0, len(per) - 1)))
    rule = StopRule(0.5, True, metric, w, bonus)
    cap = rule.cap([v if i in seen else None for i, v in enumerate(per)])
    assert cap is not None
    res = RolloutResult([Trajectory(item_id=str(i), hard=h, soft=s) for i, (h, s) in enumerate(per)])
    assert cap[2] >= gate_score(res.hard, res.soft, metric, w, bonus)
    if len(seen) == len(per):  # nothing left: the cap is the score itself
        assert cap[2] == gate_score(res.hard, res.soft, metric, w, bonus)


def test_a_score_outside_0_1_turns_the_stop_off() -> None:
    rule = StopRule(0.5, True, "hard", 0.5)
    assert rule.settled([(0.0, 0.0), None, None]) is None  # 2 of 3 can still pass: 0.667 > 0.5
    assert rule.settled([(0.0, 0.0), (0.0, 0.0), None]) == (1 / 3, 1 / 3, 1 / 3)
    assert rule.settled([(0.0, 0.0), (0.0, 0.0), (2.0, 0.0)]) is None  # an env outside [0, 1]: no bound holds
    assert StopRule(0.9, False, "hard", 0.5).cannot_pass(0.9) is False  # a tie goes to the tie-break
    assert StopRule(float("nan"), False, "hard", 0.5).cannot_pass(0.0) is False


class PoisonStudent(Scripted):
    """The toy student, except that a skill holding `- poison` makes it name no word at all."""

    async def complete(self, messages: list[dict[str, Any]], **kw: Any) -> Completion:
        if "- poison" in str(messages[0]["content"]):
            return Completion(text=f"I cannot say ({messages[-1]['content']})", usage=Usage(5, 5))
        return await super().complete(messages, **kw)


def _poison_after_two(user: str) -> dict[str, Any]:
    skill = user.split("## Current skill\n", 1)[-1].split("\n## ", 1)[0] if "## Current skill" in user else ""
    if sum(f"- {w}" in skill for w in WORDS[:4]) >= 2:
        return {"edits": [{"op": "append", "content": "- poison"}],
                "failure_summary": [{"failure_type": "missing_knowledge", "count": 1, "description": "poison"}]}
    return Scripted._default("AnalystOutput", user)


def test_a_run_records_the_stop_and_its_readers_cope(tmp_path: Path) -> None:
    """A toy run whose third candidate breaks every item: scoring stops once it cannot pass; the step record,
    history, gate event and selection_eval say how many items were scored and give the bound, never a score;
    the report, the run listing and the buffer read it. With the switch off the same run scores every item."""
    args = ("train.num_epochs=2", "evaluation.edit_credit=false", "optimizer.use_slow_update=false",
            "optimizer.use_meta_skill=false", "train.tiebreak=false")
    teacher = Scripted("teacher", {"AnalystOutput": _poison_after_two})
    run_dir, summary, _ = run(tmp_path / "on", *args, teacher=teacher, student=PoisonStudent("student"))
    history = json.loads((run_dir / "history.json").read_text())
    stopped = [h for h in history if h.get("gate_early_stop")]
    assert stopped, [h.get("action") for h in history]
    h = stopped[0]
    assert h["action"] == "reject" and h["candidate_gate_score"] is None and h["selection_hard"] is None
    assert h["selection_n_scored"] < h["selection_n_items"] == 4 and h["gate_rule"]["decided_by"] == "early_stop"
    assert h["candidate_gate_score_upper_bound"] <= h["score_before"]
    d = run_dir / f"steps/step_{h['step']:04d}/selection_eval"
    assert len((d / "results.jsonl").read_text().splitlines()) == h["selection_n_scored"]
    assert json.loads((d / "early_stop.json").read_text())["n_scored"] == h["selection_n_scored"]
    gate = next(e for e in events(run_dir) if e["event"] == "gate" and e.get("step") == h["step"])
    assert gate["candidate_score"] is None and gate["early_stop"] is True and gate["n_scored"] == h["selection_n_scored"]
    for h2 in history:  # every gated step says how many of its items were scored
        if h2.get("candidate_hash"):
            assert h2["selection_n_items"] == 4
    buf = json.loads((run_dir / "runtime_state.json").read_text())["buffer"]
    entry = next(e for e in buf["entries"] if e["step"] == h["step"])
    assert entry["score_after"] is None and entry["score_after_max"] == h["candidate_gate_score_upper_bound"]

    from starlette.testclient import TestClient

    from skillgrad.runs.report import write_report
    from skillgrad.ui.app import create_app

    page = TestClient(create_app(run_dir.parent), base_url="http://127.0.0.1").get(f"/step?r=run&n={h['step']}").text
    assert f"scoring stopped after {h['selection_n_scored']} of 4 items" in page
    assert "at most" in TestClient(create_app(run_dir.parent), base_url="http://127.0.0.1").get("/run?r=run").text
    _, md = write_report(run_dir)
    assert f"at most {h['candidate_gate_score_upper_bound']:.3f} ({h['selection_n_scored']}/4 items)" in md.read_text()

    off, summary_off, _ = run(tmp_path / "off", *args, "evaluation.gate_early_stop=false",
                              teacher=Scripted("teacher", {"AnalystOutput": _poison_after_two}),
                              student=PoisonStudent("student"))
    h_off = json.loads((off / "history.json").read_text())
    assert [x["action"] for x in h_off] == [x["action"] for x in history]
    assert not any(x.get("gate_early_stop") for x in h_off)
    assert all(x["selection_n_scored"] == 4 for x in h_off if x.get("candidate_hash"))
    assert summary_off["test_hard"] == summary["test_hard"]


def test_a_resumed_gate_settled_by_its_saved_items_makes_no_call() -> None:
    """A killed run had scored one item the candidate failed against an incumbent at full marks: the resumed gate
    reuses it, needs no other item (even a tie is out of reach) and gives the full gate's reject."""
    case = {"incumbent": [(1.0, 1.0)] * 6, "candidate": [(1.0, 1.0)] * 3 + [(0.0, 0.0)] + [(1.0, 1.0)] * 2,
            "n": 6, "spare": 0, "overrides": ["evaluation.sel_env_num=6", "env.workers=3"], "tiebreak": True,
            "target": "current", "force": False, "saved": {3}, "degenerate": False, "seed": 7}
    full, early = _both(case)
    assert full["v"].action == early["v"].action == "reject" and full["calls"] == 5  # the other 5
    assert early["calls"] == 0 and early["v"].n_scored == 1 and early["v"].rule["decided_by"] == "early_stop"
    # without it, one item at a time: the incumbent failed none (nothing to start first), so v3 is the 4th call
    case["saved"], case["overrides"] = set(), ["evaluation.sel_env_num=6", "env.workers=1"]
    _, early = _both(case)
    assert early["v"].upper_bound and early["calls"] == early["v"].n_scored == 4


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 10).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0.0, 1.0, 0.5]), min_size=n, max_size=n),  # the incumbent's rollout (hard)
    st.lists(WEAK | ITEM, min_size=n, max_size=n),  # the candidate on the same training tasks
    st.sets(st.integers(0, n - 1), max_size=n), st.integers(1, 4), st.integers(0, 10_000))))
def test_the_tiebreak_stops_only_once_the_candidate_cannot_pass_more(
        drawn: tuple[list[float], list[tuple[float, float]], set[int], int, int]) -> None:
    """The tie-break on training tasks (engine/gate/tiebreak.py) with the early stop on and off: the same verdict,
    and a stopped one records the most the candidate could pass, never a pass rate for the ceiling stop."""
    from skillgrad.engine.gate.tiebreak import train_tiebreak

    inc, cand, saved, workers, seed = drawn
    n = len(inc)

    async def one(root: Path, early: bool) -> tuple[bool, dict[str, Any], int]:
        env = TableEnv({CANDIDATE.splitlines()[0]: cand}, n, 0, random.Random(seed + early), set())
        student = CountingStudent()
        ctx = _ctx(root, env, student, [f"env.workers={workers}", f"evaluation.gate_early_stop={early}"])
        items = env.splits.val
        rollout = [Trajectory(item_id=it.id, question=it.inputs["question"], hard=h, soft=h)
                   for it, h in zip(items, inc, strict=True)]
        if saved:  # a killed run's tie-break results
            await ctx.run_items("steps/step_0001/tiebreak_train", [items[i] for i in sorted(saved)], CANDIDATE,
                                stage="tiebreak", train=True)
        student.calls.clear()
        passed, rule = await train_tiebreak(ctx, "steps/step_0001", INCUMBENT, CANDIDATE, rollout, items)
        assert asyncio.all_tasks() == {asyncio.current_task()}
        return passed, rule, sum(student.calls.values())

    with tempfile.TemporaryDirectory() as d:
        p_full, r_full, c_full = asyncio.run(one(Path(d) / "full", False))
        p_early, r_early, c_early = asyncio.run(one(Path(d) / "early", True))
    event(f"tiebreak stopped early: {bool(r_early.get('early_stop'))}")
    assert p_early == p_full and c_early <= c_full
    if r_early.get("early_stop"):
        assert not p_full and r_early["candidate_passed"] is None and "candidate_train_hard" not in r_early
        assert r_full["candidate_passed"] <= r_early["candidate_passed_at_most"] <= r_early["incumbent_passed"]
        assert r_early["n_scored"] < r_early["n_items"]
    else:
        assert r_early == r_full
