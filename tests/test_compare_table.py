"""`skillgrad compare`'s table is whole in an 80-column pipe: every measure's name and value on its own row (eight
side-by-side columns cut their headers to `p (bo…` at 80 columns). Run directories hold the run-end test results
the trainer writes (test_eval_baseline/ and test_eval/ results.jsonl, one Trajectory per line)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cli_support import run_cli


def run_with(root: Path, name: str, hard: list[float]) -> Path:
    run = root / name
    for folder in ("test_eval_baseline", "test_eval"):
        (run / folder).mkdir(parents=True)
        rows = [{"item_id": f"q{i}", "hard": h, "soft": h} for i, h in enumerate(hard)]
        (run / folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (run / "config.json").write_text(json.dumps({"config": {}}), encoding="utf-8")
    return run


def test_compare_table_fits_80_columns(tmp_path: Path) -> None:
    a = run_with(tmp_path, "a", [0, 0, 1, 0])
    b = run_with(tmp_path, "b", [1, 1, 1, 0])
    r = run_cli(["compare", str(a), str(b)], tmp_path, env={"COLUMNS": "80"})
    assert r.rc == 0, str(r)
    lines = r.out.splitlines()
    assert max(len(line) for line in lines) <= 80, r.out
    assert "…" not in r.out, r.out
    for measure in ("mean A", "mean B", "B - A", "95% interval", "p (bootstrap, 1-sided)", "p (McNemar)",
                    "A fail -> B pass", "A pass -> B fail"):
        assert any(measure in line for line in lines), (measure, r.out)
    assert any("B - A" in line and "+0.500" in line for line in lines), r.out
