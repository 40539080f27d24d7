"""Harvest settings: everything a caller (the night, the CLI, sleep.yaml) may tune, passed in explicitly."""

from __future__ import annotations

from dataclasses import dataclass, field

# Sessions the skillgrad harness starts (replays of mined tasks through `claude -p` / `codex exec`) carry this
# marker in their first prompt, so a later harvest never learns from skillgrad's own replays. Defined once here;
# the replay side imports it.
REPLAY_MARKER = "<!-- skillgrad:replay -->"


@dataclass(frozen=True)
class HarvestSettings:
    # Extra English (or any language) phrases appended to the built-in feedback lists, matched case-insensitively.
    positive_phrases: tuple[str, ...] = ()
    negative_phrases: tuple[str, ...] = ()
    correction_phrases: tuple[str, ...] = ()
    # A session shorter than this (first to last timestamp) is a headless replay or a mistake, not work.
    min_session_seconds: float = 3.0
    # Prompts and answers longer than this are cut (pasted logs); the digest is evidence, not an archive.
    max_text_chars: int = 6000
    # Lines longer than this are skipped unread (base64 images, giant tool outputs).
    max_line_bytes: int = 32 * 1024 * 1024
    # Extra markers that identify sessions started by a tool rather than a person.
    replay_markers: tuple[str, ...] = field(default=(REPLAY_MARKER,))
