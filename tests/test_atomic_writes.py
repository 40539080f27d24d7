"""Atomic writes: the umask decides the mode (best_skill.md and summary.json are shared files), and an
interrupted write (Ctrl-C, SIGTERM through the CLI) leaves the old file and no `.tmp`."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from skillgrad.core import atomic
from skillgrad.runs.report import write_report
from skillgrad.runs.store import RunStore


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_new_files_honour_the_umask(tmp_path: Path, mask: int) -> None:
    old = os.umask(mask)
    try:
        store = RunStore(tmp_path / "run")
        store.write_text("best_skill.md", "# skill\n")
        store.write_json("summary.json", {"status": "completed"})
    finally:
        os.umask(old)
    for name in ("best_skill.md", "summary.json"):
        assert stat.S_IMODE((tmp_path / "run" / name).stat().st_mode) == 0o666 & ~mask


def test_an_interrupted_write_keeps_the_old_file_and_leaves_no_tmp(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "summary.json"
    atomic.write_json(target, {"v": 1})

    def interrupted(src: str, dst: str) -> None:
        raise KeyboardInterrupt  # what SIGTERM becomes in the CLI

    monkeypatch.setattr(atomic.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic.write_json(target, {"v": 2})
    assert atomic.read_json(target) == {"v": 1}
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


def test_a_report_killed_half_way_leaves_no_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ui_helpers import make_run

    run = make_run(tmp_path, "r", steps=2)
    calls = {"n": 0}
    real = atomic.os.replace

    def stop_on_third(src: str, dst: str) -> None:  # plots written, then the kill arrives
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", stop_on_third)
    with pytest.raises(KeyboardInterrupt):
        write_report(run)
    assert not [p for p in run.rglob("*") if p.name.endswith(".tmp")]
