"""Finding and building environments.

Environments register through the `skillgrad.envs` entry-point group (the builtins in skillgrad's own
pyproject, third-party packages in theirs). `env.name` may also be an import path
"package.module:ClassName" for an environment that is on PYTHONPATH but not installed (scaffolds).
An unknown name gets a did-you-mean; an environment whose own imports fail is reported with that
import error rather than as "unknown environment".
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from pydantic import ValidationError

from skillgrad.config.flat_keys import SKILLOPT_ENV_KEYS
from skillgrad.config.notices import notify
from skillgrad.config.schema import EnvSection
from skillgrad.envs.base import Environment
from skillgrad.errors import ConfigError

GROUP = "skillgrad.envs"
# Used only when the package metadata is missing (running from a source tree that was never installed).
_BUILTIN_FALLBACK = {
    "facts": "skillgrad.envs.facts:FactsEnv",
    "fewshot-format": "skillgrad.envs.fewshot_format:FewshotFormatEnv",
    # added after the shared editable install was made: found here until the metadata is rebuilt
    "skill-folder": "skillgrad.envs.skillfolder:SkillFolderEnv",
    "pyfunc": "skillgrad.envs.pyfunc:PyFuncEnv",
}
_ALIASES = {"livemath": "livemathematicianbench"}


@dataclass
class EnvInfo:
    name: str
    scorer: str
    data_status: str
    origin: str  # "builtin", "<distribution> <version>", or "import path"


def _entry_points() -> dict[str, EntryPoint]:
    found = {ep.name: ep for ep in entry_points(group=GROUP)}
    for name, target in _BUILTIN_FALLBACK.items():
        found.setdefault(name, EntryPoint(name=name, value=target, group=GROUP))
    return found


def registered_names() -> list[str]:
    return sorted(_entry_points())


def _canonical(name: str) -> str:
    key = name.strip().lower().replace("_", "-")
    return _ALIASES.get(key, key)


def _import_target(target: str, label: str, *, registered: bool = False) -> Any:
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"env.name {label!r}: an import path must look like 'package.module:ClassName'")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        missing = e.name or ""
        if module_name == missing or module_name.startswith(missing + "."):
            if registered:
                raise ConfigError(f"environment {label!r} is registered as {target!r}, "
                                  f"but module {module_name!r} is not installed") from e
            raise ConfigError(
                f"env.name {label!r}: module {module_name!r} not found (is its directory on PYTHONPATH?)"
            ) from e
        raise ConfigError(
            f"environment {label!r} could not be imported: {e} (install the package that provides {missing!r})"
        ) from e
    except ImportError as e:
        raise ConfigError(f"environment {label!r} could not be imported: {e}") from e
    try:
        return getattr(module, attr)
    except AttributeError as e:
        raise ConfigError(f"env.name {label!r}: module {module_name!r} has no attribute {attr!r}") from e


def env_class(name: str) -> Any:
    """The environment class for a registered name or a "package.module:ClassName" path."""
    if not name:
        raise ConfigError(f"env.name is empty; choose one of: {', '.join(registered_names())}")
    if ":" in name:
        return _import_target(name, name)
    eps = _entry_points()
    key = _canonical(name)
    if key not in eps:
        close = difflib.get_close_matches(key, list(eps), n=3, cutoff=0.5)
        hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
        raise ConfigError(f"unknown environment env.name={name!r}; {hint}registered: {', '.join(sorted(eps))}")
    return _import_target(eps[key].value, key, registered=True)


def _options_error(name: str, cls: Any, err: ValidationError) -> ConfigError:
    fields = sorted(cls.Options.model_fields)
    for e in err.errors():
        key = ".".join(str(p) for p in e["loc"])
        if e["type"] == "extra_forbidden":
            close = difflib.get_close_matches(key, fields, n=1)
            hint = f"did you mean env.{close[0]}? " if close else ""
            valid = ", ".join(fields) if fields else "(none)"
            return ConfigError(f"unknown option env.{key} for environment {name}; {hint}valid options: {valid}")
    e = err.errors()[0]
    key = ".".join(str(p) for p in e["loc"])
    return ConfigError(f"env.{key} for environment {name}: {e['msg']} (got {e.get('input')!r})")


def build_options(name: str, cls: Any, options: dict[str, Any]) -> Any:
    try:
        return cls.Options(**options)
    except ValidationError as err:
        raise _options_error(name, cls, err) from None


def skillopt_options(name: str, cls: Any, options: dict[str, Any]) -> dict[str, Any]:
    """Drop SkillOpt env keys this environment has no option for, with one warning naming them."""
    fields = getattr(cls, "Options", None)
    known = set(fields.model_fields) if fields is not None else set()
    dropped = sorted(k for k in options if k not in known and k in SKILLOPT_ENV_KEYS)
    if dropped:
        notify(f"environment {name} has no option {', '.join('env.' + k for k in dropped)}; ignored "
               "(SkillOpt key with no meaning here)")
    return {k: v for k, v in options.items() if k not in dropped}


def create_env(env_cfg: EnvSection) -> Environment:
    cls = env_class(env_cfg.name)
    options = build_options(env_cfg.name, cls, skillopt_options(env_cfg.name, cls, env_cfg.options()))
    env: Environment = cls(env_cfg, options)
    return env


def _origin(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "builtin"
    dist_name = dist.metadata["Name"] if dist.metadata else ""
    if dist_name == "skillgrad":
        return "builtin"
    return f"{dist_name} {dist.version}"


def list_envs() -> list[EnvInfo]:
    """One row per registered environment, for `skillgrad envs list`; never raises for one bad env."""
    rows = []
    for name, ep in sorted(_entry_points().items()):
        origin = _origin(ep)
        try:
            cls = _import_target(ep.value, name, registered=True)
        except ConfigError as e:
            rows.append(EnvInfo(name, "?", f"unavailable: {e}", origin))
            continue
        scorer = str(getattr(cls, "scorer", "?"))
        try:
            env = cls(EnvSection.model_validate({"name": name}), cls.Options())
            status = env.data_status()
        except Exception as e:  # noqa: BLE001 - a listing shows the problem instead of failing
            status = f"error: {type(e).__name__}: {e}"
        rows.append(EnvInfo(name, scorer, status, origin))
    return rows
