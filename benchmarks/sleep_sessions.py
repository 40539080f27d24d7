"""Sleep on realistic sessions: a 14.7 KB CLAUDE.md, 32 Claude Code and Codex sessions in their real formats
in which a user repeats three preferences and corrects the agent when it ignores them.

Usage: python benchmarks/sleep_sessions.py [--night] [--threads 2] [--max-minutes 15] [--memory-tokens 0]
       [--teacher local|handoff] [--out benchmarks/out/sessions]
       python benchmarks/sleep_sessions.py --profile NIGHT_DIR   (where a night's time went, from its events)
       python benchmarks/sleep_sessions.py --recall   (only the default miner's recall on labelled real sessions)
       python benchmarks/sleep_sessions.py --recall --recall-miner handoff --labelled held-out --out DIR
           (also your agent's recall as the LLM miner, answering one prompt per session, or per part of a long
            one; exit 3 until answered); --replay FOLDER (repeatable) first takes the answers recorded in FOLDER
            (its prompts/<id>.md session blocks and answers/<id>.md) for the prompts that are byte for byte the same
       python benchmarks/sleep_sessions.py --real-home N --out DIR   (the held-out real project's sessions up to
           night N of 3 as a user's Claude Code home in DIR/home; then run `skillgrad sleep run` on it, docs/sleep.md)

Recall: of the preferences and corrections a person finds in real public sessions (tests/fixtures/sessions/
real_preferences.json, the development list, real_preferences_heldout.json, labelled before the miner ran on
it, real_preferences_fresh.json, 21 Claude Code sessions labelled and committed before any miner ran on them, and
real_preferences_fresh2.json, 15 more from 14 other projects, labelled the same way after the others had been measured,
real_preferences_fresh3.json, 17 SpecStory-exported sessions of 4 other people, labelled after fresh2 was measured,
real_preferences_fresh4.json, 15 more of 4 more people, labelled after fresh3 was measured and read,
real_preferences_fresh5.json, 15 Codex CLI, Cursor, Claude Code and VS Code Copilot sessions of 7 more people, and
real_preferences_fresh6.json, 19 Claude Code, Cursor, Copilot CLI and Codex CLI sessions of 8 more people, labelled after
fresh5 was measured and read, and real_preferences_fresh7.json, 17 Cursor and VS Code Copilot sessions of 7 more people,
labelled after fresh6),
the share the default (heuristic) miner finds with a check of what the user meant or the user's words as its rubric,
and the share of mined tasks that rest on a labelled statement (a task on an unlabelled turn is junk or a
preference the labeller missed). Printed first in every mode.

The preferences: use pnpm, never npm; start every reply with "Summary:"; never `var` (const / let). Sessions
1-24 are the night's; 25-32 come later. Without `--night` it harvests and mines (no model) and prints how many
mined tasks check one of the user's preferences. With `--night` it also runs a night with the embedded
SmolLM2-135M as student and teacher, then scores the tasks mined from the later sessions (never seen by the
night) under the current and the proposed learned block, and prints calls and minutes. Nothing is adopted.

With `--teacher handoff` the teacher is your own agent (the student stays the embedded model): the night mines
and proposes through prompt files. When it stops for answers the script prints where PROMPTS.md is and exits 3
without writing the later sessions; answer the prompts and rerun the same command with the same `--out`: the
pending night continues (finished calls come from its cache and answers), and only the completed night writes
the later sessions and scores them. `handoff_rounds.json` in `--out` keeps each invocation's minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from skillgrad.envs.tasks.records import read_tasks, write_tasks
from skillgrad.sleep.harvest import harvest
from skillgrad.sleep.mine import mine_heuristic
from skillgrad.sleep.recall import load_labelled, recall

ROOT = Path(__file__).resolve().parent.parent
MEMORY = ROOT / "tests" / "fixtures" / "memory" / "CLAUDE_real_size.md"
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
NIGHT_SESSIONS, ALL_SESSIONS = 24, 32
# (request, a reply that ignores the preference, the user's correction, the corrected reply); the preference
# is stated in the request itself for every third session (then the reply follows it).
PNPM = [("How do I add lodash to the web app?", "Run `npm install lodash` in apps/web.",
         "No, use pnpm, not npm.", "Run `pnpm add lodash --filter web`."),
        ("How do I run the API tests?", "Run `npm test` in apps/api.", "Use pnpm, not npm.",
         "Run `pnpm --filter @ledgerline/api test`."),
        ("Which command starts the dev server?", "`npm run dev`.", "No, use pnpm instead of npm.", "`pnpm dev`."),
        ("How do I update the eslint preset?", "`npm update @ledgerline/config`.", "Use pnpm, not npm!",
         "`pnpm update @ledgerline/config`.")]
SUMMARY = [("Explain what the reconciliation job does.", "It matches Stripe charges to invoices hourly.",
            "Start every reply with Summary: please.", "Summary: it matches Stripe charges to invoices hourly."),
           ("What does the dunning schedule look like?", "Reminders go out 3, 7 and 14 days after the due date.",
            "Please start every reply with Summary:", "Summary: reminders at 3, 7 and 14 days."),
           ("Why do we store money as cents?", "Floating point cannot represent cents exactly.",
            "Start every reply with Summary: as I asked.", "Summary: floats cannot represent cents exactly."),
           ("How are invoices scoped?", "Every query is scoped by accountId.",
            "Again: start every reply with Summary:", "Summary: every query is scoped by accountId.")]
VAR = [("Write a function that sums invoice lines.", "var total = 0; for (var l of lines) total += l.cents;",
        "Never use var in this codebase.", "let total = 0; for (const l of lines) total += l.cents;"),
       ("Show me how to format a due date.", "var d = formatDate(invoice.dueDate);", "Don't use var, use const.",
        "const d = formatDate(invoice.dueDate);"),
       ("Write a helper that counts overdue invoices.", "var n = invoices.filter(isOverdue).length;",
        "Never use var.", "const n = invoices.filter(isOverdue).length;"),
       ("Give me a snippet that reads the API key from env.", "var key = env.API_KEY;",
        "No var please: never use var.", "const key = env.API_KEY;")]
STATED = {"pnpm": "Use pnpm, not npm: ", "summary": "Start every reply with Summary: ", "var": "Never use var: "}


def conversations() -> list[tuple[str, list[tuple[str, str]]]]:
    """32 sessions: (preference, [(prompt, reply), ...])."""
    out = []
    for i in range(32):
        kind, bank = [("pnpm", PNPM), ("summary", SUMMARY), ("var", VAR)][i % 3]
        ask, wrong, fix, right = bank[(i // 3) % len(bank)]
        ask = f"{ask} (ticket {100 + i})"
        if i % 4 == 3:  # the user states the preference up front; the agent follows it
            out.append((kind, [(STATED[kind] + ask[0].lower() + ask[1:], right)]))
        else:
            out.append((kind, [(ask, wrong), (fix, right)]))
    return out


def claude_session(path: Path, sid: str, cwd: str, t0: datetime, turns: list[tuple[str, str]]) -> None:
    lines, parent, n = [], None, 0
    for k, (prompt, reply) in enumerate(turns):
        for role, text in (("user", prompt), ("assistant", reply)):
            if not text:
                continue  # a turn whose reply the export did not keep
            n += 1
            uuid = f"{sid[:8]}-0000-4000-8000-{n:012d}"
            rec = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid,
                   "version": "2.1.39", "gitBranch": "main", "type": role, "uuid": uuid,
                   "timestamp": (t0 + timedelta(seconds=40 * (2 * k + (role == "assistant")))).isoformat()
                   .replace("+00:00", "Z")}
            rec["message"] = {"role": "user", "content": text} if role == "user" else {
                "model": "claude-sonnet-4-5-20250929", "id": f"msg_{sid[:6]}{n}", "type": "message",
                "role": "assistant", "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}
            lines.append(json.dumps(rec, separators=(",", ":")))
            parent = uuid
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def codex_session(path: Path, sid: str, cwd: str, t0: datetime, turns: list[tuple[str, str]]) -> None:
    def ts(s: int) -> str:
        return (t0 + timedelta(seconds=s)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    lines = [{"timestamp": ts(0), "type": "session_meta", "payload": {
        "id": sid, "timestamp": ts(0), "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.104.0",
        "source": "cli", "model_provider": "openai", "git": {"branch": "main"}}}]
    for k, (prompt, reply) in enumerate(turns):
        lines += [
            {"timestamp": ts(60 * k + 1), "type": "response_item", "payload": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}},
            {"timestamp": ts(60 * k + 1), "type": "event_msg", "payload": {
                "type": "user_message", "message": prompt, "images": []}},
            {"timestamp": ts(60 * k + 2), "type": "turn_context", "payload": {"cwd": cwd, "model": "gpt-5.3-codex"}},
            {"timestamp": ts(60 * k + 30), "type": "event_msg", "payload": {"type": "agent_message", "message": reply}},
            {"timestamp": ts(60 * k + 30), "type": "response_item", "payload": {
                "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": reply}]}}]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(x, separators=(",", ":")) for x in lines) + "\n", encoding="utf-8")


def build(out: Path, keep: bool = False) -> tuple[Path, Path, Path, list[str]]:
    """The project and the Claude and Codex homes with the night's sessions (1-24) written; each session's
    preference (in session order). The later sessions are written by `write_sessions(..., 24, 32)` after the
    night, as they happen in life: the night's harvest never sees them. `keep`: a pending night continues in
    `out`, which is not wiped (the sessions are rewritten with the same bytes)."""
    if not keep:
        shutil.rmtree(out, ignore_errors=True)
    project = out / "ledgerline"
    project.mkdir(parents=True, exist_ok=keep)
    (project / "CLAUDE.md").write_text(MEMORY.read_text(encoding="utf-8"), encoding="utf-8")
    claude, codex = out / "claude", out / "codex"
    write_sessions(project, claude, codex, 0, NIGHT_SESSIONS)
    return project, claude, codex, [kind for kind, _ in conversations()]


def write_sessions(project: Path, claude: Path, codex: Path, first: int, last: int) -> None:
    """Sessions first..last-1, odd ones as Codex rollouts, even ones as Claude Code transcripts."""
    for i, (_, turns) in enumerate(conversations()[first:last], start=first):
        t0 = START + timedelta(hours=6 * i)
        sid = f"{i:08x}-1111-4222-8333-{i:012x}"
        if i % 2:
            codex_session(codex / "sessions" / t0.strftime("%Y/%m/%d") / f"rollout-{t0:%Y-%m-%dT%H-%M-%S}-{sid}.jsonl",
                          sid, str(project), t0, turns)
        else:
            claude_session(claude / "projects" / ("-" + str(project).strip("/").replace("/", "-")) / f"{sid}.jsonl",
                           sid, str(project), t0, turns)


PREFERENCE_CHECK = {"pnpm": re.compile(r"pnpm|npm"), "summary": re.compile(r"Summary"), "var": re.compile(r"var")}


def preferences_checked(task: object) -> set[str]:
    """The user's preferences (pnpm, summary, var) that one of the task's checks is about."""
    return {k for c in task.judge.checks for k, rx in PREFERENCE_CHECK.items()  # type: ignore[attr-defined]
            if c.op != "no_refusal" and rx.search(c.arg)}


_WORDS = re.compile(r"[a-z0-9]+")


def restates(reply: str, request: str) -> bool:
    """A reply made of the request's own words (`Summary: Use pnpm, not npm to run the API tests.` for "Use pnpm,
    not npm: how do I run the API tests?"): 80 % or more of its words come from the request, `summary` aside."""
    words = [w for w in _WORDS.findall(reply.lower()) if w != "summary"]
    asked = set(_WORDS.findall(request.lower()))
    return bool(words) and sum(w in asked for w in words) >= 0.8 * len(words)


