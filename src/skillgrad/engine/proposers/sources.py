"""Which proposers run, in which order, and why: the two strategies, chosen by the student probe.

A step's edits come from these sources (each a module of this package with one entry point):

1. **rules** (`rules.py`): the analysts read the rollouts and write rules; merged and ranked by the teacher
   (engine/stages/aggregate.py, select.py). They run beside the demonstrate stage, from the same rollouts.
2. **bootstrapped examples** (`bootstrap.py`): the student's own reply on a task it passed. No call: the rollout's
   score verified it. First, because it is free and in the student's own words.
3. **teacher corrections** (`corrections.py`): for a failed task, the teacher's reply, then the task's gold
   answer, verified by the environment's scorer. A teacher that is another model than the student corrects twice
   as many failures and its corrections lead (engine/proposers/stage.py).
4. **small-student repairs** (`repairs.py`): the required form put on the student's own reply on the other failed
   tasks, verified the same way. Last, because a repair only adds form; the content must be the student's.

Every candidate passes the filters (`filters.py`) before the scorer and the repeat filter after it, in task order.

Two strategies (DESIGN.md section 10). The probe (engine/student_probe.py) measures whether the student follows a
stated rule. A student that does (every GPT/Claude-class model) gets RULE_FOLLOWING: rules, bootstrapped examples
and teacher corrections, the generic filters, examples only in the budget the rules leave free. A student that only
copies examples (the 135M default; also the default when the probe did not run) gets SMALL_STUDENT: examples
first in the budget, the small-student repairs, its stock opening cut, the filters measured on it, and (with
`optimizer.example_shortcuts`) the analysts and the slow update skipped when the probe saw rules ignored. Nothing of
the second touches the first.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any

from skillgrad.engine.proposers.bootstrap import bootstrap
from skillgrad.engine.proposers.corrections import corrections, own_candidates
from skillgrad.engine.proposers.filters import Filters
from skillgrad.engine.proposers.result import DemoResult, edit, entry, first_passing
from skillgrad.engine.proposers.wording import Wordings, asks, shared_opening
from skillgrad.engine.student_probe import StudentForm
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import ExampleVerifier, Item, ReplyContract, Trajectory, contract_of
from skillgrad.models.base import LLM
from skillgrad.skill.examples import find_examples


@dataclass(frozen=True)
class Strategy:
    name: str
    examples_first: bool  # verified examples take budget slots ahead of the rules (stages/select.py)
    repairs: bool  # the small-student repairs (repairs.py), also of teacher replies and gold answers
    small_filters: bool  # the stock opening and the filters measured on the small student (filters.py)


RULE_FOLLOWING = Strategy("rule-following", examples_first=False, repairs=False, small_filters=False)
SMALL_STUDENT = Strategy("small-student", examples_first=True, repairs=True, small_filters=True)


def choose_strategy(form: StudentForm) -> Strategy:
    """RULE_FOLLOWING when the probe measured a student that follows a stated rule, else SMALL_STUDENT."""
    return RULE_FOLLOWING if form.probed and form.prefers == "rule" else SMALL_STUDENT


def ignores_rules(form: StudentForm) -> bool:
    """The probe saw the student copy examples and follow no stated rule: the small-student strategy's shortcuts
    (analysts skipped once examples fill the budget, no slow update) may apply (`optimizer.example_shortcuts`)."""
    sc = form.scores
    return choose_strategy(form) is SMALL_STUDENT and form.probed and form.prefers == "example" \
        and sc.get("rule", 0.0) == 0.0 and max(sc.get("example_text", 0.0), sc.get("example_turns", 0.0)) > 0.0


def examples_fill_budget(items: list[dict[str, Any]], budget: int | None) -> bool:
    """Whether the verified examples that take slots ahead of the rules (`first`, the small-student strategy) fill
    the step's edit budget, so that no rule can be selected (stages/select.py) and merging the analysts' edits is
    a teacher call nothing uses. Measured with a handoff teacher (support-signoff): the merge was asked in 2 of 4
    steps whose 4 slots all went to examples."""
    return budget is not None and sum(bool(it.get("first")) for it in items) >= max(budget, 0)


async def propose_examples(
    trajs: list[Trajectory], items: dict[str, Item], skill: str, teacher: TeacherCall, env: Any, student: LLM, *,
    strategy: Strategy, limit: int, max_chars: int, seed: int, compact: bool = False, sample: int = 0,
    refused: dict[tuple[str, str], int] | None = None, n_corrections: int | None = None, teacher_first: bool = False,
    earlier: dict[str, tuple[int, str, str]] | None = None, settled: set[str] | None = None,
) -> DemoResult:
    """At most `limit` bootstrapped examples, `n_corrections` (default `limit`) teacher corrections and (small
    student) `limit` repairs of the student's replies on other failed tasks, in that order. `teacher_first`: the
    teacher is another model than the student; its verified corrections lead the items, and its replies are a
    capable teacher's to the small-student filters (filters.py). A reply in `refused` ((item id, normalised reply) -> step) is not
    proposed again; the task's gold answer is the exception. `earlier`: item id -> (step, reply, why) of the teacher's
    refused correction of that task in an earlier step, told when it is asked again (engine/demo_limits.py).
    `settled`: tasks the teacher is not asked about again (a passing correction the gate could not credit)."""
    result = DemoResult()
    if limit <= 0:
        return result
    have = [e.question for e in find_examples(skill)]
    usable = [_with_contract(t, env, items) for t in trajs
              if t.question.strip() and not any(asks(t.question, q) for q in have) and not t.env_error]
    opening = shared_opening([t.question for t in trajs])  # "Review this PR:": how the data are worded
    wordings = Wordings(opening, have)  # examples asked with it and without, in turn
    filters = Filters.for_step(usable, skill, refused, opening, small=strategy.small_filters, max_chars=max_chars)

    await bootstrap([t for t in usable if not t.failed and t.answer.strip()], items, env, student, filters,
                    wordings, result, limit=limit)
    if not isinstance(env, ExampleVerifier):
        return result
    failed = [t for t in usable if t.failed and t.item_id in items]
    random.Random(seed).shuffle(failed)
    n = limit if n_corrections is None else max(0, n_corrections)
    asked = [t for t in failed if t.item_id not in (settled or set())][:n]
    rest = [t for t in failed if all(t is not a for a in asked)]  # may still be repaired (no teacher call)
    await corrections(asked, items, skill, teacher, env, student, filters, wordings, result,
                      max_chars=max_chars, compact=compact, sample=sample, repairs=strategy.repairs,
                      earlier=earlier or {}, other_model=teacher_first)
    if strategy.repairs:
        await _own_repairs(rest[:4 * limit], items, env, student, filters, wordings, result, limit=limit)
    if teacher_first:  # stable: the order within each group stays
        result.items.sort(key=lambda it: (it.get("demonstration") or {}).get("source") != "teacher_correction")
    return result


async def _own_repairs(failed: list[Trajectory], items: dict[str, Item], env: Any, student: LLM, filters: Filters,
                       wordings: Wordings, result: DemoResult, *, limit: int) -> None:
    """Up to `limit` examples from repairs of the student's own replies on failed tasks the teacher was not asked
    about (no call but the scorer's), tried in turn."""
    found = 0
    for t in failed:
        if found >= limit:
            break
        log: list[dict[str, Any]] = []
        reply, source, tried = await first_passing(t, own_candidates(t, filters.stock), env, items[t.item_id],
                                                   student, filters, log)
        result.log.extend(log)
        if reply and not (why := filters.repeat_why(t, reply)):
            filters.show(t, reply)
            result.items.append(edit(t, reply, source, wordings.ask(t.question)))
            result.log.append(entry(t, reply, source, 1.0, True, "the environment's scorer passed it"))
            found += 1
            continue
        result.log.append(entry(t, reply or t.answer, "own_reply_repair", 0.0 if tried else None, False,
                                why if reply else "no repair of the student's reply passed" if tried
                                else "no repair to try"))


def _with_contract(t: Trajectory, env: Any, items: dict[str, Item]) -> Trajectory:
    """`t` with its environment's contract (a trajectory recorded without one gets it from the environment)."""
    if t.contract is not None or t.item_id not in items:
        return t
    c = contract_of(env, items[t.item_id])
    return dataclasses.replace(t, contract=c) if isinstance(c, ReplyContract) else t

