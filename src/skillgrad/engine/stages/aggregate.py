"""Aggregate: hierarchical merge of failure and success patches separately, then a failure-first final merge.

A merge call that fails or returns nothing usable falls back to concatenation (deduplicated), and the
fallback is reported so the trainer can put it in the events. `merge_mode="concat"` never calls the teacher.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from skillgrad.core.gather import gather_all
from skillgrad.engine.modes import UpdateMode, items_from_output
from skillgrad.engine.teacher import TeacherCall


@dataclass
class MergeResult:
    items: list[dict[str, Any]]
    fallbacks: list[dict[str, Any]] = field(default_factory=list)  # {group, level, reason}
    replies: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> MergeResult:
        return cls(**d)


def _key(item: dict[str, Any]) -> str:
    if "new_skill" in item:
        return item["new_skill"].strip()
    if "instruction" in item:
        return " ".join((item.get("title", "") + " " + item.get("instruction", "")).lower().split())
    return " ".join(f"{item.get('op')}|{item.get('target', '')}|{item.get('content', '')}".lower().split())


def concat_dedup(groups: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Concatenate in order; a duplicate adds its support to the first occurrence."""
    out: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for group in groups:
        for it in group:
            k = _key(it)
            if k in index:
                first = out[index[k]]
                first["support_count"] = int(first.get("support_count", 1)) + int(it.get("support_count", 1))
                continue
            index[k] = len(out)
            out.append(dict(it))
    return out


async def _merge_call(
    teacher: TeacherCall, mode: UpdateMode, skill: str, group: str, level: int, patches: list[list[dict[str, Any]]],
    *, meta_text: str, max_items: int, max_chars: int,
) -> tuple[list[dict[str, Any]] | None, dict[str, Any]]:
    template = mode.merge_template.format(group=group)
    evidence = [f"Patch {i + 1}:\n" + json.dumps(p, ensure_ascii=False, indent=1) for i, p in enumerate(patches)]
    reply = await teacher.ask(
        template, mode.merge_schema(max_items, max_chars), stage="aggregate",
        values={"skill": skill, "level": level, "meta": _meta(meta_text)},
        evidence_key="patches", evidence=evidence,
    )
    if reply.parsed is None:
        return None, reply.to_json()
    items = items_from_output(mode, reply.parsed.model_dump())
    if not items:
        return None, {**reply.to_json(), "error": "merge returned no items"}
    for it in items:
        it.setdefault("source_type", "failure" if group == "failure" else "success")
        it["merge_level"] = level
    return items, reply.to_json()


async def hierarchical_merge(
    patches: list[list[dict[str, Any]]], teacher: TeacherCall, mode: UpdateMode, skill: str, group: str, *,
    batch_size: int, meta_text: str, max_items: int, max_chars: int, result: MergeResult, llm: bool,
) -> list[dict[str, Any]]:
    patches = [p for p in patches if p]
    if not patches:
        return []
    if len(patches) == 1 or not llm:
        return concat_dedup(patches) if len(patches) > 1 else [dict(x) for x in patches[0]]
    level = 1
    while len(patches) > 1:
        chunks = [patches[i : i + batch_size] for i in range(0, len(patches), batch_size)]

        async def merge_chunk(chunk: list[list[dict[str, Any]]], lvl: int = level) -> list[dict[str, Any]]:
            if len(chunk) == 1:
                return chunk[0]
            items, reply = await _merge_call(teacher, mode, skill, group, lvl, chunk, meta_text=meta_text,
                                             max_items=max_items, max_chars=max_chars)
            result.replies.append(reply)
            if items is None:
                result.fallbacks.append({"group": group, "level": lvl, "reason": reply.get("error") or "unusable"})
                return concat_dedup(chunk)
            return items

        patches = list(await gather_all(*(merge_chunk(c) for c in chunks)))
        level += 1
    return patches[0]


async def aggregate(
    failure_patches: list[list[dict[str, Any]]],
    success_patches: list[list[dict[str, Any]]],
    skill: str,
    teacher: TeacherCall,
    *,
    mode: UpdateMode,
    merge_batch_size: int,
    merge_mode: str = "llm",
    meta_text: str = "",
    max_items: int = 16,
    max_chars: int = 600,
) -> MergeResult:
    if merge_batch_size < 2:
        raise ValueError("merge_batch_size must be >= 2")
    result = MergeResult(items=[])
    llm = merge_mode == "llm"
    kw = dict(batch_size=merge_batch_size, meta_text=meta_text, max_items=max_items, max_chars=max_chars,
              result=result, llm=llm)
    fail, succ = await gather_all(
        hierarchical_merge(failure_patches, teacher, mode, skill, "failure", **kw),  # type: ignore[arg-type]
        hierarchical_merge(success_patches, teacher, mode, skill, "success", **kw),  # type: ignore[arg-type]
    )
    if not fail or not succ or not llm:
        result.items = concat_dedup([fail, succ])
        return result
    if mode.final_merge_template is None:  # documents: the final merge is one more group merge
        items, reply = await _merge_call(teacher, mode, skill, "final", 99, [fail, succ], meta_text=meta_text,
                                         max_items=max_items, max_chars=max_chars)
    else:
        tpl_vals = {"skill": skill, "meta": _meta(meta_text),
                    "failure_edits": json.dumps(fail, ensure_ascii=False, indent=1),
                    "success_edits": json.dumps(succ, ensure_ascii=False, indent=1)}
        template = mode.final_merge_template
        if template == "merge_suggestions":
            tpl_vals = {"skill": skill, "meta": _meta(meta_text), "level": "final"}
            evidence = ["Failure group (high priority):\n" + json.dumps(fail, ensure_ascii=False, indent=1),
                        "Success group (lower priority):\n" + json.dumps(succ, ensure_ascii=False, indent=1)]
            r = await teacher.ask(template, mode.merge_schema(max_items, max_chars), stage="aggregate",
                                  values=tpl_vals, evidence_key="patches", evidence=evidence)
        else:
            r = await teacher.ask(template, mode.merge_schema(max_items, max_chars), stage="aggregate",
                                  values=tpl_vals)
        reply = r.to_json()
        items = items_from_output(mode, r.parsed.model_dump()) if r.parsed is not None else None
        items = items or None
    result.replies.append(reply)
    if items is None:
        result.fallbacks.append({"group": "final", "level": 0, "reason": reply.get("error") or "unusable"})
        result.items = concat_dedup([fail, succ])
    else:
        result.items = items
    return result


def _meta(text: str) -> str:
    return f"## Optimizer meta skill\n{text.strip()}\n\n" if text and text.strip() else ""
