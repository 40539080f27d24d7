"""The one redactor (core/redact.py): the union of what the config, harvest and dashboard redactors covered,
plus Slack webhooks, Azure connection-string keys and Google OAuth tokens; prose that names a secret word stays."""

from __future__ import annotations

import pytest

from skillgrad.core.events import EventLog
from skillgrad.core.redact import MARK, REDACTED, redact, redact_text
from skillgrad.ui.safety import scrub, scrub_data

B = "Xy7" + "Qw8Er9Ty0Ui1Op2As3Df4Gh5"  # assembled: no real-looking key sits in the source as one literal
NEW_SHAPES = {
    "slack_webhook": "https://hooks.slack.com/services/T0" + "1ABCDEF/B02GHIJKL/" + B,
    "azure_account_key": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + B + "+abc/def==;"
                         "EndpointSuffix=core.windows.net",
    "google_oauth": "ya29." + "a0AfH6SM" + B,
}
SECRET_PARTS = {"slack_webhook": B, "azure_account_key": B, "google_oauth": B}


@pytest.mark.parametrize("kind", sorted(NEW_SHAPES))
def test_new_shapes_are_redacted(kind: str) -> None:
    out = redact_text(f"deploy log: {NEW_SHAPES[kind]} done")
    assert SECRET_PARTS[kind] not in out and MARK in out
    assert out.startswith("deploy log: ") and out.endswith(" done")
    assert redact_text(out) == out  # idempotent


@pytest.mark.parametrize("prose", [
    "**Token Efficiency**: keep answers short.",
    "## Secret Sauce\nUse the token budget wisely; Password rules: ask IT.",
    "- **Authorization Flow**: redirect the user, then exchange the code.",
    "Raise max_tokens to 512; tokens used 1234.",
])
def test_prose_naming_secret_words_is_kept(prose: str) -> None:
    assert redact_text(prose) == prose
    assert scrub(prose) == prose


def test_assignments_with_digits_still_go() -> None:
    assert "hunter22" not in redact_text("password: hunter22")
    assert "k3y-0f-the-day-77" not in redact_text("--api-key k3y-0f-the-day-77")
    assert "wordwordz" not in redact_text("password=wordwordz")  # `=` makes it an assignment whatever the value


def test_structured_by_key_and_text_inside_values() -> None:
    data = {"api_key": "plain", "max_tokens": 5, "note": [f"sent to {NEW_SHAPES['slack_webhook']}"], "n": None}
    out = redact(data)
    assert out["api_key"] == REDACTED and out["max_tokens"] == 5 and out["n"] is None
    assert B not in str(out) and MARK in out["note"][0]
    assert scrub_data(data)["note"][0].endswith(REDACTED)  # the dashboard marks with ***


def test_events_never_hold_a_secret_in_text(tmp_path) -> None:
    log = EventLog(tmp_path / "events.jsonl")
    log("llm_call", error=f"HTTP 401: bad key {NEW_SHAPES['google_oauth']}")
    assert B not in (tmp_path / "events.jsonl").read_text()
