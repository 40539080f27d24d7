"""Moved to `skillgrad.core.events` (the bottom layer); this re-export keeps old imports working for one
release (files being rewritten in this wave still use it). New code imports `skillgrad.core.events`."""

from skillgrad.core.events import EventLog, EventSink, ends_with_newline, null_sink, read_events, read_jsonl

__all__ = ["EventLog", "EventSink", "ends_with_newline", "null_sink", "read_events", "read_jsonl"]
