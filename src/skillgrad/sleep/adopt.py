"""Adopting a staged proposal, and undoing the last adoption. The only code that writes live files.

Adopt is explicit and atomic: under a lock it checks every live file against its manifest pin (a file
changed since staging refuses the adoption), backs the live bytes up, records a transaction, replaces each
file by write-temp-then-rename, writes a receipt and marks the transaction committed. A crash in the
middle leaves a pending transaction that the next adopt / undo / discard rolls back from the backups.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillgrad.core.atomic import write_json
from skillgrad.errors import UsageError
from skillgrad.sleep.stage import MANIFEST, live_changed, read_manifest, sha256_file, sleep_root

TXN = "transaction.json"
ADOPTABLE = ("staged", "partial")  # partial: some files adopted, the others still staged
RECEIPT = "receipt.json"


@dataclass
class Receipt:
    kind: str  # adopt | undo
    adoption_id: str
    stage_dir: str
    at: str
    files: list[dict[str, Any]] = field(default_factory=list)  # live, backup, before_sha256, after_sha256

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def adoptions_dir(project: Path) -> Path:
    return sleep_root(project) / "adoptions"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _write_bytes(path: Path, data: bytes) -> None:
    """Temp file in the same folder + fsync + rename; the file mode of a replaced file is kept."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".skillgrad-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _restore(entry: dict[str, Any], adoption: Path) -> None:
    live = Path(entry["live"])
    if entry.get("before_sha256") is None:
        live.unlink(missing_ok=True)  # the adoption created it
    else:
        _write_bytes(live, (adoption / entry["backup"]).read_bytes())


@contextmanager
def _locked(project: Path) -> Iterator[None]:
    root = sleep_root(project)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".adopt.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            _recover(project)
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _recover(project: Path) -> list[str]:
    """Roll back every adoption whose transaction never committed (a crash mid-adopt)."""
    rolled: list[str] = []
    base = adoptions_dir(project)
    if not base.is_dir():
        return rolled
    for d in sorted(base.iterdir()):
        txn = _read(d / TXN)
        if txn and txn.get("state") == "pending":
            for entry in txn.get("files", []):
                _restore(entry, d)
            txn["state"] = "rolled_back"
            write_json(d / TXN, txn)
            if txn.get("stage_dir"):  # its files are not adopted: the proposal is adoptable again
                _mark_adopted(Path(txn["stage_dir"]), {e.get("proposed", "") for e in txn.get("files", [])}, None,
                              none="staged")
            rolled.append(d.name)
    return rolled


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _set_status(stage_dir: Path, status: str) -> None:
    m = read_manifest(stage_dir)
    if m is not None:
        m["status"] = status
        write_json(stage_dir / MANIFEST, m)


def _manifest_or_error(stage_dir: Path) -> dict[str, Any]:
    m = read_manifest(stage_dir)
    if m is None:
        raise UsageError(f"{stage_dir}: not a staged proposal (no readable {MANIFEST}); "
                         "list proposals with `skillgrad sleep status`")
    return m


def _matches(f: dict[str, Any], want: str, project: Path) -> bool:
    """An --only value names a proposal file by its live path (absolute or relative to the project or the
    current folder), its path inside the proposal (`proposed/...`), or its skill's name."""
    live = Path(f["live"])
    rel = str(f["proposed"]).removeprefix("proposed/")
    forms = {str(live), rel, str(f["proposed"])}
    if live.name == "SKILL.md":
        forms.add(live.parent.name)
    w = Path(want).expanduser()
    return want in forms or (project / w).resolve() == live or w.resolve() == live


def chosen_files(m: dict[str, Any], only: list[str] | None) -> list[int]:
    """Indexes of the manifest files to adopt: all not adopted yet, or those `only` names (each must name one)."""
    files, project = m["files"], Path(m["project"])
    if not only:
        return [i for i, f in enumerate(files) if not f.get("adopted_by")]
    out: list[int] = []
    for want in only:
        hits = [i for i, f in enumerate(files) if _matches(f, want, project)]
        if len(hits) != 1:
            names = ", ".join(str(f["proposed"]).removeprefix("proposed/") for f in files)
            raise UsageError(f"--only {want}: {'names no' if not hits else 'names more than one'} file of this "
                             f"proposal ({names}); nothing adopted")
        if files[hits[0]].get("adopted_by"):
            raise UsageError(f"--only {want}: already adopted ({files[hits[0]]['adopted_by']}); nothing adopted")
        out += [i for i in hits if i not in out]
    return out


