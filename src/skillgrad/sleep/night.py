"""One night: harvest -> mine -> tasks.jsonl -> replay + consolidate with the engine -> gate -> stage.

The night folder `<project>/.skillgrad/sleep/nights/<id>/` is an ordinary run directory for the skill
target (config.json, events.jsonl, llm_cache.sqlite, runtime_state.json, steps/, ...), with the memory
target's run in `memory/`. `night.json` records how far the night got, so a killed night continues
where it stopped: mined tasks are reused, the engine resumes its runs, finished model calls replay from
the cache. Live files are read once into `live/` (the pinned snapshot) and never written here.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillgrad.config.loader import config_from_mapping
from skillgrad.config.schema import Config
from skillgrad.core.atomic import read_json, write_json, write_text
from skillgrad.core.events import EventLog
from skillgrad.engine.candidate import judge_scores
from skillgrad.engine.gate import gate_score
from skillgrad.engine.goodhart import degenerate_replies, sample_replies
from skillgrad.engine.session import open_run, run_training
from skillgrad.engine.stages.rollout import rollout
from skillgrad.envs.base import Trajectory
from skillgrad.envs.registry import create_env
from skillgrad.envs.tasks.records import TaskRecord, read_tasks, write_tasks
from skillgrad.errors import AnswersNeeded, BudgetExceeded, ProviderFatal, UsageError
from skillgrad.models.factory import build_models
from skillgrad.runs.store import RunStore
from skillgrad.skill.diff import diff_stats
from skillgrad.skill.learned import ensure_learned, extract_learned, replace_learned
from skillgrad.sleep import bank, heldout, mine, standing
from skillgrad.sleep.harvest.digest import SessionDigest
from skillgrad.sleep.memory import MemoryDoc, expanded_text, fit_memory, memory_doc
from skillgrad.sleep.named_files import with_named_files
from skillgrad.sleep.proposal_text import clean_block
from skillgrad.sleep.settings import RoleSettings, SleepSettings
from skillgrad.sleep.stage import sha256_file, sha256_text, sleep_root, stage_proposal
from skillgrad.sleep.targets import DEFAULT, MEMORY, plan_targets

Listener = Callable[[dict[str, Any]], None]
UNFINISHED = ("mining", "training")
HANDOFF_WORKERS = 64
TEACHER_CONTEXT = 4096  # tokens; see _role
# A local student reads at most 1/16 of its context of memory by default (SmolLM2: 512 tokens): a 135M model
# follows a short, relevant memory and its learned block better than 2k tokens of it (sleep_sessions: held-out
# 0.72 -> 0.50 with 2,048 tokens, 0.44 -> 0.72 with 400), and every prompt it reads costs seconds on a laptop.
MEMORY_SHARE = 16
# The new skill's text: it names no tool (a small student copies a name it reads: "This is a skillgrad-learned.")
SKILL_SCAFFOLD = ("---\nname: project-preferences\ndescription: How the user wants work done in this project: "
                  "their stated preferences and procedures.\n---\n# Project preferences\n")


def project_dir(settings: SleepSettings) -> Path:
    project = Path(settings.project).expanduser().resolve()
    if not project.is_dir():
        raise UsageError(f"--project {settings.project}: not a directory")
    return project


def default_skill(project: Path) -> Path:
    """The night's own skill: `.claude/skills/project-preferences/SKILL.md`, or the older default folder when a
    night wrote one there before."""
    old = project / ".claude" / "skills" / "skillgrad-learned" / "SKILL.md"
    return old if old.is_file() else project / ".claude" / "skills" / "project-preferences" / "SKILL.md"


MEMORY_FILES = {"codex": ("AGENTS.md",), "claude_code": ("CLAUDE.md",)}  # what each agent student reads


def live_paths(settings: SleepSettings, project: Path) -> tuple[Path, Path | None]:
    """The live SKILL.md and the memory file the student reads: AGENTS.md for Codex, CLAUDE.md for Claude Code
    (its `@AGENTS.md` import followed by memory.py), CLAUDE.md else AGENTS.md for a model student; None when
    there is none. A memory file that is a link (AGENTS.md -> CLAUDE.md) is trained and adopted at its target."""
    skill = Path(settings.skill).expanduser() if settings.skill else default_skill(project)
    if settings.memory:
        return skill.resolve(), Path(settings.memory).expanduser().resolve()
    names = MEMORY_FILES.get(settings.student.provider, ("CLAUDE.md", "AGENTS.md"))
    found = [p for p in (project / n for n in names) if p.is_file()]
    return skill.resolve(), (found[0].resolve() if found else None)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Night:
    """The state of one night (night.json) and its folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data: dict[str, Any] = read_json(root / "night.json", {}) or {}

    def save(self, **fields: Any) -> None:
        self.data.update(fields)
        write_json(self.root / "night.json", self.data)

    @property
    def status(self) -> str:
        return str(self.data.get("status", ""))


def budget_flag(stop_reason: str) -> str:
    """The CLI flag that raises the limit a stop reason names (`budget.max_minutes reached` -> --max-minutes)."""
    m = re.search(r"max_(calls|tokens|usd|minutes)", stop_reason)
    return f"--max-{m.group(1)}" if m else "limit (--max-minutes, --max-calls, --max-tokens or --max-usd)"


def budget_raised(now: dict[str, Any], then: dict[str, Any]) -> bool:
    """Whether any limit of `now` is higher than (or, as 0, lifts) the same limit of `then`."""
    return any(then.get(k) and (not v or v > then[k]) for k, v in now.items())


GITIGNORE = ("# Written by skillgrad sleep: nights keep excerpts of your agent sessions and of the files they named.\n"
             "# Set commit_state: true in the Sleep config (and delete this file) to commit them.\n*\n")


def ignore_state(project: Path) -> None:
    """`.skillgrad/.gitignore` ignoring everything in it, unless one is there (the user's own stays)."""
    path = project / ".skillgrad" / ".gitignore"
    if not path.exists():
        write_text(path, GITIGNORE)


