"""Assemble a SessionDigest from the normalised events each agent parser emits.

Parsers only translate their agent's records into calls on `DigestBuilder` (prompt, answer, tool, file, ...);
turn bookkeeping, feedback detection, truncation and secret redaction happen here, once, for every agent.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from skillgrad.core.redact import redact_text
from skillgrad.sleep.harvest.digest import Agent, Feedback, SessionDigest, Turn
from skillgrad.sleep.harvest.feedback import FeedbackPhrases, classify
from skillgrad.sleep.harvest.settings import HarvestSettings

# Tools whose input names the file they write.
EDIT_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
# A skill's SKILL.md (`.claude/skills/<name>/SKILL.md`, `.github/skills/<name>/SKILL.md`, a `file://` URI, ...):
# an agent that reads it is using that skill (every agent loads a skill's body by reading this file).
SKILL_FILE = re.compile(r"(?:^|[/\\])skills[/\\]([^/\\]+)[/\\]SKILL\.md$")


def skill_read(path: object) -> tuple[str, str] | None:
    """(skill name, path) when `path` is a skill's SKILL.md (a `file://` URI is read as its path)."""
    if not isinstance(path, str):
        return None
    p = path.strip()
    if p.startswith("file://"):
        from urllib.parse import unquote, urlparse

        p = unquote(urlparse(p).path)
    m = SKILL_FILE.search(p)
    return (m.group(1), p) if m else None


def parse_time(value: object) -> datetime | None:
    """An ISO-8601 string (or epoch seconds / milliseconds) as an aware UTC datetime; None when unreadable."""
    try:
        if isinstance(value, bool):
            return None
        if isinstance(value, int | float):
            secs = value / 1000 if value > 1e11 else value
            return datetime.fromtimestamp(secs, UTC)
        if isinstance(value, str) and value:
            dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).astimezone(UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def iso(dt: datetime | None) -> str:
    return dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z") if dt else ""


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit].rstrip() + " …[truncated]"


def _relative(path: str, cwd: str) -> str:
    """`path` relative to the session's cwd when it lies inside it (snapshots store relative paths, tools
    absolute ones; one spelling per file)."""
    root = cwd.rstrip("/\\")
    if root and len(path) > len(root) + 1 and path.startswith(root) and path[len(root)] in "/\\":
        return path[len(root) + 1:]
    return path


