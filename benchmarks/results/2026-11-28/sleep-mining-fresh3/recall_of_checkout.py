"""The default miner of a given checkout (PYTHONPATH) on the five labelled lists of this tree."""
import sys
from pathlib import Path
from skillgrad.sleep.recall import load_labelled, recall
from skillgrad.sleep.mine import mine_heuristic
import skillgrad
print("code:", Path(skillgrad.__file__).parent)
for name in ("real_preferences", "real_preferences_heldout", "real_preferences_fresh", "real_preferences_fresh2", "real_preferences_fresh3"):
    d, l, _ = load_labelled(Path("tests/fixtures/sessions") / f"{name}.json")
    t = mine_heuristic(d)
    r = recall(t, l)
    print(f"{name}: {len(d)} sessions, {len(t)} tasks: recall {r.found} / {r.total} = {100*r.rate:.0f} %; tasks on a labelled statement {r.on_label} / {r.tasks} = {100*r.precision:.0f} %")
    if name.endswith("fresh3"):
        for lab in r.missed:
            print(f"  missed: {lab.session} turn {lab.turn} [{lab.term}]: {lab.words[:120]}")
