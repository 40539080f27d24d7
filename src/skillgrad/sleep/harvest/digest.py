"""The session digest: what every agent-specific parser turns one session file into.

This is the contract between `harvest/` (Claude Code, Codex, ...) and the miner. Text fields are already
secret-redacted when a digest is built; nothing un-redacted is stored or sent to a model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Agent = Literal["claude_code", "codex", "vscode_copilot", "copilot_cli", "opencode", "gemini_cli", "cursor"]
FeedbackKind = Literal["positive", "negative", "correction"]


@dataclass
class Feedback:
    kind: FeedbackKind
    text: str          # the user's words that carry the signal (redacted, trimmed)
    turn: int          # index into Turn list


@dataclass
class Turn:
    prompt: str                                         # the user's prompt for this turn
    answer: str = ""                                    # the assistant's final text reply for the turn
    tools: list[str] = field(default_factory=list)      # tool names called during the turn, in order
    at: str = ""                                        # ISO-8601 UTC time of the prompt, when known
    interrupted: bool = False                           # the user stopped the agent during this turn
    skills: list[str] = field(default_factory=list)     # skills the turn used (Skill tool, a SKILL.md read)
    named_files: list[str] = field(default_factory=list)  # files the user named (@path, IDE "Files mentioned")


@dataclass
class SessionDigest:
    agent: Agent
    session_id: str
    source_path: str                                    # the file it was read from
    project: str = ""                                   # working directory (cwd) of the session
    branch: str = ""                                    # git branch when known
    model: str = ""
    started_at: str = ""                                # ISO-8601 UTC
    ended_at: str = ""
    turns: list[Turn] = field(default_factory=list)
    tools_used: dict[str, int] = field(default_factory=dict)
    skills_used: list[str] = field(default_factory=list)
    skill_files: dict[str, str] = field(default_factory=dict)  # skill name -> its SKILL.md, when the session shows it
    files_touched: list[str] = field(default_factory=list)
    feedback: list[Feedback] = field(default_factory=list)
    n_subagent_sessions: int = 0
    summaries: list[str] = field(default_factory=list)  # compaction / summary records
    skipped_records: int = 0                            # lines that could not be read (never fatal)
    version: str = ""                                   # the agent's CLI version that wrote the file
    project_hash: str = ""                              # Gemini CLI names its project only by this hash

    @property
    def prompts(self) -> list[str]:
        return [t.prompt for t in self.turns]

    @property
    def final_answers(self) -> list[str]:
        return [t.answer for t in self.turns]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SessionDigest:
        d = dict(d)
        d["turns"] = [Turn(**t) for t in d.get("turns", [])]
        d["feedback"] = [Feedback(**f) for f in d.get("feedback", [])]
        return cls(**d)
