"""Which form of guidance the student follows: a stated rule, an example in the system text, or an example
sent as chat turns. Learned once per run with a few student calls, before the baseline.

The probe teaches one made-up convention (every reply starts with a marker no task asks for) in each of the
three forms, on the run's own training questions, and counts how often the student's reply starts with the
marker. A 135M student follows the chat-turn example and ignores the rule; a large model follows all three.
The result steers reflection: it orders worked examples before or after rules in the step's edit budget and
adds one sentence for the analyst (`guidance`). Recorded in `student_probe.json`, an event and summary.json;
a resumed run reads the file and never probes again.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from skillgrad.core.gather import gather_all
from skillgrad.models.base import LLM, Message

MARKER = "Result =>"
FORMS = ("rule", "example_text", "example_turns")
PROBE_FILE = "student_probe.json"


@dataclass
class StudentForm:
    prefers: str = "example"  # "example" | "rule": what the optimizer offers first
    scores: dict[str, float] = field(default_factory=dict)  # form -> fraction of replies that followed it
    probed: bool = False
    calls: int = 0
    replies: dict[str, list[str]] = field(default_factory=dict)  # form -> the student's replies (for a person)
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> StudentForm:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})

    def guidance(self) -> str:
        """One sentence for the analyst prompts (empty when nothing was learned)."""
        if not self.probed:
            return ""
        if self.prefers == "example":
            return ("This assistant copies worked examples but ignores stated rules: worked examples from verified "
                    "replies are added first; keep rules short and use them for knowledge and procedure.")
        return "This assistant follows stated rules: prefer one clear general rule over several examples."


def _forms(skill: str, example_q: str, question: str) -> dict[str, list[Message]]:
    reply = f"{MARKER} noted."
    rule = f"{skill.strip()}\n\nStart every reply with \"{MARKER}\"."
    text = f"{skill.strip()}\n\n## Examples\nQ: {example_q}\nA: {reply}"
    return {
        "rule": [{"role": "system", "content": rule}, {"role": "user", "content": question}],
        "example_text": [{"role": "system", "content": text}, {"role": "user", "content": question}],
        "example_turns": [{"role": "system", "content": skill.strip() or "You are a helpful assistant."},
                          {"role": "user", "content": example_q}, {"role": "assistant", "content": reply},
                          {"role": "user", "content": question}],
    }


def choose(scores: dict[str, float]) -> str:
    """Examples first unless the stated rule worked at least as well as the better example form."""
    best_example = max(scores.get("example_text", 0.0), scores.get("example_turns", 0.0))
    rule = scores.get("rule", 0.0)
    return "rule" if rule > 0 and rule >= best_example else "example"


async def probe_student(student: LLM, skill: str, questions: list[str], *, n_questions: int = 2,
                        max_tokens: int = 12) -> StudentForm:
    """2 questions x 3 forms = 6 student calls at temperature 0 (cached like every call)."""
    qs = [q.strip()[:400] for q in questions if q and q.strip()]
    if len(qs) < 2:
        return StudentForm(reason="fewer than 2 training questions with text; examples first by default")
    example_q, asked = qs[0], qs[1:1 + n_questions]
    scores: dict[str, float] = {}
    replies: dict[str, list[str]] = {f: [] for f in FORMS}
    # Asked together, not one after another: a handoff student answers all six in one round.
    asks = [(form, messages) for q in asked for form, messages in _forms(skill, example_q, q).items()]
    done = await gather_all(*(student.complete(messages, max_tokens=max_tokens, temperature=0.0,
                                                   stage="student_probe") for _, messages in asks))
    calls = len(done)
    for (form, _), c in zip(asks, done, strict=True):
        replies[form].append(c.text.strip()[:120])
    for form in FORMS:
        scores[form] = sum(r.startswith(MARKER) for r in replies[form]) / len(asked)
    return StudentForm(prefers=choose(scores), scores=scores, probed=True, calls=calls, replies=replies)


async def load_or_probe(store: Any, emit: Any, student: LLM, skill: str, questions: list[str], setting: str,
                        *, n_questions: int = 2, skipped_why: str = "") -> StudentForm:
    """The run's recorded probe result, else a new probe (`setting`: auto | off), recorded and emitted.
    `n_questions` below 2: a probe sized to a small budget (engine/budget_plan.py; 0 skips it, `skipped_why`)."""
    saved = store.read_json(PROBE_FILE)
    if saved is not None:
        return StudentForm.from_json(saved)
    if setting == "off":
        form = StudentForm(reason="optimizer.student_probe=off; examples first by default")
    elif n_questions <= 0:
        form = StudentForm(reason=f"skipped for the budget ({skipped_why}); examples first by default")
    else:
        form = await probe_student(student, skill, questions, n_questions=n_questions)
        if n_questions < 2:
            form.reason = f"cut for the budget ({skipped_why})"
    store.write_json(PROBE_FILE, form.to_json())
    emit("student_probe", prefers=form.prefers, scores=form.scores, probed=form.probed, calls=form.calls)
    return form
