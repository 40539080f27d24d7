"""The lineage page's credit: a worked example the optimizer added (an `example` outcome in the step's
edit_apply_report.json, written into the skill as `Q:` / `A:` lines) is credited to that step's edit, not to an
"epoch-end update or rewrite" (the report's outcome holds the question as `target` and the reply as `content`,
as a real run writes them)."""

from __future__ import annotations

import json
from pathlib import Path

from ui_helpers import make_run

from skillgrad.runs.report_data import load_run
from skillgrad.ui.lineage import lineage


def test_worked_example_lines_are_credited_to_their_edit(tmp_path: Path) -> None:
    run = make_run(tmp_path, "ex", steps=1)
    report_path = run / "steps" / "step_0001" / "edit_apply_report.json"
    report = json.loads(report_path.read_text())
    report["outcomes"].append({"index": 2, "op": "example", "status": "applied_example", "detail": "",
                               "match": None, "content": "teal", "target": "What colour is the logo?"})
    report_path.write_text(json.dumps(report))
    for path in (run / "skills" / "skill_v0001.md", run / "best_skill.md"):
        path.write_text(path.read_text() + "\n## Examples\nQ: What colour is the logo?\nA: teal\n")
    notes = {row.text: row.note for row in lineage(load_run(run))}
    assert notes["Q: What colour is the logo?"] == "step 1: example (edit #2)"
    assert notes["A: teal"] == "step 1: example (edit #2)"
    assert notes["- Fact 1: the answer to question q1 is value1."] == "step 1: append (edit #0)"
