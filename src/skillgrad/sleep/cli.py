"""`skillgrad sleep ...`: run a night, review and adopt its proposal, undo, schedule.

Settings: built-in defaults < ~/.config/skillgrad/sleep.yaml (or --config) < these flags.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from skillgrad.errors import UsageError

sleep_app = typer.Typer(no_args_is_help=True, help=(
    "Nightly consolidation of your Claude Code / Codex sessions into gated skill and memory edits.\n\n"
    "Example: skillgrad sleep run --project . && skillgrad sleep adopt"))
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

Project = Annotated[Path, typer.Option("--project", "-p", help="Project folder (sessions run there; its "
                                                               "SKILL.md / CLAUDE.md / AGENTS.md).")]
ConfigOpt = Annotated[Path | None, typer.Option("--config", help="Settings YAML (default ~/.config/skillgrad/sleep.yaml).")]
Json = Annotated[bool, typer.Option("--json", help="Print the result as one JSON object.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No live display.")]
SOURCE_HELP = ("claude_code, codex, vscode_copilot, copilot_cli, opencode, gemini_cli, cursor (comma-separated), "
               "or auto: every agent whose session home exists.")
HOME_HELP = "SOURCE=PATH: where an agent keeps its sessions (repeatable), e.g. cursor=~/.config/Cursor/User."


def _homes(values: list[str] | None) -> dict[str, str] | None:
    if not values:
        return None
    out: dict[str, str] = {}
    for v in values:
        name, sep, path = v.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise UsageError(f"--home {v!r}: expected SOURCE=PATH, e.g. --home cursor=~/.config/Cursor/User")
        out[name.strip()] = path.strip()
    return out


def _role(spec: str | None, threads: int | None) -> dict[str, Any] | None:
    """'local', 'claude_code', 'openai:gpt-4o-mini', 'local:/path/model.gguf' -> a role settings mapping."""
    if spec is None and threads is None:
        return None
    d: dict[str, Any] = {}
    if spec:
        provider, _, model = spec.partition(":")
        d.update(provider=provider, model=model)
    if threads is not None:
        d["threads"] = threads
    return d


def _settings(project: Path, config: Path | None, **flags: Any) -> Any:
    from skillgrad.sleep.settings import load_settings

    over: dict[str, Any] = {"project": str(project)}
    budget = {k: flags.pop(k) for k in ("max_tokens", "max_usd", "max_calls", "max_minutes")}
    if any(v is not None for v in budget.values()):
        over["budget"] = {k: v for k, v in budget.items() if v is not None}
    for role in ("student", "teacher"):
        r = _role(flags.pop(role), flags.pop(f"{role}_threads", None) if role == "student" else flags.pop("threads"))
        if r:
            over[role] = r
    over.update({k: v for k, v in flags.items() if v is not None})
    return load_settings(config, over)


def _listeners(quiet: bool, as_json: bool) -> tuple[list[Any], Any]:
    from skillgrad.progress import RichProgress

    if quiet or as_json or not err.is_terminal:
        return [], None
    p = RichProgress(Console(stderr=True))
    return [p], p


def _night(settings: Any, *, tasks_file: Path | None, dry_run: bool, quiet: bool, as_json: bool,
           fresh: bool) -> None:
    from skillgrad.runs.lock import run_lock
    from skillgrad.sleep.night import project_dir, run_night
    from skillgrad.sleep.stage import sleep_root

    listeners, display = _listeners(quiet, as_json)
    try:
        # One night at a time per project: two would continue the same night and spend two budgets.
        with run_lock(sleep_root(project_dir(settings)), f"skillgrad sleep {'dry-run' if dry_run else 'run'}"):
            result = asyncio.run(run_night(settings, tasks_file=tasks_file, dry_run=dry_run, listeners=listeners,
                                           fresh=fresh))
    finally:
        if display is not None:
            display.close()
    if as_json:
        out.print_json(json.dumps(result, default=str))
        _exit_code(result)
        return
    for line in result.get("problems", []):
        err.print(f"unreadable session file: {line}", markup=False)
    out.print(f"night {Path(result['night_dir']).name}: {result['status']}: {result['message']}", markup=False)
    t = result["tasks"]
    out.print(f"tasks: {t['train']} train, {t['val']} selection, {t['test']} held-out", markup=False)
    for target, d in result.get("targets", {}).items():
        out.print(f"{target}: held-out score on {d.get('n_heldout', 0)} task(s) {_f(d.get('val_score_before'))} -> "
                  f"{_f(d.get('val_score_after'))}; "
                  f"{'proposed' if d.get('accepted') else 'not proposed'} ({d.get('reason')})", markup=False)
    if result.get("stage_dir"):
        out.print(f"review {result['stage_dir']}/report.md and diff.patch, then: skillgrad sleep adopt", markup=False)
    _exit_code(result)


def _exit_code(result: dict[str, Any]) -> None:
    """A night its budget stopped ends like a stopped run: exit 4, one line saying how to continue it."""
    if result.get("status") == "stopped":
        from skillgrad.errors import RunStopped

        raise RunStopped(str(result.get("message", "the night's budget ran out")))


def _f(v: Any) -> str:
    return f"{v:.3f}" if isinstance(v, (int, float)) else "-"


def _run_command(dry_run: bool):  # type: ignore[no-untyped-def]
    def command(
        project: Project = Path("."),
        config: ConfigOpt = None,
        source: Annotated[str | None, typer.Option("--source", help=SOURCE_HELP)] = None,
        home: Annotated[list[str] | None, typer.Option("--home", help=HOME_HELP)] = None,
        claude_home: Annotated[str | None, typer.Option("--claude-home", help="Default ~/.claude.")] = None,
        codex_home: Annotated[str | None, typer.Option("--codex-home", help="Default ~/.codex.")] = None,
        lookback_hours: Annotated[float | None, typer.Option("--lookback-hours", help="First night's window.")] = None,
        max_tasks: Annotated[int | None, typer.Option("--max-tasks", help="Tasks per night.")] = None,
        tasks_file: Annotated[Path | None, typer.Option("--tasks-file", help="A reviewed task file "
                                                        "(from `sleep harvest --output`) instead of harvesting.")] = None,
        skill: Annotated[str | None, typer.Option("--skill", help="Live SKILL.md to improve.")] = None,
        memory: Annotated[str | None, typer.Option("--memory", help="Live CLAUDE.md / AGENTS.md.")] = None,
        student: Annotated[str | None, typer.Option("--student", help="provider[:model]; default the "
                                                    "embedded model (local), or claude_code / codex.")] = None,
        teacher: Annotated[str | None, typer.Option("--teacher", help="provider[:model]; default local.")] = None,
        threads: Annotated[int | None, typer.Option("--threads", help="Threads for a local model.")] = None,
        max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="Token budget for the night.")] = None,
        max_usd: Annotated[float | None, typer.Option("--max-usd", help="Spend budget for the night.")] = None,
        max_calls: Annotated[int | None, typer.Option("--max-calls", help="Model call budget for the night.")] = None,
        max_minutes: Annotated[float | None, typer.Option("--max-minutes", help="Wall-time budget.")] = None,
        fresh: Annotated[bool, typer.Option("--fresh", help="Start a new night even if one is unfinished.")] = False,
        quiet: Quiet = False,
        as_json: Json = False,
    ) -> None:
        settings = _settings(project, config, source=source, homes=_homes(home), claude_home=claude_home,
                             codex_home=codex_home,
                             lookback_hours=lookback_hours, max_tasks=max_tasks, skill=skill, memory=memory,
                             student=student, teacher=teacher, student_threads=threads, threads=threads,
                             max_tokens=max_tokens, max_usd=max_usd, max_calls=max_calls, max_minutes=max_minutes)
        _night(settings, tasks_file=tasks_file, dry_run=dry_run, quiet=quiet, as_json=as_json, fresh=fresh)
    return command


sleep_app.command("run", help="Run (or continue) tonight's consolidation and stage a proposal.\n\n"
                  "Example: skillgrad sleep run --project . --max-minutes 30")(_run_command(False))
sleep_app.command("dry-run", help="Everything a night does except staging a proposal.\n\n"
                  "Example: skillgrad sleep dry-run --project .")(_run_command(True))


@sleep_app.command("harvest")
def harvest_cmd(
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the mined tasks (JSONL).")],
    project: Project = Path("."),
    config: ConfigOpt = None,
    source: Annotated[str | None, typer.Option("--source", help=SOURCE_HELP)] = None,
    home: Annotated[list[str] | None, typer.Option("--home", help=HOME_HELP)] = None,
    claude_home: Annotated[str | None, typer.Option("--claude-home")] = None,
    codex_home: Annotated[str | None, typer.Option("--codex-home")] = None,
    lookback_hours: Annotated[float | None, typer.Option("--lookback-hours")] = None,
    max_tasks: Annotated[int | None, typer.Option("--max-tasks")] = None,
    miner: Annotated[str | None, typer.Option("--miner", help="llm, heuristic, or auto (default, as a night: "
                                              "llm unless the teacher is the embedded model).")] = None,
    teacher: Annotated[str | None, typer.Option("--teacher", help="provider[:model] of the LLM miner.")] = None,
    threads: Annotated[int | None, typer.Option("--threads", help="Threads for a local model.")] = None,
    max_calls: Annotated[int | None, typer.Option("--max-calls", help="Model call budget for mining.")] = None,
    review_tasks: Annotated[bool, typer.Option("--review", help="Show the tasks in a table and accept, drop or "
                                               "edit each before it is written.")] = False,
    as_json: Json = False,
) -> None:
    """Harvest and mine tasks into a file to review and edit; then `sleep run --tasks-file FILE`.

    Example: skillgrad sleep harvest --output tasks.jsonl --miner heuristic
    """
    from skillgrad.core.events import EventLog
    from skillgrad.envs.tasks.records import write_tasks
    from skillgrad.sleep.harvest import harvest, load_state, since_for
    from skillgrad.sleep.night import (
        harvest_state_path,
        mine_digests,
        miner_name,
        session_homes,
        use_llm_miner,
    )
    from skillgrad.sleep.review import NOT_OFFLINE, review
    from skillgrad.sleep.stage import sleep_root

    if miner not in (None, "auto", "llm", "heuristic"):
        raise UsageError(f"--miner {miner}: expected llm, heuristic or auto")
    s = _settings(project, config, source=source, homes=_homes(home), claude_home=claude_home, codex_home=codex_home,
                  lookback_hours=lookback_hours, max_tasks=max_tasks, student=None, teacher=teacher, threads=threads,
                  max_tokens=None, max_usd=None, max_calls=max_calls, max_minutes=None, miner=miner)
    proj = Path(s.project).expanduser().resolve()
    result = harvest(project=proj, claude_home=Path(s.claude_home).expanduser(),
                     codex_home=Path(s.codex_home).expanduser(), sources=[s.source],
                     since=since_for(harvest_state_path(proj), lookback_hours=s.lookback_hours, miner=miner_name(s)),
                     max_sessions=s.max_sessions or 3 * s.max_tasks, homes=session_homes(s))
    work = sleep_root(proj) / "harvest"  # the LLM miner's cache and events (a rerun replays finished calls)
    tasks = asyncio.run(mine_digests(s, result.digests, None, work / "llm_cache.sqlite",
                                     EventLog(work / "events.jsonl"))) \
        if result.digests else []
    for line in result.problems():
        err.print(f"unreadable session file: {line}", markup=False)
    if not result.digests:
        first = not load_state(harvest_state_path(proj)).cursor
        window = f"in the last {s.lookback_hours:g} hours" if first else "since the cursor"
        raise UsageError(f"no new sessions of this project {window}; try --lookback-hours or --source")
    if not tasks:
        hint = "try --lookback-hours or --source" if use_llm_miner(s) else NOT_OFFLINE
        raise UsageError(f"no tasks found in {len(result.digests)} session(s); {hint}")
    if review_tasks:
        tasks = review(tasks, lambda q: typer.prompt(q, default="a", show_default=False), err)
        if not tasks:
            raise UsageError("every task was dropped in the review; nothing written")
    write_tasks(output, tasks)
    summary = {"sessions": len(result.digests), "tasks": len(tasks), "output": str(output),
               "miner": "llm" if use_llm_miner(s) else "heuristic",
               "skipped": result.skipped_counts(), "errors": len(result.errors) + len(result.damaged),
               "problems": result.problems()}
    if as_json:
        out.print_json(json.dumps(summary))
    else:
        out.print(f"{len(tasks)} tasks from {len(result.digests)} sessions written to {output}; edit them, then: "
                  f"skillgrad sleep run --tasks-file {output}", markup=False)


@sleep_app.command("status")
def status_cmd(project: Project = Path("."), as_json: Json = False) -> None:
    """Staged proposals (newest first), the last night, and the schedule.

    Example: skillgrad sleep status --project .
    """
    from skillgrad.core.atomic import read_json
    from skillgrad.sleep.stage import list_proposals, sleep_root

    proj = project.expanduser().resolve()
    if not proj.is_dir():
        raise UsageError(f"--project {project}: not a directory")
    proposals = list_proposals(proj)
    nights_dir = sleep_root(proj) / "nights"
    nights = sorted(nights_dir.iterdir(), reverse=True) if nights_dir.is_dir() else []
    last = read_json(nights[0] / "night.json", {}) if nights else {}
    window = harvest_window(proj, last)
    pending = pending_changes(proj)
    if as_json:
        out.print_json(json.dumps({"proposals": [p.to_json() for p in proposals], "last_night": last,
                                   "harvest": window, "pending": pending}, default=str))
        return
    if last:
        out.print(f"last night {last.get('night_id')}: {last.get('status')} {last.get('message', '')}", markup=False)
    if not proposals:
        out.print("no proposals staged", markup=False)
    for p in proposals:
        score = "; ".join(f"{t}: {_f(s.get('val_score_before'))} -> {_f(s.get('val_score_after'))}"
                          for t, s in p.scores.items())
        out.print(f"{p.status:9} {p.stage_dir}  {score}", markup=False)
        if len(p.files) > 1:  # adopt takes all of them or the ones --only names
            for f in p.files:
                out.print(f"          {'adopted' if f.get('adopted_by') else 'staged '} {f['live']}", markup=False)
    out.print(f"sessions: cursor {window['cursor'] or 'none yet'} (heuristic miner: "
              f"{window['heuristic_cursor'] or window['cursor'] or 'none yet'}); last window from "
              f"{window['since'] or '-'}; {window['used']} used, {window['waiting_for_agent']} waiting for an agent "
              f"miner (--teacher handoff), {window['capped']} capped out of the last night", markup=False)
    for target, ev in pending.items():
        out.print(f"pending   {target}: {ev['n_heldout']} held-out task(s) pooled since night {ev['since']}, "
                  f"{_f(ev['before'])} -> {_f(ev['after'])}; decided at {ev['needed']} (min_heldout default)",
                  markup=False)


def harvest_window(project: Path, last: dict) -> dict:
    """The cursors, the last night's window and what waits (harvest/state.py has the rules)."""
    from skillgrad.sleep.harvest import load_state
    from skillgrad.sleep.night import harvest_state_path

    st = load_state(harvest_state_path(project))
    kinds = [how for how, _ in st.settled.values()]
    h = last.get("harvest", {}) if isinstance(last.get("harvest"), dict) else {}
    return {"cursor": st.cursor, "heuristic_cursor": st.heuristic_cursor, "since": h.get("since", ""),
            "used": kinds.count("used"), "waiting_for_agent": kinds.count("heuristic"),
            "capped": len(h.get("waiting", []))}


