"""The default miner of whichever checkout PYTHONPATH names, on fresh6: recall, tasks on a label, the misses and
the tasks that rest on no label."""
from pathlib import Path

import skillgrad
from skillgrad.sleep.mine import mine_heuristic
from skillgrad.sleep.recall import load_labelled, recall

print("code:", Path(skillgrad.__file__).parent)
digests, labels, _ = load_labelled(Path("tests/fixtures/sessions/real_preferences_fresh6.json"))
tasks = mine_heuristic(digests)
r = recall(tasks, labels)
print(f"fresh6: {len(digests)} sessions, {len(tasks)} tasks: recall {r.found} / {r.total} = {100 * r.rate:.0f} %; "
      f"tasks on a labelled statement {r.on_label} / {r.tasks} = {100 * r.precision:.0f} %")
for lab in r.missed:
    print(f"  missed: {lab.session} turn {lab.turn} [{lab.term}]: {lab.words[:140]}")
