"""Zero-call baselines: what a run's gain is measured against.

Every run scores, on the same held-out items as its trained skill, the initial skill and a few-shot skill built
with no teacher call: k verified training examples appended to the initial skill as worked examples
(skill/examples.py), as DSPy's LabeledFewShot (gold labels) and BootstrapFewShot (the program's own passing
traces) build theirs. The training tasks are taken in the split's own order (LabeledFewShot with `sample=False`):
one fixed order, chosen by no score on any split, so the baseline does not depend on the seed (which orders only
the training batches) and no run's baseline is a lucky or unlucky draw. A small student is sensitive to the order of
its examples, so a reordered set is a candidate of its own, judged on validation by the gate
(`optimizer.example_search`, engine/example_search.py), never a different baseline. An example's reply is, in order:
- the task's gold answer, where the environment can verify it (`verify_example` gives it full marks: a gold
  that is a requirement in words, or a bare value where a form is asked, is no reply and is not taken);
- else the student's own passing reply with the initial skill on the first step's batch: step 1's rollout,
  read back at run end (no model call), or asked before the baseline for `optimizer.start_from: fewshot`.
k follows the student probe (engine/student_probe.py) unless `evaluation.fewshot_k` sets it: a student measured
to follow examples and not rules learns from examples what another learns from a rule, so it gets up to 32 (the
`facts` environment's turn cap); any other student LabeledFewShot's default of 16. Either way the examples fit
half the student's context window; under `budget.max_tokens` the few-shot start keeps only its first examples, as
many as leave room for its validation passes and one step (engine/token_plan.py; `k_reason` says so, `k_asked` holds
the k before the cut). `optimizer.start_from: fewshot` makes the few-shot skill the step-0
candidate through the gate; where all its examples are gold answers the Goodhart guard is waived for it (and only
for it: `guard_waiver`), so a baseline whose replies the guard flags can still be the run's start.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from skillgrad.engine.schedule import plan_epoch
from skillgrad.engine.student_probe import PROBE_FILE, StudentForm
from skillgrad.envs.base import Environment, ExampleVerifier, Item, ReplyContract, Trajectory, contract_of
from skillgrad.envs.trajectory import question_text
from skillgrad.models.base import LLM
from skillgrad.skill.examples import add_example

FEWSHOT_FILE = "baselines/fewshot.json"
FEWSHOT_SKILL = "baselines/fewshot_skill.md"
STEP1_ROLLOUT = "steps/step_0001/rollout"  # engine/step_stages.py's rollout folder of step 1
K_EXAMPLE_STUDENT, K_DEFAULT = 32, 16
BASELINE_NAMES = ("initial", "fewshot")

RunItems = Callable[[list[Item]], Awaitable[Sequence[Trajectory]]]
# the few-shot skills with 0, 1, ... n of their examples -> (examples to keep, why); engine/step_budget.py
Sizer = Callable[[list[str]], tuple[int, str]]


@dataclass
class FewShot:
    skill: str = ""
    k: int = 0  # examples asked for (after a budget cut: the examples kept)
    k_reason: str = ""
    k_asked: int = 0  # k before a cut for budget.max_tokens (0: not cut)
    examples: list[dict[str, Any]] = field(default_factory=list)  # item_id, source (gold | student_reply), question, reply
    gold_tried: int = 0
    replies_tried: int = 0  # the student's replies on step 1's batch looked at for bootstrapped examples
    why_none: str = ""  # why no example was found (no few-shot skill is then scored; the initial one still is)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> FewShot:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})

    def sources(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for e in self.examples:
            out[e["source"]] = out.get(e["source"], 0) + 1
        return out


def fewshot_k(form: StudentForm | None, setting: int = 0) -> tuple[int, str]:
    """(k, why): `evaluation.fewshot_k` when set, else from the student probe."""
    if setting > 0:
        return setting, "evaluation.fewshot_k"
    if form is not None and form.probed and form.prefers == "example":
        return K_EXAMPLE_STUDENT, "the student probe measured a student that follows examples"
    return K_DEFAULT, ("DSPy LabeledFewShot's default k" + ("" if form is not None and form.probed
                                                          else " (the student was not probed)"))


def epoch_order(train: list[Item], seed: int, per_step: int) -> list[Item]:
    """The training items in the order the run's first epoch visits them (engine/schedule.py's batches)."""
    if not train:
        return []
    steps = max(1, math.ceil(len(train) / max(1, per_step)))
    seen: dict[str, Item] = {}
    for batch in plan_epoch(train, seed, per_step, steps):
        for it in batch:
            seen.setdefault(it.id, it)
    return [*seen.values(), *(it for it in train if it.id not in seen)]


def _gold_reply(gold: Any) -> str:
    """The gold answer as a reply (the first of several accepted ones); '' for a structured gold."""
    if isinstance(gold, list | tuple):
        gold = gold[0] if gold else ""
    return gold.strip() if isinstance(gold, str) else ""


def _count(student: LLM, text: str) -> int:
    counter = getattr(student, "count_tokens", None)
    try:
        return int(counter(text)) if callable(counter) else len(text) // 4
    except Exception:  # noqa: BLE001 - a counter that cannot count this text: the rough estimate
        return len(text) // 4


async def build_fewshot(env: Environment, student: LLM, skill: str, order: list[Item], k: int, *,
                        bootstrap: list[Item], run_items: RunItems | None, max_chars: int = 1200,
                        k_reason: str = "", size: Sizer | None = None) -> FewShot:
    """The few-shot skill: up to k verified examples from `order` (gold first), then passing replies of the
    student on `bootstrap` (run through `run_items`, which must run the initial skill; None = no bootstrap);
    `size` may keep fewer (the first ones, in order). Takes no teacher: nothing here can ask one."""
    out = FewShot(skill=skill, k=k, k_reason=k_reason)
    prefixes = [skill]  # the skill with its first 0, 1, ... examples
    room = int(getattr(student, "context_window", 4096) or 4096) // 2 - _count(student, skill)
    used: set[str] = set()

    def take(item: Item, reply: str, source: str) -> bool:
        nonlocal room
        q = question_text(item).strip()
        cost = _count(student, q) + _count(student, reply) + 4
        if not q or len(q) + len(reply) > max_chars or cost > room:
            return False
        out.skill, status = add_example(out.skill, q, reply)
        if not status.startswith("applied"):
            return False
        room -= cost
        prefixes.append(out.skill)
        used.add(item.id)
        out.examples.append({"item_id": item.id, "source": source, "question": q[:400], "reply": reply[:600]})
        return True

    if isinstance(env, ExampleVerifier):
        for item in order:
            if len(out.examples) >= k or out.gold_tried >= 2 * k:
                break
            # a hand-written correct reply where the environment states one (a task's `reference`), else its gold
            c = contract_of(env, item)
            reply = (c.reference if isinstance(c, ReplyContract) else "") or _gold_reply(item.gold)
            if not reply:
                continue
            out.gold_tried += 1
            if float(await env.verify_example(item, reply, student)) >= 1.0 - 1e-9:
                take(item, reply, "gold")
    todo = [it for it in bootstrap if it.id not in used]
    if len(out.examples) < k and todo and run_items is not None:
        by_id = {it.id: it for it in todo}
        trajs = await run_items(todo)
        out.replies_tried = len(trajs)
        for t in trajs:
            if len(out.examples) >= k:
                break
            if t.hard >= 1.0 - 1e-9 and not t.error and not t.env_error and t.answer.strip() and t.item_id in by_id:
                take(by_id[t.item_id], t.answer.strip(), "student_reply")
    if size is not None and out.examples:
        n, why = size(prefixes)
        if n < len(out.examples):
            out.k_asked, out.k = k, n
            out.examples, out.skill = out.examples[:n], prefixes[n]
            out.k_reason = f"{k_reason}; {why}" if k_reason else why
    if not out.examples:
        out.why_none = ("no training task has a gold answer the environment verifies, and the student passed none "
                        "of the first step's tasks" if run_items is not None else
                        "no training task has a gold answer the environment verifies (bootstrapping is off)")
    return out


def fewshot_wanted(cfg: Any, has_test: bool) -> bool:
    return bool(cfg.evaluation.fewshot_baseline and cfg.evaluation.eval_test and has_test) \
        or cfg.optimizer.start_from == "fewshot"


async def fewshot_stage(ctx: Any, form: StudentForm | None = None, *, at_start: bool = False,
                        sizer: Callable[[list[Item]], Sizer | None] | None = None) -> FewShot | None:
    """The run's few-shot baseline, built once (saved; a resumed run reads it).

    `at_start` (after the student probe): only for `optimizer.start_from: fewshot`, which needs it as the step-0
    candidate; its bootstrapped replies are the student's on step 1's batch, asked now (step 1 replays them from
    the cache). Otherwise it is built at run end from step 1's saved rollout, which ran the initial skill on that
    batch: no model call at all, and no extra round for a handoff student."""
    cfg = ctx.cfg
    if not fewshot_wanted(cfg, bool(ctx.splits.test)) or (at_start and cfg.optimizer.start_from != "fewshot"):
        return None
    saved = ctx.store.read_json(FEWSHOT_FILE)
    if isinstance(saved, dict):
        return FewShot.from_json(saved)
    if form is None:
        probe = ctx.store.read_json(PROBE_FILE)
        form = StudentForm.from_json(probe) if isinstance(probe, dict) else None
    per_step = cfg.train.batch_size * cfg.train.accumulation
    train = ctx.splits.train[: cfg.train.train_size or None]
    first = epoch_order(train, cfg.train.seed + 1000, per_step)[:per_step]  # step 1's batch (the trainer's seed)
    k, why = fewshot_k(form, cfg.evaluation.fewshot_k)
    skill = ctx.state.initial_skill

    async def rollout(items: list[Item]) -> Sequence[Trajectory]:
        if at_start:
            res = await ctx.run_items("baselines/fewshot_rollout", items, skill, stage="fewshot_baseline", train=True)
            return list(res.trajectories)
        done = ctx.store.results(STEP1_ROLLOUT).load()  # step 1's replies with the initial skill, as saved
        return [done[it.id] for it in items if it.id in done]

    fs = await ctx.stage("fewshot_baseline", 0, 0, lambda: build_fewshot(
        ctx.env, ctx.models.student, skill, train, k, bootstrap=first, run_items=rollout,
        max_chars=cfg.optimizer.max_example_chars, k_reason=why,
        size=sizer(first) if sizer is not None and at_start else None),
        lambda f: {"examples": len(f.examples), **f.sources()})
    ctx.store.write_json(FEWSHOT_FILE, fs.to_json())
    ctx.store.write_text(FEWSHOT_SKILL, fs.skill)
    ctx.emit("baseline_fewshot", k=fs.k, examples=len(fs.examples), sources=fs.sources(),
             replies_tried=fs.replies_tried, why_none=fs.why_none or None)
    return fs


def guard_waiver(fs: FewShot) -> str:
    """Why the Goodhart guard is waived for this few-shot start, or '' (guarded). The guard keeps the optimizer from
    learning a skill that games the scorer; a skill whose every example is a task's own gold answer, taken with no
    call, is nobody's learning but the baseline each result is compared against, so its replies, however alike, are
    the baseline's. Examples bootstrapped from the student's replies can carry a restatement the scorer passed: any
    such example keeps the start guarded."""
    src = fs.sources()
    if not fs.examples or set(src) != {"gold"}:
        return ""
    return f"the few-shot start's {src['gold']} examples are all gold answers (zero calls)"


async def start_from_fewshot(ctx: Any, fs: FewShot | None, plan: Any = None) -> None:
    """`optimizer.start_from: fewshot`: the few-shot skill is the step-0 candidate through the normal gate; its
    optional passes as configured, or as a budget's `plan` (engine/budget_plan.py) kept them."""
    from skillgrad.engine.candidate import judge_candidate  # the gate's pipeline (imports the context)

    if ctx.cfg.optimizer.start_from != "fewshot" or fs is None or not fs.examples:
        return
    await ctx.stage("fewshot_start", 0, 0, lambda: judge_candidate(
        ctx, fs.skill, "fewshot_baseline", folder="baselines/fewshot_gate", stage="fewshot_start", step=0, epoch=0,
        guard_waiver=guard_waiver(fs)))
    # the same verified examples listed in the text, then re-selected and reordered sets: each gated (example_search.py)
    from skillgrad.engine.example_search import search_example_sets, try_reference_list

    opt = ctx.cfg.optimizer
    ref = opt.reference_list if getattr(plan, "reference_list", None) is None else plan.reference_list
    n_search = opt.example_search if getattr(plan, "example_search", None) is None else plan.example_search
    if ref:
        await try_reference_list(ctx, fs.skill)
    if n_search > 0:
        await search_example_sets(ctx, fs.skill, n_search)


