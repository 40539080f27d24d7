"""Damaged files, a refusing file system and bad locations never give a traceback.

Each case damages a copy of one finished tiny run (the real CLI and the embedded model made it) and runs the
real CLI in a subprocess: a file the run needs gives one `error:` line naming it and the fix (exit 2) and
changes nothing; a file that is only a cache, a log or derivable gives one `warning:` line and the command
goes on; following the printed fix finishes the run with the same result.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from test_cli_support import TINY, assert_one_line_error, run_cli, snapshot

from skillgrad.core.events import EventLog, read_events
from skillgrad.errors import DamagedFile, DamageWarning
from skillgrad.runs.listing import list_runs
from skillgrad.runs.store import ResultsLog, RunStore

pytestmark = pytest.mark.slow
ONE_THREAD = ["-o", "model.student.n_threads=1", "-o", "model.teacher.n_threads=1"]
FAULTS = Path(__file__).with_name("fs_faults.py")


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory, gguf_path: Path) -> Path:
    home = tmp_path_factory.mktemp("finished")
    r = run_cli(["demo", "--small", "--seed", "4", *TINY, "--quiet", "--out", "run"], home)
    assert r.rc == 0, str(r)
    return home / "run"


@pytest.fixture
def run(finished: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "runs" / "run"
    shutil.copytree(finished, dest)
    return dest


def _summary(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning: ")]


def _no_traceback(r: object) -> None:
    assert "Traceback" not in str(r), str(r)


@pytest.mark.parametrize("damage", [b'{"last_completed_step": 1, "curr', b"\x00\xff garbage", b"[1, 2]"])
def test_damaged_runtime_state_stops_with_the_fix(run: Path, damage: bytes) -> None:
    (run / "runtime_state.json").write_bytes(damage)
    before = snapshot(run)
    r = run_cli(["resume", str(run), *ONE_THREAD], run.parent)
    assert_one_line_error(r, str(run / "runtime_state.json"), "mv ")
    assert snapshot(run) == before  # a command that cannot start changes nothing


def test_the_printed_runtime_state_fix_works(run: Path, finished: Path) -> None:
    (run / "runtime_state.json").write_text('{"last_completed_step": 1, "curr')
    line = assert_one_line_error(run_cli(["resume", str(run), *ONE_THREAD], run.parent))
    # move it aside and rerun: completed stages replay from the step folders and the cache
    cmd = line.split("(mv ", 1)[1].split(")", 1)[0].split()
    os.replace(cmd[0], cmd[1])
    r = run_cli(["resume", str(run), *ONE_THREAD, "--quiet"], run.parent)
    assert r.rc == 0, str(r)
    assert _summary(run)["test_hard"] == _summary(finished)["test_hard"]
    assert _stable(run / "history.json") == _stable(finished / "history.json")


def _stable(history: Path) -> list[dict]:
    """History records without their timings (a replay takes its own time)."""
    return [{k: v for k, v in r.items() if "time" not in k and "timing" not in k and not k.endswith("_s")}
            for r in json.loads(history.read_text())]


@pytest.mark.parametrize("damage", [b'{"version": "0.', b"\xff\xfe\x00"])
def test_damaged_config_json(run: Path, damage: bytes) -> None:
    (run / "config.json").write_bytes(damage)
    before = snapshot(run)
    r = run_cli(["resume", str(run), *ONE_THREAD], run.parent)
    assert_one_line_error(r, str(run / "config.json"), "--out")
    r = run_cli(["train", "-c", "skillgrad:demo.yaml", "--out", str(run), *ONE_THREAD], run.parent)
    assert_one_line_error(r, str(run / "config.json"))
    assert snapshot(run) == before


def test_damaged_history_and_summary_are_rebuilt(run: Path, finished: Path) -> None:
    (run / "history.json").write_bytes(b"\xff" * 10)
    (run / "summary.json").write_text('{"status": "compl')
    r = run_cli(["resume", str(run), *ONE_THREAD, "--quiet"], run.parent)
    assert r.rc == 0, str(r)
    _no_traceback(r)
    (warning,) = _warnings(r.err)
    assert str(run / "history.json") in warning and "rebuilt" in warning and "history.json.damaged" in warning
    assert json.loads((run / "history.json").read_text()) == json.loads((finished / "history.json").read_text())
    assert (run / "history.json.damaged").read_bytes() == b"\xff" * 10  # kept for a look
    assert _summary(run)["test_hard"] == _summary(finished)["test_hard"]  # written again


def test_damaged_summary_and_events_do_not_take_down_the_listing(run: Path, finished: Path) -> None:
    (run / "summary.json").write_bytes(b'{"status": "compl\xff')
    lines = (run / "events.jsonl").read_bytes().split(b"\n")
    lines[3] = b'{"ts": 1, "event": \xff\xfe'  # one bad line in the middle
    (run / "events.jsonl").write_bytes(b"\n".join(lines))
    shutil.copytree(finished, run.parent / "healthy")
    for args in (["runs", "list", str(run.parent)], ["runs", "show", str(run)], ["report", str(run)]):
        r = run_cli(args, run.parent)
        assert r.rc == 0, str(r)
        _no_traceback(r)
    r = run_cli(["runs", "list", str(run.parent)], run.parent)
    assert "healthy" in r.out and "run" in r.out
    warned = _warnings(r.err)
    assert any("summary.json" in w for w in warned) and any("events.jsonl: 1 damaged line" in w for w in warned), r.err


def test_dashboard_home_page_survives_one_bad_byte(run: Path, finished: Path) -> None:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from skillgrad.ui.app import create_app

    shutil.copytree(finished, run.parent / "healthy")
    for name in ("summary.json", "config.json", "history.json", "runtime_state.json"):
        data = bytearray((run / name).read_bytes())
        data[len(data) // 2] = 0xFF
        (run / name).write_bytes(bytes(data))
    with open(run / "events.jsonl", "ab") as f:
        f.write(b"\xff\x00 not json\n")
    client = TestClient(create_app(run.parent), base_url="http://127.0.0.1")
    page = client.get("/")
    assert page.status_code == 200 and "healthy" in page.text and 'r=run"' in page.text
    assert client.get("/run?r=run").status_code == 200


def test_damaged_cache_is_moved_aside_and_the_run_goes_on(run: Path, finished: Path) -> None:
    (run / "llm_cache.sqlite").write_bytes(os.urandom(4096))
    for side in ("llm_cache.sqlite-wal", "llm_cache.sqlite-shm"):
        (run / side).unlink(missing_ok=True)
    (run / "runtime_state.json").unlink()  # replay: the stages come from the step folders, not the cache
    r = run_cli(["resume", str(run), *ONE_THREAD, "--quiet"], run.parent)
    assert r.rc == 0, str(r)
    (warning,) = _warnings(r.err)
    assert str(run / "llm_cache.sqlite") in warning and "moved it to llm_cache.sqlite.damaged-" in warning
    assert list(run.glob("llm_cache.sqlite.damaged-*"))
    assert _summary(run)["test_hard"] == _summary(finished)["test_hard"]


def test_bad_results_line_reruns_that_task_only(run: Path) -> None:
    results = run / "steps" / "step_0001" / "rollout" / "results.jsonl"
    lines = results.read_bytes().split(b"\n")
    good = len([x for x in lines if x.strip()])
    lines[1] = b"\x00\x01 not json"
    results.write_bytes(b"\n".join(lines))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = ResultsLog(results.parent).load()
    assert len(loaded) == good - 1
    assert [str(w.message) for w in caught if issubclass(w.category, DamageWarning)] == [
        f"{results}: skipped 1 damaged line; those tasks run again"]
    (run / "runtime_state.json").unlink()
    r = run_cli(["resume", str(run), *ONE_THREAD, "--log-format", "jsonl"], run.parent)
    assert r.rc == 0, str(r)
    assert len(_warnings(r.err)) == 1, r.err
    rollout_calls = [json.loads(x) for x in r.out.splitlines() if '"llm_call"' in x and '"rollout"' in x]
    assert len([e for e in rollout_calls if not e.get("cached")]) <= 1  # the one lost task, nothing else
    assert len(ResultsLog(results.parent).load()) == good


def test_event_log_after_a_cut_line_starts_a_new_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"ts": 1, "event": "a"}\n{"ts": 2, "ev')  # a kill mid-write
    EventLog(path)("b", x=1)
    assert [e["event"] for e in read_events(path)] == ["a", "b"]
    log = ResultsLog(tmp_path / "r")
    (tmp_path / "r").mkdir()
    log.path.write_text('{"item_id": "x", "hard": 1')
    from skillgrad.envs.base import Trajectory

    log.append(Trajectory(item_id="y", hard=1.0, soft=1.0))
    with pytest.warns(DamageWarning, match="skipped 1 damaged line"):  # the cut line now sits mid-file
        assert list(log.load()) == ["y"]


def test_store_read_json_names_the_file_and_the_fix(tmp_path: Path) -> None:
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "ranked_edits.json").write_text("{not json")
    with pytest.raises(DamagedFile) as e:
        RunStore(tmp_path).read_json("steps/ranked_edits.json")
    assert str(tmp_path / "steps" / "ranked_edits.json") in str(e.value) and "mv " in str(e.value)
    assert e.value.exit_code == 2


@pytest.mark.parametrize(("code", "needle", "then_rerun"), [("ENOSPC", "no space left", True),
                                                            ("EROFS", "read-only", False)])
def test_full_disk_or_read_only_folder_mid_run(tmp_path: Path, finished: Path, gguf_path: Path, code: str,
                                               needle: str, then_rerun: bool) -> None:
    out = tmp_path / "run"
    # 120 writes succeed (config, events, the few-shot start, the baseline, part of step 1), then every write fails
    p = subprocess.run([sys.executable, str(FAULTS), code, "120", str(out), "--", "demo", "--small", "--seed", "4",
                        *TINY, "--quiet", "--out", str(out)], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    from test_cli_support import CliResult

    r = CliResult(p.returncode, p.stdout, p.stderr)
    assert_one_line_error(r, str(out), needle)
    for f in out.rglob("*.json"):  # every file written before the failure is whole
        json.loads(f.read_text())
    assert not list(out.rglob("*.tmp"))
    if not then_rerun:
        return
    # space freed / folder writable again: the same command finishes the run with the same result
    r = run_cli(["demo", "--small", "--seed", "4", *TINY, "--quiet", "--out", str(out)], tmp_path)
    assert r.rc == 0, str(r)
    assert _summary(out)["test_hard"] == _summary(finished)["test_hard"]
    starts = [e for e in read_events(out / "events.jsonl") if e.get("event") == "run_start"]
    assert len(starts) == 2 and starts[1]["resumed"]  # continued from what was saved, not started over


def test_real_full_tmpfs(tmp_path: Path) -> None:
    """A real full file system where one can be mounted (root with mount rights); the injected one above
    covers machines without."""
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mnt)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root with mount rights)")
    try:
        (mnt / "filler").write_bytes(b"x" * 12_000)
        store = RunStore(mnt / "run")
        store.write_json("a.json", {"ok": 1})
        with pytest.raises(Exception) as e:
            store.write_json("big.json", {"x": "y" * 50_000})
        assert type(e.value).__name__ == "StorageError" and "no space left" in str(e.value)
        assert store.read_json("a.json") == {"ok": 1} and not list((mnt / "run").glob("*.tmp"))
        with pytest.raises(Exception) as e:
            EventLog(mnt / "run" / "events.jsonl")("x", blob="z" * 50_000)
        assert type(e.value).__name__ == "StorageError"
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_out_pointing_at_a_file(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("mine")
    for args in (["train", "-c", "skillgrad:demo.yaml", "--out", str(target)],
                 ["demo", "--small", "--out", str(target)],
                 ["train", "-c", "skillgrad:demo.yaml", "--out", str(target / "run")]):
        r = run_cli([*args, *ONE_THREAD], tmp_path)
        assert_one_line_error(r, str(target), "is a file", "--out")
    assert target.read_text() == "mine"


def test_ui_bad_or_busy_port(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    (tmp_path / "runs").mkdir()
    r = run_cli(["ui", "--root", "runs", "--port", "99999"], tmp_path, timeout=60)
    assert_one_line_error(r, "--port 99999", "0 for any free port")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = run_cli(["ui", "--root", "runs", "--port", str(port)], tmp_path, timeout=60)
    assert_one_line_error(r, f"--port {port}", "another --port")


def test_listing_survives_unreadable_files(tmp_path: Path, finished: Path) -> None:
    root = tmp_path / "runs"
    shutil.copytree(finished, root / "a")
    shutil.copytree(finished, root / "b")
    (root / "b" / "config.json").write_bytes(b"\xff")
    (root / "b" / "history.json").write_text("{")
    infos = {i.name: i for i in list_runs(root)}
    assert set(infos) == {"a", "b"} and infos["b"].warnings and not infos["a"].warnings
    assert infos["b"].steps_done == infos["a"].steps_done  # the events still say how far it got
