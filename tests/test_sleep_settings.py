"""Sleep settings: YAML below CLI flags, one-line errors naming the file and key."""

from pathlib import Path

import pytest

from skillgrad.errors import UsageError
from skillgrad.sleep.settings import load_settings


def test_yaml_below_flags(tmp_path: Path):
    cfg = tmp_path / "sleep.yaml"
    cfg.write_text("max_tasks: 7\nbudget:\n  max_calls: 50\n  max_minutes: 5\nteacher:\n  provider: openai\n")
    s = load_settings(cfg, {"max_tasks": 3, "budget": {"max_minutes": 9}})
    assert (s.max_tasks, s.budget.max_calls, s.budget.max_minutes, s.teacher.provider) == (3, 50, 9, "openai")


@pytest.mark.parametrize("text,needle", [
    ("max_task: 3\n", "unknown sleep setting 'max_task'; did you mean max_tasks?"),
    ("budget:\n  max_token: 3\n", "did you mean budget.max_tokens?"),
    ("max_tasks: 0\n", "max_tasks: Input should be greater than or equal to 1"),
    ("- a\n", "expected a mapping"),
    ("a: [\n", "not valid YAML"),
])
def test_bad_settings_are_one_line_errors(tmp_path: Path, text: str, needle: str):
    cfg = tmp_path / "sleep.yaml"
    cfg.write_text(text)
    with pytest.raises(UsageError) as e:
        load_settings(cfg)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_missing_explicit_config_and_bad_flag(tmp_path: Path):
    with pytest.raises(UsageError, match="--config .*file not found"):
        load_settings(tmp_path / "none.yaml")
    with pytest.raises(UsageError, match="command line: lookback_hours"):
        load_settings(None, {"lookback_hours": -1})
