"""Read-only parsers of coding agents' session files; each yields SessionDigest objects."""

from skillgrad.sleep.harvest.digest import Feedback, SessionDigest, Turn

__all__ = ["Feedback", "SessionDigest", "Turn"]
