"""Adopting a chosen subset of a proposal with several files (memory file + skills): all or nothing for the
chosen set, the rest stays staged; backup, receipt and undo cover every adopted file; bad --only exits 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skillgrad.errors import UsageError
from skillgrad.sleep.adopt import TXN, adopt, adoptions_dir, undo
from skillgrad.sleep.stage import list_proposals, read_manifest, sha256_file, stage_proposal

MEMORY = b"# Notes\n\nWe ship on Fridays.\n"
SKILL_A = b"---\nname: db-migrations\n---\n# DB migrations\n"
SKILL_B = b"---\nname: changelog\n---\n# Changelog\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "CLAUDE.md").write_bytes(MEMORY)
    for name, text in (("db-migrations", SKILL_A), ("changelog", SKILL_B)):
        (tmp_path / ".claude" / "skills" / name).mkdir(parents=True)
        (tmp_path / ".claude" / "skills" / name / "SKILL.md").write_bytes(text)
    return tmp_path


def _files(project: Path) -> list[Path]:
    return [project / "CLAUDE.md", project / ".claude/skills/db-migrations/SKILL.md",
            project / ".claude/skills/changelog/SKILL.md"]


def _stage(project: Path) -> Path:
    return stage_proposal(project, [(p, p.read_text() + "learned\n", sha256_file(p)) for p in _files(project)],
                          night_run_dir=project / "night", scores={}, report={}, report_md="# r\n", evidence={})


def test_only_the_chosen_files_are_adopted_then_the_rest_and_undo_restores_each(project, monkeypatch):
    stage = _stage(project)
    memory, skill_a, skill_b = _files(project)
    monkeypatch.chdir(project)
    first = adopt(stage, only=["CLAUDE.md", "changelog"])  # a path relative to the project, a skill's name
    assert memory.read_bytes() == MEMORY + b"learned\n" and skill_b.read_bytes() == SKILL_B + b"learned\n"
    assert skill_a.read_bytes() == SKILL_A  # not chosen: untouched
    assert {Path(f["live"]) for f in first.files} == {memory, skill_b}
    assert list_proposals(project)[0].status == "partial"
    with pytest.raises(UsageError, match="already adopted"):
        adopt(stage, only=["CLAUDE.md"])
    second = adopt(stage)  # the rest
    assert [Path(f["live"]) for f in second.files] == [skill_a]
    assert list_proposals(project)[0].status == "adopted"
    undo(project)  # the last adoption: the db-migrations skill only
    assert skill_a.read_bytes() == SKILL_A and memory.read_bytes() == MEMORY + b"learned\n"
    assert list_proposals(project)[0].status == "partial"
    undo(project)
    assert [p.read_bytes() for p in _files(project)] == [MEMORY, SKILL_A, SKILL_B]
    assert list_proposals(project)[0].status == "undone"


def test_a_chosen_set_is_all_or_nothing(project):
    stage = _stage(project)
    memory, skill_a, skill_b = _files(project)
    skill_b.write_bytes(SKILL_B + b"my edit\n")  # one chosen file changed since staging
    with pytest.raises(UsageError, match="changelog/SKILL.md changed since"):
        adopt(stage, only=[str(memory), str(skill_b)])
    assert memory.read_bytes() == MEMORY and not adoptions_dir(project).exists()
    receipt = adopt(stage, only=[str(skill_a)])  # the unchanged files can still be chosen
    assert skill_a.read_bytes() == SKILL_A + b"learned\n"
    txn = json.loads((adoptions_dir(project) / receipt.adoption_id / TXN).read_text())
    assert txn["state"] == "committed" and [Path(e["live"]) for e in txn["files"]] == [skill_a]
    m = read_manifest(stage)
    assert m is not None and [bool(f.get("adopted_by")) for f in m["files"]] == [False, True, False]


def test_only_that_names_no_file_exits_2_with_the_proposal_files(project):
    _stage(project)
    r = subprocess.run([sys.executable, "-m", "skillgrad.cli", "sleep", "adopt", "--project", str(project),
                        "--only", "README.md"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "--only README.md: names no file" in r.stderr and ".claude/skills/changelog/SKILL.md" in r.stderr
    assert [p.read_bytes() for p in _files(project)] == [MEMORY, SKILL_A, SKILL_B]
    ok = subprocess.run([sys.executable, "-m", "skillgrad.cli", "sleep", "adopt", "--project", str(project),
                         "--only", "db-migrations", "--json"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert [Path(f["live"]).parent.name for f in json.loads(ok.stdout)["files"]] == ["db-migrations"]
    status = subprocess.run([sys.executable, "-m", "skillgrad.cli", "sleep", "status", "--project", str(project)],
                            capture_output=True, text=True, timeout=60)
    assert status.stdout.split()[0] == "partial"
    assert f"adopted {project / '.claude/skills/db-migrations/SKILL.md'}" in status.stdout
    assert f"staged  {project / 'CLAUDE.md'}" in status.stdout
