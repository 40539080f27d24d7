"""What a refused step leaves for the teacher's next prompt: the gate's reason, a few student replies under the
refused candidate, and the edits refused before the gate with their reasons (the step buffer renders them).

Measured with a handoff teacher (issue 31): blocked steps showed in the history without their reason or edits,
and no prompt showed the student's replies under a refused candidate, so the next edits repeated the refused one.
"""

from __future__ import annotations

from typing import Any

SHOWN_REPLIES = 3  # student replies per refused candidate: enough to see the pattern, few enough to fit the history
# edit statuses that mean "refused before the gate": misread by the parser, a protected region, checker text
REFUSED = ("skipped_misparsed", "skipped_protected_region", "refused_checker_text", "refused_no_content")


def gate_reason(action: str, rule: dict[str, Any] | None) -> str:
    """The gate rule's own words for a refused candidate ('' for an accepted or skipped step)."""
    if "reject" not in action and action != "blocked":
        return ""
    rule = rule or {}
    reason = str(rule.get("reason") or "")
    if rule.get("decided_by") == "early_stop":
        reason = reason or "scoring stopped once the candidate could no longer beat the incumbent"
    how = str(rule.get("decided_by") or "")
    return f"{action} ({how}): {reason}" if reason else f"{action} ({how or 'gate'})"


def candidate_replies(store: Any, step_dir: str, n: int = SHOWN_REPLIES) -> list[str]:
    """A few of the student's replies under the refused candidate, failed ones first: task, reply, what was wrong."""
    path = f"{step_dir}/selection_eval"
    if not store.exists(f"{path}/results.jsonl"):
        return []
    trajs = sorted(store.results(path).load().values(), key=lambda t: (not t.failed, t.item_id))
    out = []
    for t in trajs[:n]:
        why = f" [failed: {' '.join(t.fail_reason.split())[:160]}]" if t.failed and t.fail_reason else \
            (" [passed]" if not t.failed else " [failed]")
        out.append(f"{' '.join(t.question.split())[:120]} -> {' '.join(t.answer.split())[:200]!r}{why}")
    return out


def refused_edits(report: dict[str, Any] | None) -> list[str]:
    """The edits of a step's apply report refused before the gate, each with its reason."""
    out = []
    for o in (report or {}).get("outcomes", []):
        if o.get("status") in REFUSED:
            what = " ".join(str(o.get("content") or o.get("target") or "").split())[:160]
            out.append(f"{o.get('op')}: {what!r} refused: {o.get('detail') or o.get('status')}")
    return out