def open_night(project: Path, *, fresh: bool = False, budget: dict[str, Any] | None = None) -> Night:
    """The newest unfinished night of the project (a rerun continues it), or a new one.

    A night stopped by its budget is continued, like `skillgrad resume`, when `budget` raises a limit it
    ran under; otherwise (the same nightly schedule again) a new night starts rather than stopping at once."""
    nights = sleep_root(project) / "nights"
    if not fresh and nights.is_dir():
        for i, d in enumerate(sorted((p for p in nights.iterdir() if p.is_dir()), reverse=True)):
            night = Night(d)
            if night.status in UNFINISHED:
                return night
            if (i == 0 and night.status == "stopped" and budget is not None
                    and budget_raised(budget, night.data.get("budget", {}))):
                return night  # only the newest night, and only with more budget than it stopped under
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    root = nights / stamp
    n = 1
    while root.exists():
        n += 1
        root = nights / f"{stamp}-{n}"
    night = Night(root)
    night.save(night_id=root.name, status="mining", created_at=_now(), project=str(project), spent={})
    return night


def _snapshot(night: Night, live: Path | None, name: str, scaffold: str) -> tuple[Path, str | None] | None:
    """Copy a live file into the night once; later phases read the copy. Returns (copy, pinned sha256)."""
    if live is None:
        return None
    pins = night.data.setdefault("pins", {})
    copy = night.root / "live" / name
    if name not in pins:
        sha = sha256_file(live)
        text = live.read_text(encoding="utf-8") if sha is not None else scaffold
        try:
            ensure_learned(text)
        except ValueError as e:
            raise UsageError(f"{live}: {e}; restore the marker or delete the partial block") from None
        write_text(copy, text)
        pins[name] = {"live": str(live), "sha256": sha}
        night.save()
    return copy, pins[name]["sha256"]


def memory_view(settings: SleepSettings, night: Night, doc: MemoryDoc, home_copy: Path, tasks: Sequence[TaskRecord],
                emit: EventLog) -> Path:
    """The memory file as the student reads it (imports followed, the pinned home file in its place), cut for
    a local student to the sections most relevant to the night's tasks when it does not fit; written once."""
    if is_agent_student(settings):  # the agent reads the copy's own file tree and follows imports itself
        night.save(memory={"entry": str(doc.entry), "home": str(doc.home), "files": [str(p) for p in doc.files]})
        return home_copy
    view = night.root / "live" / "memory_as_read.md"
    if view.exists():
        return view
    text = expanded_text(doc, ensure_learned(home_copy.read_text(encoding="utf-8")))
    info: dict[str, Any] = {"entry": str(doc.entry), "home": str(doc.home), "files": [str(p) for p in doc.files]}
    if settings.student.provider == "local":
        from skillgrad.sleep.context_window import local_window

        n_ctx, count = local_window(settings.student.model, "student")
        budget = settings.memory_max_tokens or n_ctx // MEMORY_SHARE
        fit = fit_memory(text, budget, [t.task for t in tasks], count)
        if fit is None:
            raise UsageError(f"{doc.home}: the learned block alone is over the student's memory budget of {budget} "
                             f"tokens (context {n_ctx}); shorten the block, raise memory_max_tokens, or use a "
                             "larger --student model")
        text = fit.text
        info.update(budget_tokens=budget, tokens_before=fit.tokens_before, tokens_after=fit.tokens_after,
                    dropped_sections=fit.dropped)
        if fit.reduced:
            emit("sleep_memory_fit", budget=budget, tokens_before=fit.tokens_before, tokens_after=fit.tokens_after,
                 dropped=len(fit.dropped))
    write_text(view, text)
    night.save(memory=info)
    return view


# ---------------------------------------------------------------- harvest + mine

def harvest_state_path(project: Path) -> Path:
    """Since-last-harvest bookkeeping of the project (advanced only when a night has used its harvest)."""
    return sleep_root(project) / "state.json"


def miner_name(settings: SleepSettings) -> str:
    return "llm" if use_llm_miner(settings) else "heuristic"


def harvest_digests(settings: SleepSettings, project: Path, night: Night) -> list[SessionDigest]:
    """The sessions this night mines: from the miner's cursor or `lookback_hours` back (whichever is older),
    less those already settled (used, or judged not minable by this miner or an LLM one)."""
    from skillgrad.sleep.harvest import harvest, settled_ids, since_for

    state = harvest_state_path(project)
    max_sessions = settings.max_sessions or 3 * settings.max_tasks
    miner = miner_name(settings)
    since = since_for(state, lookback_hours=settings.lookback_hours, miner=miner)
    result = harvest(project=project, claude_home=Path(settings.claude_home).expanduser(),
                     codex_home=Path(settings.codex_home).expanduser(), sources=[settings.source],
                     since=since, max_sessions=max_sessions, homes=session_homes(settings),
                     exclude=settled_ids(state, miner=miner))
    night.save(harvest={"cursor": result.cursor, "since": since.isoformat(), "miner": miner,
                        "session_ids": [d.session_id for d in result.digests],
                        "ends": {d.session_id: d.ended_at or d.started_at for d in result.digests},
                        "waiting": [s.ended_at for s in result.skipped if s.reason == "max_sessions"],
                        "recorded": False, "skipped": result.skipped_counts(),
                        "errors": len(result.errors) + len(result.damaged), "problems": result.problems()})
    return result.digests


def session_homes(settings: SleepSettings) -> dict[str, Path]:
    return {k: Path(v).expanduser() for k, v in settings.homes.items()}


def record_night_harvest(project: Path, night: Night, tasks: Sequence[TaskRecord]) -> None:
    """Settle each session the night read: "used" when tasks came from it (they are in the task bank), judged
    not minable by the night's miner when none did, waiting when its tasks were capped out (the cursor stays
    before it); then move the cursors (harvest/state.py)."""
    from skillgrad.sleep.harvest import record_settled

    h = night.data.get("harvest")
    if not h or h.get("recorded") or "ends" not in h:
        return
    used = {t.meta.get("session") for t in tasks}
    mined = set(night.data.get("mined_sessions", []))
    outcomes = {sid: ("used" if sid in used else h["miner"], end) for sid, end in h["ends"].items()
                if sid in used or sid not in mined}
    waiting = [*h.get("waiting", []), *(end for sid, end in h["ends"].items() if sid in mined and sid not in used)]
    record_settled(harvest_state_path(project), outcomes=outcomes, waiting=waiting, newest=h["cursor"],
                   miner=h["miner"])
    night.save(harvest={**h, "recorded": True})


