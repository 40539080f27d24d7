"""Train / val / test splits from data files, with SkillOpt's two modes.

- `ratio`: one JSON array or JSONL file (`env.data_path`) is shuffled with `random.Random(split_seed)`,
  cut by largest remainder for `env.split_ratio` ("2:1:7"), and written back as `<split>/items.json`
  plus `split_manifest.json` (to `env.split_output_dir`, or `_generated_splits/` beside the data file),
  so a run's split can be inspected and reused as a `split_dir`.
- `split_dir`: `train/`, `val/`, `test/` directories each holding items.json or items.jsonl; SkillOpt's
  names are accepted (valid_seen / selection -> val, valid_unseen -> test).

SkillOpt ships its official splits as id-only manifests (`data/<bench>_id_split/<split>/items.json` holding
ids, no task content). Such a directory is recognised (`id_only_dir`), refused as a split_dir with the
command that rebuilds it, and rebuilt by `rebuild_from_ids` from the full upstream data
(`skillgrad data prepare <env> --from <upstream> --ids <manifest dir>`).

Every data problem is a one-line DataError naming the file (and record and field) before any model call.
"""

from __future__ import annotations

import difflib
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from skillgrad.core.atomic import write_json
from skillgrad.envs.base import SPLITS, Item, Splits
from skillgrad.errors import ConfigError, DataError

ParseItem = Callable[[Any, str], Item]

_ALIASES = {
    "train": "train", "training": "train",
    "val": "val", "valid": "val", "validation": "val", "valid_seen": "val", "selection": "val", "dev": "val",
    "test": "test", "valid_unseen": "test", "eval": "test",
}
# Directory names tried for each split, in order (SkillOpt manifests use the aliases).
_DIR_NAMES = {
    "train": ("train",),
    "val": ("val", "valid_seen", "selection", "valid", "validation", "dev"),
    "test": ("test", "valid_unseen"),
}
_FILE_NAMES = ("items.json", "items.jsonl")
# Keys that identify a record in SkillOpt's id-only manifests (and in the full data they point into).
ID_KEYS = ("id", "uid", "questionId", "question_id", "qid", "key", "task_id", "instance_id", "docId", "doc_id")
# A manifest record holding only these keys carries no task content.
_ID_ONLY_KEYS = frozenset({*ID_KEYS, "image_path", "month", "no", "split", "source", "index", "idx"})


def manifest_ids(record: Any) -> list[str]:
    """Every id a record can be matched by: a bare id, its id-key values, and LiveMath's `month:no`."""
    if isinstance(record, (str, int)) and not isinstance(record, bool):
        return [str(record)]
    if not isinstance(record, dict):
        return []
    ids = [str(record[k]) for k in ID_KEYS if record.get(k) not in (None, "")]
    if record.get("month") not in (None, "") and record.get("no") not in (None, ""):
        ids.insert(0, f"{record['month']}:{record['no']}")
    return ids


def is_id_only(records: Sequence[Any]) -> bool:
    """True for a SkillOpt id-only manifest: ids, or objects holding nothing but id keys."""
    if not records:
        return False
    for rec in records:
        if isinstance(rec, dict):
            if not rec or not set(rec) <= _ID_ONLY_KEYS:
                return False
        elif not isinstance(rec, (str, int)) or isinstance(rec, bool):
            return False
    return True


def id_only_dir(base: Path) -> bool:
    """Whether `base` is a split directory whose items.json files hold ids only."""
    if not base.is_dir():
        return False
    for split in SPLITS:
        for dirname in _DIR_NAMES[split]:
            for fname in _FILE_NAMES:
                p = base / dirname / fname
                if p.is_file():
                    try:
                        return is_id_only(read_records(p))
                    except DataError:
                        return False
    return False


def id_only_message(base: Path, env_name: str = "<env>", key: str = "env.split_dir") -> str:
    return (f"{key} {base} holds SkillOpt's id-only manifests (ids, no task content); rebuild the split with "
            f"`skillgrad data prepare {env_name or '<env>'} --from <full upstream data file> --ids {base} "
            f"--to data/{env_name or '<env>'}` and point env.split_dir at the result")


