"""`--target description`: optimize when a skill triggers.

The router (the run's student model) reads the skill's name and description among its siblings (or fixed
distractors) and picks a skill per query (envs/skillfolder/trigger.py). Each step the teacher sees the current
description and the train queries it gets wrong (missed and false triggers) and proposes a new description;
the proposal is bounded (at most `gradient.max_edit_chars x optimizer.learning_rate` characters changed, at most
1,024 characters in all) and gated: it becomes current only when its trigger F1 on the validation queries beats
the current one's. The validation queries are never shown to the teacher. Everything lands in the run folder:
`trigger.json` (every step, its scores and the gate's decision), events and the LLM cache (a rerun replays).
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from skillgrad.config.schema import Config
from skillgrad.core.atomic import write_json
from skillgrad.core.events import EventLog
from skillgrad.envs.skillfolder.folder import SkillFolder
from skillgrad.envs.skillfolder.spec import DESCRIPTION_MAX
from skillgrad.envs.skillfolder.trigger import TriggerEval, competitors, split_queries, trigger_eval
from skillgrad.errors import BudgetExceeded, ProviderFatal
from skillgrad.models.base import LLM
from skillgrad.models.factory import build_models

PROPOSER_SYSTEM = (
    "You improve the description of an agent skill. An agent reads only the skill's name and description to decide "
    "whether to use it. Write the description as 'Use this skill when ...': say what the skill does and the kinds of "
    "requests it is for, and what it is not for. Generalize from the failures; never copy a query's words. "
    f"At most {DESCRIPTION_MAX} characters. Reply with JSON {{\"description\": \"...\"}}.")


class Proposal(BaseModel):
    description: str = Field(min_length=1, max_length=DESCRIPTION_MAX)


def changed_chars(old: str, new: str) -> int:
    """Characters removed plus characters added (the size of the edit)."""
    same = sum(b.size for b in difflib.SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks())
    return len(old) + len(new) - 2 * same


def _failures(ev: TriggerEval) -> str:
    missed = [r.query for r in ev.rows if r.should_trigger and not r.triggered]
    wrong = [r.query for r in ev.rows if r.triggered and not r.should_trigger]
    lines = [f"Missed (should have used the skill): {q}" for q in missed]
    lines += [f"Wrongly used the skill for: {q}" for q in wrong]
    return "\n".join(lines)


async def _propose(teacher: LLM, name: str, description: str, failures: str, step: int, max_tokens: int,
                   ) -> tuple[str | None, str]:
    messages = [{"role": "system", "content": PROPOSER_SYSTEM},
                {"role": "user", "content": f"Skill name: {name}\nCurrent description: {description}\n\n"
                                            f"Requests the agent routed wrongly:\n{failures}\n\nNew description:"}]
    try:
        c = await teacher.complete(messages, schema=Proposal, max_tokens=max_tokens, temperature=0.7,
                                   stage="describe", sample=step)
    except (ProviderFatal, BudgetExceeded):
        raise
    except Exception as e:  # noqa: BLE001 - an unusable proposal is a skipped step, recorded
        return None, f"no proposal ({type(e).__name__}: {str(e)[:120]})"
    p = c.parsed if isinstance(c.parsed, Proposal) else None
    if p is None:
        return None, f"the proposal did not parse: {c.text[:160]!r}"
    return " ".join(p.description.split()), ""


Hold = Callable[[str], Awaitable[tuple[bool, str]]]


async def optimize_description(folder: SkillFolder, teacher: LLM, router: LLM, *, steps: int, samples: int,
                               temperature: float, edit_budget: int, max_tokens: int, seed: int,
                               emit: Any = None, hold: Hold | None = None) -> dict[str, Any]:
    """`hold`: the rest of the one gate (--target all): a candidate that raises trigger F1 is accepted only when
    `hold(candidate)` also passes (the evals' validation score with the new description does not fall)."""
    others = competitors(folder.root)
    train_q, val_q = split_queries(folder.queries, seed)

    async def score(desc: str, queries: list[Any]) -> TriggerEval:
        return await trigger_eval(router, folder.name, desc, others, queries, samples=samples,
                                  temperature=temperature)

    current = folder.description
    cur_val = await score(current, val_q)
    start = cur_val.to_json()
    log: list[dict[str, Any]] = []
    for step in range(1, steps + 1):
        cur_train = await score(current, train_q)
        failures = _failures(cur_train)
        rec: dict[str, Any] = {"step": step, "train": cur_train.to_json()}
        if not failures:
            rec["action"] = "stop: every train query routes right"
            log.append(rec)
            break
        proposal, why = await _propose(teacher, folder.name, current, failures, step, max_tokens)
        if proposal is None:
            rec.update(action="skip", why=why)
        elif proposal == current:
            rec.update(action="skip", why="the proposal repeats the current description")
        elif len(proposal) > DESCRIPTION_MAX:
            rec.update(action="reject", why=f"{len(proposal)} characters; the specification allows {DESCRIPTION_MAX}")
        elif changed_chars(current, proposal) > edit_budget:
            rec.update(action="reject", candidate=proposal,
                       why=f"changes {changed_chars(current, proposal)} characters; the budget is {edit_budget}")
        else:
            cand_val = await score(proposal, val_q)
            better = cand_val.score.f1 > cur_val.score.f1
            why = f"validation F1 {cand_val.score.f1} vs {cur_val.score.f1}"
            if better and hold is not None:
                held, held_why = await hold(proposal)
                better, why = held, f"{why}; {held_why}"
            rec.update(action="accept" if better else "reject", candidate=proposal, validation=cand_val.to_json(),
                       why=why)
            if better:
                current, cur_val = proposal, cand_val
        if emit is not None:
            emit("description_step", step=step, action=rec["action"], f1=cur_val.score.f1)
        log.append(rec)
    return {"skill": folder.name, "distractors": [n for n, _ in others], "train_queries": len(train_q),
            "validation_queries": len(val_q), "samples": samples, "edit_budget": edit_budget,
            "description_before": folder.description, "description_after": current,
            "validation_before": start, "validation_after": cur_val.to_json(), "steps": log}


def train_description(folder: SkillFolder, cfg: Config, out: Path, *, fresh: bool = False,
                      hold: Callable[[str], tuple[bool, str]] | None = None) -> dict[str, Any]:
    """Run the description optimizer with the config's teacher and student (the router); write trigger.json.
    `hold` (blocking: it may score evals) is run in a worker thread."""
    import shutil

    if fresh and out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    emit = EventLog(out / "events.jsonl")
    models = build_models(cfg, cache_path=out / "llm_cache.sqlite", emit=emit)

    async def go() -> dict[str, Any]:
        try:
            return await optimize_description(
                folder, models.teacher, models.student, steps=max(1, cfg.train.num_epochs) * 3, samples=3,
                temperature=0.7, edit_budget=cfg.gradient.max_edit_chars * max(1, int(cfg.optimizer.learning_rate)),
                max_tokens=max(cfg.model.teacher.max_tokens or 0, 256), seed=cfg.env.split_seed, emit=emit,
                hold=None if hold is None else lambda d: asyncio.to_thread(hold, d))
        finally:
            await models.aclose()

    report = asyncio.run(go())
    report["token_summary"] = models.meter.summary()
    write_json(out / "trigger.json", report)
    return report