def use_llm_miner(settings: SleepSettings) -> bool:
    if settings.miner != "auto":
        return settings.miner == "llm"
    return settings.teacher.provider != "local"  # the embedded 135M model writes junk tasks


async def mine_digests(settings: SleepSettings, digests: Sequence[SessionDigest], cfg: Config | None, cache: Path,
                       emit: EventLog, on_spent: Callable[[dict[str, Any]], None] | None = None,
                       on_mined: Callable[[list[str]], None] | None = None) -> list[TaskRecord]:
    """Sessions -> deduplicated, capped, split tasks, by the LLM miner (the teacher of `cfg`, default
    `miner_config`; calls cached in `cache`; `on_spent` gets its meter total, also when it stops) or the
    heuristic one (settings.miner), which loads no model. `on_mined` gets the sessions that gave any task
    before the cap (a session capped out is not judged unminable)."""
    if use_llm_miner(settings):
        cfg = mining_models(cfg or miner_config(settings, cache), settings)
        models = build_models(cfg, cache_path=cache, emit=emit)
        try:
            tasks = await mine.mine_llm(digests, models.teacher, max_tokens=cfg.model.teacher.max_tokens,
                                        on_error=lambda d, e: emit("sleep_mine_error", session=d.session_id, error=e))
        finally:
            if on_spent is not None:
                on_spent(models.meter.summary().get("total", {}))
            await models.aclose()
    else:
        tasks = mine.mine_heuristic(digests)
    if on_mined is not None:
        on_mined(sorted({str(t.meta.get("session")) for t in tasks}))
    tasks = with_named_files(mine.cap(mine.dedupe(tasks), settings.max_tasks), digests)  # the files they named
    return heldout.assign_splits(tasks, seed=settings.seed, val_fraction=settings.val_fraction,
                              test_fraction=settings.test_fraction)


async def mine_tasks(settings: SleepSettings, digests: Sequence[SessionDigest], cfg: Config, night: Night,
                     emit: EventLog) -> list[TaskRecord]:
    return await mine_digests(settings, digests, cfg, night.root / "llm_cache.sqlite", emit,
                              on_spent=lambda total: night.save(spent={"mine": total}),
                              on_mined=lambda ids: night.save(mined_sessions=ids))


def mining_models(cfg: Config, settings: SleepSettings) -> Config:
    """`cfg` with the teacher's reply cap for mining: the user's `teacher.max_tokens`, else none on the role, so that
    each mining call's own cap holds (sized to its answer, mine.answer_tokens); the embedded teacher keeps
    LOCAL_MINE_MAX_TOKENS. The night's teacher role carries 160 for its short edits, and a role's cap overrides
    the call's: 160 tokens hold one mined task, and a reply cut mid-JSON mines nothing from its session."""
    local = mine.LOCAL_MINE_MAX_TOKENS if settings.teacher.provider == "local" else 0
    teacher = cfg.model.teacher.model_copy(update={"max_tokens": settings.teacher.max_tokens or local})
    return cfg.model_copy(update={"model": cfg.model.model_copy(update={"teacher": teacher})})


def miner_config(settings: SleepSettings, cache: Path) -> Config:
    """The models of `sleep harvest` (no night, no training): the teacher mines, under the night's budget."""
    return config_from_mapping({
        "model": {"teacher": _role(settings.teacher, 160, "teacher"), "student": _role(settings.student, 0, "student")},
        "budget": remaining_budget(settings, {}), "cache": {"path": str(cache)}}, [], source="sleep harvest")


def prepare_tasks(settings: SleepSettings, tasks: list[TaskRecord]) -> list[TaskRecord]:
    """A reviewed task file, taken as written (no dedup: a duplicate across splits is refused as a leak);
    tasks without a split get one by the stable hash."""
    return heldout.assign_splits(mine.cap(tasks, settings.max_tasks), seed=settings.seed,
                              val_fraction=settings.val_fraction, test_fraction=settings.test_fraction)


# ---------------------------------------------------------------- engine config

def _role(r: RoleSettings, default_max_tokens: int, name: str) -> dict[str, Any]:
    d: dict[str, Any] = {"provider": r.provider, "model": r.model, "temperature": r.temperature,
                         "max_tokens": r.max_tokens or default_max_tokens}
    if r.base_url:
        d["base_url"] = r.base_url
    if r.api_key_env:
        d["api_key_env"] = r.api_key_env
    if r.provider == "local":
        from skillgrad.sleep.context_window import local_window

        n_ctx = local_window(r.model, name)[0]  # the model's own context
        # A local teacher runs at most TEACHER_CONTEXT: it then reads compact evidence (question, answer, what
        # was expected) instead of every replay's whole prompt with the memory file in it, and, at a context
        # size the student does not have, it gets its own llama.cpp instance, so teacher calls no longer evict
        # the student's cached prompt prefix (the memory file, reused by every replay of the night).
        d.update(n_threads=r.threads, n_ctx=min(n_ctx, TEACHER_CONTEXT) if name == "teacher" else n_ctx)
    return d


