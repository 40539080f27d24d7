"""skillgrad: train skills (markdown instructions) for frozen LLM agents.

    import skillgrad
    run = skillgrad.train("skillgrad:demo.yaml", overrides={"train.num_epochs": 1}, progress=True)
    print(run.summary.test_hard, run.best_skill)

The API (skillgrad/api.py) is imported on first use, so `import skillgrad` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

_API = {"train": "skillgrad.api", "evaluate": "skillgrad.api", "load_run": "skillgrad.api",
        "load_config": "skillgrad.api", "LoadedConfig": "skillgrad.api", "Run": "skillgrad.runs.results",
        "Summary": "skillgrad.runs.results", "Step": "skillgrad.runs.results",
        "Evaluation": "skillgrad.runs.results", "SplitScore": "skillgrad.runs.results"}

__all__ = ["__version__", *_API]  # noqa: F822 - provided by __getattr__


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # ~30 ms: only when asked

    try:
        return version("skillgrad")
    except PackageNotFoundError:  # running from a source tree without install
        return "0.0.0+src"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'skillgrad' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
