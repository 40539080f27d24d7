"""fresh8's recall by the default miner, per person (repository) and per kind: one person holds 85 of the 180 labels.

    PYTHONPATH=$PWD/src python benchmarks/results/2026-11-28/sleep-mining-fresh8/per_person.py
"""

from collections import Counter
from pathlib import Path

from skillgrad.sleep.mine import mine_heuristic
from skillgrad.sleep.recall import load_labelled, recall

digests, labels, _ = load_labelled(Path("tests/fixtures/sessions/real_preferences_fresh8.json"))
r = recall(mine_heuristic(digests), labels)
total, found = Counter(), Counter()
for lab in labels:
    who = lab.session.split("/")[0]
    total[who] += 1
    found[who] += lab not in r.missed
print(f"fresh8, default miner: {r.found} / {r.total} = {100 * r.rate:.0f} %")
for who, n in total.most_common():
    print(f"  {who}: {found[who]} / {n}")
for kind in ("standing", "one-off"):
    f, n = r.of_kind(labels, kind)
    print(f"  {kind}: {f} / {n}")
