"""The default miner of whichever checkout PYTHONPATH names, on the five labelled lists of this tree (run from the
repository root): the same recall() as benchmarks/sleep_sessions.py --recall, plus the missed labels of fresh3 and fresh4."""

from pathlib import Path

import skillgrad
from skillgrad.sleep.mine import mine_heuristic
from skillgrad.sleep.recall import load_labelled, recall

print("code:", Path(skillgrad.__file__).parent)
for name in ("real_preferences", "real_preferences_heldout", "real_preferences_fresh", "real_preferences_fresh2",
             "real_preferences_fresh3", "real_preferences_fresh4"):
    digests, labels, _ = load_labelled(Path("tests/fixtures/sessions") / f"{name}.json")
    tasks = mine_heuristic(digests)
    r = recall(tasks, labels)
    print(f"{name}: {len(digests)} sessions, {len(tasks)} tasks: recall {r.found} / {r.total} = {100 * r.rate:.0f} %; "
          f"tasks on a labelled statement {r.on_label} / {r.tasks} = {100 * r.precision:.0f} %")
    if name.endswith(("fresh3", "fresh4")):
        for lab in r.missed:
            print(f"  missed: {lab.session} turn {lab.turn} [{lab.term}]: {lab.words[:120]}")
