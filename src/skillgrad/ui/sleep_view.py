"""Sleep's staged proposals as the dashboard lists them, and adopt / discard through Sleep's own module.

Listing goes through `skillgrad.sleep.stage.list_proposals` (so a proposal whose live file changed shows as
stale, as in `skillgrad sleep status`); adopting and discarding call `skillgrad.sleep.adopt`, the same
atomic, backed-up adopt as the CLI: there is no second implementation here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgrad.core.records import RunFiles
from skillgrad.sleep.adopt import adopt, discard
from skillgrad.sleep.stage import Proposal, list_proposals
from skillgrad.ui.safety import PathRefused, resolve_under, scrub, scrub_data

STAGING = Path(".skillgrad") / "sleep"


@dataclass
class Staged:
    """One of Sleep's proposals (status as `skillgrad sleep status` says it, stale included) with its texts."""

    proposal: Proposal
    diff: str = ""
    report_md: str = ""
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.proposal.stage_dir.name

    @property
    def path(self) -> Path:
        return self.proposal.stage_dir

    @property
    def status(self) -> str:
        return self.proposal.status

    @property
    def created_at(self) -> str:
        return self.proposal.created_at

    @property
    def night_run_dir(self) -> str:
        return scrub(self.proposal.night_run_dir)

    @property
    def scores(self) -> dict[str, Any]:
        return scrub_data(self.proposal.scores)

    @property
    def files(self) -> list[dict[str, Any]]:
        return [scrub_data(f) for f in self.proposal.files if isinstance(f, dict)]


def _read(path: Path) -> str:
    try:
        return scrub(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return ""


def _with_texts(proposal: Proposal) -> Staged:
    folder = proposal.stage_dir
    report = RunFiles(folder).json("report.json")  # missing or unreadable: no report, the page still shows
    return Staged(proposal, _read(folder / "diff.patch"), _read(folder / "report.md"),
                  scrub_data(report) if isinstance(report, dict) else {})


def list_staged(project: Path) -> list[Staged]:
    """The project's proposals, newest first, as Sleep itself lists them (skillgrad.sleep.stage)."""
    return [Staged(p) for p in list_proposals(project)]


def load(project: Path | None, prop_id: str) -> Staged:
    from skillgrad.ui.app import HTTPError

    if project is None:
        raise HTTPError(404, "no Sleep project: start the dashboard with --project PATH")
    try:
        folder = resolve_under(project / STAGING, prop_id)
    except PathRefused as e:
        raise HTTPError(404, f"no staged proposal {prop_id!r} ({e})") from None
    found = next((p for p in list_proposals(project) if p.stage_dir == folder.resolve()), None)
    if found is None:
        raise HTTPError(404, f"no staged proposal {prop_id!r}")
    return _with_texts(found)


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
