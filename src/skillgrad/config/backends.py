"""Backend names (SkillOpt's and ours) -> the provider a role's calls go to.

Here, below the models layer, because the loader needs a role's provider too: a packaged config's limits sized
for the embedded model apply only while that role is the embedded model (loader `_embedded_only_`).
"""

from __future__ import annotations

import difflib
from typing import Literal

from skillgrad.config.schema import ModelSection
from skillgrad.errors import ConfigError

Role = Literal["teacher", "student"]
SKILLOPT_ROLE: dict[str, str] = {"teacher": "optimizer", "student": "target"}  # SkillOpt's names of the roles

BACKEND_ALIASES: dict[str, str] = {
    "local": "local", "embedded": "local", "llama_cpp": "local", "llamacpp": "local", "llama.cpp": "local",
    "openai": "openai", "openai_compatible": "openai", "compat": "openai", "qwen_chat": "openai",
    "azure": "azure", "azure_openai": "azure",
    "anthropic": "anthropic", "claude": "anthropic", "claude_chat": "anthropic",
    "codex": "codex", "codex_exec": "codex",
    "claude_code": "claude_code", "claude_code_exec": "claude_code",
    "handoff": "handoff",
}
OPENAI_CHAT = "openai_chat"  # SkillOpt: Azure when an Azure endpoint is configured, else OpenAI


def map_backend(name: str, *, field: str, azure_endpoint: str = "") -> str:
    key = name.strip().lower()
    if key == OPENAI_CHAT:
        return "azure" if azure_endpoint else "openai"
    if key in BACKEND_ALIASES:
        return BACKEND_ALIASES[key]
    choices = sorted(set(BACKEND_ALIASES) | {OPENAI_CHAT})
    close = difflib.get_close_matches(key, choices, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise ConfigError(f"{field}: unknown backend {name!r}; {hint}use one of {', '.join(choices)}")


def role_provider(model: ModelSection, role: Role, *, azure_endpoint: str = "") -> str:
    """The provider of `role`: its block's `provider`, else SkillOpt's `model.{optimizer,target}_backend`, else
    `model.backend`."""
    provider = getattr(model, role).provider
    if provider is not None:
        return str(provider)
    specific = getattr(model, f"{SKILLOPT_ROLE[role]}_backend")
    field = f"model.{SKILLOPT_ROLE[role]}_backend" if specific else "model.backend"
    return map_backend(specific or model.backend, field=field, azure_endpoint=azure_endpoint)
