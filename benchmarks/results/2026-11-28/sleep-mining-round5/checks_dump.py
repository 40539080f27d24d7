"""The default miner of whichever checkout PYTHONPATH names, on all eight labelled lists: recall and tasks off a label
per list (printed), every check of every mined task (list, session, turn, op, arg) to ARGV[1], the tasks resting on
no label to ARGV[1].off, and every statement a task rests on to ARGV[1].said. Diff two runs' files (sorted) to see
every check, off-label task and statement a change added."""

import sys
from pathlib import Path

from skillgrad.sleep.mine import mine_heuristic
from skillgrad.sleep.recall import _matches, load_labelled, recall

FIX = Path("tests/fixtures/sessions")
out = open(sys.argv[1], "w")
off = open(sys.argv[1] + ".off", "w")
said = open(sys.argv[1] + ".said", "w")
for n in ["", "_heldout", "_fresh", "_fresh2", "_fresh3", "_fresh4", "_fresh5", "_fresh6"]:
    digests, labels, _ = load_labelled(FIX / f"real_preferences{n}.json")
    tasks = mine_heuristic(digests)
    r = recall(tasks, labels)
    print(f"{n or 'dev'}: {r.found}/{r.total} tasks {r.tasks} on {r.on_label} off {r.tasks - r.on_label}")
    for t in tasks:
        for c in t.judge.checks:
            if c.op != "no_refusal":
                out.write(f"{n or 'dev'}\t{t.meta['session']}\t{t.meta.get('turn')}\t{c.op}\t{c.arg}\n")
        for e in t.meta["evidence"]:
            if e.get("kind"):
                said.write(f"{n or 'dev'}\t{t.meta['session']}\tt{e['turn']}\t{e['kind']}\t{str(e['words'])[:120]}\n")
        if not any(_matches(t, lab) for lab in labels):
            ev = " | ".join(f"t{e['turn']}:{str(e['words'])[:70]}" for e in t.meta["evidence"])
            off.write(f"{n or 'dev'}\t{t.meta['session']}\t{t.meta.get('turn')}\t{ev}\n")
