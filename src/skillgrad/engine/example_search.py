"""Step-0 candidates built from the few-shot skill's verified examples, each through the gate: a reference list
of them in the skill's text (`optimizer.reference_list`) and a random search over them (`optimizer.example_search`).

The reference list: the same (question, reply) pairs, one line each under `## Reference answers`, in the text the
student reads beside the worked examples it receives as chat turns. Nothing new is written: the words are the
verified examples'. A student that copies the form from the turns can still look a task's answer up in its
system text, as it does in a fact sheet; one that cannot is not helped, and the gate refuses the candidate.

After the few-shot skill (engine/baselines.py) was judged as the step-0 candidate, `optimizer.example_search`
more candidates re-select and reorder its verified examples, as DSPy's BootstrapFewShotWithRandomSearch does
with its candidate demo sets: candidate r takes a random subset (between half and all of them) in a random
order, from the seed and r. Each is judged on validation by `judge_candidate` like any step's candidate, against
whatever is current, so the search can only replace the few-shot start by a set that scores higher there.

Why it is generic: nothing is written. Every example was verified by the environment before it entered the
few-shot skill (a gold answer its scorer passed, or the student's own passing reply), no teacher is called,
and a candidate costs only the student's replies on the validation items (the gate's early stop cuts a loser
short). Which examples and in which order a student copies best is a property of the student, not of the
task family: a small student's score moves with the order of the same examples (engine/baselines.py).
"""

from __future__ import annotations

import math
import random
from typing import Any

from skillgrad.skill.examples import add_example, append_block, find_examples

REFERENCE_HEADING = "## Reference answers"


def added_examples(initial: str, fewshot: str) -> list[tuple[str, str]]:
    """The (question, reply) pairs the few-shot skill holds beyond the initial skill's own examples."""
    have = {" ".join(e.question.split()).casefold() for e in find_examples(initial)}
    return [(e.question, e.reply) for e in find_examples(fewshot)
            if " ".join(e.question.split()).casefold() not in have]


def example_sets(initial: str, fewshot: str, seed: int, n: int) -> list[str]:
    """`n` candidate skills: the initial skill with a random subset (half to all) of the few-shot skill's added
    examples in a random order each; a candidate equal to the few-shot skill or to an earlier one is left out.
    Pure."""
    pool = added_examples(initial, fewshot)
    if len(pool) < 2 or n <= 0:
        return []
    seen = {fewshot}
    out: list[str] = []
    for r in range(n):
        rng = random.Random(f"example-search:{seed}:{r}")
        size = rng.randint(max(1, math.ceil(len(pool) / 2)), len(pool))
        skill = initial
        for q, a in rng.sample(pool, size):
            skill, _ = add_example(skill, q, a)
        if skill not in seen:
            seen.add(skill)
            out.append(skill)
    return out


def reference_list(initial: str, fewshot: str) -> str:
    """`fewshot` with its added examples also listed as `- question → reply` lines (a multi-line question or reply
    on one line) under REFERENCE_HEADING; '' when it holds fewer than two added examples or has the list already.
    Pure."""
    pool = added_examples(initial, fewshot)
    if len(pool) < 2 or REFERENCE_HEADING in fewshot:
        return ""
    lines = [f"- {' '.join(q.split())} → {' / '.join(x.strip() for x in a.strip().splitlines() if x.strip())}"
             for q, a in pool]
    return append_block(fewshot, REFERENCE_HEADING + "\n" + "\n".join(lines))


def _fits(ctx: Any, skill: str) -> bool:
    """The skill takes at most three quarters of the student's context window (the task and reply need the rest)."""
    student = ctx.models.student
    counter = getattr(student, "count_tokens", None)
    try:
        n = int(counter(skill)) if callable(counter) else len(skill) // 4
    except Exception:  # noqa: BLE001 - a counter that cannot count this text: the rough estimate
        n = len(skill) // 4
    return n <= 3 * int(getattr(student, "context_window", 4096) or 4096) // 4


async def try_reference_list(ctx: Any, fewshot: str) -> dict[str, Any] | None:
    """`optimizer.reference_list`: the current skill, if it is the few-shot skill, with its examples also listed in
    the text, judged against it (origin `reference_list`); None when there is nothing to list or no room."""
    from skillgrad.engine.candidate import judge_candidate  # the gate's pipeline (imports the context)

    if ctx.state.current_skill != fewshot:  # the gate refused the few-shot start: nothing to list from
        return None
    cand = reference_list(ctx.state.initial_skill, fewshot)
    if not cand or not _fits(ctx, cand):
        return None

    def judge() -> Any:
        return judge_candidate(ctx, cand, "reference_list", folder="baselines/reference_list", stage="reference_list",
                               step=0, epoch=0)

    v = await ctx.stage("reference_list", 0, 0, judge)
    return {"origin": "reference_list", "action": v.action, "score": v.score, "upper_bound": v.upper_bound}


async def search_example_sets(ctx: Any, fewshot: str, n: int | None = None) -> list[dict[str, Any]]:
    """Judge each of `n` (default `optimizer.example_search`; fewer when a budget's plan cut them) re-selected
    example sets (step 0, origin `example_set_R`) against the current skill; returns one record per candidate
    (its action and validation score)."""
    from skillgrad.engine.candidate import judge_candidate  # the gate's pipeline (imports the context)

    n = ctx.cfg.optimizer.example_search if n is None else n
    out: list[dict[str, Any]] = []
    for r, skill in enumerate(example_sets(ctx.state.initial_skill, fewshot, ctx.cfg.train.seed, n)):
        def judge(skill: str = skill, r: int = r) -> Any:
            return judge_candidate(ctx, skill, f"example_set_{r}", folder=f"baselines/example_set_{r}",
                                   stage="example_search", step=0, epoch=0)
        v = await ctx.stage("example_search", 0, 0, judge)
        out.append({"origin": f"example_set_{r}", "action": v.action, "score": v.score,
                    "examples": len(find_examples(skill)), "upper_bound": v.upper_bound})
    if out:
        ctx.store.write_json("baselines/example_search.json", out)
    return out
