"""Draw the banking77 sample (tasks.jsonl beside this file) from PolyAI's public repository, with a fixed seed:

    python benchmarks/public_tasks/banking77/build_tasks.py SOURCE

SOURCE: a checkout of https://github.com/PolyAI-LDN/task-specific-datasets, or its bare git directory (then the
files are read at COMMIT). The CSVs must be the ones of COMMIT (their SHA-256 below); the script refuses others,
so the sample is the same wherever it is rebuilt.

How the sample is drawn (README.md says why):
1. the 77 intents of train.csv, sorted, shuffled with `random.Random(SEED)`; taken in that order, skipping an
   intent that shares a content word with one already taken (`card_arrival` after `card_linking`), until 4;
2. per intent, from its messages of at most MAX_CHARS characters on one line: 8 train and 2 validation messages
   drawn from banking77's train.csv, 8 test messages from its test.csv, none repeating another (case ignored);
3. each split shuffled with the same generator, so the labels do not come in a fixed rotation.
The gold reply is the intent's name as banking77 writes it; the check is `equals` on it (case, quotes and a closing
full stop ignored), so a reply restating the message, or any one constant label, cannot pass more than a quarter.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = "https://github.com/PolyAI-LDN/task-specific-datasets"
COMMIT = "57ec275d8078af65b7731c2a98be812d844a6d6b"  # the repository's HEAD when drawn; banking_data/ last changed 9d08145
SHA256 = {"banking_data/train.csv": "b06e26ac675513959a63135f11b94ea7786ed02da65db93a5650d8838cbc664b",
          "banking_data/test.csv": "d12d6e3bc4c3103966ae786dc435913c0c563dfa328f5a3646d0e62cfeeb474d"}
SEED = 77
N_INTENTS = 4
PER_INTENT = {"train": 8, "val": 2, "test": 8}
MAX_CHARS = 120  # short messages: 16 worked examples and a request stay far inside the 135M model's 4096 tokens
STOP = {"a", "and", "after", "by", "for", "in", "into", "my", "not", "of", "or", "the", "to", "via"}


def read_source(source: Path, path: str) -> str:
    """One CSV's text from a checkout (its working file) or a git directory (at COMMIT)."""
    file = source / path
    if file.is_file():
        return file.read_text(encoding="utf-8")
    proc = subprocess.run(["git", "--git-dir", str(source), "show", f"{COMMIT}:{path}"], capture_output=True)
    if proc.returncode != 0:
        raise ValueError(f"{source}: no {path} there and not a git directory holding commit {COMMIT[:7]}; "
                         f"pass a checkout of {REPO}")
    return proc.stdout.decode("utf-8")


def rows(text: str) -> list[tuple[str, str]]:
    """(message, intent) pairs of a banking77 CSV (header `text,category`)."""
    reader = csv.DictReader(io.StringIO(text))
    return [(r["text"], r["category"]) for r in reader]


def pick_intents(intents: list[str], rng: random.Random) -> list[str]:
    taken: list[str] = []
    for name in rng.sample(sorted(intents), len(intents)):
        words = set(name.lower().split("_")) - STOP
        if all(not words & (set(t.lower().split("_")) - STOP) for t in taken):
            taken.append(name)
        if len(taken) == N_INTENTS:
            return taken
    raise ValueError(f"only {len(taken)} intents share no word; want {N_INTENTS}")


def usable(message: str) -> bool:
    return len(message) <= MAX_CHARS and "\n" not in message and message == message.strip() and bool(message)


def draw(train_csv: str, test_csv: str) -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    train, test = rows(train_csv), rows(test_csv)
    intents = pick_intents(sorted({c for _, c in train}), rng)
    seen: set[str] = set()
    chosen: dict[str, list[tuple[str, str]]] = {"train": [], "val": [], "test": []}
    for intent in intents:
        for split, source in (("train", train), ("val", train), ("test", test)):
            pool = sorted({m for m, c in source if c == intent and usable(m) and m.casefold() not in seen})
            picked = rng.sample(pool, PER_INTENT[split])
            seen.update(m.casefold() for m in picked)
            chosen[split] += [(m, intent) for m in picked]
    out = []
    for split in ("train", "val", "test"):
        part = chosen[split]
        rng.shuffle(part)
        for i, (message, intent) in enumerate(part, 1):
            out.append({"task_id": f"banking77-{split}-{i:02d}", "task": message, "split": split,
                        "judge": {"kind": "rule", "checks": [{"op": "equals", "arg": intent}], "reference": intent}})
    return out


def render(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    source = Path(argv[0])
    texts = {}
    for path, want in SHA256.items():
        try:
            texts[path] = read_source(source, path)
        except ValueError as e:
            print(e, file=sys.stderr)
            return 2
        got = hashlib.sha256(texts[path].encode("utf-8")).hexdigest()
        if got != want:
            print(f"{source}: {path} is not the file of commit {COMMIT[:7]} (sha256 {got[:12]}, want {want[:12]})",
                  file=sys.stderr)
            return 2
    records = draw(texts["banking_data/train.csv"], texts["banking_data/test.csv"])
    (HERE / "tasks.jsonl").write_text(render(records), encoding="utf-8")
    print(f"{HERE / 'tasks.jsonl'}: {len(records)} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