def pending_changes(project: Path) -> dict:
    """Each pending change with its pooled held-out evidence."""
    from skillgrad.core.atomic import read_json
    from skillgrad.sleep.heldout import pending_path
    from skillgrad.sleep.settings import SleepSettings
    from skillgrad.sleep.stage import sleep_root

    data = read_json(pending_path(sleep_root(project)), {}) or {}
    out = {}
    for target, p in data.items():
        res = p.get("results", []) if isinstance(p, dict) else []
        n = len(res)
        out[target] = {"n_heldout": n, "since": p.get("updated", "?"),
                       "before": sum(r["before"] for r in res) / n if n else None,
                       "after": sum(r["after"] for r in res) / n if n else None,
                       "needed": SleepSettings.model_fields["min_heldout"].default}
    return out


def _latest_staged(project: Path) -> Path:
    from skillgrad.sleep.stage import list_proposals

    for p in list_proposals(project):
        if p.status in ("staged", "partial"):
            return p.stage_dir
    raise UsageError(f"no staged proposal in {project}; run `skillgrad sleep run` first")


@sleep_app.command("adopt")
def adopt_cmd(stage: Annotated[Path | None, typer.Argument(help="Stage folder (default: the newest staged).")] = None,
              project: Project = Path("."),
              only: Annotated[list[str] | None, typer.Option("--only", help="Adopt only this file of the proposal "
                                                             "(its path, or a skill's name); repeatable. The rest "
                                                             "stay staged.")] = None,
              as_json: Json = False) -> None:
    """Replace the live files by a staged proposal, all or the files --only names (atomic: every chosen file or
    none; backed up; refused if they changed since).

    Example: skillgrad sleep adopt --only CLAUDE.md (or: skillgrad sleep adopt)
    """
    from skillgrad.sleep.adopt import adopt

    receipt = adopt(stage or _latest_staged(project.expanduser().resolve()), only=only)
    if as_json:
        out.print_json(json.dumps(receipt.to_json()))
        return
    for f in receipt.files:
        out.print(f"adopted {f['live']}", markup=False)
    out.print("undo with: skillgrad sleep undo", markup=False)


