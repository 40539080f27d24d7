"""The config fingerprint: which run a config describes (default run directory names, `train` on an
existing run directory, evaluation cache keys).

Only the values that differ from the schema's defaults are hashed, so a release that adds a field (at a
default that keeps the old behaviour) leaves every run's fingerprint as it was; hashing the whole dump
changed every fingerprint with every new field, and rerunning `train` on an old run said "different
config". Left out, because they do not change what a run computes: budgets (raise one and rerun to
continue), where the run and its cache are written, where rollouts run (local or Ray), and secrets (masked
in config.json, so a key set in the file and one taken from the environment are the same run).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from skillgrad.config.schema import Config
from skillgrad.core.redact import REDACTED

IGNORED: tuple[tuple[str, ...], ...] = (("budget",), ("env", "out_root"), ("cache", "path"), ("exec",))
_SAME = object()


def _changed(value: Any, default: Any) -> Any:
    """`value` less what equals `default` (through nested mappings); `_SAME` when nothing differs."""
    if value == REDACTED:
        return _SAME
    if isinstance(value, dict) and isinstance(default, dict) and default.keys() <= value.keys():
        out = {}
        for key, v in value.items():
            d = _changed(v, default[key]) if key in default else v
            if d is not _SAME:
                out[key] = d
        return out or _SAME
    return _SAME if value == default else value


def fingerprint_values(cfg: Config) -> dict[str, Any]:
    """The settings that make this run this run: non-default values, less the IGNORED keys."""
    values, defaults = cfg.redacted(), Config().redacted()
    for path in IGNORED:
        *parents, last = path
        for d in (values, defaults):
            for key in parents:
                d = d.get(key, {})
            d.pop(last, None)
    out = _changed(values, defaults)
    return {} if out is _SAME else dict(out)


def config_fingerprint(cfg: Config) -> str:
    text = json.dumps(fingerprint_values(cfg), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:10]
