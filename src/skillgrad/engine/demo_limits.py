"""What the demonstrate prompt states about a correction, and why a correction was refused, rule by rule.

A capable teacher acts on what it is told: the limit its reply will be held to (the student's reply room on the
task, and `optimizer.max_example_chars`), and, when a task is asked again in a later step, that its earlier reply
was refused and by which rule. Measured with a handoff teacher (issue 31): 26 of 26 corrections of 66-111 tokens
were refused under a 48-token limit no prompt stated, each logged as a failed check; 8 of 18 demonstrate prompts
were byte-identical re-asks with no sign that the earlier answer failed.
"""

from __future__ import annotations

from typing import Any

from skillgrad.envs.base import ExampleJudge, ExampleVerifier, Item
from skillgrad.models.base import LLM


def limit_line(env: Any, item: Item | None, student: LLM, question: str, max_chars: int) -> str:
    """The limit a correction is held to, as the prompt states it."""
    chars = max(0, max_chars - len(question.strip()))
    tokens = env.example_limit(item, student) if isinstance(env, ExampleJudge) and item is not None else 0
    room = f"at most {tokens} tokens of the student's tokenizer (about {4 * tokens} characters) and " if tokens else ""
    return (f"Limit: the reply is held to {room}at most {chars} characters; a longer one is refused before the "
            "task's checks are run.")


async def judge(env: Any, item: Item, reply: str, student: LLM) -> tuple[float, str]:
    """(score, why refused) of a proposed example, the rule named: length or checks ('' when it passed)."""
    if isinstance(env, ExampleJudge):
        score, why = await env.judge_example(item, reply, student)
        return float(score), why
    if isinstance(env, ExampleVerifier):
        score = float(await env.verify_example(item, reply, student))
        return score, "" if score >= 1.0 - 1e-9 else "failed the checks: the environment's scorer failed it"
    return 0.0, "the environment cannot verify an example"


def earlier_refusals(store: Any, history: list[dict[str, Any]], before: int) -> dict[str, tuple[int, str, str]]:
    """Item id -> (step, the teacher's reply, why it was refused) for the latest teacher correction of each task that
    an earlier step refused (demonstrate's log) or whose step's candidate the gate refused."""
    out: dict[str, tuple[int, str, str]] = {}
    for h in sorted(history, key=lambda h: int(h.get("step") or 0)):
        g = h.get("step")
        if not isinstance(g, int) or g >= before:
            continue
        demos = store.read_json(f"steps/step_{g:04d}/patches/demonstrations.json", default=None)
        if not isinstance(demos, dict):
            continue
        action = str(h.get("action", ""))
        for d in demos.get("log", []):
            if d.get("source") != "teacher_correction" or not str(d.get("reply", "")).strip():
                continue
            if not d.get("verified"):
                out[str(d.get("item_id", ""))] = (g, str(d["reply"]), str(d.get("why", "")))
            elif not action.startswith(("accept", "skip")):
                rule = (h.get("gate_rule") or {}).get("reason") or action
                done = "rejected" if "reject" in action else action
                out[str(d.get("item_id", ""))] = (g, str(d["reply"]),
                                                  f"it passed the checks, but step {g}'s candidate was {done} "
                                                  f"by the gate: {rule}")
    return out


def settled_by_tie(store: Any, history: list[dict[str, Any]], before: int) -> set[str]:
    """Tasks whose teacher correction passed its checks but whose step's candidate tied at full marks on validation
    while the incumbent passed every training task the tie-break could score. The tie-break leaves out each
    example's own task (gate/tiebreak.py), so another correction of the same task ties the same way: the teacher is
    not asked about it again while that incumbent stands. Measured with a handoff teacher (push-length): 4 of 12
    answered prompts were such re-asks, each told to "avoid" a reply that had passed."""
    out: set[str] = set()
    for h in sorted(history, key=lambda h: int(h.get("step") or 0)):
        g, action = h.get("step"), str(h.get("action", ""))
        if not isinstance(g, int) or g >= before:
            continue
        if action.startswith("accept"):  # a new incumbent: its ties are its own
            out.clear()
            continue
        rule = h.get("gate_rule") or {}
        n, passed = rule.get("n_items"), rule.get("incumbent_passed")
        if "reject" not in action or rule.get("decided_by") != "train_tiebreak" or \
                float(h.get("score_before") or 0.0) < 1.0 or not (n == 0 or (n is not None and passed == n)):
            continue
        demos = store.read_json(f"steps/step_{g:04d}/patches/demonstrations.json", default=None)
        for d in (demos or {}).get("log", []) if isinstance(demos, dict) else []:
            if d.get("source") == "teacher_correction" and d.get("verified"):
                out.add(str(d.get("item_id", "")))
    return out


def earlier_line(refusal: tuple[int, str, str] | None) -> str:
    """Why the task is asked again, for the prompt ('' when it is asked for the first time)."""
    if refusal is None:
        return ""
    step, reply, why = refusal
    return (f"Asked again: your reply to this task in step {step} was refused ({why}). It was:\n"
            f"{reply.strip()[:600]}\nWrite a reply that avoids that.")
