"""Error types shared by every layer.

Exit codes follow the CLI contract: 0 completed, 1 the run failed, 2 usage/configuration/data problems the
user can fix (also: the run is locked by another writer), 3 answers needed (handoff), 4 stopped by its
budget, 130 interrupted (Ctrl-C, SIGTERM). Messages are one line and name the file, field or option and the fix.
"""

from __future__ import annotations


class SkillgradError(Exception):
    exit_code = 1


class UsageError(SkillgradError):
    """Bad input the user can fix: config, options, data files, missing credentials."""

    exit_code = 2


class ConfigError(UsageError):
    pass


class DataError(UsageError):
    """An environment-level data problem (missing file, wrong field): raised before any model call."""


class DamagedFile(UsageError):
    """A file that cannot be read (truncated, not JSON, bad bytes): the message names it and the fix."""

    def __init__(self, message: str, *, path: str = "", why: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.why = why


class StorageError(UsageError):
    """The run folder cannot be written (read-only, disk full, a file where a folder belongs); what was
    saved before stays as it was."""


class DamageWarning(UserWarning):
    """Damage in a file that is only a cache, a log or derivable: skipped or moved aside, and the command goes on."""


class ProviderError(SkillgradError):
    """A provider call failed. `retryable` tells the retry middleware whether to try again."""

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class ProviderFatal(ProviderError):
    """Auth failure, bad request, missing agent binary: stops the run with the provider's message."""


class EndpointUnreachable(ProviderFatal):
    """No response from an endpoint after every retry: a setting (URL, server not running) the user can fix."""

    exit_code = 2


class AnswersNeeded(ProviderFatal):
    """Handoff mode: model calls are waiting for the user's agent to answer their prompt files (exit 3).
    Everything done so far is kept; rerunning the same command after answering continues from the cache."""

    exit_code = 3

    def __init__(self, message: str, *, handoff_dir: str = "", pending: list[str] | None = None) -> None:
        super().__init__(message, provider="handoff")
        self.handoff_dir = handoff_dir
        self.pending = list(pending or [])


class OrphanedAnswers(UserWarning):
    """Handoff answers on disk that no call of the run has used (their prompts changed): one line, not silence."""


class BudgetExceeded(SkillgradError):
    """A hard budget (usd, tokens, calls, minutes) is spent; the run stops at the next safe point."""

    def __init__(self, message: str, *, kind: str = "") -> None:
        super().__init__(message)
        self.kind = kind


class RunStopped(SkillgradError):
    """The run stopped at a safe point because a budget was spent (exit 4); `skillgrad resume` continues it."""

    exit_code = 4


class EnvironmentFailure(SkillgradError):
    """Most of a batch crashed inside the environment's own code (not the model's failure): the run stops
    with `status: failed` and continues from the same point with `skillgrad resume` once the env is fixed."""


class StructuredOutputError(SkillgradError):
    """A teacher reply could not be parsed into its schema; the raw text is kept for the step files."""

    def __init__(self, message: str, *, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw
