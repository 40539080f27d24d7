"""`azure`: Azure OpenAI as a configuration of the one OpenAI-family provider (providers/openai.py).

This module only reads the role's Azure settings into an `AzureTarget`: the endpoint (`azure_endpoint` or
AZURE_OPENAI_ENDPOINT), the deployment (`deployment`, else `model`), `api_version`, and `auth_mode` key
(`api_key`, `api_key_env` or AZURE_OPENAI_API_KEY) or entra (azure-identity). Only AZURE_OPENAI_* variables
are read for Azure, never OPENAI_*. Requests, structured output, retries and errors are openai.py's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from skillgrad.config.schema import RoleConfig
from skillgrad.errors import UsageError
from skillgrad.models.providers.openai import AzureTarget, OpenAIProvider

KEY_ENV = "AZURE_OPENAI_API_KEY"
ENDPOINT_ENV = "AZURE_OPENAI_ENDPOINT"
ENTRA_SCOPE = "https://cognitiveservices.azure.com/.default"


def create(role_cfg: RoleConfig, role: str = "", *, environ: Mapping[str, str] | None = None) -> OpenAIProvider:
    environ = os.environ if environ is None else environ
    return OpenAIProvider(role_cfg, role, environ=environ, azure=azure_target(role_cfg, role, environ))


def azure_target(rc: RoleConfig, role: str, environ: Mapping[str, str]) -> AzureTarget:
    where = f"model.{role or 'teacher'}"
    deployment = rc.deployment or rc.model
    if not deployment:
        raise UsageError(f"azure: no deployment; set {where}.deployment (or {where}.model) to the deployment name")
    if rc.api != "chat":
        raise UsageError(f"azure: {where}.api {rc.api!r} is not supported here; use api: chat")
    endpoint = rc.azure_endpoint or environ.get(ENDPOINT_ENV, "")
    if not endpoint:
        raise UsageError(f"azure: no endpoint; set {where}.azure_endpoint or {ENDPOINT_ENV}")
    target = AzureTarget(endpoint=endpoint, deployment=deployment, api_version=rc.api_version, auth_mode=rc.auth_mode)
    if rc.auth_mode == "entra":
        credential, token_provider = _entra_token_provider(rc.ad_scope, rc.managed_identity_client_id)
        return replace(target, token_provider=token_provider, credential=credential)
    var = rc.api_key_env or KEY_ENV
    key = rc.api_key.get_secret_value() if rc.api_key is not None else ""
    key = key or environ.get(var, "")
    if not key:
        raise UsageError(f"azure: no API key; set {var} (or {where}.api_key_env), or use {where}.auth_mode: entra")
    return replace(target, key=key, key_env=var)


def _entra_token_provider(scope: str = "", managed_identity_client_id: str = "") -> tuple[Any, Any]:
    try:
        from azure.identity import DefaultAzureCredential, get_bearer_token_provider
    except ImportError as exc:  # optional extra
        raise UsageError(
            "auth_mode 'entra' needs azure-identity; run `pip install skillgrad[azure]` (or use auth_mode: key)"
        ) from exc
    # A user-assigned managed identity is named by its client id (SkillOpt's managed_identity_client_id).
    kwargs = {"managed_identity_client_id": managed_identity_client_id} if managed_identity_client_id else {}
    credential = DefaultAzureCredential(**kwargs)
    return credential, get_bearer_token_provider(credential, scope or ENTRA_SCOPE)