def rebuild_from_ids(prepared: Path, ids_dir: Path, *, source: Path) -> dict[str, Any]:
    """Re-partition the prepared records in `prepared` (a split_dir) by the id-only manifests in `ids_dir`.

    Every manifest id must match a record (by `manifest_ids`); the result replaces prepared's
    train/val/test items.json and split_manifest.json. Returns the counts.
    """
    if not id_only_dir(ids_dir):
        raise DataError(f"--ids: {ids_dir} is not a directory of id-only manifests (train/, val/, test/ items.json)")
    records: list[Any] = []
    for split in SPLITS:
        records += read_records(_split_file(prepared, split, "prepared data"), key="prepared data")
    index: dict[str, int] = {}
    for n, rec in enumerate(records):
        for rid in manifest_ids(rec):
            index.setdefault(rid, n)
    parts: dict[str, list[Any]] = {}
    for split in SPLITS:
        path = _split_file(ids_dir, split, "--ids")
        wanted = [next(iter(manifest_ids(r)), "") for r in read_records(path, key="--ids")]
        missing = [w for w in wanted if w not in index]
        if missing:
            raise DataError(f"{path}: {len(missing)} of {len(wanted)} ids are not in {source} "
                            f"(first: {', '.join(repr(m) for m in missing[:3])}); is --from the full upstream data?")
        parts[split] = [records[index[w]] for w in wanted]
    for split, recs in parts.items():
        for dirname in _DIR_NAMES[split]:  # drop the ratio split prepare wrote (and any alias-named copies)
            for fname in _FILE_NAMES:
                (prepared / dirname / fname).unlink(missing_ok=True)
        write_json(prepared / split / "items.json", recs)
    counts = {s: len(v) for s, v in parts.items()}
    write_json(prepared / "split_manifest.json", {
        "source": str(source), "split_mode": "id_manifest", "id_manifest": str(ids_dir), "counts": counts,
        "ids": {s: [next(iter(manifest_ids(r)), "") for r in v] for s, v in parts.items()},
    })
    return counts


def split_alias(name: str) -> str:
    """Map a split name (ours or SkillOpt's) to "train", "val" or "test"."""
    key = str(name).strip().lower()
    if key in _ALIASES:
        return _ALIASES[key]
    close = difflib.get_close_matches(key, list(_ALIASES), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"unknown split name {name!r}{hint} (use train, val or test)")


def parse_ratio(ratio: str) -> list[float]:
    parts = [p.strip() for p in str(ratio).replace(",", ":").split(":")]
    try:
        weights = [float(p) for p in parts]
    except ValueError:
        weights = []
    if len(weights) != 3 or any(w < 0 for w in weights) or sum(weights) <= 0:
        raise ConfigError(f"env.split_ratio {ratio!r} must be three non-negative numbers like '2:1:7'")
    return weights


def ratio_counts(n: int, weights: Sequence[float]) -> list[int]:
    """Largest-remainder allocation of n items to the weights (ties go to the earlier split)."""
    total = float(sum(weights))
    quotas = [n * w / total for w in weights]
    counts = [int(q) for q in quotas]
    order = sorted(range(len(weights)), key=lambda i: (-(quotas[i] - counts[i]), i))
    for i in order[: n - sum(counts)]:
        counts[i] += 1
    return counts


