"""Rows of report-suite runs with --ablations, read from their run folders (finished (skill, seed) only):
`python collect_abl.py OUT...` prints the table and writes results.json in the working directory."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[3]))  # benchmarks/
import report_suite as rs  # noqa: E402

ARMS = {"trained": "trained", "analysts only": "analysts-only", "demonstrations only": "demonstrations-only"}
rows = []
for src in map(Path, sys.argv[1:]):
    for seed_dir in sorted(src.glob("*/seed*")):
        dirs = {a: seed_dir / d for a, d in ARMS.items()}
        if not all((d / "summary.json").is_file() for d in dirs.values()):
            continue
        run = dirs["trained"]
        s = json.loads((run / "summary.json").read_text())
        tok = s.get("token_summary", {}).get("total", {})
        row = {"skill": seed_dir.parent.name, "seed": int(seed_dir.name[4:]),
               "trained_run": {"calls": tok.get("calls"), "tokens": tok.get("total_tokens")},
               "scores": {"initial": rs.run_scores(run, "initial"), "fewshot": rs.run_fewshot_scores(run)}}
        for a, d in dirs.items():
            row["scores"][a] = rs.run_scores(d, "best")
            sa = json.loads((d / "summary.json").read_text())
            row.setdefault("origins", {})[a] = sa.get("best_origin")
        rows.append(row)
rows.sort(key=lambda r: (r["skill"], r["seed"]))
print(json.dumps([{k: r[k] for k in ("skill", "seed", "origins")} for r in rows]))
print("\n".join(rs.table(rows, ["initial", "fewshot", "trained", "analysts only", "demonstrations only"])))
if len(sys.argv) > 1:
    Path("results.json").write_text(json.dumps(rows, indent=1))
