"""Issue 35's case with the embedded model: a contract the 135M teacher cannot write (a one-line answer, then a markdown
table). The run learns nothing, and its summary and last CLI line say why, with counts that match the run's own
files, and point to seeding an example by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli_support import run_cli

pytestmark = pytest.mark.slow

TABLE = r"^[^\n|]+\n\|[^\n]*\|\n\|[ :|-]+\|\n\|[^\n]*\|"  # a line, then a table: header, separator, one row
TOPICS = ["three laptops by weight", "two databases by licence", "three cities by population",
          "two editors by price", "three rivers by length", "two phones by battery", "three trains by speed",
          "two coffees by strength", "three bikes by gears"]


def _write(tmp: Path) -> Path:
    rows = [{"task_id": f"t{i}", "task": f"Compare {topic}: a one-line answer, then a markdown table.",
             "split": split, "judge": {"kind": "rule", "checks": [{"op": "regex", "arg": TABLE}]}}
            for i, (topic, split) in enumerate(zip(TOPICS, ["train"] * 4 + ["val"] * 3 + ["test"] * 2, strict=True))]
    (tmp / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp / "SKILL.md").write_text("# Comparisons\n\nAnswer the comparison.\n", encoding="utf-8")
    cfg = {"model": {"backend": "local", "teacher": {"max_tokens": 96, "temperature": 0.0, "n_ctx": 4096,
                                                     "n_threads": 1},
                     "student": {"n_ctx": 4096, "n_threads": 1}},
           "train": {"num_epochs": 1, "batch_size": 4, "seed": 1},
           "gradient": {"minibatch_size": 2, "analyst_workers": 1, "failure_only": True, "merge_mode": "concat",
                        "max_edit_chars": 160},
           "optimizer": {"learning_rate": 2, "min_learning_rate": 2, "demonstrations": 2, "use_slow_update": False,
                         "use_meta_skill": False, "lr_scheduler": "constant"},
           "env": {"name": "tasks", "tasks_file": str(tmp / "tasks.jsonl"), "skill_init": str(tmp / "SKILL.md"),
                   "workers": 1, "max_tokens": 48}}
    path = tmp / "table.yaml"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    return path


def test_a_run_that_learns_nothing_says_why(tmp_path: Path, gguf_path: Path) -> None:
    cfg, run_dir = _write(tmp_path), tmp_path / "run"
    r = run_cli(["train", "-c", str(cfg), "--out", str(run_dir)], tmp_path, timeout=900)
    assert r.rc == 0, str(r)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["total_accepts"] == 0 and (run_dir / "best_skill.md").read_text() == (tmp_path / "SKILL.md").read_text()
    nl = summary["no_learning"]
    assert nl["summary"].startswith("learned nothing in 1 step:") and nl["counts"]
    # the counts are the run's own records: every refused worked example in demonstrations.json, by kind
    log = [d for d in json.loads((run_dir / "steps/step_0001/patches/demonstrations.json").read_text())["log"]
           if not d["verified"]]
    failed = [d for d in log if isinstance(d["score"], float) and d["score"] < 1 and
              not d["why"].startswith("no usable reply")]
    repairs = sum(d["source"] == "own_reply_repair" for d in failed)  # the optimizer's, not a writer's example
    assert nl["counts"].get("examples_refused_by_checks", 0) == len(failed) - repairs
    assert nl["counts"].get("repairs_failed", 0) == repairs
    assert sum(nl["counts"].values()) >= 1 and "Next:" in r.out.strip().splitlines()[-1]
    assert r.out.strip().splitlines()[-1].startswith("learned nothing")
    assert "seed one worked example by hand" in nl["next_step"] or "stronger teacher" in nl["next_step"]
