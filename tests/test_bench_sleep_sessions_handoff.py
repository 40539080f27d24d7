"""`benchmarks/sleep_sessions.py --night --teacher handoff`: a night that needs answers stops with exit 3 before
the later sessions exist, and the same command continues the same night (no model is loaded before mining)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "bench_sleep_sessions", Path(__file__).resolve().parent.parent / "benchmarks" / "sleep_sessions.py")
bench = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(bench)  # type: ignore[union-attr]


def _run(out: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(sys, "argv", ["sleep_sessions.py", "--night", "--threads", "1", "--teacher", "handoff",
                                      "--out", str(out)])
    with pytest.raises(SystemExit) as e:
        bench.main()
    return int(e.value.code)


def _sessions(out: Path) -> int:
    return sum(1 for _ in (out / "claude").rglob("*.jsonl")) + sum(1 for _ in (out / "codex").rglob("*.jsonl"))


def test_stops_for_answers_then_continues_the_same_night(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "night"
    assert _run(out, monkeypatch) == 3
    printed = capsys.readouterr().out
    night = bench.pending_night(out / "ledgerline")
    assert night is not None and f"{night / 'handoff' / 'PROMPTS.md'}" in printed
    pending = json.loads((night / "handoff" / "pending.json").read_text())["pending"]
    assert len(pending) == bench.NIGHT_SESSIONS and {p["stage"] for p in pending} == {"mine"}
    assert _sessions(out) == bench.NIGHT_SESSIONS  # the later sessions are not written while the night is pending
    # one answer written, then the same command: the night continues in the same folder (not wiped, not fresh)
    first = pending[0]
    Path(first["answer_file"]).parent.mkdir(parents=True, exist_ok=True)
    Path(first["answer_file"]).write_text('{"tasks": []}', encoding="utf-8")
    assert _run(out, monkeypatch) == 3
    assert bench.pending_night(out / "ledgerline") == night
    index = json.loads((night / "handoff" / "index.json").read_text())
    assert first["id"] in index["used"]
    again = json.loads((night / "handoff" / "pending.json").read_text())
    assert {p["id"] for p in again["pending"]} == {p["id"] for p in pending} - {first["id"]}
    assert len(json.loads((out / "handoff_rounds.json").read_text())) == 2
    assert _sessions(out) == bench.NIGHT_SESSIONS