def read_records(path: Path, *, key: str = "env.data_path") -> list[Any]:
    """Records of a JSON array (or {"items": [...]}) or JSONL file."""
    if not path.is_file():
        raise DataError(f"{key}: file not found: {path}")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        records = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise DataError(f"{path}:{lineno}: invalid JSON line ({e.msg})") from e
        return records
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"{path}:{e.lineno}: invalid JSON ({e.msg})") from e
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        data = data["items"]
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON array of records (or {{\"items\": [...]}})")
    return data


def parse_records(records: Sequence[Any], split: str, parse_item: ParseItem, *, source: Path,
                  indices: Sequence[int] | None = None) -> list[Item]:
    """Parse records, turning a parser's KeyError/ValueError into a DataError naming file, record and field."""
    items = []
    for pos, rec in enumerate(records):
        index = indices[pos] if indices is not None else pos
        try:
            item = parse_item(rec, split)
        except KeyError as e:
            field = e.args[0] if e.args else "?"
            raise DataError(f"{source}: record {index} is missing field {field!r}") from e
        except (ValueError, TypeError) as e:
            raise DataError(f"{source}: record {index}: {e}") from e
        item.id = str(item.id)
        items.append(item)
    return items


def check_split_sizes(splits: Splits, *, min_val: int, eval_test: bool, split_ratio: str) -> Splits:
    """A run whose gate or test would decide on nothing is refused before any model call: fewer than `min_val`
    validation items (evaluation.min_val_items), or an empty test split when a test was asked for (eval_test with
    a test share in env.split_ratio). Returns `splits` unchanged."""
    n_val = len(splits.val)
    if n_val < min_val:
        fix = ("every item's split is named by the data, so give it more validation items (a task's "
               '"split": "val", or files under val/)') if splits.pinned else \
            f"give the environment more tasks or a larger validation share in env.split_ratio (now {split_ratio!r})"
        raise DataError(f"the validation split has {n_val} item(s); the gate needs at least {min_val} to decide "
                        f"(evaluation.min_val_items): {fix}")
    if eval_test and splits.pinned and len(splits.test) == 0:
        raise DataError("the test split is empty: no item's split is test (a task's \"split\": \"test\", files under "
                        "test/); add held-out items, or set evaluation.eval_test=false to run without a test")
    if eval_test and parse_ratio(split_ratio)[2] > 0 and len(splits.test) == 0:
        raise DataError(f"the test split is empty although env.split_ratio {split_ratio!r} asks for one: give the "
                        "environment more tasks, or set a 0 test share (e.g. 6:4:0) or evaluation.eval_test=false")
    return splits


def check_unique(splits: Splits, sources: dict[str, Path] | None = None) -> None:
    """An id appearing twice (in one split or across splits) is a DataError naming both places."""
    seen: dict[str, str] = {}
    for name in SPLITS:
        for item in splits.get(name):
            if item.id in seen:
                where = seen[item.id]
                src = f" ({sources[name]})" if sources and name in sources else ""
                if where == name:
                    raise DataError(f"duplicate item id {item.id!r} within split {name!r}{src}")
                raise DataError(f"item id {item.id!r} is in both the {where!r} and {name!r} splits{src}")
            seen[item.id] = name


def _split_file(base: Path, split: str, key: str) -> Path:
    found = []
    for dirname in _DIR_NAMES[split]:
        for fname in _FILE_NAMES:
            p = base / dirname / fname
            if p.is_file():
                found.append(p)
    if not found:
        names = " or ".join(f"{d}/items.json(l)" for d in _DIR_NAMES[split][:3])
        raise DataError(f"{key}: no {split} split in {base} (expected {names})")
    if len(found) > 1:
        raise DataError(f"{key}: {base} has several {split} splits ({', '.join(str(p) for p in found)}); keep one")
    return found[0]


def load_split_dir(base: Path, parse_item: ParseItem, *, key: str = "env.split_dir", env_name: str = "") -> Splits:
    if not base.is_dir():
        raise DataError(f"{key}: directory not found: {base}")
    parsed: dict[str, list[Item]] = {}
    sources: dict[str, Path] = {}
    for split in SPLITS:
        path = _split_file(base, split, key)
        sources[split] = path
        records = read_records(path, key=key)
        if is_id_only(records):
            raise DataError(id_only_message(base, env_name, key))
        parsed[split] = parse_records(records, split, parse_item, source=path)
    splits = Splits(parsed["train"], parsed["val"], parsed["test"], pinned=True)
    check_unique(splits, sources)
    return splits


def _ratio_tag(ratio: str) -> str:
    return "-".join(p.strip() for p in str(ratio).replace(",", ":").split(":"))


def load_ratio(data_path: Path, env_name: str, ratio: str, seed: int, output_dir: str,
               parse_item: ParseItem) -> Splits:
    weights = parse_ratio(ratio)
    records = read_records(data_path)
    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    counts = ratio_counts(len(records), weights)
    safe_name = "".join(c if c.isalnum() or c in "-_." else "_" for c in (env_name or "env"))
    out = Path(output_dir) if output_dir else (
        data_path.parent / "_generated_splits" / f"{safe_name}_{_ratio_tag(ratio)}_seed{seed}")
    parsed: dict[str, list[Item]] = {}
    start = 0
    for split, count in zip(SPLITS, counts, strict=True):
        idx = order[start:start + count]
        start += count
        parsed[split] = parse_records([records[i] for i in idx], split, parse_item, source=data_path, indices=idx)
    splits = Splits(parsed["train"], parsed["val"], parsed["test"])
    check_unique(splits, {s: data_path for s in SPLITS})
    start = 0
    for split, count in zip(SPLITS, counts, strict=True):
        write_json(out / split / "items.json", [records[i] for i in order[start:start + count]])
        start += count
    write_json(out / "split_manifest.json", {
        "source": str(data_path), "split_mode": "ratio", "split_ratio": ratio, "split_seed": seed,
        "counts": dict(zip(SPLITS, counts, strict=True)),
        "ids": {s: [it.id for it in splits.get(s)] for s in SPLITS},
    })
    return splits


def _truncate(splits: Splits, limit: int) -> Splits:
    if limit <= 0:
        return splits
    return Splits(splits.train[:limit], splits.val[:limit], splits.test[:limit], pinned=splits.pinned)


def load_splits(env_cfg: Any, *, parse_item: ParseItem, default_dir: Path | None = None) -> Splits:
    """Load the splits an `EnvSection` describes; `default_dir` (a split_dir layout) when none is configured.

    `parse_item(record, split) -> Item` raises KeyError for a missing field (named in the DataError).
    """
    mode = getattr(env_cfg, "split_mode", "ratio")
    data_path = str(getattr(env_cfg, "data_path", "") or "")
    split_dir = str(getattr(env_cfg, "split_dir", "") or "")
    given = ("env.data_path", data_path) if mode == "ratio" and data_path else ("env.split_dir", split_dir)
    if given[1] and not Path(given[1]).expanduser().exists() and hasattr(env_cfg, "missing_input"):
        name = str(getattr(env_cfg, "name", "") or "<env>")
        raise DataError(f"{env_cfg.missing_input(*given)}; benchmark data is made by `skillgrad data prepare {name} "
                        f"--from <downloaded file> --to {given[1]}` (docs/guide/environments.md)")
    if mode == "ratio" and data_path:
        splits = load_ratio(Path(data_path).expanduser(), env_cfg.name, env_cfg.split_ratio, env_cfg.split_seed,
                            str(getattr(env_cfg, "split_output_dir", "") or ""), parse_item)
    elif split_dir:
        splits = load_split_dir(Path(split_dir).expanduser(), parse_item, key="env.split_dir",
                                env_name=str(getattr(env_cfg, "name", "") or ""))
    elif default_dir is not None:
        splits = load_split_dir(Path(default_dir), parse_item, key="the environment's bundled data")
    elif mode == "split_dir":
        raise DataError("env.split_dir is empty; set it to a directory with train/, val/ and test/ items")
    else:
        raise DataError("env.data_path is empty; set it to a JSON/JSONL file (or use env.split_dir)")
    return _truncate(splits, int(getattr(env_cfg, "limit", 0) or 0))


def uses_custom_data(env_cfg: Any) -> bool:
    """Whether a generated family was pointed at the user's own data (env.data_path / env.split_dir)."""
    return bool(env_cfg.data_path or env_cfg.split_dir)


def generated_family_status(env_cfg: Any) -> str:
    """`data_status()` of a generated family: generated, or the user's data and whether it exists."""
    if not uses_custom_data(env_cfg):
        return "ready (generated)"
    path = Path(env_cfg.data_path or env_cfg.split_dir).expanduser()
    return split_status(path, "env.data_path" if env_cfg.data_path else "env.split_dir", env_cfg.name)


def split_status(path: Path, key: str, env_name: str = "") -> str:
    """`ready`, or `missing: ...` for a path that does not exist or holds id-only manifests."""
    if not path.exists():
        return f"missing: {key} {path} does not exist"
    if id_only_dir(path):
        return f"missing: {id_only_message(path, env_name, key)}"
    return "ready"
