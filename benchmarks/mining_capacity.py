"""Does each labelled statement land in a mining prompt whose answer can carry it? No model: for each labelled
list, each prompt (a session, or a part of a long or dense one) is counted for what it states (the offline
parser's statements, at most 3 a message, as session_prompt.turn_statements) and for its labels, against the
quotes its answer may hold (tasks x 6 `said` quotes; 5 tasks where the code has no `answer_tasks`, as before
a872778).

Usage: python benchmarks/mining_capacity.py fresh5 fresh6 [fresh2 ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

from skillgrad.sleep import mine
from skillgrad.sleep.recall import load_labelled
from skillgrad.sleep.session_prompt import session_parts
from skillgrad.sleep.statements import is_correction, stated_preferences

ROOT = Path(__file__).resolve().parent.parent


def statements(text: str) -> int:
    return min(len(stated_preferences(text, correction=is_correction(text))), 3)


def main(lists: list[str]) -> None:
    for name in lists:
        digests, labels, _ = load_labelled(ROOT / "tests" / "fixtures" / "sessions" / f"real_preferences_{name}.json")
        total = fit = fit_both = prompts = 0
        for d in digests:
            parts = session_parts(d)
            prompts += len(parts)
            said = [statements(t.prompt) for t in d.turns]
            for k, p in enumerate(parts):
                stated = sum(said[i] for i in p.turns)
                tasks = mine.answer_tasks(stated) if hasattr(mine, "answer_tasks") else 5
                quotes = tasks * 6
                here = [lab for lab in labels if lab.session == d.session_id and lab.turn in p.turns
                        and not any(lab.turn in q.turns for q in parts[:k])]  # a turn run over two parts: its first
                total += len(here)
                fit += len(here) * (stated <= quotes)
                fit_both += len(here) * (stated <= quotes and len(here) <= quotes)
                if stated > quotes or len(here) > quotes or tasks > 5:
                    print(f"  {d.session_id} part {k + 1}/{len(parts)}: turns {p.turns.start + 1}-{p.turns.stop}, "
                          f"{len(p.text):,} characters, {stated} statements, {len(here)} labels, {tasks} tasks = "
                          f"{quotes} quotes")
        print(f"{name}: {prompts} prompts; of {total} labels, {fit} in a prompt whose statements fit its answer's "
              f"quotes, {fit_both} where its labels fit too")


if __name__ == "__main__":
    main(sys.argv[1:] or ["fresh5", "fresh6"])