class DigestBuilder:
    def __init__(self, agent: Agent, session_id: str, source_path: str, settings: HarvestSettings) -> None:
        self.settings = settings
        self.phrases = FeedbackPhrases.from_settings(settings)
        self.d = SessionDigest(agent=agent, session_id=session_id, source_path=source_path)
        self._first: datetime | None = None
        self._last: datetime | None = None
        self._n_times = 0
        self._answer_key: str | None = None
        self._files: dict[str, None] = {}
        self._skills: dict[str, None] = {}
        self._skill_files: dict[str, str] = {}
        self._no_turn = False    # after a slash command with no request: what follows belongs to no user turn
        self.has_session_id = False
        self._holding = False    # after a background task's notice: replies are not the turn's answer
        self._expansion = False  # after a slash command with arguments: its expanded text is coming

    # ----- metadata
    def set_session_id(self, value: object) -> None:
        if isinstance(value, str) and value and not self.has_session_id:
            self.d.session_id, self.has_session_id = value, True

    def set_if_empty(self, attr: str, value: object) -> None:
        if isinstance(value, str) and value and not getattr(self.d, attr):
            setattr(self.d, attr, value)

    def seen_time(self, value: object) -> str:
        dt = parse_time(value)
        if dt is not None:
            self._n_times += 1
            self._first = dt if self._first is None or dt < self._first else self._first
            self._last = dt if self._last is None or dt > self._last else self._last
        return iso(dt)

    def bad_record(self) -> None:
        self.d.skipped_records += 1

    # ----- conversation
    @property
    def turn(self) -> Turn | None:
        return self.d.turns[-1] if self.d.turns else None

    def prompt(self, text: str, at: str = "") -> None:
        if text.strip():
            self.d.turns.append(Turn(prompt=text, at=at))
            self._answer_key = None
            self._holding = False
            self._no_turn = False

    def hold_answers(self) -> None:
        """Assistant text until the next prompt answers a notice (a background task finished), not the user."""
        self._holding = True

    def expect_expansion(self) -> None:
        self._expansion = True

    def take_expansion(self) -> bool:
        """True once when the user text just after a slash command is the command file's expansion."""
        was, self._expansion = self._expansion, False
        return was

    def assistant_spoke(self) -> None:
        self._expansion = False

    def answer(self, text: str, key: str | None = None) -> None:
        """Assistant text. Pieces with the same key (one message split over records) join; a new key replaces,
        so a turn's answer is its last assistant message."""
        t = self.turn
        if t is None or not text.strip() or (self._holding and t.answer) or self._no_turn:
            return  # a reply to a background notice or to a bare slash command is not the turn's answer
        if key is not None and key == self._answer_key and t.answer:
            t.answer = t.answer + "\n" + text.strip()
        else:
            t.answer = text.strip()
        self._answer_key = key

    def tool(self, name: object) -> None:
        if not isinstance(name, str) or not name:
            return
        self.d.tools_used[name] = self.d.tools_used.get(name, 0) + 1
        if self.turn is not None:
            self.turn.tools.append(name)

    def command_without_request(self) -> None:
        """A slash command typed alone (`/startup`): the skill it loads is not used by the previous turn."""
        self._no_turn = True

    def skill(self, name: object, path: object = None) -> None:
        """A skill the current turn used; `path` is its SKILL.md (or folder) when the session shows it."""
        if not isinstance(name, str) or not name.strip():
            return
        name = name.strip()
        self._skills[name] = None
        if isinstance(path, str) and path.strip():
            p = path.strip().rstrip("/\\")
            self._skill_files[name] = p if p.endswith("SKILL.md") else f"{p}/SKILL.md"
        if self.turn is not None and not self._no_turn and name not in self.turn.skills:
            self.turn.skills.append(name)

    def skill_read(self, path: object) -> None:
        """A file the agent read: a skill's SKILL.md means the turn used that skill."""
        found = skill_read(path)
        if found is not None:
            self.skill(*found)

    def skill_folder(self, folder: str) -> None:
        """`Base directory for this skill: <folder>`: the folder of the skill just launched (a `plugin:name`
        Skill call names the folder `name`), or a skill loaded by its slash command."""
        base = folder.strip().rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]
        if not base:
            return
        launched = [n for n in self._skills if n.rsplit(":", 1)[-1] == base]
        self.skill(launched[-1] if launched else base, folder)

    def named_file(self, path: object) -> None:
        """A file the user named in the current turn's request (an @-mention, an IDE's "Files mentioned")."""
        t = self.turn
        if t is not None and isinstance(path, str) and path.strip() and len(path) < 1024 \
                and path.strip() not in t.named_files:
            t.named_files.append(path.strip())

    def file(self, path: object) -> None:
        if isinstance(path, str) and path.strip() and len(path) < 1024:
            self._files[path.strip()] = None

    def summary(self, text: object) -> None:
        if isinstance(text, str) and text.strip():
            self.d.summaries.append(text)

    def interrupted(self) -> None:
        if self.turn is not None:
            self.turn.interrupted = True

    # ----- result
    def finish(self) -> SessionDigest:
        d, limit = self.d, self.settings.max_text_chars
        # one timestamp (a pre-envelope Codex header) dates the start only; the end stays unknown
        d.started_at, d.ended_at = iso(self._first), (iso(self._last) if self._n_times > 1 else "")
        for t in d.turns:
            t.prompt = _cut(redact_text(t.prompt), limit)
            t.answer = _cut(redact_text(t.answer), limit)
        d.summaries = [_cut(redact_text(s), limit) for s in d.summaries]
        d.files_touched = list(dict.fromkeys(redact_text(_relative(f, d.project)) for f in self._files))
        d.skills_used = list(self._skills)
        d.skill_files = {n: redact_text(p) for n, p in self._skill_files.items()}
        for t in d.turns:
            t.named_files = [redact_text(f) for f in t.named_files]
        d.branch = redact_text(d.branch)
        d.feedback = []
        for i, t in enumerate(d.turns[1:], start=1):
            kind = classify(t.prompt, self.phrases)
            if kind is not None:
                # the signal is about the previous turn's answer
                d.feedback.append(Feedback(kind=kind, text=_cut(t.prompt, 200), turn=i - 1))
        return d
