"""Staging, adopt, discard and undo: pins, refusals, atomic writes, crash recovery, byte-identical undo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillgrad.errors import UsageError
from skillgrad.sleep.adopt import TXN, adopt, adoptions_dir, discard, undo
from skillgrad.sleep.stage import list_proposals, read_manifest, sha256_file, stage_proposal

SKILL = b"# Skill\r\nHand text \xc3\xa9\n<!-- SKILLGRAD:LEARNED START -->\n- old\n<!-- SKILLGRAD:LEARNED END -->\ntail"


def _stage(project: Path, files: dict[Path, str]) -> Path:
    return stage_proposal(project, [(p, text, sha256_file(p)) for p, text in files.items()],
                          night_run_dir=project / "night", scores={"skill": {"val_score_after": 1.0}},
                          report={"ok": True}, report_md="# r\n", evidence={"tasks": []})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "SKILL.md").write_bytes(SKILL)
    (tmp_path / "CLAUDE.md").write_bytes(b"memory\n")
    return tmp_path


def test_stage_writes_everything_and_the_manifest_pins(project):
    new = project / "sub" / "NEW.md"
    stage = _stage(project, {project / "SKILL.md": "proposed skill\n", new: "created\n"})
    m = read_manifest(stage)
    assert m is not None and m["status"] == "staged" and m["version"] == 1
    assert [f["proposed"] for f in m["files"]] == ["proposed/SKILL.md", "proposed/sub/NEW.md"]
    assert m["files"][0]["live_sha256"] == sha256_file(project / "SKILL.md") and m["files"][1]["live_sha256"] is None
    assert (stage / "diff.patch").read_text().count("+++ b/") == 2 and (stage / "evidence" / "tasks.json").is_file()
    assert [p.status for p in list_proposals(project)] == ["staged"]


def test_adopt_then_undo_is_byte_identical_and_creates_and_removes_new_files(project):
    new = project / "NEW.md"
    stage = _stage(project, {project / "SKILL.md": "proposed\n", new: "created\n"})
    receipt = adopt(stage)
    assert (project / "SKILL.md").read_text() == "proposed\n" and new.read_text() == "created\n"
    assert receipt.kind == "adopt" and (adoptions_dir(project) / receipt.adoption_id / "receipt.json").is_file()
    assert list_proposals(project)[0].status == "adopted"
    with pytest.raises(UsageError, match="not staged"):
        adopt(stage)
    undo(project)
    assert (project / "SKILL.md").read_bytes() == SKILL and not new.exists()
    assert list_proposals(project)[0].status == "undone"
    with pytest.raises(UsageError, match="no adoption to undo"):
        undo(project)


def test_adopt_is_refused_when_a_live_file_changed_since_staging(project):
    stage = _stage(project, {project / "SKILL.md": "proposed\n"})
    (project / "SKILL.md").write_bytes(SKILL + b"\nmy edit")
    assert list_proposals(project)[0].status == "stale"
    with pytest.raises(UsageError, match="changed since the proposal was staged"):
        adopt(stage)
    assert (project / "SKILL.md").read_bytes() == SKILL + b"\nmy edit"


def test_undo_refuses_to_overwrite_edits_made_after_adoption(project):
    adopt(_stage(project, {project / "SKILL.md": "proposed\n"}))
    (project / "SKILL.md").write_text("edited after adopt\n")
    with pytest.raises(UsageError, match="changed since it was adopted"):
        undo(project)


def test_a_crash_mid_adopt_is_rolled_back_on_the_next_call(project):
    stage = _stage(project, {project / "SKILL.md": "proposed\n", project / "CLAUDE.md": "new memory\n"})
    other = _stage(project, {project / "CLAUDE.md": "x\n"})
    adopt(stage)
    # Simulate a crash after the first file was replaced: transaction pending, manifest still staged.
    adir = next(adoptions_dir(project).iterdir())
    txn = json.loads((adir / TXN).read_text())
    (adir / TXN).write_text(json.dumps({**txn, "state": "pending"}))
    m = read_manifest(stage)
    (stage / "manifest.json").write_text(json.dumps({**m, "status": "staged"}))
    (project / "CLAUDE.md").write_bytes(b"memory\n")  # the second file was never written
    discard(other)  # any adopt / discard / undo recovers first
    assert (project / "SKILL.md").read_bytes() == SKILL and (project / "CLAUDE.md").read_bytes() == b"memory\n"
    assert json.loads((adir / TXN).read_text())["state"] == "rolled_back"
    adopt(stage)  # the proposal can be adopted again after the rollback
    assert (project / "CLAUDE.md").read_text() == "new memory\n"


def test_discard_and_unfinished_stage_folders(project):
    stage = _stage(project, {project / "SKILL.md": "p\n"})
    discard(stage)
    assert list_proposals(project)[0].status == "discarded"
    with pytest.raises(UsageError, match="not staged"):
        adopt(stage)
    (stage.parent / "20990101-000000").mkdir()  # no manifest: staging never finished
    assert len(list_proposals(project)) == 1
    with pytest.raises(UsageError, match="not a staged proposal"):
        adopt(stage.parent / "20990101-000000")