@sleep_app.command("discard")
def discard_cmd(stage: Annotated[Path, typer.Argument(help="Stage folder.")]) -> None:
    """Mark a staged proposal discarded. Example: skillgrad sleep discard .skillgrad/sleep/20260101-031700"""
    from skillgrad.sleep.adopt import discard

    discard(stage)
    out.print(f"discarded {stage}", markup=False)


@sleep_app.command("undo")
def undo_cmd(project: Project = Path("."), as_json: Json = False) -> None:
    """Restore the live files of the last adoption, byte for byte.

    Example: skillgrad sleep undo
    """
    from skillgrad.sleep.adopt import undo

    receipt = undo(project.expanduser().resolve())
    if as_json:
        out.print_json(json.dumps(receipt.to_json()))
        return
    for f in receipt.files:
        out.print(f"restored {f['live']}", markup=False)


@sleep_app.command("schedule")
def schedule_cmd(project: Project = Path("."),
                 hour: Annotated[int, typer.Option("--hour", help="Hour (0-23).")] = 3,
                 minute: Annotated[int, typer.Option("--minute", help="Minute (0-59).")] = 17,
                 systemd: Annotated[bool, typer.Option("--systemd", help="A systemd user timer instead of cron.")]
                 = False) -> None:
    """Run `sleep run` every night from cron (one visible, tagged crontab line) or a systemd user timer.

    Example: skillgrad sleep schedule --hour 3 --minute 17
    """
    import shutil

    from skillgrad.sleep.schedule import schedule, schedule_systemd

    proj = project.expanduser().resolve()
    if systemd or (shutil.which("crontab") is None and shutil.which("systemctl") is not None):
        timer = schedule_systemd(proj, hour=hour, minute=minute)
        out.print(f"installed the systemd user timer {timer} (see `systemctl --user list-timers`)", markup=False)
        return
    line = schedule(proj, hour=hour, minute=minute)
    out.print(f"installed in your crontab (see `crontab -l`):\n{line}", markup=False)


@sleep_app.command("unschedule")
def unschedule_cmd(project: Project = Path(".")) -> None:
    """Remove the project's nightly crontab line and/or systemd timer. Example: skillgrad sleep unschedule"""
    import shutil

    from skillgrad.sleep.schedule import unschedule, unschedule_systemd

    proj = project.expanduser().resolve()
    removed = unschedule_systemd(proj)
    if shutil.which("crontab") is not None:
        removed = unschedule(proj) or removed
    out.print("removed the nightly schedule" if removed else "no nightly schedule was installed", markup=False)
