"""No harvested input crashes a parser: truncated lines, unknown record types, wrong JSON types, bad UTF-8,
huge lines. A parser may only raise OSError (an unreadable file), which harvest() reports."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillgrad.core.redact import redact_text
from skillgrad.sleep.harvest import HarvestSettings, claude_code, codex, harvest
from skillgrad.sleep.harvest.jsonl import iter_jsonl

FIX = Path(__file__).parent / "fixtures" / "sessions"
REAL_LINES = [
    line
    for p in sorted(FIX.rglob("*.jsonl"))
    for line in p.read_bytes().splitlines()
    if line.strip()
]
KEYS = ["type", "message", "role", "content", "payload", "text", "name", "input", "isSidechain", "isMeta",
        "isCompactSummary", "toolUseResult", "snapshot", "trackedFileBackups", "sessionId", "cwd", "gitBranch",
        "timestamp", "summary", "record_type", "id", "git", "arguments", "action", "command", "agentId", "uuid",
        "parentUuid", "attachment", "file_path", "skill"]
TYPES = ["user", "assistant", "system", "summary", "file-history-snapshot", "session_meta", "response_item",
         "event_msg", "turn_context", "compacted", "message", "function_call", "local_shell_call", "tool_use",
         "tool_result", "text", "thinking", "image", "user_message", "agent_message", "custom_tool_call",
         "queued_command", "state", "weird"]
scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.sampled_from(TYPES),
                   st.text(max_size=30))
json_value = st.recursive(
    scalar,
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(st.sampled_from(KEYS), kids, max_size=6)),
    max_leaves=25,
)


def mutate(line: bytes, cut: int, junk: bytes) -> bytes:
    return line[: cut % (len(line) + 1)] + junk


line_strategy = st.one_of(
    json_value.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(st.sampled_from(KEYS), json_value, max_size=8).map(lambda v: json.dumps(v).encode()),
    st.builds(mutate, st.sampled_from(REAL_LINES), st.integers(0, 5000), st.binary(max_size=8)),
    st.sampled_from(REAL_LINES),
    st.binary(max_size=60),
)

S = HarvestSettings(max_line_bytes=4096)


def write(tmp: Path, name: str, lines: list[bytes]) -> Path:
    p = tmp / name
    p.write_bytes(b"\n".join(lines))
    return p


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(line_strategy, max_size=25))
def test_parsers_never_crash(tmp_path: Path, lines: list[bytes]) -> None:
    p = write(tmp_path, "f.jsonl", lines)
    for parse in (claude_code.parse_session, codex.parse_session):
        d = parse(p, S)
        json.dumps(d.to_json())  # the digest is always serialisable
        assert d.skipped_records <= p.read_bytes().count(b"\n") + 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(line_strategy, max_size=10), name=st.sampled_from(["s.jsonl", "agent-x.jsonl"]))
def test_harvest_never_raises_on_file_content(tmp_path: Path, lines: list[bytes], name: str) -> None:
    proj = tmp_path / "claude" / "projects" / "-p"
    proj.mkdir(parents=True, exist_ok=True)
    write(proj, name, lines)
    day = tmp_path / "codex" / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True, exist_ok=True)
    write(day, "rollout-2026-01-01T00-00-00-x.jsonl", lines)
    r = harvest(project=None, claude_home=tmp_path / "claude", codex_home=tmp_path / "codex",
                sources=["claude_code", "codex"], since=None, max_sessions=5, settings=S)
    assert r.errors == []


def test_huge_line_is_skipped_without_reading_it_whole(tmp_path: Path) -> None:
    big = b'{"type":"user","message":{"role":"user","content":"' + b"x" * 200_000 + b'"}}'
    ok = b'{"type":"user","cwd":"/w","message":{"role":"user","content":"small prompt"},"timestamp":"2026-01-01T00:00:00Z"}'
    p = write(tmp_path, "s.jsonl", [big, ok, big])
    d = claude_code.parse_session(p, HarvestSettings(max_line_bytes=50_000))
    assert d.prompts == ["small prompt"] and d.skipped_records == 2
    assert list(iter_jsonl(p, max_line_bytes=50_000))[1] is not None


def test_long_prompts_are_cut(tmp_path: Path) -> None:
    text = "word " * 5000
    p = write(tmp_path, "s.jsonl", [json.dumps({"type": "user", "message": {"role": "user", "content": text}}).encode()])
    d = claude_code.parse_session(p, HarvestSettings(max_text_chars=1000))
    assert len(d.prompts[0]) < 1100 and d.prompts[0].endswith("[truncated]")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_redaction_is_total_and_idempotent(text: str) -> None:
    once = redact_text(text)
    assert redact_text(once) == once
