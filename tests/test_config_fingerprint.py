"""The config fingerprint (config/fingerprint.py) hashes only non-default values, so fields added by a later
release at their defaults keep a run's identity: `train` on a run directory written by the previous release
(tests/fixtures/prev_release_run, made from tests/fixtures/prev_release_demo.yaml = demo.yaml at eb3a103)
continues it instead of saying "different config", and its default run directory is found again."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillgrad.config.fingerprint import config_fingerprint, fingerprint_values
from skillgrad.config.loader import config_from_mapping, load_config
from skillgrad.config.schema import Config
from skillgrad.engine.session import default_run_dir, open_run
from skillgrad.errors import UsageError

FIXTURES = Path(__file__).parent / "fixtures"
PREV_RUN, PREV_YAML = FIXTURES / "prev_release_run", FIXTURES / "prev_release_demo.yaml"
SAVED = json.loads((PREV_RUN / "config.json").read_text(encoding="utf-8"))
OVERRIDES = SAVED["sources"]["overrides"]  # the command line the previous release's run was made with


def test_defaults_and_ignored_keys_do_not_count() -> None:
    assert fingerprint_values(Config()) == {}
    base = config_from_mapping({"train": {"batch_size": 5}})
    same = config_from_mapping({"train": {"batch_size": 5}, "budget": {"max_calls": 9}, "exec": {"backend": "ray"},
                                "model": {"student": {"api_key": "sk-secret"}}})
    assert config_fingerprint(same) == config_fingerprint(base) == config_fingerprint(
        config_from_mapping({"train": {"batch_size": 5, "num_epochs": Config().train.num_epochs}}))
    assert config_fingerprint(config_from_mapping({"train": {"batch_size": 6}})) != config_fingerprint(base)


def test_a_dump_without_a_newer_field_has_the_same_fingerprint() -> None:
    """What an older release saved lacks today's fields; read back they sit at their defaults."""
    cfg = load_config(PREV_YAML, OVERRIDES)
    dump = cfg.redacted()
    del dump["optimizer"]["demonstrations"]  # added after eb3a103
    assert config_fingerprint(config_from_mapping(dump)) == config_fingerprint(cfg)


def test_prev_release_run_is_the_same_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(PREV_RUN, run)
    cfg = load_config(PREV_YAML, OVERRIDES)
    assert SAVED["fingerprint"] != config_fingerprint(cfg)  # the recorded hash (whole dump) no longer matches
    handle = open_run(cfg, run)
    assert handle.resumed
    migrated = json.loads((run / "config.json").read_text(encoding="utf-8"))
    assert migrated["fingerprint"] == config_fingerprint(cfg)  # the record is rewritten in today's form
    with pytest.raises(UsageError, match="different config"):  # a real change is still refused
        open_run(load_config(PREV_YAML, [*OVERRIDES, "train.batch_size=4"]), run)


def test_default_run_dir_finds_the_run_named_by_the_old_fingerprint(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    old_name = Path("runs") / f"prev_release_demo-{SAVED['fingerprint']}"
    shutil.copytree(PREV_RUN, old_name)
    cfg = load_config(PREV_YAML, OVERRIDES)
    assert default_run_dir(cfg, PREV_YAML) == old_name
    other = load_config(PREV_YAML, [*OVERRIDES, "train.batch_size=4"])
    assert default_run_dir(other, PREV_YAML) == Path("runs") / f"prev_release_demo-{config_fingerprint(other)}"


@pytest.mark.slow
def test_train_continues_a_prev_release_run_through_the_cli(tmp_path: Path, gguf_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(PREV_RUN, run)
    args = [a for o in OVERRIDES for a in ("-o", o)]
    proc = subprocess.run([sys.executable, "-m", "skillgrad.cli", "train", "--config", str(PREV_YAML), *args,
                           "--out", str(run), "-q"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "different config" not in proc.stderr and "continuing the run" in proc.stderr
    assert json.loads((run / "summary.json").read_text(encoding="utf-8"))["status"] == "completed"
