"""`sleep harvest --review`: the mined tasks in a table, each accepted, dropped or edited before a night.

The table shows what a night would train and decide on: the request, the checks in words, the skills it used
(whose learned blocks it trains) and the files it named, and the evidence (the session, turn and the user's own
words). Answers come one per task: `a` accept, `d` drop, `e` edit (the
next answer is the new request text; the checks stay), `q` keep what was decided and drop the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Console
from rich.table import Table

from skillgrad.envs.tasks.records import TaskRecord

NOT_OFFLINE = ("offline mining found nothing trustworthy (no preference the user stated, no correction, no reply "
               "format that recurs across sessions); let your agent mine: --teacher handoff, or a stronger --teacher")


def evidence_text(t: TaskRecord) -> str:
    ev = t.meta.get("evidence") or []
    if not ev:
        return f"session {str(t.meta.get('session', '?'))[:8]}"
    e = ev[0]
    more = f" (+{len(ev) - 1})" if len(ev) > 1 else ""
    return f"{str(e.get('session', '?'))[:8]} turn {e.get('turn', '?')}: \"{e.get('words', '')[:70]}\"{more}"


def uses_text(t: TaskRecord) -> str:
    """The skills the request used (whose learned block this task trains) and the files it named."""
    skills = [str(x) for x in t.meta.get("skills") or []]
    files = [str(f.get("path")) for f in t.meta.get("context") or [] if isinstance(f, dict)]
    parts = ([f"skills: {', '.join(skills)}"] if skills else []) + ([f"files: {', '.join(files)}"] if files else [])
    return "; ".join(parts) or "-"


def task_table(tasks: Sequence[TaskRecord]) -> Table:
    table = Table(title=f"{len(tasks)} mined task(s)", show_lines=True)
    for col in ("#", "split", "request", "checks", "uses", "evidence (the user's words)"):
        table.add_column(col, overflow="fold")
    for i, t in enumerate(tasks, start=1):
        table.add_row(str(i), t.split or "-", t.task[:160], t.judge.describe()[:160], uses_text(t)[:120],
                      evidence_text(t))
    return table


def review(tasks: Sequence[TaskRecord], ask: Callable[[str], str], console: Console) -> list[TaskRecord]:
    """The tasks the user accepted (edited ones with their new text), in order."""
    console.print(task_table(tasks))
    kept: list[TaskRecord] = []
    for i, t in enumerate(tasks, start=1):
        choice = ask(f"task {i}: [a]ccept, [d]rop, [e]dit, [q]uit").strip().lower()[:1]
        if choice == "q":
            break
        if choice == "e":
            text = ask(f"task {i}: new request text").strip()
            kept.append(t.model_copy(update={"task": text}) if text else t)
        elif choice != "d":
            kept.append(t)
    return kept
