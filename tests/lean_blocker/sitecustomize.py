"""Loaded by Python at start-up when this folder is on PYTHONPATH (tests/test_lean_install.py, test_cli_demo.py).

Refuses the top-level modules named in SKILLGRAD_BLOCK_IMPORTS (comma-separated) as if they were not installed,
and appends each refused name to SKILLGRAD_BLOCK_LOG, so a test can tell "the demo works without ray" from
"the demo never even tried to import ray".
"""

import os
import sys

_BLOCKED = {name for name in os.environ.get("SKILLGRAD_BLOCK_IMPORTS", "").split(",") if name}
_LOG = os.environ.get("SKILLGRAD_BLOCK_LOG", "")


class _Refuse:
    def find_spec(self, name, path=None, target=None):
        top = name.split(".", 1)[0]
        if top not in _BLOCKED:
            return None
        if _LOG:
            with open(_LOG, "a", encoding="utf-8") as f:
                f.write(name + "\n")
        raise ModuleNotFoundError(f"No module named {name!r} (blocked: not part of a lean install)", name=name)


if _BLOCKED:
    sys.meta_path.insert(0, _Refuse())