def adopt(stage_dir: Path, only: list[str] | None = None) -> Receipt:
    """Replace the live files by the proposal (all of them, or the subset `only` names), atomically: every
    chosen file or none, with a backup and a receipt. The rest stay staged for a later adopt."""
    stage_dir = Path(stage_dir).resolve()
    m = _manifest_or_error(stage_dir)
    project = Path(m["project"])
    with _locked(project):
        m = _manifest_or_error(stage_dir)
        if m.get("status") not in ADOPTABLE:
            raise UsageError(f"{stage_dir}: this proposal is {m.get('status')}, not staged; nothing adopted")
        chosen = chosen_files(m, only)
        if not chosen:
            raise UsageError(f"{stage_dir}: every file of this proposal is adopted already; nothing adopted")
        changed = live_changed({**m, "files": [m["files"][i] for i in chosen]})
        if changed:
            raise UsageError(f"{changed[0]} changed since the proposal was staged; nothing adopted "
                             "(run `skillgrad sleep run` again for a fresh proposal)")
        for i in chosen:
            f = m["files"][i]
            if sha256_file(stage_dir / f["proposed"]) != f["proposed_sha256"]:
                raise UsageError(f"{stage_dir / f['proposed']} does not match its manifest pin; nothing adopted")
        adoption_id = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-%f")
        adir = adoptions_dir(project) / adoption_id
        entries = []
        for i in chosen:
            f = m["files"][i]
            live = Path(f["live"])
            backup = f"backup/{i}-{live.name}"
            if f["live_sha256"] is not None:
                _write_bytes(adir / backup, live.read_bytes())
            entries.append({"live": str(live), "backup": backup, "before_sha256": f["live_sha256"],
                            "after_sha256": f["proposed_sha256"], "proposed": f["proposed"]})
        write_json(adir / TXN, {"state": "pending", "stage_dir": str(stage_dir), "files": entries})
        for e in entries:
            _write_bytes(Path(e["live"]), (stage_dir / e["proposed"]).read_bytes())
        receipt = Receipt("adopt", adoption_id, str(stage_dir), _now(), entries)
        write_json(adir / RECEIPT, receipt.to_json())
        write_json(adir / TXN, {"state": "committed", "stage_dir": str(stage_dir), "files": entries})
        _mark_adopted(stage_dir, {e["proposed"] for e in entries}, adoption_id)
    return receipt


def _mark_adopted(stage_dir: Path, proposed: set[str], adoption_id: str | None, *, none: str = "undone") -> None:
    """Record which files an adoption took (None: an undo or a rollback gave them back) and the proposal's
    status: adopted (every file), partial (some), `none` (no file: undone, or staged after a rollback)."""
    m = read_manifest(stage_dir)
    if m is None:
        return
    for f in m["files"]:
        if f["proposed"] in proposed:
            f["adopted_by"] = adoption_id
    n = sum(bool(f.get("adopted_by")) for f in m["files"])
    m["status"] = "adopted" if n == len(m["files"]) else "partial" if n else none
    write_json(stage_dir / MANIFEST, m)


def discard(stage_dir: Path) -> None:
    """Mark a staged proposal discarded (its files stay for the record; it can no longer be adopted)."""
    stage_dir = Path(stage_dir).resolve()
    m = _manifest_or_error(stage_dir)
    with _locked(Path(m["project"])):
        if _manifest_or_error(stage_dir).get("status") == "adopted":
            raise UsageError(f"{stage_dir}: this proposal is adopted; use `skillgrad sleep undo` first")
        _set_status(stage_dir, "discarded")


def undo(project: Path) -> Receipt:
    """Restore the live files of the last adoption that is not yet undone, byte for byte."""
    project = Path(project).resolve()
    with _locked(project):
        base = adoptions_dir(project)
        candidates = sorted(base.iterdir(), reverse=True) if base.is_dir() else []
        for adir in candidates:
            txn = _read(adir / TXN)
            if not txn or txn.get("state") != "committed":
                continue
            entries = txn["files"]
            for e in entries:
                if sha256_file(Path(e["live"])) != e["after_sha256"]:
                    raise UsageError(f"{e['live']} changed since it was adopted; undo would lose those edits "
                                     f"(its backup is in {adir / e['backup']})")
            for e in entries:
                _restore(e, adir)
            receipt = Receipt("undo", adir.name, str(txn.get("stage_dir", "")), _now(), entries)
            write_json(adir / "undo_receipt.json", receipt.to_json())
            write_json(adir / TXN, {**txn, "state": "undone"})
            _mark_adopted(Path(txn.get("stage_dir", "")), {e.get("proposed", "") for e in entries}, None)
            return receipt
    raise UsageError(f"no adoption to undo in {base}")