def fewshot_test_fields(fs_json: dict[str, Any] | None) -> dict[str, Any]:
    """What the run-end test result of the few-shot skill records about how it was built."""
    if not isinstance(fs_json, dict):
        return {}
    fs = FewShot.from_json(fs_json)
    return {"k": fs.k, "examples": len(fs.examples), "sources": fs.sources(), "replies_tried": fs.replies_tried}


def baseline_summary(tests: dict[str, Any], intervals: dict[str, Any] | None,
                     fewshot: dict[str, Any] | None = None) -> dict[str, Any]:
    """summary.json's `baselines` (each: score, n, interval) and the best skill's gain over the best baseline,
    paired by item (engine/gate/intervals.py). The best baseline is the one with the higher held-out score, so the
    gain stated is the smaller one."""
    iv = intervals or {}
    out: dict[str, Any] = {}
    for name in BASELINE_NAMES:
        t = tests.get(name)
        if not t:
            continue
        i = iv.get(name) or {}
        out[name] = {"score": t.get("hard"), "soft": t.get("soft"), "n": t.get("n"),
                     "interval": [i.get("ci_low"), i.get("ci_high")] if i else None,
                     **{k: t[k] for k in ("k", "examples", "sources") if k in t}}
    if "fewshot" not in out and isinstance(fewshot, dict) and fewshot.get("why_none"):
        out["fewshot"] = {"score": None, "why": f"no few-shot skill: {fewshot['why_none']}"}
    scored = [(n, b["score"]) for n, b in out.items() if isinstance(b.get("score"), int | float)]
    if not scored:
        return {"baselines": out or None, "best_baseline": None, "gain_over_best_baseline": None}
    best_name = max(scored, key=lambda x: (x[1], x[0] == "fewshot"))[0]
    paired = iv.get(f"best_vs_{best_name}") or {}
    gain = None
    if paired:
        gain = {"over": best_name, "delta": paired.get("mean_diff"), "n": paired.get("n"),
                "interval": [paired.get("ci_low"), paired.get("ci_high")], "p_mcnemar": paired.get("p_mcnemar"),
                "gained": paired.get("gained"), "lost": paired.get("lost")}
    return {"baselines": out, "best_baseline": best_name, "gain_over_best_baseline": gain}



