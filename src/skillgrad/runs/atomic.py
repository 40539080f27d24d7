"""Moved to `skillgrad.core.atomic` (the bottom layer); this re-export keeps old imports working for one
release (files being rewritten in this wave still use it). New code imports `skillgrad.core.atomic`."""

from skillgrad.core.atomic import (
    damaged,
    read_json,
    storage_error,
    write_bytes,
    write_json,
    write_text,
    writing,
)

__all__ = ["damaged", "read_json", "storage_error", "write_bytes", "write_json", "write_text", "writing"]
