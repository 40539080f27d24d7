"""The default miner of whichever checkout PYTHONPATH names, on every labelled list (or the short names given, e.g.
`fresh7`; `base` is real_preferences.json): recall, tasks, and tasks on a labelled statement, one line a list."""
import sys
from pathlib import Path

from skillgrad.sleep.mine import mine_heuristic
from skillgrad.sleep.recall import load_labelled, recall

NAMES = ["base", "heldout", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7"]
for name in sys.argv[1:] or NAMES:
    digests, labels, _ = load_labelled(
        Path("tests/fixtures/sessions") / f"real_preferences{'' if name == 'base' else '_' + name}.json")
    r = recall(mine_heuristic(digests), labels)
    print(f"{name:8s} recall {r.found:3d} / {r.total:3d} = {100 * r.rate:3.0f} %   tasks {r.tasks:4d}   "
          f"on a label {r.on_label:4d} = {100 * r.precision:3.0f} %")
