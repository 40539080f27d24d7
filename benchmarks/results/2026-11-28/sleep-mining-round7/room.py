"""The agent miner's prompts of whichever checkout PYTHONPATH names, per list: sessions, parts, the tasks their
answers may return (mine.answer_tasks), and a hash of each part's text. `room.py LIST... --save F` writes them;
`room.py LIST... --against F` compares with a saved run: prompts whose text, parts or allowed tasks changed."""
import hashlib
import json
import sys
from pathlib import Path

from skillgrad.sleep import mine
from skillgrad.sleep.recall import load_labelled
from skillgrad.sleep.session_prompt import session_parts

args = sys.argv[1:]
flag = next((a for a in args if a.startswith("--")), None)
path = Path(args[args.index(flag) + 1]) if flag else None
names = [a for a in args if not a.startswith("--") and Path(a) != path]
now: dict[str, dict[str, list[list]]] = {}
for name in names:
    digests, _, _ = load_labelled(Path("tests/fixtures/sessions") / f"real_preferences_{name}.json")
    now[name] = {d.session_id: [[hashlib.sha1(p.text.encode()).hexdigest()[:12], p.statements,
                                 mine.answer_tasks(p.statements)] for p in session_parts(d)] for d in digests}
if flag == "--save" and path:
    path.write_text(json.dumps(now))
for name, sessions in now.items():
    parts = sum(len(v) for v in sessions.values())
    tasks = sum(t for v in sessions.values() for _, _, t in v)
    line = f"{name:8s} sessions {len(sessions):3d}  parts {parts:3d}  allowed tasks {tasks:4d}"
    if flag == "--against" and path:
        old = json.loads(path.read_text())[name]
        o_parts = sum(len(v) for v in old.values())
        o_tasks = sum(t for v in old.values() for _, _, t in v)
        changed = [s for s in sessions if [h for h, _, _ in sessions[s]] != [h for h, _, _ in old[s]]]
        resized = [s for s in sessions if [t for *_, t in sessions[s]] != [t for *_, t in old[s]]]
        line = (f"{name:8s} sessions {len(sessions):3d}  parts {o_parts:3d} -> {parts:3d}  allowed tasks {o_tasks:4d} -> "
                f"{tasks:4d}  sessions whose prompt text changed {len(changed):3d}, whose room changed {len(resized):3d}")
        for s in dict.fromkeys([*changed, *resized]):
            line += (f"\n    {s}{' (text changed)' if s in changed else ''}: parts {len(old[s])} -> {len(sessions[s])}, statements "
                     f"{[x[1] for x in old[s]]} -> {[x[1] for x in sessions[s]]}, tasks "
                     f"{[x[2] for x in old[s]]} -> {[x[2] for x in sessions[s]]}")
    print(line)
