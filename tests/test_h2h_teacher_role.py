"""head_to_head.py --teacher-url: skillgrad is told its teacher is that model (its own name and window), so it gets
the capable-teacher treatment (full prompts, corrections judged as another model's), not the small-teacher one it
gives the embedded model. Before the fix both roles were routed as `smollm2` with the default 4,096-token window."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skillgrad.config.loader import load_config, packaged_config_path
from skillgrad.engine.teacher import SMALL_WINDOW
from skillgrad.models.factory import build_models

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import head_to_head  # noqa: E402
from h2h.run_skillgrad import route_overrides  # noqa: E402
from h2h.serve import Proxy  # noqa: E402


def _models(argv: list[str], tmp_path: Path) -> tuple[str, str, int]:
    """(teacher name, student name, teacher window) of the skillgrad client the harness configures for `argv`."""
    args = head_to_head.parser().parse_args(["--tasks", "facts", *argv])
    proxy = Proxy("http://127.0.0.1:1", tmp_path / "requests.jsonl", {}, port=5555)
    route = route_overrides(proxy, "skillgrad-facts-s0", args.teacher_cap, head_to_head.teacher_of(args))
    cfg = load_config(packaged_config_path("_base_/default.yaml"), [*route, "cache.enabled=false"])
    models = build_models(cfg, cache_path=None)
    return models.teacher.name, models.student.name, models.teacher.context_window


def test_an_agent_teacher_is_another_model_with_a_capable_window(tmp_path: Path) -> None:
    teacher, student, window = _models(["--teacher-url", "http://127.0.0.1:8791/v1", "--teacher-model", "agent"],
                                       tmp_path)
    # proposers/stage.py: a teacher named like the student is the same model; trainer.py: <= SMALL_WINDOW is compact
    assert teacher == "openai:agent" and student == "openai:smollm2"
    assert window == 200_000 > SMALL_WINDOW


def test_a_listed_model_keeps_its_own_window_and_the_option_sets_one(tmp_path: Path) -> None:
    url = ["--teacher-url", "https://api.example.com/v1", "--teacher-model", "gpt-4o"]
    assert _models(url, tmp_path)[2] == 128_000  # models/prices.json
    assert _models([*url, "--teacher-n-ctx", "4096"], tmp_path)[2] == 4096  # a small model the user names as such


def test_without_a_teacher_url_both_roles_are_the_embedded_model(tmp_path: Path) -> None:
    teacher, student, window = _models([], tmp_path)
    assert teacher == student == "openai:smollm2" and window <= SMALL_WINDOW


def test_a_window_without_a_teacher_url_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["head_to_head.py", "--tasks", "facts", "--teacher-n-ctx", "8192"])
    assert head_to_head.main() == 2
    assert "--teacher-n-ctx needs --teacher-url" in capsys.readouterr().err
