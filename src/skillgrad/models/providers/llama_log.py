"""llama.cpp's own log lines go to Python logging at debug level, never straight to the user's terminal.

llama-cpp-python's callback prints every ERROR-level line to stderr even with verbose=False, and llama.cpp
logs an expected event at that level: a generation stopped by the abort callback (a cancelled call, a spent
budget) reports "decode: removing memory module entries ...", which then became the last line a user saw
instead of skillgrad's own "stopped: ..." line. Failures that matter reach us as exceptions or return codes.
"""

from __future__ import annotations

import ctypes
import logging
from typing import Any

log = logging.getLogger("skillgrad.llama_cpp")

_CALLBACK: Any = None  # kept referenced: llama.cpp holds only the C function pointer


def route_llama_logs() -> None:
    """Install the callback (once per process; after `llama_cpp.llama` is imported, whose import installs the
    library's printing callback)."""
    global _CALLBACK
    if _CALLBACK is not None:
        return
    import llama_cpp

    def _to_logging(_level: int, text: bytes, _user_data: Any) -> None:
        try:
            line = text.decode("utf-8", "replace").rstrip()
            if line:
                log.debug("%s", line)
        except Exception:  # noqa: BLE001 - an exception must not cross into C
            pass

    _CALLBACK = llama_cpp.llama_log_callback(_to_logging)
    llama_cpp.llama_log_set(_CALLBACK, ctypes.c_void_p(0))
