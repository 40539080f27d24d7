"""Secrets planted in session files never reach a digest, nor anything written from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillgrad.core.redact import MARK, redact_text
from skillgrad.sleep.harvest import harvest, record_harvest

# Fake keys, one per vendor shape (assembled so no real-looking key sits in the source as one literal).
A = "a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuV"
KEYS = {
    "anthropic": "sk-ant-api03-" + A,
    "openai": "sk-proj-" + A,
    "openai_legacy": "sk-" + A + "XyZ",
    "github_classic": "ghp_" + A + "wxyz",
    "github_pat": "github_pat_11" + A + "_" + A,
    "aws": "AKIA" + "IOSFODNN7EXAMPL2",
    "slack": "xoxb-" + "123456789012-" + A[:20],
    "google": "AIza" + "Sy" + A + "abc",
    "stripe": "sk_live_" + A,
    "hf": "hf_" + A,
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}
PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----"
ASSIGNED = {
    "bearer": ("Authorization: Bearer ", "Zq8vN3xK1pL7mR4tW9yB2cF6"),
    "password": ("password=", "correct-horse-42"),
    "token": ('"token": "', "tok_9f8e7d6c5b4a", '"'),
    "db_url": ("postgres://app:", "s3cretPass99", "@db.internal:5432/app"),
    "env": ("export DEPLOY_SEED=", "Qw7eRt9YuI2oP4aS6dF8gH1jK3"),
    "cli_flag": ("--api-key ", "k3y-0f-the-day-77"),
}
SECRETS = [*KEYS.values(), *(v[1] for v in ASSIGNED.values()), "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"]


def planted_text() -> str:
    lines = [f"{name}: {key}" for name, key in KEYS.items()]
    lines += [prefix + value + (rest[0] if rest else "") for prefix, value, *rest in ASSIGNED.values()]
    return "\n".join(lines) + "\n" + PEM


@pytest.mark.parametrize("secret", SECRETS)
def test_each_kind_is_redacted(secret: str) -> None:
    out = redact_text("see " + planted_text() + " end")
    assert secret not in out
    assert MARK in out


def test_redaction_is_idempotent_and_keeps_prose() -> None:
    once = redact_text(planted_text())
    assert redact_text(once) == once
    prose = ("Raise max_tokens to 512; the token budget is fine. Reset the password: please ask IT. "
             "PATH=/usr/local/bin:/usr/bin and VERSION=1.2.3 stay. sk-short is no key.")
    assert redact_text(prose) == prose


def test_no_secret_reaches_digest_or_state(tmp_path: Path) -> None:
    cwd = "/home/dev/work/vault"
    proj = tmp_path / "claude" / "projects" / "-home-dev-work-vault"
    proj.mkdir(parents=True)
    text = planted_text()
    recs = [
        {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": "s-1",
         "version": "2.1.39", "gitBranch": "main", "type": "user", "message": {"role": "user", "content": "Deploy with " + text},
         "uuid": "u1", "timestamp": "2026-03-02T10:00:00.000Z"},
        {"parentUuid": "u1", "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": "s-1",
         "version": "2.1.39", "gitBranch": "main", "type": "assistant",
         "message": {"model": "claude-sonnet-4-5", "id": "m1", "type": "message", "role": "assistant",
                     "content": [{"type": "text", "text": "I used " + KEYS["openai"] + " and " + PEM}]},
         "uuid": "a1", "timestamp": "2026-03-02T10:00:10.000Z"},
        {"parentUuid": "a1", "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": "s-1",
         "version": "2.1.39", "gitBranch": "main", "type": "user",
         "message": {"role": "user", "content": "No, never paste " + KEYS["github_pat"] + " into chat"},
         "uuid": "u2", "timestamp": "2026-03-02T10:01:00.000Z"},
        {"type": "summary", "summary": "Rotated " + KEYS["aws"], "leafUuid": "a1"},
    ]
    (proj / "s-1.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    codex_dir = tmp_path / "codex" / "sessions" / "2026" / "03" / "02"
    codex_dir.mkdir(parents=True)
    env = [
        {"timestamp": "2026-03-02T11:00:00.000Z", "type": "session_meta", "payload": {"id": "c-1", "cwd": cwd}},
        {"timestamp": "2026-03-02T11:00:01.000Z", "type": "event_msg", "payload": {"type": "user_message", "message": text}},
        {"timestamp": "2026-03-02T11:00:09.000Z", "type": "event_msg",
         "payload": {"type": "agent_message", "message": "Set " + KEYS["anthropic"]}},
        {"timestamp": "2026-03-02T11:00:10.000Z", "type": "compacted", "payload": {"message": "Used " + KEYS["slack"]}},
    ]
    (codex_dir / "rollout-2026-03-02T11-00-00-c-1.jsonl").write_text("\n".join(json.dumps(r) for r in env) + "\n")

    r = harvest(project=Path(cwd), claude_home=tmp_path / "claude", codex_home=tmp_path / "codex",
                sources=["claude_code", "codex"], since=None, max_sessions=10)
    assert len(r.digests) == 2 and not r.errors
    assert r.digests[0].feedback and r.digests[0].feedback[0].kind == "correction"
    state = tmp_path / "state.json"
    record_harvest(state, cursor=r.cursor, session_ids=[d.session_id for d in r.digests])
    out = tmp_path / "digests.json"
    out.write_text(json.dumps(r.to_json()))
    for blob in (json.dumps(r.to_json()), out.read_text(), state.read_text()):
        for secret in SECRETS:
            assert secret not in blob, secret
    assert "Deploy with" in r.digests[0].prompts[0]  # the prose around the secrets survives
