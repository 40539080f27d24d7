"""Random search over the few-shot skill's worked examples, each candidate through the gate.

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

from skillgrad.skill.examples import add_example, find_examples


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


async def search_example_sets(ctx: Any, fewshot: str) -> list[dict[str, Any]]:
    """Judge each of `optimizer.example_search` re-selected example sets (step 0, origin `example_set_R`) against
    the current skill; returns one record per candidate (its action and validation score)."""
    from skillgrad.engine.candidate import judge_candidate  # the gate's pipeline (imports the context)

    n = ctx.cfg.optimizer.example_search
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
