"""Compatibility notices: one line each, printed once per run by the CLI.

The loader and the environment registry announce accepted-but-changed input (an alias, an ignored
SkillOpt key, a retired key) as Python warnings of these classes, so library callers can filter or
record them; the CLI shows each distinct message once as `warning: <message>` without a source line.
"""

from __future__ import annotations

import warnings


class ConfigWarning(UserWarning):
    """A key was accepted but does not do what its name says here (ignored, aliased, overridden)."""


class RetiredKeyWarning(FutureWarning):
    """A key SkillOpt retired: removed from the configuration."""


def notify(message: str, category: type[Warning] = ConfigWarning, *, stacklevel: int = 3) -> None:
    warnings.warn(message, category, stacklevel=stacklevel)
