"""A labelled list whose labeller marked each label `standing` or `one-off` reports recall for each kind apart
(issue 32: many labels are one-off corrections of the work at hand, and a skill or CLAUDE.md learns from the
standing ones). The sessions are a real list's (fresh7); only the kinds are set here."""

from __future__ import annotations

import json
from pathlib import Path

from skillgrad.sleep import mine
from skillgrad.sleep.recall import load_labelled, recall

FIX = Path(__file__).parent / "fixtures" / "sessions"


def test_recall_is_reported_per_kind_where_the_list_marks_kinds(tmp_path):
    doc = json.loads((FIX / "real_preferences_fresh7.json").read_text(encoding="utf-8"))
    doc["labels"] = doc["labels"][:40]
    for i, lab in enumerate(doc["labels"]):
        lab["kind"] = "standing" if i % 2 else "one-off"
    path = tmp_path / "list.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    digests, labels, _ = load_labelled(path)
    assert {lab.kind for lab in labels} == {"standing", "one-off"}
    r = recall(mine.mine_heuristic(digests), labels)
    standing, one_off = r.of_kind(labels, "standing"), r.of_kind(labels, "one-off")
    assert standing[1] == one_off[1] == 20
    assert standing[0] + one_off[0] == r.found and 0 < r.found < r.total
    # a list without kinds keeps the empty kind: no breakdown
    digests, labels, _ = load_labelled(FIX / "real_preferences_fresh7.json")
    assert {lab.kind for lab in labels} == {""}
