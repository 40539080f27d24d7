"""Building the teacher and student LLMs from configuration.

`resolve_role` turns SkillOpt's flat `model.*` keys into a complete `RoleConfig`; `build_llm`
wraps a provider in the middleware chain; `build_models` makes both roles sharing one meter,
budget and cache, plus every model the environment uses itself (a rubric judge): an environment lists
them in `model_roles() -> {name: RoleConfig}` and receives them in `use_models({name: LLM})`, so no model
of a run escapes its meter, budget, cache and events.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgrad.config.backends import SKILLOPT_ROLE, Role, role_provider
from skillgrad.config.schema import Config, RoleConfig
from skillgrad.core.events import EventSink, null_sink
from skillgrad.errors import ConfigError
from skillgrad.models.base import LLM
from skillgrad.models.budget import Budget
from skillgrad.models.cache import LLMCache
from skillgrad.models.cancelled import CancelledBills
from skillgrad.models.client import Client, parse_step
from skillgrad.models.limits import Limits
from skillgrad.models.meter import Meter
from skillgrad.models.prices import Pricing, load_prices
from skillgrad.models.providers import load_provider_module
from skillgrad.models.retry import Retry
from skillgrad.models.spend_log import SpendLog
from skillgrad.models.threads import ThreadChoice, assign_threads
from skillgrad.models.tokens import request_tokens

SPEND_LOG = "spend.jsonl"

SKILLOPT_DEFAULT_MODELS = {"gpt-5.5", "gpt-5.4"}  # SkillOpt's defaults; meaningless for a local backend
# SkillOpt swaps its OpenAI default model for the backend's own default; '' = the provider's default here.
SKILLOPT_BACKEND_MODELS = {"qwen_chat": "Qwen/Qwen3.5-4B", "qwen": "Qwen/Qwen3.5-4B",
                           "openai_compatible": "gpt-4o-mini", "compat": "gpt-4o-mini"}
_OWN_DEFAULT_PROVIDERS = {"local", "anthropic", "codex", "claude_code", "handoff"}
_ENTRA_MODES = {"entra", "aad", "azure_ad", "managed_identity", "identity", "azure_cli", "cli"}


def _first(*values: Any) -> Any:
    for v in values:
        if v not in (None, ""):
            return v
    return values[-1] if values else None


def resolve_role(cfg: Config, role: Role) -> RoleConfig:
    """The role's block with provider, model and provider options filled from SkillOpt keys."""
    m = cfg.model
    rc = getattr(m, role).model_copy(deep=True)
    skillopt = SKILLOPT_ROLE[role]
    specific_backend = getattr(m, f"{skillopt}_backend")
    azure_endpoint = _first(rc.azure_endpoint, getattr(m, f"{skillopt}_azure_openai_endpoint"),
                            m.azure_openai_endpoint, os.environ.get("AZURE_OPENAI_ENDPOINT", ""))
    rc.provider = role_provider(m, role, azure_endpoint=azure_endpoint)  # type: ignore[assignment]
    skillopt_model = getattr(m, skillopt)
    backend_name = (specific_backend or m.backend).strip().lower()
    if not rc.model and skillopt_model:
        if skillopt_model not in SKILLOPT_DEFAULT_MODELS:
            rc.model = skillopt_model
        elif backend_name in SKILLOPT_BACKEND_MODELS and rc.provider == "openai":
            rc.model = SKILLOPT_BACKEND_MODELS[backend_name]
        elif rc.provider not in _OWN_DEFAULT_PROVIDERS:
            rc.model = skillopt_model
    if rc.provider == "claude_code" and not rc.reasoning_effort:
        rc.reasoning_effort = m.claude_code_exec_effort
    if not rc.reasoning_effort:
        rc.reasoning_effort = m.reasoning_effort
    if rc.provider == "azure":
        rc.azure_endpoint = azure_endpoint
        rc.api_version = _first(getattr(m, f"{skillopt}_azure_openai_api_version"), m.azure_openai_api_version,
                                rc.api_version)
        if rc.api_key is None:
            rc.api_key = _first(getattr(m, f"{skillopt}_azure_openai_api_key"), m.azure_openai_api_key, None)
        mode = _first(getattr(m, f"{skillopt}_azure_openai_auth_mode"), m.azure_openai_auth_mode, "")
        if mode:
            rc.auth_mode = "entra" if mode.lower() in _ENTRA_MODES else "key"
        rc.ad_scope = _first(rc.ad_scope, getattr(m, f"{skillopt}_azure_openai_ad_scope"), m.azure_openai_ad_scope, "")
        rc.managed_identity_client_id = _first(rc.managed_identity_client_id,
                                               getattr(m, f"{skillopt}_azure_openai_managed_identity_client_id"),
                                               m.azure_openai_managed_identity_client_id, "")
    elif rc.provider == "openai":
        mode = _first(rc.thinking_mode, getattr(m, f"{skillopt}_qwen_chat_thinking_mode"), m.qwen_chat_thinking_mode, "")
        rc.thinking_mode = mode if mode in ("enabled", "disabled", "server_default") else ""
        if mode in ("enabled", "disabled") and "chat_template_kwargs" not in rc.extra_body:
            rc.extra_body = {**rc.extra_body, "chat_template_kwargs": {"enable_thinking": mode == "enabled"}}
    elif rc.provider == "codex":
        rc.binary = rc.binary or m.codex_exec_path
        if m.codex_exec_sandbox:
            rc.sandbox = m.codex_exec_sandbox
        rc.profile = rc.profile or m.codex_exec_profile
        if m.codex_exec_reasoning_effort and not getattr(m, role).reasoning_effort:  # "none": codex chooses
            rc.reasoning_effort = "" if m.codex_exec_reasoning_effort == "none" else m.codex_exec_reasoning_effort
        rc.approval_policy = rc.approval_policy or m.codex_exec_approval_policy
        if rc.network_access is None and isinstance(m.codex_exec_network_access, bool):
            rc.network_access = m.codex_exec_network_access
        if rc.web_search is None and isinstance(m.codex_exec_web_search, bool):
            rc.web_search = m.codex_exec_web_search
    elif rc.provider == "claude_code":
        rc.binary = rc.binary or (m.claude_code_exec_path if m.claude_code_exec_path != "claude" else "")
        rc.profile = rc.profile or m.claude_code_exec_profile
        rc.max_thinking_tokens = rc.max_thinking_tokens or m.claude_code_exec_max_thinking_tokens
    return rc


