"""What the step page links to: one trajectory's whole conversation, and the items that flipped at a gate.

Both read only the run files: results.jsonl lines carry each trajectory's messages, and a gate's per-item
scores are the candidate's selection results beside the incumbent's (the run state keeps every scored
skill's per-item results by skill hash; runs from before that fall back to the selection results of the
step, or the baseline, that scored the incumbent).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillgrad.runs.report_data import RunData, as_float
from skillgrad.skill import skill_hash
from skillgrad.ui.data import read_jsonl
from skillgrad.ui.step import skill_before

PASS = 0.5  # an item passes at hard >= 0.5, as the gate's McNemar flips count it (engine/gate/stats.py)


def _text(content: Any) -> str:
    """A message's content as text: strings as they are, multimodal parts as their text or a placeholder."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict):
                parts.append(f"[{part.get('type') or 'part'}]")
            else:
                parts.append(str(part))
        return "\n".join(parts)
    return "" if content is None else json.dumps(content, ensure_ascii=False, default=str)


def conversation(data: RunData, step: int, item_id: str) -> dict[str, Any] | None:
    """The trajectory of `item_id` in the step's rollout: its scores and every message in order."""
    folder = data.steps.get(step)
    if folder is None:
        return None
    for rec in read_jsonl(folder / "rollout" / "results.jsonl"):
        if str(rec.get("item_id")) != item_id:
            continue
        messages = [{"role": str(m.get("role") or "?"), "text": _text(m.get("content")),
                     "extra": {k: v for k, v in m.items() if k not in ("role", "content")}}
                    for m in rec.get("messages") or [] if isinstance(m, dict)]
        return {"item_id": item_id, "step": step, "record": rec, "messages": messages}
    return None


def _selection_scores(path: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    for rec in read_jsonl(path / "results.jsonl"):
        hard = as_float(rec.get("hard"))
        if rec.get("item_id") is not None and hard is not None:
            out[str(rec["item_id"])] = hard
    return out


def _incumbent_scores(data: RunData, step: int) -> dict[str, float]:
    before = skill_before(data, step)
    if not before:
        return {}
    h = skill_hash(before)
    items = ((data.runtime_state or {}).get("sel_items") or {}).get(h)
    if isinstance(items, dict):
        return {str(k): float(v[0]) for k, v in items.items()
                if isinstance(v, list) and v and as_float(v[0]) is not None}
    for s in sorted((s for s in data.steps if s < step), reverse=True):  # the step whose candidate it was
        cand = data.read_text(data.steps[s] / "candidate_skill.md")
        if cand is not None and skill_hash(cand) == h:
            return _selection_scores(data.steps[s] / "selection_eval")
    if data.skills and before == data.read_text(data.skills[min(data.skills)]):
        return _selection_scores(data.path / "selection_eval_baseline")
    return {}


def gate_flips(data: RunData, step: int) -> dict[str, Any] | None:
    """Items of the selection split whose outcome differs between the incumbent and the step's candidate:
    {gained: [...], lost: [...], n}; None when either side's per-item results are not on disk."""
    folder = data.steps.get(step)
    if folder is None:
        return None
    candidate = _selection_scores(folder / "selection_eval")
    incumbent = _incumbent_scores(data, step)
    common = [i for i in candidate if i in incumbent]
    if not common:
        return None
    gained = [i for i in common if incumbent[i] < PASS <= candidate[i]]
    lost = [i for i in common if candidate[i] < PASS <= incumbent[i]]
    return {"gained": gained, "lost": lost, "n": len(common)}
