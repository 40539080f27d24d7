"""The default miner of whichever checkout PYTHONPATH names, on one labelled list (fresh5 unless a list's short name
is given, e.g. `fresh6`): recall, tasks on a label, and the missed labels."""
import sys
from pathlib import Path

import skillgrad
from skillgrad.sleep.mine import mine_heuristic
from skillgrad.sleep.recall import load_labelled, recall

name = sys.argv[1] if len(sys.argv) > 1 else "fresh5"
print("code:", Path(skillgrad.__file__).parent)
digests, labels, _ = load_labelled(Path(f"tests/fixtures/sessions/real_preferences_{name}.json"))
tasks = mine_heuristic(digests)
r = recall(tasks, labels)
print(f"{name}: {len(digests)} sessions, {len(tasks)} tasks: recall {r.found} / {r.total} = {100 * r.rate:.0f} %; "
      f"tasks on a labelled statement {r.on_label} / {r.tasks} = {100 * r.precision:.0f} %")
for lab in r.missed:
    print(f"  missed: {lab.session} turn {lab.turn} [{lab.term}]: {lab.words[:140]}")