def create_provider(role_cfg: RoleConfig, role: str) -> Any:
    if role_cfg.provider is None:
        raise ConfigError(f"model.{role}.provider is not set; call resolve_role first or set it")
    return load_provider_module(role_cfg.provider).create(role_cfg, role)


def price_name(pricing: Pricing, provider: Any) -> str:
    """The price table's provider for `provider`. A GGUF served on loopback (`skillgrad serve-model`'s bundled
    model, or `python -m llama_cpp.server --model x.gguf`, which names the model by its file) runs on this
    machine: priced as `local`, free. Any other name on loopback may be a proxy to a paid API and keeps the
    table's answer (unknown until model.prices_file prices it)."""
    name: str = provider.name
    if getattr(provider, "loopback", False) and pricing.lookup(name, provider.model) is None:
        from skillgrad.models.providers.local import BUNDLED_NAMES

        model = str(provider.model).strip().lower()
        if model in BUNDLED_NAMES or model.endswith(".gguf"):
            return "local"
    return name


def check_priced(pricing: Pricing, provider: Any, role: str) -> None:
    """budget.max_usd cannot hold for a model without a price (its calls would reserve $0): refuse at start.
    Local models are priced (free); agents that report their own spend (claude -p) count as priced."""
    if pricing.lookup(price_name(pricing, provider), provider.model) is None and \
            not getattr(provider, "reports_cost", False):
        raise ConfigError(f"budget.max_usd is set but the {role} model {provider.model or '(default)'!r} "
                          f"({provider.name}) has no price; add it to a JSON file named by model.prices_file "
                          "or remove budget.max_usd")


