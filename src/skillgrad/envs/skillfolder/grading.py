"""Grading one reply against an eval's assertions, as the spec's grading.json records it: text, passed, evidence.

A plain-rule assertion is checked locally (its evidence says what was or was not found); a sentence is graded by
the judge model with a grammar-constrained verdict that must quote its evidence. An eval without assertions is
graded on its expected output, in words.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pydantic import BaseModel, Field

from skillgrad.envs.skillfolder.spec import Assertion, EvalCase
from skillgrad.envs.tasks.checks import run_check
from skillgrad.errors import BudgetExceeded, ProviderFatal
from skillgrad.models.base import LLM

GRADER_SYSTEM = ("You check one statement about an assistant's reply. Require concrete evidence for a pass: quote "
                 "the words of the reply that make the statement true. Reply with JSON: "
                 '{"evidence": "a short quote from the reply, or what is missing", "passed": true or false}.')


class Verdict(BaseModel):
    evidence: str = Field("", max_length=200)
    passed: bool


@dataclass
class Graded:
    text: str
    passed: bool
    evidence: str

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def _rule(a: Assertion, reply: str) -> Graded:
    assert a.check is not None
    ok = run_check(a.check, reply, [])
    c = a.check
    if c.op == "not_contains":
        evidence = f"{c.arg!r} {'not found' if ok else 'found'} in the reply"
    elif c.op == "contains":
        evidence = f"{c.arg!r} {'found' if ok else 'not found'} in the reply"
    else:
        evidence = f"{'matched' if ok else 'no match for'} /{c.arg}/"
    return Graded(a.text, ok, evidence)


async def _judged(judge: LLM, prompt: str, statement: str, reply: str, *, max_tokens: int) -> Graded:
    messages = [{"role": "system", "content": GRADER_SYSTEM},
                {"role": "user", "content": f"Request: {prompt}\nReply: {reply}\nStatement: {statement}"}]
    try:
        c = await judge.complete(messages, schema=Verdict, max_tokens=max_tokens, temperature=0.0, stage="judge")
    except (ProviderFatal, BudgetExceeded):
        raise
    except Exception as e:  # noqa: BLE001 - an unusable verdict is a failed assertion, not a crash
        return Graded(statement, False, f"judge: no verdict ({type(e).__name__})")
    v = c.parsed if isinstance(c.parsed, Verdict) else None
    if v is None:
        return Graded(statement, False, "judge: the verdict did not parse")
    return Graded(statement, bool(v.passed), v.evidence.strip())


def expected_statement(case: EvalCase) -> str:
    return f"The reply gives what was expected: {case.expected_output}"


async def grade(case: EvalCase, reply: str, judge: LLM | None, *, max_tokens: int = 96) -> list[Graded]:
    """One verdict per assertion (or one on the expected output when the eval has none); with no judge model a
    sentence assertion fails with evidence saying so."""
    items = case.assertions or ([Assertion(expected_statement(case))] if case.expected_output else [])
    out = []
    for a in items:
        if a.check is not None:
            out.append(_rule(a, reply))
        elif judge is None:
            out.append(Graded(a.text, False, "no judge model to grade a statement in words"))
        else:
            out.append(await _judged(judge, case.prompt, a.text, reply, max_tokens=max_tokens))
    return out


def scores(graded: list[Graded]) -> tuple[float, float, str]:
    """(hard, soft, fail_reason): hard = every assertion passed, soft = the fraction that did."""
    if not graded:
        return 0.0, 0.0, "grading: the eval has no assertions and no expected output"
    failed = [g for g in graded if not g.passed]
    soft = 1.0 - len(failed) / len(graded)
    reason = "; ".join(f"assertion failed: {g.text} ({g.evidence})" for g in failed)
    return float(not failed), soft, reason
