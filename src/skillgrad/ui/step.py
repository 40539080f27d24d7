"""One training step as the step page shows it: trajectories, patches with raw replies, merged and
ranked edits, the apply report, the candidate diff against the skill it started from, the gate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillgrad.runs.report import step_records
from skillgrad.runs.report_data import RunData
from skillgrad.skill import unified_diff
from skillgrad.ui.data import read_jsonl


def _edits(data: RunData, rel: str) -> list[dict[str, Any]]:
    raw = data.read_json(rel)
    if isinstance(raw, dict):
        raw = raw.get("edits")
    return [e for e in raw if isinstance(e, dict)] if isinstance(raw, list) else []


def skill_before(data: RunData, step: int) -> str:
    """The current skill when `step` started: the newest saved version before it."""
    earlier = [v for v in data.skills if v < step]
    return data.read_text(data.skills[max(earlier)]) or "" if earlier else ""


def step_detail(data: RunData, step: int) -> dict[str, Any] | None:
    folder = data.steps.get(step)
    record = next((r for r in step_records(data) if r.get("step") == step), None)
    if folder is None and record is None:
        return None
    base = Path("steps") / f"step_{step:04d}"
    patches: list[dict[str, Any]] = []
    if folder is not None and (folder / "patches").is_dir():
        for p in sorted((folder / "patches").glob("minibatch_*.json")):
            doc = data.read_json(base / "patches" / p.name, dict) or {}
            raw_reply = doc.get("reply")
            reply: dict[str, Any] = raw_reply if isinstance(raw_reply, dict) else {}
            patches.append({"name": p.stem, "source": doc.get("source_type"), "task_ids": doc.get("task_ids") or [],
                            "edits": [i for i in doc.get("items") or [] if isinstance(i, dict)],
                            "ok": reply.get("ok"), "error": reply.get("error"), "raw": reply.get("raw"),
                            "failure_summary": doc.get("failure_summary") or []})
    trajectories = read_jsonl(folder / "rollout" / "results.jsonl") if folder is not None else []
    report: dict[str, Any] = data.read_json(base / "edit_apply_report.json", dict) or {}
    before = skill_before(data, step)
    candidate = data.read_text(folder / "candidate_skill.md") if folder is not None else None
    if candidate is None:
        upd: dict[str, Any] = data.read_json(base / "update_result.json", dict) or {}
        candidate = upd.get("candidate") if isinstance(upd.get("candidate"), str) else None
    diff = unified_diff(before, candidate, f"skill before step {step}", "candidate") if candidate is not None else ""
    gate = next((e for e in data.events_of("gate") if e.get("step") == step and not e.get("stage")), None)
    return {
        "step": step, "record": record or {}, "gate": gate or {}, "trajectories": trajectories, "patches": patches,
        "merged": _edits(data, str(base / "merged_patch.json")), "ranked": _edits(data, str(base / "ranked_edits.json")),
        "lr_decision": data.read_json(base / "lr_decision.json", dict),
        "outcomes": [o for o in report.get("outcomes") or [] if isinstance(o, dict)],
        "report_summary": {k: report.get(k) for k in ("total", "applied", "skipped", "errors")},
        "diff": diff, "has_candidate": candidate is not None,
        "selection": read_jsonl(folder / "selection_eval" / "results.jsonl") if folder is not None else [],
    }