def preference_pass_rates(tasks: list, before: dict, after: dict) -> dict[str, tuple[float, float, int]]:
    """Per preference: the share of its checks (over every later task that checks it) that the replies before and
    after the night pass, and how many checks that is (for pnpm the `contains pnpm` checks only). A reply that
    restates the request passes none (it says `pnpm` because the request did). A preference is learned when the
    share rises."""
    from skillgrad.envs.tasks.checks import run_check

    out = {}
    ask = {t.task_id: t.task for t in tasks}
    for kind, rx in PREFERENCE_CHECK.items():
        checks = [(t.task_id, c) for t in tasks for c in t.judge.checks if c.op != "no_refusal" and rx.search(c.arg)
                  and (kind != "pnpm" or c.op == "contains")]  # a reply that names no tool at all is no pnpm reply
        rate = [sum(run_check(c, d[i][2], []) and not restates(d[i][2], ask[i]) for i, c in checks)
                / max(1, len(checks)) for d in (before, after)]
        out[kind] = (rate[0], rate[1], len(checks))
    return out


def checks_a_preference(task: object) -> bool:
    """A task checks a real preference when one of its checks is about pnpm/npm, `Summary:` or `var`."""
    return bool(preferences_checked(task))


def profile(night: Path) -> list[tuple[str, str]]:
    """Where a night's model time went: calls, prompt / completion tokens and call seconds per role and stage,
    over every run of the night (the skill, memory and user-skill runs and the held-out decision)."""
    rows: dict[tuple[str, str], list[float]] = {}
    for f in sorted(night.rglob("events.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            e = json.loads(line)
            if e.get("event") != "llm_call" or e.get("cached"):
                continue
            r = rows.setdefault((str(e.get("role")), str(e.get("stage"))), [0, 0, 0, 0.0, 0])
            r[0] += 1
            r[1] += int(e.get("prompt_tokens") or 0)
            r[2] += int(e.get("completion_tokens") or 0)
            r[3] += float(e.get("seconds") or 0.0)
            r[4] += int(e.get("prompt_reused") or 0)  # prompt tokens served from a saved KV prefix (not read)
    total = sum(r[3] for r in rows.values()) or 1.0
    return [(f"{role} {stage}", f"{int(c)} calls, {int(p):,} prompt ({int(reused):,} reused) + {int(k):,} completion "
             f"tokens, {sec / 60:.1f} min ({100 * sec / total:.0f} %)")
            for (role, stage), (c, p, k, sec, reused) in sorted(rows.items(), key=lambda x: -x[1][3])]


def mine_window(project: Path, claude: Path, codex: Path, first: int, last: int) -> list:
    since = START + timedelta(hours=6 * first) - timedelta(minutes=1)
    until = START + timedelta(hours=6 * last)
    r = harvest(project=project, claude_home=claude, codex_home=codex, sources=["claude_code", "codex"],
                since=since, max_sessions=200)
    digests = [d for d in r.digests if d.started_at < until.isoformat().replace("+00:00", "Z")]
    return mine_heuristic(digests)


REAL = ROOT / "tests" / "fixtures" / "sessions" / "real_preferences_heldout.json"
REAL_NIGHTS = (datetime(2025, 3, 5, tzinfo=UTC), datetime(2025, 5, 25, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC))


def real_sessions() -> list[tuple[datetime, str, list[tuple[str, str]]]]:
    """The 29 held-out real sessions of one project (idvorkin/Settings, Cursor sessions exported by SpecStory):
    (start, id, [(prompt, reply), ...]) in time order; a session whose export names no date goes before the dated
    ones, in the list's order."""
    doc = json.loads(REAL.read_text(encoding="utf-8"))
    out, undated = [], 0
    for s in doc["sessions"]:
        m = re.search(r"/(\d{4})-(\d{2})-(\d{2})_(\d{2})-(\d{2})-", s["source"])
        if m:
            t0 = datetime(*map(int, m.groups()), tzinfo=UTC)  # type: ignore[misc]
        else:
            t0, undated = datetime(2025, 2, 1, 9, tzinfo=UTC) + timedelta(days=undated), undated + 1
        out.append((t0, s["id"], [(t["user"], t.get("reply", "")) for t in s["turns"]]))
    return sorted(out)


def real_home(out: Path, nights: int) -> tuple[Path, Path]:
    """A user's home holding the real project's sessions up to the end of night `nights` (1-3) as Claude Code 2.1
    transcripts (the user's words verbatim; a turn without a recorded reply has no assistant record): sessions
    happen between nights, so night k harvests only what exists by then. Returns (project, claude home)."""
    project, claude = out / "home" / "gits" / "settings", out / "home" / ".claude"
    project.mkdir(parents=True, exist_ok=True)
    end = REAL_NIGHTS[nights - 1]
    for t0, sid, turns in real_sessions():
        if t0 >= end:
            continue
        uid = hashlib.sha256(sid.encode()).hexdigest()
        uuid = f"{uid[:8]}-{uid[8:12]}-4{uid[13:16]}-8{uid[17:20]}-{uid[20:32]}"
        claude_session(claude / "projects" / ("-" + str(project).strip("/").replace("/", "-")) / f"{uuid}.jsonl",
                       uuid, str(project), t0, turns)
    return project, claude


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--night", action="store_true", help="also run a night with the embedded model")
    ap.add_argument("--teacher", choices=["local", "handoff"], default="local",
                    help="the night's teacher: the embedded model, or your agent through prompt files (exit 3 "
                         "when answers are needed; rerun the same command to continue the night)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-minutes", type=float, default=15.0)
    ap.add_argument("--memory-tokens", type=int, default=0, help="memory_max_tokens (0: the night's default)")
    ap.add_argument("--epochs", type=int, default=3, help="passes over the night's training tasks (Sleep's default)")
    ap.add_argument("--seed", type=int, default=0, help="the night's seed (splits and batches)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "sessions")
    ap.add_argument("--profile", type=Path, help="only print where the time of this night folder went")
    ap.add_argument("--real-home", type=int, choices=[1, 2, 3], help="only lay out the real project's sessions up to "
                    "night N (1-3) as a user's home in --out/home and print the paths; then run `skillgrad sleep run`")
    ap.add_argument("--recall", action="store_true", help="only print the miner's recall on labelled real sessions")
    ap.add_argument("--recall-miner", choices=["heuristic", "handoff"], default="heuristic",
                    help="handoff: also your agent as the LLM miner, through prompt files in --out (exit 3 when "
                         "answers are needed; rerun the same command)")
    ap.add_argument("--labelled", default="all", choices=["all", "both", "development", "held-out", "fresh", "fresh2",
                                                          "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8",
                                                          "fresh9"],
                    help="which labelled list the recall reads (both: development and held-out)")
    ap.add_argument("--replay", type=Path, action="append", default=[],
                    help="with --recall-miner handoff: a folder of recorded answers (prompts/<id>.md holding each "
                         "prompt's session block, answers/<id>.md) to reuse for the prompts asked now whose system "
                         "text, session block and schema are the same; repeatable")
    a = ap.parse_args()
    if a.profile:
        print_table(profile(a.profile))
        return
    if a.real_home:
        project, claude = real_home(a.out, a.real_home)
        n = sum(1 for _ in claude.rglob("*.jsonl"))
        print(f"project {project}\nclaude home {claude} ({n} sessions up to night {a.real_home})")
        return
    print_table(recall_rows(a.recall_miner, a.out, a.labelled, a.replay))
    if a.recall:
        return
    resume = a.night and a.teacher == "handoff" and pending_night(a.out / "ledgerline") is not None
    project, claude, codex, kinds = build(a.out, keep=resume)
    night_tasks = mine_window(project, claude, codex, 0, NIGHT_SESSIONS)
    good = sum(checks_a_preference(t) for t in night_tasks)
    rows = [("sessions (night / later)", f"{NIGHT_SESSIONS} / {ALL_SESSIONS - NIGHT_SESSIONS} ({kinds.count('pnpm')} "
                                          f"pnpm, {kinds.count('summary')} Summary:, {kinds.count('var')} var)"),
            ("memory file", f"CLAUDE.md {len(MEMORY.read_bytes()):,} bytes"),
            ("tasks mined from the night's sessions", str(len(night_tasks))),
            ("... that check a preference the user stated", f"{good} ({100 * good / max(1, len(night_tasks)):.0f} %)")]
    night = night_run(a, project, claude, codex) if a.night else None
    if night is not None and a.teacher == "handoff":
        rows += handoff_rows(a, Path(night[1]["night_dir"]))
    # the later sessions happen after the night: written only now, so the night's harvest cannot see them
    write_sessions(project, claude, codex, NIGHT_SESSIONS, ALL_SESSIONS)
    later_tasks = mine_window(project, claude, codex, NIGHT_SESSIONS, ALL_SESSIONS)
    rows.append(("tasks mined from later sessions", str(len(later_tasks))))
    if night is not None:
        rows += night_rows(a, *night, later_tasks)
    print_table(rows)


LABELLED = (("real_preferences.json", "development"), ("real_preferences_heldout.json", "held-out"),
            ("real_preferences_fresh.json", "fresh"), ("real_preferences_fresh2.json", "fresh2"),
            ("real_preferences_fresh3.json", "fresh3"), ("real_preferences_fresh4.json", "fresh4"),
            ("real_preferences_fresh5.json", "fresh5"), ("real_preferences_fresh6.json", "fresh6"),
            ("real_preferences_fresh7.json", "fresh7"), ("real_preferences_fresh8.json", "fresh8"),
            ("real_preferences_fresh9.json", "fresh9"))


def recall_rows(miner: str = "heuristic", out: Path | None = None, which: str = "all",
                replay: Sequence[Path] = ()) -> list[tuple[str, str]]:
    """Mining recall (and the share of mined tasks resting on a labelled statement) on each labelled list, by the
    default miner and, with `miner="handoff"`, by your agent answering the LLM miner's prompts in `out`."""
    rows = []
    for name, what in LABELLED:
        if which not in ("all", what) and not (which == "both" and what in ("development", "held-out")):
            continue
        digests, labels, _ = load_labelled(ROOT / "tests" / "fixtures" / "sessions" / name)
        for who in ("heuristic", *(["handoff"] if miner == "handoff" else [])):
            tasks = mine_heuristic(digests) if who == "heuristic" else agent_mined(digests, out or ROOT, name, replay)
            r = recall(tasks, labels)
            label = "default miner" if who == "heuristic" else "agent miner (handoff)"
            rows.append((f"mining recall, {what}, {label} ({len(digests)} real sessions, {len(tasks)} tasks)",
                         f"{r.found} / {r.total} = {100 * r.rate:.0f} %; tasks on a labelled statement "
                         f"{r.on_label} / {r.tasks} = {100 * r.precision:.0f} %"))
            for kind in sorted({lab.kind for lab in labels} - {""}):
                found, total = r.of_kind(labels, kind)
                rows.append((f"  of which {kind} ({label}, {what})", f"{found} / {total} = {100 * found / total:.0f} %"))
            if who == "handoff":
                for lab in r.missed:
                    print(f"missed ({what}): {lab.session[-60:]} turn {lab.turn}: {lab.words[:90]}")
    return rows


def agent_mined(digests: list, out: Path, name: str, replay: Sequence[Path] = ()) -> list:
    """The LLM miner's tasks with your agent as its teacher (handoff): the first run writes one prompt per session
    (per part of a long one) and exits 3 naming PROMPTS.md; answer them and rerun the same command to read the answers (cached in `out`).
    With `replay`, recorded answers to prompts asked now are taken first (`replay_answers`)."""
    from skillgrad.core.events import EventLog
    from skillgrad.errors import AnswersNeeded
    from skillgrad.models.factory import build_models
    from skillgrad.sleep.mine import mine_llm
    from skillgrad.sleep.night import miner_config, mining_models
    from skillgrad.sleep.settings import SleepSettings

    work = out / f"recall_{Path(name).stem}"
    work.mkdir(parents=True, exist_ok=True)
    cache = work / "llm_cache.sqlite"
    s = SleepSettings(project=str(work), teacher={"provider": "handoff"}, miner="llm")
    emit = EventLog(work / "events.jsonl")

    async def go() -> list:
        cfg = mining_models(miner_config(s, cache), s)
        models = build_models(cfg, cache_path=cache, emit=emit)
        try:
            return await mine_llm(digests, models.teacher, max_tokens=cfg.model.teacher.max_tokens,
                                  on_error=lambda d, e: emit("sleep_mine_error", session=d.session_id, error=e))
        finally:
            await models.aclose()
    try:
        try:
            return asyncio.run(go())
        except AnswersNeeded as e:
            if not replay or not replay_answers(Path(e.handoff_dir), replay):
                raise
            return asyncio.run(go())  # with the recorded answers
    except AnswersNeeded as e:
        print(f"{len(e.pending)} mining prompt(s) need answers: {Path(e.handoff_dir) / 'PROMPTS.md'}\nwrite each "
              f"reply to {Path(e.handoff_dir) / 'answers'}/<id>.md, then rerun the same command")
        raise SystemExit(3) from None


def replay_answers(handoff: Path, recorded: Sequence[Path]) -> int:
    """Copies each recorded answer whose prompt is byte for byte a mining prompt this run asks (system text, session
    block and schema; the recorded folders were asked with the 5-task schema and the system text kept beside them,
    `_recorded_system`) to the id it is asked under now: an id also hashes the reply cap, which no answer depends on.
    Returns how many it copied."""
    from skillgrad.models.base import Request
    from skillgrad.models.providers.handoff import INDEX, prompt_hash
    from skillgrad.sleep.mine import MINER_SYSTEM, MinedTasks

    asked = {h: i for i, h in json.loads((handoff / INDEX).read_text(encoding="utf-8")).get("asked", {}).items()}
    bodies = {b: p.stem for p in (handoff / "prompts").glob("*.md")
              if (b := _asked_body(p.read_text(encoding="utf-8"))) is not None}
    copied = 0
    for folder in recorded:
        system = _recorded_system(folder) or MINER_SYSTEM
        for p in sorted((folder / "prompts").glob("*.md")):
            answer = folder / "answers" / p.name
            text = p.read_text(encoding="utf-8")
            body = _asked_body(text)
            if body is not None:  # a whole handoff prompt file: the same question asked word for word
                h, now = body, bodies.get(body)
            else:  # a session block alone, asked with the 5-task system text and schema
                h = prompt_hash(Request(messages=[{"role": "system", "content": system},
                                                  {"role": "user", "content": text.removesuffix("\n")}],
                                        schema=MinedTasks))
                now = asked.get(h)
            target = handoff / "answers" / f"{now}.md"
            if now is not None and answer.is_file() and not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(answer.read_text(encoding="utf-8"), encoding="utf-8")
                copied += 1
    print(f"replayed {copied} recorded answer(s) into {handoff / 'answers'}")
    return copied


def _recorded_system(folder: Path) -> str:
    """The system text a folder of session blocks was answered under (`system-and-schema.md` beside it or above it),
    or '' where none is kept: an answer applies only to the question it answered, so a block asked under another
    instruction is not replayed."""
    for kept in (folder / "system-and-schema.md", folder.parent / "system-and-schema.md"):
        if kept.is_file():
            m = re.search(r"<system>\n(.*?)\n</system>", kept.read_text(encoding="utf-8"), re.S)
            if m:
                return m.group(1)
    return ""


def _asked_body(text: str) -> str | None:
    """A handoff prompt file from its system text on (system text, session block, schema: what the model is asked;
    the header above names this run's paths and reply cap), or None for a file that is a session block alone."""
    at = text.find("<system>")
    return text[at:] if text.startswith("# skillgrad handoff prompt") and at >= 0 else None


def print_table(rows: list[tuple[str, str]]) -> None:
    width = max(len(k) for k, _ in rows)
    print("| " + "measure".ljust(width) + " | value |\n|" + "-" * (width + 2) + "|---|")
    for k, v in rows:
        print(f"| {k.ljust(width)} | {v} |")


def pending_night(project: Path) -> Path | None:
    """The project's unfinished night (stopped for answers), which a rerun continues; None if there is none."""
    from skillgrad.sleep.night import UNFINISHED, Night
    from skillgrad.sleep.stage import sleep_root

    nights = sleep_root(project) / "nights"
    found = [d for d in sorted(nights.iterdir()) if d.is_dir()] if nights.is_dir() else []
    return next((d for d in reversed(found) if Night(d).status in UNFINISHED), None)


def night_run(a: argparse.Namespace, project: Path, claude: Path, codex: Path) -> tuple[object, dict, float, str]:
    """A night with the embedded model as student and the embedded model (or, with `--teacher handoff`, the
    user's agent) as teacher: (settings, result, minutes, machine load). A handoff night that needs answers
    prints where its prompts are and exits 3; the minutes are then those of every invocation of this night."""
    from skillgrad.errors import AnswersNeeded
    from skillgrad.models.providers.local import bundled_gguf
    from skillgrad.sleep.night import run_night
    from skillgrad.sleep.settings import SleepSettings

    role = {"provider": "local", "model": str(bundled_gguf()), "threads": a.threads}
    teacher = {"provider": "handoff"} if a.teacher == "handoff" else {**role, "max_tokens": 160}
    s = SleepSettings(project=str(project), claude_home=str(claude), codex_home=str(codex), source="claude_code,codex",
                      lookback_hours=24 * 400, student=role, teacher=teacher, min_heldout=3,
                      budget={"max_minutes": a.max_minutes}, max_sessions=NIGHT_SESSIONS,
                      memory_max_tokens=a.memory_tokens, epochs=a.epochs, seed=a.seed)
    t0, load0 = time.monotonic(), os.getloadavg()[0]
    if a.teacher != "handoff":
        result = asyncio.run(run_night(s, fresh=True))
        minutes = (time.monotonic() - t0) / 60
    else:  # a pending night continues (never fresh): its cache and the written answers carry it on
        log = a.out / "handoff_rounds.json"
        rounds = json.loads(log.read_text()) if log.exists() else []
        try:
            result = asyncio.run(run_night(s))
        except AnswersNeeded as e:
            rounds.append({"minutes": (time.monotonic() - t0) / 60, "asked": len(e.pending)})
            log.write_text(json.dumps(rounds, indent=1))
            print(f"round {len(rounds)}: {len(e.pending)} prompt(s) need answers: "
                  f"{Path(e.handoff_dir) / 'PROMPTS.md'}\nwrite each reply to {Path(e.handoff_dir) / 'answers'}"
                  f"/<id>.md, then rerun the same command (same --out) to continue this night")
            raise SystemExit(3) from None
        rounds.append({"minutes": (time.monotonic() - t0) / 60, "asked": 0})
        log.write_text(json.dumps(rounds, indent=1))
        minutes = sum(r["minutes"] for r in rounds)
    load = f"{load0:.1f} at start, {os.getloadavg()[1]:.1f} (5-min average) at the end, on {os.cpu_count()} cores"
    return s, result, minutes, load


def handoff_rows(a: argparse.Namespace, night: Path) -> list[tuple[str, str]]:
    """What the agent answered: the tasks it mined, the prompts per stage and the rounds."""
    tasks = read_tasks(night / "tasks.jsonl") if (night / "tasks.jsonl").stat().st_size else []
    good = sum(checks_a_preference(t) for t in tasks)
    rounds = json.loads((a.out / "handoff_rounds.json").read_text())
    answered = [f for f in sorted(night.rglob("handoff/answers/*.md")) if not f.name.endswith(".rejected.md")]
    asked: dict[str, int] = {}  # answered prompts per stage (each prompt file names its role and stage)
    for f in answered:
        prompt = f.parent.parent / "prompts" / f.name
        m = re.search(r"stage: (\S+)", prompt.read_text(encoding="utf-8")) if prompt.exists() else None
        asked[m.group(1) if m else "?"] = asked.get(m.group(1) if m else "?", 0) + 1
    return [("tasks the agent mined from the night's sessions", f"{len(tasks)}, {good} checking a preference"),
            ("teacher prompts answered", f"{len(answered)}"
                                         + (f" ({', '.join(f'{k} {v}' for k, v in sorted(asked.items()))})"
                                            if asked else "")),
            ("rounds (invocations) / minutes of each", f"{len(rounds)} / "
                                                       + ", ".join(f"{r['minutes']:.1f}" for r in rounds))]


def night_rows(a: argparse.Namespace, s: object, result: dict, minutes: float, load: str,
               later: list) -> list[tuple[str, str]]:
    from skillgrad.core.events import EventLog
    from skillgrad.skill.learned import ensure_learned, extract_learned, replace_learned
    from skillgrad.sleep.night import Night, engine_config, per_task_scores

    night = Path(result["night_dir"])
    events = [json.loads(x) for f in night.rglob("events.jsonl") for x in f.read_text().splitlines()]
    calls = sum(e["event"] == "llm_call" and not e.get("cached") for e in events)  # every run of the night
    rows = [("night status", f"{result['status']}: {result['message'][:90]}"),
            ("night tasks train / selection / held-out", "{train} / {val} / {test}".format(**result["tasks"])),
            ("night calls / minutes", f"{calls} / {minutes:.1f}"), ("machine load", load)]
    for target, d in result.get("targets", {}).items():
        rows.append((f"{target}: night held-out score", f"{_f(d.get('val_score_before'))} -> "
                                                         f"{_f(d.get('val_score_after'))}"))
    proposal = (result.get("proposed") or {}) if not result.get("stage_dir") else {
        Path(f["live"]).name: (Path(result["stage_dir"]) / f["proposed"]).read_text()
        for f in json.loads((Path(result["stage_dir"]) / "manifest.json").read_text())["files"]}
    rows.append(("staged files", ", ".join(sorted(proposal)) or "none"))
    if later and proposal:
        tasks_file = a.out / "later_tasks.jsonl"
        write_tasks(tasks_file, [t.model_copy(update={"split": "test"}) for t in later])
        skill, memory = night / "live" / "SKILL.md", night / "live" / "memory_as_read.md"
        memory_after = memory
        if "CLAUDE.md" in proposal:  # the memory file as the student reads it, with the proposed block
            memory_after = a.out / "memory_as_read_after.md"
            memory_after.write_text(replace_learned(memory.read_text(), extract_learned(proposal["CLAUDE.md"])))
        base = extract_learned(ensure_learned(skill.read_text()))
        new = extract_learned(proposal["SKILL.md"]) if "SKILL.md" in proposal else base
        emit = EventLog(a.out / "later_events.jsonl")
        scores = []
        # the later tasks are scored by the student and the tasks' rule checks: a handoff teacher is not asked
        score = s.model_copy(update={"teacher": s.student}) if a.teacher == "handoff" else s  # type: ignore[attr-defined]
        for block, mem, name in ((base, memory, "before"), (new, memory_after, "after")):
            cfg = engine_config(score, Night(night), run_dir=a.out / f"later_eval_{name}", tasks_file=tasks_file,  # type: ignore[arg-type]
                                skill_file=skill, memory_file=mem, target="skill", n_train=1)
            scores.append(asyncio.run(per_task_scores(cfg, block, emit)))
        before, after = scores
        from skillgrad.engine.goodhart import degenerate_replies
        from skillgrad.envs.base import Trajectory

        text = {t.task_id: t.task for t in later}
        replies = [Trajectory(item_id=i, question=text[i], answer=v[2], hard=v[0]) for i, v in after.items()]
        rows.append(("later replies after the night: degenerate?", degenerate_replies(replies) or "no"))
        echo = sum(restates(v[2], text[i]) for i, v in after.items())
        rows.append(("... replies that restate their request (count as failing)", f"{echo} of {len(after)}"))
        rows.append(("later sessions' tasks, hard before -> after",
                     f"{sum(v[0] for v in before.values()) / len(before):.2f} -> "
                     f"{sum(v[0] for v in after.values()) / len(after):.2f} ({len(before)} tasks)"))
        learned, followed = [], []
        for kind, (b, f, n) in preference_pass_rates(later, before, after).items():
            rows.append((f"... {kind} checks ({n} on later tasks), passed before -> after", f"{b:.2f} -> {f:.2f}"))
            learned += [kind] if n and f > b else []
            followed += [kind] if n and b == 1.0 else []
        rows.append(("preferences learned (of 3)", f"{len(learned)} ({', '.join(learned) or 'none'})"
                     + (f"; already followed before: {', '.join(followed)}" if followed else "")))
        for i, (b, f) in sorted((i, (before[i], after[i])) for i in before):
            print(f"later {i}: {b[0]:.0f} -> {f[0]:.0f} | {' '.join(f[2].split())[:100]}")
    return rows + [("where the time went: " + k, v) for k, v in profile(night)]


def _f(v: object) -> str:
    return f"{v:.2f}" if isinstance(v, (int, float)) else "-"


if __name__ == "__main__":
    main()