def remaining_budget(settings: SleepSettings, spent: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The night's hard budget minus what earlier phases spent (0 stays 'no limit')."""
    b = settings.budget
    tokens = sum(int(s.get("prompt_tokens", 0)) + int(s.get("completion_tokens", 0)) for s in spent.values())
    calls = sum(int(s.get("calls", 0)) for s in spent.values())
    usd = sum(float(s.get("cost") or 0.0) for s in spent.values())
    minutes = sum(float(s.get("seconds", 0.0)) for s in spent.values()) / 60.0

    def left(limit: float, used: float) -> float:
        return 0 if not limit else max(limit - used, 1e-9)
    return {"max_tokens": int(left(b.max_tokens, tokens)) if b.max_tokens else 0,
            "max_calls": int(left(b.max_calls, calls)) if b.max_calls else 0,
            "max_usd": left(b.max_usd, usd), "max_minutes": left(b.max_minutes, minutes)}


def is_agent_student(settings: SleepSettings) -> bool:
    return settings.student.provider in ("claude_code", "codex")


def replay_workspace(settings: SleepSettings, night: Night, project: Path, memory_home: Path | None) -> None:
    """An agent student replays in a copy of the project: made once per night (`workspace/`, bounded, see
    sleep/scratch.py); each replay copies it again into a temporary folder outside the project."""
    if not is_agent_student(settings) or night.data.get("replay"):
        return
    from skillgrad.models.providers.agents import ClaudeCodeStudent, CodexStudent
    from skillgrad.sleep.scratch import copy_project, project_relative

    root = night.root / "workspace"
    report = copy_project(project, root)
    skill_dir = (CodexStudent if settings.student.provider == "codex" else ClaudeCodeStudent).skill_dir
    memory_rel = project_relative(memory_home, project) if memory_home is not None else None
    night.save(replay={"root": str(root), "project": str(project), "copy": report.to_json(), "skill_dir": skill_dir,
                       "memory_path": memory_rel or ""})


def replay_files(night: Night, skill_file: Path, memory_file: Path | None) -> dict[str, Any]:
    """The tasks environment's replay options: the snapshot, and where the trained skill and memory go in it
    (their places in the project, and the skill also in the student's own skill folder)."""
    r = night.data.get("replay")
    if not r:
        return {}
    from skillgrad.sleep.scratch import project_relative

    project, pins = Path(r["project"]), night.data.get("pins", {})
    live = night.root / "live"
    pin = pins.get(skill_file.relative_to(live).as_posix()) if skill_file.is_relative_to(live) else None
    skill_live = Path(pin["live"]) if pin else Path(pins.get("SKILL.md", {}).get("live", "SKILL.md"))
    paths = [p for p in [project_relative(skill_live, project)] if p]
    mirror = f"{r['skill_dir']}/{skill_live.parent.name}/SKILL.md"
    if mirror not in paths:
        paths.append(mirror)
    out: dict[str, Any] = {"replay_project": r["root"], "replay_skill_paths": paths}
    if r.get("memory_path") and memory_file == live / Path(r["memory_path"]).name:  # the pinned home file
        out["replay_memory_path"] = r["memory_path"]
    return out


def engine_config(settings: SleepSettings, night: Night, *, run_dir: Path, tasks_file: Path, skill_file: Path,
                  memory_file: Path | None, target: str, n_train: int) -> Config:
    student_agent = is_agent_student(settings)
    # A handoff role's open questions cost nothing: asking a whole batch at once makes one round of it.
    handoff = "handoff" in (settings.student.provider, settings.teacher.provider)
    workers = max(settings.workers, HANDOFF_WORKERS) if handoff else settings.workers
    env: dict[str, Any] = {
        "name": "tasks", "tasks_file": str(tasks_file), "skill_init": str(skill_file), "learned_only": True,
        "train_target": target, "max_tokens": settings.task_max_tokens, "split_ratio": "1:0:0",
        "workers": workers, "out_root": str(run_dir)}
    if memory_file is not None:
        env["memory_file"] = str(memory_file)
    if student_agent:
        from skillgrad.sleep.harvest import REPLAY_MARKER

        env["task_prefix"] = REPLAY_MARKER  # a later harvest skips these replays
        env.update(replay_files(night, skill_file, memory_file))
    mapping = {
        "model": {"teacher": _role(settings.teacher, 160, "teacher"), "student": _role(settings.student, 0, "student")},
        "train": {"num_epochs": settings.epochs, "batch_size": max(1, min(settings.batch_size, n_train)),
                  "seed": settings.seed},
        # one analyst call reads up to 4 failures: a small teacher's reply costs more than the failures it reads
        "gradient": {"minibatch_size": 4, "analyst_workers": workers, "failure_only": True,
                     "merge_mode": "concat", "max_edit_chars": 200},
        "optimizer": {"learning_rate": settings.learning_rate, "min_learning_rate": settings.learning_rate,
                      "lr_scheduler": "constant", "use_slow_update": False, "use_meta_skill": False},
        # the night applies its own held-out minimum (below it nothing is staged), not the run's min_val_items
        "evaluation": {"gate_metric": settings.gate_metric, "eval_test": False, "min_val_items": 1},
        "env": env,
        # a resumed run restores what it spent itself: subtract only the night's other phases
        "budget": remaining_budget(settings, {k: v for k, v in night.data.get("spent", {}).items() if k != target}),
        "cache": {"path": str(night.root / "llm_cache.sqlite")},
    }
    return config_from_mapping(mapping, [], source=f"sleep night {night.root.name}")


# ---------------------------------------------------------------- the held-out decision

async def per_task_scores(cfg: Config, skill: str, emit: EventLog, split: str = "test",
                          ) -> dict[str, tuple[float, float, str]]:
    """Per task of `split` (hard, soft, reply) of `skill`; finished calls replay from the night's cache."""
    env = create_env(cfg.env)
    items = getattr(env.load_splits(), split)
    models = build_models(cfg, cache_path=None, emit=emit, env=env)
    try:
        res = await rollout(env, items, skill, models.student, workers=cfg.env.workers,
                            timeout_s=cfg.env.exec_timeout, temperature=cfg.evaluation.eval_temperature,
                            feedback=False)
    finally:
        await models.aclose()
    return {t.item_id: (t.hard, t.soft, t.answer) for t in res.trajectories}


async def heldout_results(cfg: Config, base: str, candidate: str, emit: EventLog, tasks: Sequence[TaskRecord],
                          night_id: str) -> list[dict[str, Any]]:
    """Tonight's held-out (test split) tasks scored under the starting block and the candidate."""
    before = await per_task_scores(cfg, base, emit)
    after = await per_task_scores(cfg, candidate, emit)
    ev, text = cfg.evaluation, {t.task_id: t.task for t in tasks}

    def g(x: tuple[float, float, str]) -> float:
        return gate_score(x[0], x[1], ev.gate_metric, ev.gate_mixed_weight)
    return [{"task_id": i, "task": text.get(i, ""), "night": night_id, "before": g(before[i]), "after": g(after[i]),
             "hard_before": before[i][0], "hard_after": after[i][0], "reply_before": before[i][2][:REPLY_CHARS],
             "reply_after": after[i][2][:REPLY_CHARS]} for i in sorted(before)]


REPLY_CHARS = 300  # held-out replies kept in the evidence and the report


def _replies(results: list[dict[str, Any]], key: str) -> list[Trajectory]:
    return [Trajectory(item_id=r["task_id"], question=r.get("task", ""), answer=r[key],
                       hard=r[f"hard_{key.removeprefix('reply_')}"]) for r in results if key in r]


def heldout_decision(settings: SleepSettings, cfg: Config, results: list[dict[str, Any]]) -> dict[str, Any]:
    """The gate test on (pooled) held-out results; below `min_heldout` tasks it does not decide."""
    n = len(results)
    mean = (lambda k: sum(r[k] for r in results) / n) if n else (lambda k: None)
    out: dict[str, Any] = {"n_heldout": n, "val_score_before": mean("before"), "val_score_after": mean("after"),
                           "val_hard_before": mean("hard_before"), "val_hard_after": mean("hard_after"),
                           "per_task": {r["task_id"]: {"before": r["before"], "after": r["after"],
                                                       "night": r["night"]} for r in results}}
    if n:  # every decision shows what the replies looked like, staged or not
        out["sample_replies"] = sample_replies(_replies(results, "reply_before"), _replies(results, "reply_after"))
    if n and n < settings.min_heldout:
        worse = judge_scores(cfg.evaluation, [r["after"] for r in results], [r["before"] for r in results],
                             seed=settings.seed, no_regression=False)  # the same gate, the other way round
        if worse.passed:  # pooled evidence that the change is worse refutes it at once
            return {**out, "accepted": False, "enough": True, "refuted": True, "gate_test": worse.to_json(),
                    "reason": f"refuted: on {n} held-out task(s) the change is worse than the current document "
                              f"({worse.reason})"}
    if n < settings.min_heldout:
        more = settings.min_heldout - n
        return {**out, "accepted": False, "enough": False,
                "reason": f"{n} held-out task(s), {settings.min_heldout} needed: {more} more real task(s) from later "
                          "sessions; the change is kept pending and tested again next night"}
    degenerate = degenerate_replies(_replies(results, "reply_after"))
    if degenerate:  # a gain made of one repeated or restated reply is not a gain (engine/goodhart.py)
        return {**out, "accepted": False, "enough": True, "degenerate": degenerate,
                "reason": f"held-out replies are degenerate: {degenerate}"}
    test = judge_scores(cfg.evaluation, [r["before"] for r in results], [r["after"] for r in results],
                        seed=settings.seed, no_regression=settings.gate_no_regression)  # the engine's one gate
    return {**out, "accepted": test.passed, "enough": True, "reason": test.reason, "gate_test": test.to_json()}


async def standing_rules(settings: SleepSettings, cfg: Config, emit: EventLog, tasks: Sequence[TaskRecord],
                         target: str) -> list[standing.Rule]:
    """The user's standing preferences from the training and selection tasks' statements (standing.py): written
    by the teacher when it is not the embedded model (calls cached in the night's cache, so a handoff night asks
    once), else the user's own words of the preferences they repeat or state for every reply."""
    said = standing.statements(tasks)
    if not said:
        return []
    rules: list[standing.Rule] | None = None
    if settings.teacher.provider != "local":
        teacher = cfg.model.teacher.model_copy(update={"max_tokens": settings.teacher.max_tokens
                                                       or standing.RULES_MAX_TOKENS})
        models = build_models(cfg.model_copy(update={"model": cfg.model.model_copy(update={"teacher": teacher})}),
                              cache_path=Path(cfg.cache.path), emit=emit)
        try:
            rules = await standing.teacher_rules(models.teacher, said, tasks, max_tokens=teacher.max_tokens,
                                                 on_drop=lambda why: emit("sleep_standing_drop", target=target,
                                                                          reason=why))
        except (AnswersNeeded, ProviderFatal, BudgetExceeded):
            raise
        except Exception as e:  # noqa: BLE001 - a bad reply falls back to the user's own words
            emit("sleep_standing_error", target=target, error=f"{type(e).__name__}: {str(e)[:200]}")
        finally:
            await models.aclose()
    if rules is None:
        rules = standing.offline_rules(said, tasks)
    emit("sleep_standing", target=target, rules=[r.to_json() for r in rules])
    return rules


# The demonstrate stage's sources (engine/proposers/bootstrap.py, corrections.py): the student's reply as it was,
# trimmed or mechanically repaired, and the teacher's correction or its repair.
STUDENT_SOURCES = ("passing_rollout", "passing_rollout_trimmed", "own_reply_trimmed", "own_reply_repair")
TEACHER_SOURCES = ("teacher_correction", "teacher_repair")


def small_model_replies(run_dir: Path, settings: SleepSettings) -> set[str]:
    """The worked examples the run's demonstrate stages took from the embedded model, normalised: the student's own
    replies (STUDENT_SOURCES in steps/*/patches/demonstrations.json: as they passed, trimmed or repaired) when the
    student is the embedded model, and every demonstration when the teacher is (its corrections are 135M text too: "Summary:
    ```python # Example of a list comprehension: 107 = (1, 25) * 3 + 4" in the sessions benchmark). A capable
    agent's passing reply or an agent teacher's correction is never among them, even when the student copies it."""
    out: set[str] = set()
    local = set(STUDENT_SOURCES) if settings.student.provider == "local" else set()
    if settings.teacher.provider == "local":
        local |= {*STUDENT_SOURCES, *TEACHER_SOURCES}
    if not local:
        return out
    for f in sorted(run_dir.glob("steps/*/patches/demonstrations.json")):
        data = read_json(f, default={})
        for item in data.get("items") or [] if isinstance(data, dict) else []:
            demo = item.get("demonstration") if isinstance(item, dict) else None
            if isinstance(demo, dict) and demo.get("source") in local:
                out.add(heldout.normalise(str(item.get("content", ""))))
    return out


def trained_candidate(run_dir: Path) -> tuple[dict[str, Any], str | None]:
    """The engine run's outcome and its best learned block when it differs from the initial one."""
    store = RunStore(run_dir)
    summary = store.read_json("summary.json", {}) or {}
    state = store.read_json("runtime_state.json", {}) or {}
    initial, best = state.get("initial_skill", ""), state.get("best_skill", "")
    out = {"status": summary.get("status"), "stopped": summary.get("stop_reason"), "changed": initial != best}
    if summary.get("status") != "completed" or initial == best:
        out.update(accepted=False, reason="no edit survived the training gate" if summary.get("status") == "completed"
                   else f"run {summary.get('status')}: {summary.get('stop_reason') or ''}".strip())
        return out, None
    return out, best


async def decide_target(settings: SleepSettings, cfg: Config, emit: EventLog, *, night: Night, target: str,
                        base: str, candidate: str, prior: list[dict[str, Any]], tasks: Sequence[TaskRecord],
                        keep_pending: bool, rules: Sequence[standing.Rule] | None = None,
                        student: Collection[str] = ()) -> dict[str, Any]:
    """Stage `candidate` iff it beats `base` on held-out real tasks that neither training nor selection saw,
    pooled with the evidence earlier nights gathered for the same pending change (engine gate test). The
    candidate is cleaned first (proposal_text.py): the held-out tests the text that would be staged. With
    `rules` (tonight's candidate, not a pending one whose evidence is pooled) worked examples that say nothing
    go too, those the embedded model wrote (`student`), and, when there are rules, those that show none of them
    (standing.py)."""
    candidate, removed = clean_block(candidate, tasks)
    if rules is not None:
        candidate, refused = standing.keep_examples(candidate, tasks, rules or None, student)
        removed = [*removed, *refused]
    if removed:
        emit("sleep_cleaned", target=target, removed=removed)
    if candidate.strip() == base.strip():
        return {"accepted": False, "enough": True, "best": candidate, "removed": removed,
                "reason": "nothing learned is left once lines that name the tool, carry a redaction placeholder or "
                          "copy a request, and worked examples that say nothing or show no standing preference, "
                          "are removed"}
    results = heldout.pool(prior, await heldout_results(cfg, base, candidate, emit, tasks, night.root.name))
    d = heldout_decision(settings, cfg, results)
    root = sleep_root(Path(night.data["project"]))
    if keep_pending:
        if d["enough"]:  # decided: staged (accepted) or refuted; either way the pending change is done
            heldout.save_pending(root, target, None)
        else:
            heldout.save_pending(root, target, {"base": sha256_text(base), "block": candidate, "results": results,
                                                "updated": night.root.name})
    return {**d, "best": candidate, **({"removed": removed} if removed else {})}


# ---------------------------------------------------------------- the night

async def run_night(settings: SleepSettings, *, tasks_file: Path | None = None, dry_run: bool = False,
                    listeners: list[Listener] | None = None, digests: Sequence[SessionDigest] | None = None,
                    fresh: bool = False) -> dict[str, Any]:
    """Run (or continue) one night and return its result; stages a proposal unless `dry_run`."""
    project = project_dir(settings)
    skill_live, memory_live = live_paths(settings, project)
    if not settings.commit_state:
        ignore_state(project)
    night = open_night(project, fresh=fresh, budget=settings.budget.model_dump())
    emit = EventLog(night.root / "events.jsonl", listeners=listeners)
    t0 = time.monotonic()
    resumed = night.status in ("training", "stopped")
    if night.status == "stopped":
        night.save(status="training", message="")
    night.save(budget=settings.budget.model_dump())
    emit("sleep_night", phase="start", night=night.root.name, resumed=resumed, dry_run=dry_run)
    skill_snap = _snapshot(night, skill_live, "SKILL.md", SKILL_SCAFFOLD)
    mem_doc = memory_doc(memory_live) if memory_live is not None else None  # imports followed
    mem_snap = _snapshot(night, mem_doc.home if mem_doc else None, mem_doc.home.name if mem_doc else "memory.md", "")
    assert skill_snap is not None
    tasks_path = night.root / "tasks.jsonl"
    if night.status == "mining" or not tasks_path.exists():
        if tasks_file is not None:
            tasks = prepare_tasks(settings, read_tasks(Path(tasks_file), key="--tasks-file"))
        else:
            found = list(digests) if digests is not None else harvest_digests(settings, project, night)
            emit("sleep_harvest", sessions=len(found))
            probe = engine_config(settings, night, run_dir=night.root, tasks_file=tasks_path,
                                  skill_file=skill_snap[0], memory_file=None, target="skill", n_train=1)
            tasks = await mine_tasks(settings, found, probe, night, emit)
            night.save(new_tasks=[t.task_id for t in tasks])
            if not found:
                night.save(no_new_sessions=True)
            root = sleep_root(project)  # the project's task bank: earlier nights' tasks, splits kept
            tasks = bank.merge(bank.load_bank(root), tasks, seed=settings.seed, val_fraction=settings.val_fraction,
                               test_fraction=settings.test_fraction)
            if not dry_run:
                bank.save_bank(root, tasks)
        write_tasks(tasks_path, tasks) if tasks else write_text(tasks_path, "")
        night.save(status="training", n_tasks=len(tasks),
                   spent={**night.data.get("spent", {}), "mine_wall": {"seconds": time.monotonic() - t0}})
    tasks = read_tasks(tasks_path) if tasks_path.stat().st_size else []
    if not dry_run:  # a dry run leaves no trace: the `sleep run` after it must find the same sessions
        record_night_harvest(project, night, tasks)
    counts = {s: sum(t.split == s for t in tasks) for s in ("train", "val", "test")}
    emit("sleep_mine", n_tasks=len(tasks), **counts)
    result: dict[str, Any] = {"night_dir": str(night.root), "tasks": counts, "dry_run": dry_run, "targets": {},
                              "problems": night.data.get("harvest", {}).get("problems", [])}
    view = memory_view(settings, night, mem_doc, mem_snap[0], tasks, emit) if mem_doc and mem_snap else None
    replay_workspace(settings, night, project, mem_doc.home if mem_doc else None)
    if view is not None:
        result["memory"] = night.data.get("memory", {})
    leaks = heldout.leaks(tasks)
    if leaks:
        return _finish(night, emit, result, "refused",
                       f"held-out task(s) {', '.join(leaks[:3])} repeat or paraphrase training or selection tasks "
                       f"(similarity >= {heldout.NEAR_DUPLICATE}); the decision would be unverified")
    h = night.data.get("harvest", {})
    if night.data.get("no_new_sessions"):
        return _finish(night, emit, result, "nothing_to_learn",
                       f"no new sessions of this project since {h.get('since', '?')} (the cursor; sessions already "
                       f"used or judged not minable are skipped): nothing to learn; --lookback-hours reaches further "
                       f"back")
    if not tasks and tasks_file is None and not use_llm_miner(settings):
        from skillgrad.sleep.review import NOT_OFFLINE

        return _finish(night, emit, result, "nothing_to_learn",
                       f"no tasks in {len(h.get('session_ids', []))} session(s): {NOT_OFFLINE} (those sessions stay "
                       f"waiting for it)")
    if not counts["train"] or not counts["val"] or not counts["test"]:
        return _finish(night, emit, result, "nothing_to_learn",
                       f"need real tasks in train, selection and held-out (have {counts['train']}, {counts['val']}, "
                       f"{counts['test']}); the held-out needs {settings.min_heldout}: nothing proposed")
    memory_live_home = mem_doc.home if mem_doc and mem_snap and settings.evolve_memory and view is not None else None
    targets = plan_targets(tasks, project=project, default_skill=skill_live, memory=memory_live_home,
                           claude_home=Path(settings.claude_home).expanduser().resolve(),
                           codex_home=Path(settings.codex_home).expanduser().resolve())
    snaps: dict[str, Path] = {DEFAULT: skill_snap[0]}
    if memory_live_home is not None and mem_snap is not None:
        snaps[MEMORY] = mem_snap[0]
    proposals: dict[str, str] = {}
    stopped = ""
    for target in targets:
        key, n = target.key, target.counts()
        if key not in snaps:  # one of the user's own skills: pinned and copied like the others
            try:
                snaps[key] = _snapshot(night, target.live, f"{target.slug}/SKILL.md", "")[0]  # type: ignore[index]
            except UsageError as e:
                result["targets"][key] = {"accepted": False, "live": str(target.live), "reason": str(e)}
                continue
        if not n["train"] or not n["val"] or not n["test"]:
            why = ("every task used one of your own skills" if key == DEFAULT and not target.tasks else
                   f"{len(target.tasks)} task(s) concern it: need train, selection and held-out ones (have "
                   f"{n['train']}, {n['val']}, {n['test']})")
            emit("sleep_target_skipped", target=key, reason=why)
            result["targets"][key] = {"accepted": False, "live": str(target.live), "n_tasks": len(target.tasks),
                                      "reason": f"not trained: {why}"}
            continue
        skill_file, run_dir = snaps[DEFAULT], night.root
        if key == MEMORY:
            run_dir = night.root / "memory"
            if DEFAULT in proposals:  # memory is consolidated under the improved skill
                skill_file = night.root / "proposed_skill.md"
                write_text(skill_file, proposals[DEFAULT])
        elif key != DEFAULT:
            skill_file, run_dir = snaps[key], night.root / target.slug
        target_tasks = tasks_path
        if len(target.tasks) != len(tasks):  # the tasks that concern this file only
            target_tasks = run_dir / ("skill_tasks.jsonl" if key == DEFAULT else "tasks.jsonl")
            if not target_tasks.exists():
                write_tasks(target_tasks, target.tasks)
        cfg = engine_config(settings, night, run_dir=run_dir, tasks_file=target_tasks, skill_file=skill_file,
                            memory_file=view, target=target.engine_target, n_train=n["train"])
        snap = snaps[key]
        base = extract_learned(ensure_learned(snap.read_text(encoding="utf-8")))
        pending = heldout.load_pending(sleep_root(project), key, sha256_text(base))
        rules = await standing_rules(settings, cfg, emit, target.tasks, key)  # asked before training: a handoff
        night.save(standing={**night.data.get("standing", {}), key: [r.to_json() for r in rules]})  # stops early
        # a pending change never freezes learning: the night trains on its tasks whatever is pending
        handle = open_run(cfg, run_dir, info={"sleep": {"night": night.root.name, "target": key}})
        emit("sleep_consolidate", target=key, run_dir=str(run_dir), resumed=handle.resumed,
             n_tasks=len(target.tasks))
        summary: dict[str, Any] = await run_training(handle, listeners=listeners)
        night.save(spent={**night.data.get("spent", {}), key: {
            **(summary.get("token_summary", {}) or {}).get("total", {}),
            "seconds": summary.get("total_wall_time_s", 0)}})
        outcome, candidate = trained_candidate(run_dir)
        if rules:  # the user's standing preferences lead the block, with their accepted answers as examples
            composed = standing.with_examples(standing.with_rules(candidate if candidate is not None else base,
                                                                  rules), standing.answer_examples(target.tasks, rules))
            candidate = composed if composed.strip() != base.strip() else candidate
        decision: dict[str, Any] = outcome
        earlier: dict[str, Any] | None = None
        if pending is not None:  # more held-out evidence for the change an earlier night kept pending
            emit("sleep_pending", target=key, prior=len(pending["results"]), since=pending.get("updated"))
            earlier = await decide_target(settings, cfg, emit, night=night, target=key, base=base,
                                          candidate=pending["block"], prior=pending["results"], tasks=target.tasks,
                                          keep_pending=not dry_run)
            emit("sleep_pending_decision", target=key, accepted=earlier["accepted"], enough=earlier["enough"],
                 refuted=earlier.get("refuted", False), reason=earlier["reason"])
        if earlier is not None and earlier["accepted"]:
            decision = {**outcome, **earlier, "pending_since": pending["updated"] if pending else None}
        elif candidate is not None:  # a still-undecided pending change is kept; tonight's candidate is not stored
            keep = not dry_run and (earlier is None or earlier["enough"])
            decision = {**outcome, **await decide_target(settings, cfg, emit, night=night, target=key, base=base,
                                                         candidate=candidate, prior=[], tasks=target.tasks,
                                                         keep_pending=keep, rules=rules,
                                                         student=small_model_replies(run_dir, settings))}
        block = heldout.normalise(str(decision.get("best") or ""))
        shown = [r.to_json() for r in rules if heldout.normalise(r.text) in block]
        if shown:  # the standing preferences the decided block states, with the words each rests on
            decision["standing"] = shown
        if earlier is not None and not earlier["accepted"]:
            decision["earlier_pending"] = {k: earlier.get(k) for k in (
                "reason", "enough", "refuted", "n_heldout", "val_score_before", "val_score_after")}
        emit("sleep_gate", target=key, accepted=decision["accepted"], reason=decision["reason"],
             before=decision.get("val_score_before"), after=decision.get("val_score_after"),
             n_heldout=decision.get("n_heldout"))
        result["targets"][key] = {**{k: v for k, v in decision.items() if k != "best"}, "live": str(target.live),
                                  "n_tasks": len(target.tasks)}
        if decision["accepted"]:
            proposals[key] = replace_learned(snap.read_text(encoding="utf-8"), decision["best"])
        if summary.get("status") == "stopped":
            stopped = str(summary.get("stop_reason") or "budget spent")
            break  # the budget is spent: later targets get nothing
    if stopped and not proposals:
        return _finish(night, emit, result, "stopped", f"the night's budget ran out ({stopped}); nothing proposed; "
                       f"rerun with a higher {budget_flag(stopped)} to continue this night")
    if not proposals:
        waiting = [t for t, d in result["targets"].items() if d.get("enough") is False]
        if waiting:
            return _finish(night, emit, result, "pending", "; ".join(
                f"{t}: {result['targets'][t]['reason']}" for t in waiting))
        return _finish(night, emit, result, "no_improvement", "no edit beat the current documents on held-out tasks")
    if dry_run:
        result["proposed"] = proposals
        return _finish(night, emit, result, "dry_run", "dry run: nothing staged")
    pins = {str(night.root / "live" / name): pin for name, pin in night.data["pins"].items()}
    files = [(Path(pins[str(snaps[t])]["live"]), text, pins[str(snaps[t])]["sha256"]) for t, text in proposals.items()]
    report = {"night": night.root.name, "tasks": counts, "targets": result["targets"],
              "spent": night.data.get("spent", {}), "budget": settings.budget.model_dump()}
    stage_dir = stage_proposal(
        project, files, night_run_dir=night.root, report=report, report_md=report_markdown(report, proposals, snaps),
        scores={t: {"val_score_before": d.get("val_score_before"), "val_score_after": d.get("val_score_after"),
                    "val_hard_before": d.get("val_hard_before"), "val_hard_after": d.get("val_hard_after")}
                for t, d in result["targets"].items()},
        evidence={"tasks": [t.model_dump(mode="json") for t in tasks],
                  **{f"{t.replace(':', '-')}_per_task": d.get("per_task", {}) for t, d in result["targets"].items()}})
    result["stage_dir"] = str(stage_dir)
    night.save(stage_dir=str(stage_dir))
    return _finish(night, emit, result, "staged", f"proposal staged in {stage_dir}")


def _finish(night: Night, emit: EventLog, result: dict[str, Any], status: str, message: str) -> dict[str, Any]:
    """Every night's end, staged or not, in night.json: its status, each target's decision (with sample
    replies before and after where held-out tasks were scored)."""
    night.save(status=status, message=message, finished_at=_now(), targets=result.get("targets", {}),
               tasks=result.get("tasks", {}))
    emit("sleep_night", phase="end", status=status, message=message)
    return {**result, "status": status, "message": message}


def report_markdown(report: dict[str, Any], proposals: dict[str, str], snaps: dict[str, Path]) -> str:
    lines = [f"# skillgrad sleep: night {report['night']}", "",
             f"Tasks: {report['tasks']['train']} train, {report['tasks']['val']} selection, "
             f"{report['tasks']['test']} held-out.", ""]
    for target, d in report["targets"].items():
        verdict = "proposed" if target in proposals else "not proposed"
        lines += [f"## {target}: {verdict}", "", f"- file: {d.get('live', '-')} ({d.get('n_tasks', '-')} task(s))",
                  f"- gate: {d.get('reason')}",
                  f"- held-out score on {d.get('n_heldout', 0)} task(s): {_f(d.get('val_score_before'))} -> "
                  f"{_f(d.get('val_score_after'))} "
                  f"(hard {_f(d.get('val_hard_before'))} -> {_f(d.get('val_hard_after'))})"]
        for r in d.get("standing") or []:  # what each standing preference rests on: the user's own words
            lines.append(f"- standing preference: {r['rule']} (you said: "
                         + "; ".join('"' + w + '"' for w in r["said"][:3]) + ")")
        if target in proposals:
            stats = diff_stats(snaps[target].read_text(encoding="utf-8"), proposals[target])
            lines.append(f"- learned block: +{stats['added']} / -{stats['removed']} lines "
                         "(text outside the block is unchanged)")
            lines += ["", "```", extract_learned(proposals[target]), "```"]
        for s in d.get("sample_replies") or []:  # what the held-out gain is made of
            lines += ["", f"- held-out task: {' '.join(str(s['question']).split())[:120]}",
                      f"  - before ({s['before']['hard']:.0f}): {' '.join(str(s['before']['reply']).split())[:200]}",
                      f"  - after ({s['after']['hard']:.0f}): {' '.join(str(s['after']['reply']).split())[:200]}"]
        lines.append("")
    lines.append("Adopt with `skillgrad sleep adopt`, or leave it; nothing live changes until you do.")
    return "\n".join(lines) + "\n"


def _f(v: Any) -> str:
    return f"{v:.3f}" if isinstance(v, (int, float)) else "-"

