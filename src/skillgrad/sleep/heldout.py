"""Sleep's held-out: real tasks that neither training nor selection saw decide whether a night stages anything.

Three splits of real tasks: `train` (the engine learns from it), `val` (the engine's gate selects on it) and
`test` (the held-out: only the night's staging decision reads it). Recurring work is near-duplicate by
design ("status of job 3" tonight, "status of job 7" tomorrow), so a held-out task that is a paraphrase of a
training or selection task would measure memory, not learning:

- tasks are grouped by normalised text similarity (`similarity` >= NEAR_DUPLICATE, 0.7: the Jaccard index of
  the two tasks' content words, lower-cased, every number one token, common words such as "the", "me",
  "please" removed; "Give me the status of job 3." and "status of job 7 please" score 1.0, "status of the
  nightly backup" and "status of the login service" 0.2) and a group goes to one split as a whole;
- a task file with its own splits is refused when a held-out task is a near-duplicate of a train/val task;
- below `min_heldout` held-out tasks (default 5) nothing is staged; the night says how many more it needs
  and keeps the candidate's per-task held-out results as a *pending* change (`pending.json`);
- the next night scores the pending change on its own new held-out tasks and pools them with the earlier
  ones (each task once); the same gate test decides on the pooled results.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillgrad.core.atomic import read_json, write_json
from skillgrad.envs.tasks.records import TaskRecord, stable_split

NEAR_DUPLICATE = 0.7
_PUNCT = re.compile(r"[^\w\s]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_COMMON = frozenset(
    "a an the of to in on for and or is are be it its this that these those me my we our you your i can could "
    "would should will please pls just now then with from at by as do does did give show tell what which how "
    "there here some any all".split())


def normalise(text: str) -> str:
    return " ".join(_PUNCT.sub(" ", text.casefold()).split())


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _NUMBER.sub(" 0 ", normalise(text)).split() if w not in _COMMON)


def similarity(a: str, b: str) -> float:
    """Jaccard index of the content words (1.0 = the same words, in any order, numbers aside)."""
    x, y = content_words(a), content_words(b)
    if not x and not y:
        return 1.0 if normalise(a) == normalise(b) else 0.0
    return len(x & y) / len(x | y)


def near_duplicate_groups(tasks: Sequence[TaskRecord], threshold: float = NEAR_DUPLICATE) -> list[int]:
    """A group index per task: tasks whose texts are near-duplicates (transitively) share one."""
    parent = list(range(len(tasks)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(tasks)):
        for j in range(i + 1, len(tasks)):
            if find(i) != find(j) and similarity(tasks[i].task, tasks[j].task) >= threshold:
                parent[find(j)] = find(i)
    return [find(i) for i in range(len(tasks))]


def assign_splits(tasks: Sequence[TaskRecord], *, seed: int, val_fraction: float, test_fraction: float,
                  threshold: float = NEAR_DUPLICATE) -> list[TaskRecord]:
    """Stable splits by near-duplicate group (a task that already has a split keeps it; synthetic tasks are
    train). Validation, then the held-out, is made non-empty while at least two training groups are left."""
    weights = [max(0.0, 1.0 - val_fraction - test_fraction), val_fraction, test_fraction]
    groups = near_duplicate_groups(tasks, threshold)
    key = {g: min(t.task_id for t, h in zip(tasks, groups, strict=True) if h == g) for g in set(groups)}
    split = {g: stable_split(key[g], seed, weights) for g in set(groups)}
    out = [t.model_copy(update={"split": t.split or (split[g] if t.origin == "real" else "train")})
           for t, g in zip(tasks, groups, strict=True)]
    fixed = {g for t, g in zip(tasks, groups, strict=True) if t.split}  # a split written in the file stays
    for name, share in (("val", val_fraction), ("test", test_fraction)):
        if share <= 0 or any(t.split == name for t in out):
            continue
        train_groups = sorted({g for t, g in zip(out, groups, strict=True)
                               if t.origin == "real" and t.split == "train" and g not in fixed},
                              key=lambda g: hashlib.sha256(f"{seed}:{name}:{key[g]}".encode()).hexdigest())
        if len(train_groups) >= 2:  # never the last training group
            out = [t.model_copy(update={"split": name}) if g == train_groups[0] and t.split == "train" else t
                   for t, g in zip(out, groups, strict=True)]
    return out


def leaks(tasks: Sequence[TaskRecord], threshold: float = NEAR_DUPLICATE) -> list[str]:
    """Ids of held-out (test) tasks that are near-duplicates of a train or val task, and of val tasks that
    repeat a train task exactly (the selection gate would be unverified)."""
    seen = [t for t in tasks if t.split in ("train", "val")]
    train_exact = {normalise(t.task) for t in tasks if t.split == "train"} | {t.task_id for t in tasks
                                                                              if t.split == "train"}
    out = [t.task_id for t in tasks if t.split == "val" and (normalise(t.task) in train_exact
                                                              or t.task_id in train_exact)]
    for t in tasks:
        if t.split == "test" and any(t.task_id == s.task_id or similarity(t.task, s.task) >= threshold for s in seen):
            out.append(t.task_id)
    return out


# ---------------------------------------------------------------- pending changes, pooled across nights

def pending_path(sleep_root: Path) -> Path:
    return sleep_root / "pending.json"


def load_pending(sleep_root: Path, target: str, base: str) -> dict[str, Any] | None:
    """The pending change of `target` when it was learned on the same starting block `base`, else None (the
    live block changed since: the old evidence no longer applies)."""
    data = read_json(pending_path(sleep_root), {}) or {}
    p = data.get(target)
    return p if isinstance(p, dict) and p.get("base") == base else None


def save_pending(sleep_root: Path, target: str, pending: dict[str, Any] | None) -> None:
    path = pending_path(sleep_root)
    data = read_json(path, {}) or {}
    if pending is None:
        data.pop(target, None)
    else:
        data[target] = pending
    write_json(path, data)


def pool(results: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Earlier per-task held-out results plus tonight's, each task once (a task seen again keeps its first
    result: it is not new evidence)."""
    have = {r["task_id"] for r in results} | {normalise(r.get("task", "")) for r in results}
    return [*results, *(r for r in new if r["task_id"] not in have and normalise(r.get("task", "")) not in have)]
