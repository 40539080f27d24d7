"""Mining recall on a labelled list: of the preferences a person finds in real sessions, how many a miner finds.

The list (tests/fixtures/sessions/real_preferences.json) holds real sessions' user turns with their sources, and
labels: the session, the turn and the user's words of each preference or correction, and, where the user named
one, the term a check of it must test. A label is found when a mined task carries evidence from that turn whose
subject words overlap the label's (two of them), and, when the label names a term, one of the task's checks tests that term.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillgrad.engine.proposers.text import subject_words
from skillgrad.envs.tasks.records import TaskRecord
from skillgrad.sleep.harvest.digest import SessionDigest, Turn


@dataclass(frozen=True)
class Label:
    session: str
    turn: int
    words: str
    term: str = ""
    kind: str = ""  # "standing" or "one-off" where the list's labeller said which (fresh8 on); "" otherwise


@dataclass(frozen=True)
class Recall:
    found: int
    total: int
    missed: list[Label]
    on_label: int = 0  # mined tasks whose evidence is a labelled statement (the rest: unlabelled or junk)
    tasks: int = 0

    @property
    def rate(self) -> float:
        return self.found / self.total if self.total else 0.0

    def of_kind(self, labels: Sequence[Label], kind: str) -> tuple[int, int]:
        """(found, total) among the labels of one kind: a list whose labeller marked standing preferences apart
        from one-off corrections reports both."""
        mine = [lab for lab in labels if lab.kind == kind]
        return sum(lab not in self.missed for lab in mine), len(mine)

    @property
    def precision(self) -> float:
        """The share of mined tasks that rest on a statement a person labelled."""
        return self.on_label / self.tasks if self.tasks else 0.0


def load_labelled(path: Path) -> tuple[list[SessionDigest], list[Label], list[Label]]:
    """The labelled list's sessions as digests, its labels, and its quoted statements (each its own one-turn
    'session' named `quoted-<n>`)."""
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    digests = [SessionDigest(agent="cursor", session_id=s["id"], source_path=s["source"], project="",
                             turns=[Turn(prompt=t["user"], answer=t.get("reply", "")) for t in s["turns"]])
               for s in doc["sessions"]]
    labels = [Label(x["session"], int(x["turn"]), x["words"], x.get("term", ""), x.get("kind", ""))
              for x in doc["labels"]]
    quoted = [Label(f"quoted-{i}", 0, q["words"], q.get("term", "")) for i, q in enumerate(doc.get("quoted", []))]
    return digests, labels, quoted


def _words(s: str) -> set[str]:
    return set(re.findall(r"[a-z0-9_]{3,}", s.lower()))


def _tests_term(task: TaskRecord, term: str) -> bool:
    t = term.lower()
    return any(t in c.arg.lower() or re.escape(term).lower() in c.arg.lower() for c in task.judge.checks)


def _subject(s: str) -> set[str]:
    return subject_words(s) or _words(s)


def _matches(task: TaskRecord, lab: Label) -> bool:
    """The task rests on the label's statement: evidence from its turn sharing two of its subject words (its only
    one, for a one-word statement). One shared word credited another sentence of a long turn: on fresh5, "I also
    want to know ..." for "I also want to remove the text ...", "i want you to analyze ..." for a later request."""
    if task.meta.get("session") != lab.session:
        return False
    want = _subject(lab.words)
    need = min(2, len(want))
    return any(e.get("turn") == lab.turn and len(want & _subject(str(e.get("words", "")))) >= need
               for e in task.meta.get("evidence", []))


def recall(tasks: Sequence[TaskRecord], labels: Sequence[Label]) -> Recall:
    """Labels found (with a check of the label's term where it names one), and the tasks resting on any label."""
    missed = [lab for lab in labels
              if not any(_matches(t, lab) and (not lab.term or _tests_term(t, lab.term)) for t in tasks)]
    on_label = sum(any(_matches(t, lab) for lab in labels) for t in tasks)
    return Recall(len(labels) - len(missed), len(labels), missed, on_label, len(tasks))
