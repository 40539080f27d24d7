"""Sleep's staged proposals as the dashboard lists them, and adopt / discard through Sleep's own module.

A proposal is `<project>/.skillgrad/sleep/<YYYYmmdd-HHMMSS>/` with proposed/, diff.patch, report.md,
report.json and manifest.json (written last, so a folder without it is still being staged and is not
listed). Listing reads the folders; adopting and discarding call `skillgrad.sleep.adopt`, the same
atomic, backed-up adopt as the CLI: there is no second implementation here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgrad.sleep.adopt import adopt, discard
from skillgrad.ui.safety import PathRefused, resolve_under, scrub, scrub_data

STAGING = Path(".skillgrad") / "sleep"


@dataclass
class Staged:
    id: str
    path: Path
    manifest: dict[str, Any]
    diff: str = ""
    report_md: str = ""
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        return str(self.manifest.get("status") or "staged")

    @property
    def files(self) -> list[dict[str, Any]]:
        return [f for f in self.manifest.get("files") or [] if isinstance(f, dict)]


def _read(path: Path) -> str:
    try:
        return scrub(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return ""


def _staged(folder: Path) -> Staged | None:
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict):
        return None
    try:
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        report = {}
    return Staged(folder.name, folder, scrub_data(manifest), _read(folder / "diff.patch"), _read(folder / "report.md"),
                  scrub_data(report) if isinstance(report, dict) else {})


def list_staged(project: Path) -> list[Staged]:
    base = project / STAGING
    if not base.is_dir():
        return []
    found = [s for p in sorted(base.iterdir(), reverse=True) if p.is_dir() and (s := _staged(p)) is not None]
    return found


class NotFound(LookupError):
    pass


def load(project: Path | None, prop_id: str) -> Staged:
    from skillgrad.ui.app import HTTPError

    if project is None:
        raise HTTPError(404, "no Sleep project: start the dashboard with --project PATH")
    try:
        folder = resolve_under(project / STAGING, prop_id)
    except PathRefused as e:
        raise HTTPError(404, f"no staged proposal {prop_id!r} ({e})") from None
    staged = _staged(folder) if folder.is_dir() else None
    if staged is None:
        raise HTTPError(404, f"no staged proposal {prop_id!r}")
    return staged


def act(staged: Staged, action: str) -> str:
    """Adopt or discard through skillgrad.sleep.adopt; returns a one-line message for the page."""
    try:
        if action == "adopt":
            receipt = adopt(staged.path)
            return f"adopted: {scrub(str(_receipt_text(receipt)))}"
        if action == "discard":
            discard(staged.path)
            return "discarded"
    except Exception as e:  # the Sleep module's own refusal (changed live file, already adopted) is the message
        return f"{action} refused: {scrub(str(e))}"
    return f"unknown action {action!r}"


def _receipt_text(receipt: Any) -> str:
    for attr in ("summary", "message"):
        v = getattr(receipt, attr, None)
        if isinstance(v, str) and v:
            return v
    files = getattr(receipt, "files", None)
    if isinstance(files, list):
        return f"{len(files)} file(s) updated"
    return str(receipt)