def build_llm(
    role_cfg: RoleConfig,
    role: str,
    *,
    cache: LLMCache | None = None,
    meter: Meter | None = None,
    budget: Budget | None = None,
    emit: EventSink = null_sink,
    retry_base_s: float = 1.0,
    make_provider: Callable[[RoleConfig, str], Any] = create_provider,
) -> Client:
    """A role's client: meter -> parse -> cache -> budget -> retry -> limits -> tap -> provider.
    `make_provider` replaces the configured backend (`skillgrad estimate` passes a counting one)."""
    provider = make_provider(role_cfg, role)
    meter = meter if meter is not None else Meter(emit=emit)
    if budget is not None and budget.limits.max_usd:
        check_priced(meter.pricing, provider, role)
    name, model, params = provider.name, provider.model, provider.params()
    # A local model serialises calls anyway; more concurrency would only queue in threads.
    concurrency = 1 if name == "local" else getattr(provider, "concurrency", role_cfg.concurrency)
    client = Client(provider=provider, handler=provider, role=role, role_cfg=role_cfg, meter=meter,
                    context_window=meter.pricing.context_window(name, model))
    priced_as = price_name(meter.pricing, provider)
    price = meter.pricing.lookup(priced_as, model)
    bills = None
    if getattr(provider, "bills_cancelled", False):  # an HTTP backend may bill a request we stopped waiting for
        def prompt_bill(req: Any) -> tuple[int, float | None]:
            tokens = request_tokens(req, client.count_tokens) - req.max_tokens
            return tokens, (None if price is None else tokens * float(price.get("input", 0.0)) / 1_000_000)

        bills = CancelledBills(prompt_bill)
    handler = meter.tap(provider if bills is None else bills.wrap(provider), provider=name, model=model,
                        price_as=priced_as)
    handler = Limits(concurrency=concurrency, rpm=role_cfg.rpm, tpm=role_cfg.tpm, emit=emit).wrap(handler)
    endpoint = getattr(provider, "endpoint", "") or f"{name}:{model}"
    handler = Retry(max_retries=role_cfg.max_retries, endpoint=endpoint, base_s=retry_base_s, emit=emit).wrap(handler)
    if budget is not None:
        def estimate(req: Any) -> tuple[int, float | None]:
            # Reserved before sending: the prompt by the role's token counter plus the reply cap.
            tokens, p = request_tokens(req, client.count_tokens), price or {}
            usd = (tokens - req.max_tokens) * float(p.get("input", 0.0)) + req.max_tokens * float(p.get("output", 0.0))
            return tokens, usd / 1_000_000

        handler = budget.wrap(handler, estimate, bills)
    if cache is not None:
        handler = cache.wrap(handler, provider=name, model=model, params=params)
    handler = parse_step(handler)
    client.handler = meter.wrap(handler, provider=name, model=model, params=params, bills=bills)
    return client


@dataclass
class Models:
    teacher: LLM
    student: LLM
    meter: Meter
    budget: Budget
    cache: LLMCache | None
    threads: ThreadChoice | None = None  # the embedded model's thread choice, when it was made here
    extra: dict[str, LLM] = field(default_factory=dict)  # the environment's own models (judge), same middleware

    async def aclose(self) -> None:
        for llm in (self.teacher, self.student, *self.extra.values()):
            close = getattr(llm, "aclose", None)
            if close is not None:
                await close()
        if self.cache is not None:
            self.cache.close()
        if self.meter.log is not None:
            self.meter.log.close()


def build_models(
    cfg: Config,
    *,
    cache_path: Path | None,
    emit: EventSink = null_sink,
    budget_snapshot: dict[str, Any] | None = None,
    meter_snapshot: dict[str, Any] | None = None,
    env: Any = None,
    make_provider: Callable[[RoleConfig, str], Any] = create_provider,
) -> Models:
    """Both roles and `env`'s own models, sharing one meter, budget and cache. `cfg.cache.path` wins over
    `cache_path`; `make_provider` as in `build_llm`."""
    pricing = Pricing(load_prices(cfg.model.prices_file or None), emit=emit)
    # The spend log lives beside the run's own cache file (not cfg.cache.path, which may be shared).
    log = SpendLog(cache_path.parent / SPEND_LOG) if cache_path is not None else None
    meter = Meter(pricing, emit=emit, log=log)
    budget = Budget(cfg.budget, emit=emit, log=log)
    if meter_snapshot is not None:
        meter.restore(meter_snapshot)
    if budget_snapshot is not None:
        budget.restore(budget_snapshot)
    path = cfg.cache.path or cache_path
    cache = LLMCache(path) if cfg.cache.enabled and path else None
    kwargs: dict[str, Any] = {"cache": cache, "meter": meter, "budget": budget, "emit": emit,
                              "make_provider": make_provider}
    env_roles = getattr(env, "model_roles", None)
    wanted = env_roles() if env_roles is not None else {}
    roles, threads = assign_threads({"teacher": resolve_role(cfg, "teacher"), "student": resolve_role(cfg, "student"),
                                     **wanted})
    teacher = build_llm(roles["teacher"], "teacher", **kwargs)
    student = build_llm(roles["student"], "student", **kwargs)
    built = {name: build_llm(roles[name], name, **kwargs) for name in wanted}
    # Handoff roles (and a handoff judge) share one board beside the run's cache: one round asks all of them.
    askers = [c.provider for c in (teacher, student, *built.values()) if hasattr(c.provider, "use_board")]
    if askers and path:
        from skillgrad.models.providers.handoff import Board

        # the scope: this run's own folder where a shared cache (a Sleep night's) puts several runs on one board
        board = Board(Path(path).parent / "handoff", scope=str(cache_path or ""))
        for provider in askers:
            provider.use_board(board)
    extra: dict[str, LLM] = dict(built)
    if extra:
        env.use_models(extra)
    return Models(teacher=teacher, student=student, meter=meter, budget=budget, cache=cache, threads=threads,
                  extra=extra)
