"""Staging a night's proposal for review: nothing here touches a live file.

    <project>/.skillgrad/sleep/<YYYYmmdd-HHMMSS>/
        proposed/<files>  diff.patch  report.md  report.json  evidence/  manifest.json (written LAST)

The manifest pins the sha256 of every live file as it was when the night read it and of every proposal;
a folder without a manifest is an unfinished staging and is never adopted.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillgrad.core.atomic import write_json, write_text
from skillgrad.skill.diff import unified_diff

MANIFEST = "manifest.json"
MANIFEST_VERSION = 1


def sleep_root(project: Path) -> Path:
    return Path(project).resolve() / ".skillgrad" / "sleep"


def sha256_file(path: Path) -> str | None:
    """Hex sha256 of a file's bytes; None when it does not exist (a proposal may create a file)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Proposal:
    stage_dir: Path
    created_at: str
    status: str  # staged | partial (some files adopted) | adopted | undone | discarded | stale (a live file changed)
    files: list[dict[str, Any]] = field(default_factory=list)
    scores: dict[str, Any] = field(default_factory=dict)
    night_run_dir: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"stage_dir": str(self.stage_dir), "created_at": self.created_at, "status": self.status,
                "files": self.files, "scores": self.scores, "night_run_dir": self.night_run_dir}


def _proposed_rel(project: Path, live: Path, used: set[str]) -> str:
    try:
        rel = live.resolve().relative_to(project.resolve()).as_posix()
    except ValueError:
        rel = f"external/{live.name}"
    base, n = rel, 1
    while rel in used:
        n += 1
        rel = f"{base}.{n}"
    used.add(rel)
    return f"proposed/{rel}"


def stage_proposal(project: Path, files: list[tuple[Path, str, str | None]], *, night_run_dir: Path,
                   scores: dict[str, Any], report: dict[str, Any], report_md: str,
                   evidence: dict[str, Any], now: datetime | None = None) -> Path:
    """Write a stage folder. `files`: (live path, proposed text, live sha256 the night read, None if absent)."""
    now = now or datetime.now(UTC)
    root = sleep_root(project)
    stage = root / now.strftime("%Y%m%d-%H%M%S")
    n = 1
    while stage.exists():
        n += 1
        stage = root / f"{now.strftime('%Y%m%d-%H%M%S')}-{n}"
    used: set[str] = set()
    entries: list[dict[str, Any]] = []
    diffs: list[str] = []
    for live, text, live_sha in files:
        rel = _proposed_rel(project, live, used)
        write_text(stage / rel, text)
        live_text = live.read_text(encoding="utf-8") if live_sha is not None else ""
        diffs.append(unified_diff(live_text, text, f"a/{live.name}", f"b/{live.name}"))
        entries.append({"live": str(live.resolve()), "proposed": rel, "live_sha256": live_sha,
                        "proposed_sha256": sha256_text(text)})
    write_text(stage / "diff.patch", "".join(diffs))
    write_json(stage / "report.json", report)
    write_text(stage / "report.md", report_md)
    for name, data in evidence.items():
        write_json(stage / "evidence" / f"{name}.json", data)
    manifest = {"version": MANIFEST_VERSION, "created_at": now.isoformat(timespec="seconds"),
                "project": str(Path(project).resolve()), "night_run_dir": str(night_run_dir), "status": "staged",
                "files": entries, "scores": scores}
    write_json(stage / MANIFEST, manifest)  # last: its presence means the folder is complete
    return stage


def read_manifest(stage_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((stage_dir / MANIFEST).read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) and data.get("version") == MANIFEST_VERSION else None


def live_changed(manifest: dict[str, Any]) -> list[str]:
    """Live files not adopted yet whose bytes differ from the pin taken when the night read them."""
    return [f["live"] for f in manifest.get("files", [])
            if not f.get("adopted_by") and sha256_file(Path(f["live"])) != f.get("live_sha256")]


def list_proposals(project: Path) -> list[Proposal]:
    """Every complete stage folder of the project, newest first (unfinished ones, without a manifest, are left out)."""
    root = sleep_root(project)
    if not root.is_dir():
        return []
    out: list[Proposal] = []
    for d in sorted((p for p in root.iterdir() if p.is_dir() and p.name[:1].isdigit()), reverse=True):
        m = read_manifest(d)
        if m is None:
            continue
        status = str(m.get("status", "staged"))
        if status in ("staged", "partial") and live_changed(m):
            status = "stale"
        out.append(Proposal(d, str(m.get("created_at", "")), status, list(m.get("files", [])),
                            dict(m.get("scores", {})), str(m.get("night_run_dir", ""))))
    return out
