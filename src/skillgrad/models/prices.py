"""Cost from a price table: USD per 1M input/output tokens, by provider and model name.

A model matches an entry by its exact name or the name plus a release-date suffix (`gpt-4o-2024-08-06`,
`claude-3-5-sonnet-20241022`, `gpt-3.5-turbo-0125`, `...@20240620`, `-latest`), never by prefix: `o1-pro`
is a different (dearer) model than `o1`, `gpt-5-pro` than `gpt-5`.

An unknown price is reported once (event `price_unknown`) and costs are None, never 0: a run
against an unpriced model must not claim to have been free. The exception is a GGUF served on loopback (a model
running on this machine, models/factory.price_name), which costs what the `local` entry says: nothing.
"""

from __future__ import annotations

import json
import re
import threading
from importlib import resources
from pathlib import Path
from typing import Any

from skillgrad.core.events import EventSink, null_sink
from skillgrad.errors import ConfigError
from skillgrad.models.base import Usage

# Providers billed from another provider's table (Azure OpenAI uses OpenAI's model names).
PRICE_ALIASES = {"azure": "openai"}
# A release-date or alias suffix that names the same model: -2024-08-06, -20241022, -0125, @20240620, -latest.
_DATED = re.compile(r"(?:[-@](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})|-latest)$")


def is_loopback_url(base_url: str) -> bool:
    """A server on this machine (`skillgrad serve-model`, llama_cpp.server on 127.0.0.1)."""
    import ipaddress
    from urllib.parse import urlparse

    host = (urlparse(base_url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def base_name(model: str) -> str:
    """The model name without a release-date suffix (`gpt-4o-2024-08-06` -> `gpt-4o`)."""
    return _DATED.sub("", model.lower())


def load_prices(path: str | Path | None = None) -> dict[str, Any]:
    """The packaged table, updated by the entries of `path` (model.prices_file) when given."""
    table = json.loads(resources.files("skillgrad.models").joinpath("prices.json").read_text("utf-8"))
    if path:
        try:
            override = json.loads(Path(path).read_text("utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise ConfigError(f"model.prices_file: cannot read {path}: {e}") from e
        if not isinstance(override, dict):
            raise ConfigError(f"model.prices_file: {path} must hold a JSON object {{provider: {{model: ...}}}}")
        for provider, models in override.items():
            if isinstance(models, dict):
                table.setdefault(provider, {}).update(models)
    return table


class Pricing:
    def __init__(self, table: dict[str, Any] | None = None, emit: EventSink = null_sink) -> None:
        self.table = table if table is not None else load_prices()
        self.emit = emit
        self._warned: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def lookup(self, provider: str, model: str) -> dict[str, float] | None:
        models = self.table.get(provider) or self.table.get(PRICE_ALIASES.get(provider, ""), {})
        if not isinstance(models, dict):
            return None
        by_name = {k.lower(): v for k, v in models.items()}
        name = model.lower()
        for candidate in (name, base_name(name)):
            if candidate in by_name:
                return by_name[candidate]  # type: ignore[no-any-return]
        return by_name.get("*")  # type: ignore[no-any-return]

    def cost(self, provider: str, model: str, usage: Usage) -> float | None:
        price = self.lookup(provider, model)
        if price is None:
            with self._lock:
                first = (provider, model) not in self._warned
                self._warned.add((provider, model))
            if first:
                self.emit("price_unknown", provider=provider, model=model,
                          hint="add it to a JSON file named by model.prices_file")
            return None
        return (usage.prompt_tokens * float(price.get("input", 0.0))
                + usage.completion_tokens * float(price.get("output", 0.0))) / 1_000_000

    def context_window(self, provider: str, model: str) -> int | None:
        """The model's context window in tokens from the same table ('context'), None when unknown."""
        entry = self.lookup(provider, model)
        value = entry.get("context") if entry else None
        return int(value) if value else None