async def eval_baselines(cfg: Any, env: Environment, splits: Any, student: LLM, store: Any,
                         score: Callable[[str, str, list[Item], bool], Awaitable[Sequence[Trajectory]]],
                         given: Mapping[str, Sequence[Trajectory]]) -> dict[str, Any]:
    """`skillgrad eval --baselines`: the initial skill and the few-shot skill (built as a run builds it, the student
    probed first) scored on the same items as the given skill, with the given skill's gain over the better one.
    `score(rel, skill, items, train)` runs items; `given`: the given skill's trajectories per split."""
    from skillgrad.engine.gate.intervals import mean_interval, paired_by_id
    from skillgrad.engine.student_probe import probe_student

    initial = env.initial_skill()
    per_step = cfg.train.batch_size * cfg.train.accumulation
    train = splits.train[: cfg.train.train_size or None]
    form = await probe_student(student, initial, [question_text(i) for i in splits.train[:3]]) \
        if cfg.optimizer.student_probe != "off" else None
    k, why = fewshot_k(form, cfg.evaluation.fewshot_k)

    async def bootstrap(items: list[Item]) -> Sequence[Trajectory]:
        return await score("baselines/fewshot_rollout", initial, items, True)

    fs = await build_fewshot(env, student, initial, train, k,
                             bootstrap=epoch_order(train, cfg.train.seed + 1000, per_step)[:per_step], run_items=bootstrap,
                             max_chars=cfg.optimizer.max_example_chars, k_reason=why)
    store.write_json(FEWSHOT_FILE, fs.to_json())
    store.write_text(FEWSHOT_SKILL, fs.skill)
    out: dict[str, Any] = {"fewshot": {k2: v for k2, v in fs.to_json().items() if k2 != "skill"}, "splits": {}}
    for name, trajs in given.items():
        items = {t.item_id for t in trajs}
        todo = [it for it in splits.get(name) if it.id in items]
        mine = {t.item_id: t.hard for t in trajs}
        rows: dict[str, Any] = {}
        per: dict[str, dict[str, float]] = {}
        for base, skill in (("initial", initial), ("fewshot", fs.skill if fs.examples else None)):
            if skill is None:
                rows[base] = {"score": None, "why": f"no few-shot skill: {fs.why_none}"}
                continue
            res = await score(f"baselines/{base}/{name}", skill, todo, False)
            per[base] = {t.item_id: t.hard for t in res}
            iv = mean_interval(list(per[base].values()))
            rows[base] = {"score": iv["mean"], "n": iv["n"], "interval": [iv["ci_low"], iv["ci_high"]]}
        best = max(per, key=lambda b: (sum(per[b].values()), b == "fewshot"))
        p = paired_by_id(per[best], mine)
        out["splits"][name] = {"baselines": rows, "best_baseline": best,
                               "gain_over_best_baseline": {"over": best, "delta": p["mean_diff"], "n": p["n"],
                                                           "interval": [p["ci_low"], p["ci_high"]],
                                                           "p_mcnemar": p["p_mcnemar"], "gained": p["gained"],
                                                           "lost": p["lost"]}}
    return out
