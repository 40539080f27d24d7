"""Sleep writes no secret and invites no commit (issue 29, finding 7): a file a request names is redacted by the
one redactor, which also catches long random strings quoted after a secret-like name in any config syntax; the
first night writes `.skillgrad/.gitignore` unless the user opted to commit it."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest

from skillgrad.core.redact import redact_text
from skillgrad.sleep import named_files
from skillgrad.sleep.night import run_night
from skillgrad.sleep.settings import SleepSettings

SIGNING = "kX9vQ2mZ7rT4wB8nL1pH6sD3fG5jK0aYcE2uV7iO9qR4tW6yU8oP1lM3nB5vC7xZ"  # 64 random characters


@pytest.mark.parametrize("line", [
    f'config :app, :session_signing_secret, "{SIGNING}"',             # Elixir, the case
    f'config :app, AppWeb.Endpoint, secret_key_base: "{SIGNING}"',     # Phoenix endpoint config
    f'  signing_salt: "{SIGNING[:32]}"',
    f':cookie_key => "{SIGNING}"',                                      # Ruby hash
    f'app.config.set("api_secret", "{SIGNING}")',                       # a call
    f'[auth]\nclient_secret = "{SIGNING}"',                             # TOML
])
def test_long_random_strings_after_secret_names_are_redacted_in_any_syntax(line: str) -> None:
    out = redact_text(line)
    assert SIGNING[:24] not in out and "[REDACTED]" in out, out


def test_names_and_ordinary_strings_are_kept() -> None:
    for text in ('primary_key: "user_id_and_account_id_columns"', "the token budget is 4096 tokens",
                 'config :app, :session_signing_secret, System.fetch_env!("SIGNING_SECRET")'):
        assert redact_text(text) == text


def test_a_named_config_file_reaches_the_task_redacted(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "runtime.exs").write_text(
        f'import Config\n\nconfig :app, :session_signing_secret, "{SIGNING}"\nconfig :app, port: 4000\n')
    [f] = named_files.read_named_files(str(tmp_path), "Add session expiry using @config/runtime.exs",
                                       ["config/runtime.exs"])
    assert SIGNING[:16] not in f["text"] and "port: 4000" in f["text"]


def _night(project: Path, **kw: object) -> None:
    (project / "SKILL.md").write_text("# Status\n\nKeep replies short.\n")
    s = SleepSettings(project=str(project), skill=str(project / "SKILL.md"), source="claude_code",
                      claude_home=str(project / "none"), codex_home=str(project / "none"), miner="heuristic",
                      evolve_memory=False, **kw)
    asyncio.run(run_night(s, digests=[]))


def test_the_first_night_keeps_its_state_out_of_git(tmp_path: Path) -> None:
    project = tmp_path / "app"
    project.mkdir()
    _night(project)
    assert (project / ".skillgrad" / ".gitignore").read_text().strip().endswith("*")
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        subprocess.run(["git", "-C", str(project), "add", "-A"], check=True)
        staged = subprocess.run(["git", "-C", str(project), "diff", "--cached", "--name-only"], capture_output=True,
                                text=True, check=True).stdout.split()
        assert staged == ["SKILL.md"], staged  # `git add -A` commits nothing of .skillgrad/
    other = tmp_path / "opted"
    other.mkdir()
    _night(other, commit_state=True)
    assert not (other / ".skillgrad" / ".gitignore").exists()
