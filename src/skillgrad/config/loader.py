"""Load a Config from YAML files with `_base_` inheritance, SkillOpt compatibility and overrides.

Every layer (each file, each `--cfg-options` entry) is first normalised to the structured shape
(flat SkillOpt keys mapped, aliases resolved, retired keys dropped) and checked for unknown keys,
so an error names the file that holds the key. Layers are then deep-merged, child over base, and
validated once. Every user-fixable problem is a one-line ConfigError.
"""

from __future__ import annotations

import copy
import difflib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from skillgrad.config import flat_keys
from skillgrad.config.backends import Role, role_provider
from skillgrad.config.notices import ConfigWarning, RetiredKeyWarning, notify
from skillgrad.config.schema import Config
from skillgrad.errors import ConfigError

OVERRIDES_SOURCE = "--cfg-options"
PACKAGED_PREFIX = "skillgrad:"  # `_base_: skillgrad:_base_/default.yaml` names a packaged config
# A file's keys sized for the embedded SmolLM2-135M (a packaged config's reply caps): its value of each applies only
# while the key's role is a `local` model, unless a later layer (a child config, an -o) sets the key itself.
EMBEDDED_ONLY = "_embedded_only_"
SECTIONS = tuple(Config.model_fields)
_DOCS_HINT = "run `python -m skillgrad.config.docs` for the valid keys"
# SkillOpt configs name their seed skills inside SkillOpt's own source tree.
_SKILLOPT_SEED = re.compile(r"(^|/)skillopt/envs/[^/]+/skills/initial\.md$")


# --------------------------------------------------------------------------- public API


def load_config(
    path: str | Path | None, overrides: Sequence[str] = (), *, base_dir: str | Path | None = None
) -> Config:
    """Load `path` (None = defaults only), apply `overrides` (`a.b=c` or flat `edit_budget=3`)."""
    return load_config_with_info(path, overrides, base_dir=base_dir)[0]


def load_config_with_info(
    path: str | Path | None, overrides: Sequence[str] = (), *, base_dir: str | Path | None = None
) -> tuple[Config, dict[str, Any]]:
    """Like load_config, plus info = {files: [...], warnings: [...], overrides: [...]} for the run record."""
    state = _State()
    merged: dict[str, Any] = {}
    if path is not None:
        p = resolve_packaged(str(path)) if str(path).startswith(PACKAGED_PREFIX) else Path(path)
        if base_dir is not None and not p.is_absolute():
            p = Path(base_dir) / p
        merged = _load_file(p, state, stack=(), included_from=None)
    cfg = _finish(merged, overrides, state)
    info = {"files": list(state.files), "warnings": list(state.warnings), "overrides": list(overrides)}
    return cfg, info


def load_mapping_with_info(data: Mapping[str, Any], overrides: Sequence[str] = (), *,
                           base_dir: str | Path | None = None) -> tuple[Config, dict[str, Any]]:
    """Like load_config_with_info for a mapping in a config file's shape (the Python API's dict configs);
    its `_base_` entries are resolved from `base_dir` (default: the working directory)."""
    state = _State()
    anchor = Path(base_dir or Path.cwd()).resolve() / "<mapping>"
    merged = _with_bases(copy.deepcopy(dict(data)), anchor, "<mapping>", state, (), record_file=False)
    cfg = _finish(merged, overrides, state)
    return cfg, {"files": list(state.files), "warnings": list(state.warnings), "overrides": list(overrides)}


def config_from_mapping(data: dict[str, Any], overrides: Sequence[str] = (), *, source: str = "config.json") -> Config:
    """A Config from an already-loaded mapping (e.g. a run's saved config.json) plus overrides."""
    state = _State()
    merged = _normalise_layer(dict(data), source, state)
    _record_origin(merged, source, state)
    return _finish(merged, overrides, state)


def _finish(merged: dict[str, Any], overrides: Sequence[str], state: _State) -> Config:
    for text in overrides:
        key, value = parse_override(text)
        layer = _normalise_layer(_nest_override(key, value), OVERRIDES_SOURCE, state)
        _record_origin(layer, OVERRIDES_SOURCE, state)
        merged = _deep_merge(merged, layer)
    cfg = _validate(merged, state)
    if _drop_embedded_only(merged, cfg, state):
        cfg = _validate(merged, state)
    _warn_unsupported(cfg, state)
    cfg.env._config_dir = state.folder  # noqa: SLF001 - the loader is who knows it
    return cfg


def _validate(merged: dict[str, Any], state: _State) -> Config:
    try:
        return Config.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(_describe_validation_error(exc, state)) from None


def _warn_unsupported(cfg: Config, state: _State) -> None:
    """One line naming every SkillOpt `model.*` key set to a value that has no effect here."""
    fields = type(cfg.model).model_fields
    named = []
    for key in flat_keys.UNSUPPORTED_MODEL_KEYS:
        value = getattr(cfg.model, key)
        raw = value.get_secret_value() if hasattr(value, "get_secret_value") else value
        default = fields[key].default
        if value == default or (raw in (None, "", False, 0, "auto") and default is not True):
            continue
        named.append(f"model.{key}")
    if named:
        state.warn(f"ignored (no such backend or feature in skillgrad): {', '.join(named)}")


def dump_config(cfg: Config) -> dict[str, Any]:
    """JSON-able dict of `cfg` with every secret redacted (for config.json and reports)."""
    return cfg.redacted()


def packaged_config_path(name: str) -> Path:
    """Path of a config shipped in skillgrad/configs (e.g. `_base_/default.yaml`)."""
    return Path(str(resources.files("skillgrad.configs").joinpath(name)))


def packaged_configs() -> list[str]:
    """Every config shipped in skillgrad/configs as `skillgrad:NAME`: runnable ones, then `_base_/` layers."""
    root = Path(str(resources.files("skillgrad.configs")))
    names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.yaml"))
    return [PACKAGED_PREFIX + n for n in sorted(names, key=lambda n: (n.startswith("_"), n))]


def resolve_packaged(name: str) -> Path:
    """`skillgrad:demo.yaml` (the `skillgrad:` prefix is optional here) -> the shipped file, or ConfigError
    listing the ones there are."""
    bare = name.removeprefix(PACKAGED_PREFIX)
    path = packaged_config_path(bare)
    if ".." in Path(bare).parts or not path.is_file():
        raise ConfigError(f"no packaged config {PACKAGED_PREFIX}{bare}; packaged configs: "
                          f"{', '.join(packaged_configs())} (`skillgrad configs list`)")
    return path


def parse_override(text: str) -> tuple[str, Any]:
    """`a.b=c` -> ("a.b", cast(c)); the value may contain '='."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise ConfigError(f"--cfg-options expects key=value, got {text!r}")
    return key, cast_value(raw.strip(), key)


def cast_value(raw: str, key: str = "") -> Any:
    """Command-line value -> bool / None / int / float / JSON list or dict / quoted or plain str."""
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("null", "none", "~"):
        return None
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        number = float(raw)
        if math.isfinite(number):  # 'inf' / 'nan' stay strings
            return number
    except ValueError:
        pass
    if raw and raw[0] in "[{\"":
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"--cfg-options {key}: value {raw!r} is not valid JSON ({exc.msg}); quote strings as '\"...\"'"
            ) from None
    return raw


# --------------------------------------------------------------------------- files and layers


class _State:
    """What the load has seen: files in load order, compatibility warnings, who set each key."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self.warnings: list[str] = []
        self.origin: dict[tuple[str, ...], str] = {}
        self.folder: Path | None = None  # the named config file's folder (relative paths are looked for there)
        self.embedded_only: list[tuple[tuple[str, ...], str]] = []  # (key, the file that marked it)

    def warn(self, message: str, category: type[Warning] = ConfigWarning) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            notify(message, category, stacklevel=4)

    def record(self, message: str) -> None:
        """Kept in the run record's warnings (the dashboard, `skillgrad runs`), never printed: a note that is no
        fault of the input would add a line to every error the run then prints."""
        if message not in self.warnings:
            self.warnings.append(message)


def _show(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when under it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _load_file(path: Path, state: _State, stack: tuple[Path, ...], included_from: str | None) -> dict[str, Any]:
    path = path.resolve()
    if path in stack:
        cycle = " -> ".join(_show(p) for p in (*stack[stack.index(path):], path))
        raise ConfigError(f"cyclic _base_ inheritance: {cycle}; remove one of these _base_ entries")
    where = f" (from _base_ in {included_from})" if included_from else ""
    if not path.is_file():
        raise ConfigError(f"config file not found: {_show(path)}{where}")
    shown = _show(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{shown}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from None
    return _with_bases(_parse_yaml(text, shown), path, shown, state, stack)


def _with_bases(data: dict[str, Any], path: Path, shown: str, state: _State, stack: tuple[Path, ...],
                record_file: bool = True) -> dict[str, Any]:
    """One layer merged over its `_base_` files (resolved from `path`'s folder)."""
    bases = data.pop("_base_", None)
    marked = data.pop(EMBEDDED_ONLY, None)
    layer = _normalise_layer(data, shown, state)
    _mark_embedded_only(marked, layer, shown, state)
    if record_file:  # a file's relative paths are relative to its folder (a mapping's: to the working directory)
        _anchor_paths(layer, path)
        state.folder = state.folder or path.resolve().parent  # the named config's (the first file read)
    merged: dict[str, Any] = {}
    for base in _base_list(bases, shown):
        base_path = _resolve_base(base, path)
        merged = _deep_merge(merged, _load_file(base_path, state, (*stack, path), shown))
    if record_file and str(path) not in state.files:  # absolute: the run record must not depend on the cwd
        state.files.append(str(path))
    _record_origin(layer, shown, state)
    return _deep_merge(merged, layer)


def _embedded_role(path: tuple[str, ...]) -> Role | None:
    """Whose model a key is sized for: `model.<role>.*` its role's, `env.*` the student's (its reply caps)."""
    if len(path) == 3 and path[0] == "model" and path[1] in ("teacher", "student"):
        return "teacher" if path[1] == "teacher" else "student"
    return "student" if len(path) == 2 and path[0] == "env" else None


def _mark_embedded_only(marked: Any, layer: dict[str, Any], shown: str, state: _State) -> None:
    """Record the keys a file lists under `_embedded_only_` (dotted, each one the file itself sets)."""
    if marked is None:
        return
    keys = [marked] if isinstance(marked, str) else marked
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ConfigError(f"{EMBEDDED_ONLY} in {shown} must be a list of dotted keys, got {marked!r}")
    for key in keys:
        path = tuple(key.split("."))
        if _embedded_role(path) is None:
            raise ConfigError(f"{EMBEDDED_ONLY} in {shown}: {key!r} is no model.teacher.*, model.student.* or env.* "
                              "key; only a role's keys can be sized for the embedded model")
        node: Any = layer
        for part in path:
            node = node.get(part, _UNSET) if isinstance(node, dict) else _UNSET
        if node is _UNSET or isinstance(node, dict):
            raise ConfigError(f"{EMBEDDED_ONLY} in {shown} names {key}, which {shown} does not set; "
                              "list only keys the file sets")
        state.embedded_only.append((path, shown))


_UNSET = object()


def _drop_embedded_only(merged: dict[str, Any], cfg: Config, state: _State) -> bool:
    """Remove each `_embedded_only_` value whose role is not a `local` model (the key's default applies), unless a
    later layer set it; one line per file in the run record names what was not applied and how to keep it."""
    dropped: dict[str, list[str]] = {}
    for path, src in state.embedded_only:
        role = _embedded_role(path)
        if role is None or state.origin.get(path) != src:  # a child config or an -o set it: the user's own value
            continue
        try:
            provider = role_provider(cfg.model, role)
        except ConfigError:
            continue  # an unknown backend is reported where the model is built
        if provider == "local":
            continue
        parent = merged
        for part in path[:-1]:
            parent[part] = dict(parent[part])  # the layers' own dicts stay as they were read
            parent = parent[part]
        value = parent.pop(path[-1])  # there: the origin says the marking file set it and no later layer did
        key = ".".join(path)
        dropped.setdefault(src, []).append(f"{key}: {value} (the {role} is {provider}; keep it with -o {key}={value})")
    for src, parts in dropped.items():
        state.record(f"{_named(src)}: not applied, sized for the embedded model: {'; '.join(parts)}")
    return bool(dropped)


def _named(shown: str) -> str:
    """A packaged file as `skillgrad:NAME` (how the user named it), any other as shown."""
    root = Path(str(resources.files("skillgrad.configs"))).resolve()
    try:
        return PACKAGED_PREFIX + Path(shown).resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return shown


# Files and folders a config names for the run to read. A relative one is looked for in the config's folder,
# then the working directory (where configs written for SkillOpt, run from its repository root, expect them).
INPUT_PATHS = (("env", "tasks_file"), ("env", "skill_init"), ("env", "memory_file"), ("env", "data_path"),
               ("env", "split_dir"), ("prompts", "dir"), ("model", "prices_file"))


def _anchor_paths(layer: dict[str, Any], path: Path) -> None:
    """Each relative INPUT_PATHS value of a file's layer: replaced by the absolute path in the config's folder when
    that exists (and is not what the working directory holds under the same name); otherwise kept, so it is read
    from the working directory, and a file found in neither place is reported naming both (`missing_input`)."""
    folder = path.resolve().parent
    for section, key in INPUT_PATHS:
        value = (layer.get(section) or {}).get(key)
        if not isinstance(value, str) or not value.strip() or value.startswith(("~", PACKAGED_PREFIX)):
            continue
        if Path(value).is_absolute():
            continue
        beside, here = folder / value, Path.cwd() / value
        if beside.exists() and (not here.exists() or beside.resolve() != here.resolve()):
            layer[section][key] = str(beside)


def _base_list(bases: Any, shown: str) -> list[str]:
    if bases is None:
        return []
    if isinstance(bases, str):
        return [bases]
    if isinstance(bases, list) and all(isinstance(b, str) for b in bases):
        return list(bases)
    raise ConfigError(f"_base_ in {shown} must be a relative path or a list of them, got {bases!r}")


def _resolve_base(base: str, including: Path) -> Path:
    if base.startswith(PACKAGED_PREFIX):
        return resolve_packaged(base)
    return including.parent / base


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys (PyYAML silently keeps the last one)."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            mark = key_node.start_mark
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (keep one of them)", mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _parse_yaml(text: str, shown: str) -> dict[str, Any]:
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        pos = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        raise ConfigError(f"{shown}{pos}: invalid YAML: {problem}; fix the syntax there") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{shown}: invalid YAML: {' '.join(str(exc).split())}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{shown}: the top level must be a mapping of sections ({', '.join(SECTIONS)}), "
            f"got a {type(data).__name__}"
        )
    return {str(k): v for k, v in data.items()}


def _nest_override(key: str, value: Any) -> dict[str, Any]:
    parts = key.split(".")
    layer: dict[str, Any] = {parts[-1]: value}
    for part in reversed(parts[:-1]):
        layer = {part: layer}
    return layer


def _normalise_layer(data: dict[str, Any], src: str, state: _State) -> dict[str, Any]:
    """One layer in SkillOpt's flat, structured or mixed shape -> our structured shape, checked."""
    flat: dict[str, Any] = {}
    out: dict[str, dict[str, Any]] = {}
    for key, value in data.items():
        if key == "env" and not isinstance(value, dict) and value is not None:
            flat[key] = value  # SkillOpt's flat `env: <name>`
        elif key in flat_keys.SKILLOPT_SECTIONS_INERT:
            _skip_section(key, value, src, state)
        elif key in SECTIONS:
            if value is None:  # `train:` with nothing under it
                value = {}
            if not isinstance(value, dict):
                raise ConfigError(
                    f"section '{key}' in {src} must be a mapping of keys, got {value!r}; "
                    f"write it as '{key}:' with indented 'key: value' lines"
                )
            out[key] = {str(k): v for k, v in value.items()}
        else:
            flat[key] = value
    _resolve_aliases(flat, src, state, where="", tables=(flat_keys.ALIASES, flat_keys.FLAT_ALIASES))
    if "model" in out:
        _resolve_aliases(out["model"], src, state, where="model.", tables=(flat_keys.ALIASES,))
        for role in ("teacher", "student"):  # SkillOpt's README: `model.teacher: <model name>`
            if isinstance(out["model"].get(role), str):
                out["model"][role] = {"model": out["model"][role]}
    for key, value in flat.items():
        dotted = flat_keys.to_structured(key)
        if dotted is None and _is_env_key(key):
            dotted = f"env.{key}"  # SkillOpt passes unmapped flat keys to the environment
        if dotted is None:
            raise ConfigError(_unknown_top_level(key, src))
        section, name = dotted.split(".", 1)
        target = out.setdefault(section, {})
        if name in target:  # structured wins within one layer (SkillOpt's rule)
            state.warn(f"{src}: both '{key}' and '{dotted}' are set; using '{dotted}'")
            continue
        target[name] = value
    if "env" in out:
        _map_env_keys(out, src, state)
    _drop_compat_keys(out, src, state)
    _check_keys(out, Config, (), src)
    return out


def _is_env_key(key: str) -> bool:
    return key in flat_keys.SKILLOPT_ENV_KEYS or key in flat_keys.ENV_RENAMED or key in flat_keys.ENV_TO_MODEL


def _skip_section(key: str, value: Any, src: str, state: _State) -> None:
    """A SkillOpt section skillgrad has no counterpart for: silent at its inert values, else one warning."""
    inert = flat_keys.SKILLOPT_SECTIONS_INERT[key]
    if isinstance(value, dict) and all(value.get(k, v) == v for k, v in inert.items()):
        return
    state.warn(f"{src}: section '{key}' is SkillOpt-only and ignored here")


def _map_env_keys(out: dict[str, dict[str, Any]], src: str, state: _State) -> None:
    """SkillOpt env keys spelled differently here (`max_completion_tokens`) or living in `model`."""
    env = out["env"]
    seed = env.get("skill_init")
    if isinstance(seed, str) and _SKILLOPT_SEED.search(seed) and not Path(seed).expanduser().is_file():
        state.warn(f"{src}: env.skill_init {seed} is SkillOpt's packaged seed skill, not present here; "
                   "using this environment's own initial skill")
        env["skill_init"] = ""
    _resolve_aliases(env, src, state, "env.", ({new: (old,) for old, new in flat_keys.ENV_RENAMED.items()},))
    for old, dotted in flat_keys.ENV_TO_MODEL.items():
        if old not in env:
            continue
        value = env.pop(old)
        role, key = dotted.split(".")
        block = out.setdefault("model", {}).setdefault(role, {})
        if isinstance(block, dict) and key not in block:
            block[key] = value


def _resolve_aliases(mapping: dict[str, Any], src: str, state: _State, where: str,
                     tables: tuple[dict[str, tuple[str, ...]], ...]) -> None:
    for canonical, aliases in ((c, a) for table in tables for c, a in table.items()):
        for alias in aliases:
            if alias not in mapping:
                continue
            value = mapping.pop(alias)
            if canonical in mapping:
                state.warn(f"{src}: '{where}{alias}' ignored because '{where}{canonical}' is set")
            else:
                mapping[canonical] = value


def _drop_compat_keys(out: dict[str, dict[str, Any]], src: str, state: _State) -> None:
    for table, category, drop in (
        (flat_keys.RETIRED, RetiredKeyWarning, True),
        (flat_keys.IGNORED, ConfigWarning, True),
        (flat_keys.DEPRECATED_INERT, RetiredKeyWarning, False),
    ):
        for dotted, message in table.items():
            section, name = dotted.split(".", 1)
            values = out.get(section, {})
            if name not in values:
                continue
            # A dumped config carries these keys at their inert defaults: say nothing then.
            if values[name] not in (None, 0, False, ""):
                state.warn(f"{src}: {message}", category)
            if drop:
                del values[name]


def _record_origin(layer: dict[str, Any], src: str, state: _State, prefix: tuple[str, ...] = ()) -> None:
    for key, value in layer.items():
        path = (*prefix, key)
        if isinstance(value, dict) and value:
            _record_origin(value, src, state, path)
        else:  # leaves only: a section touched by a later layer must not claim its other keys
            state.origin[path] = src


def _deep_merge(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in child.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


# --------------------------------------------------------------------------- unknown keys


def _nested_model(model_cls: type[BaseModel], key: str) -> type[BaseModel] | None:
    ann = model_cls.model_fields[key].annotation
    return ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None


def _check_keys(data: dict[str, Any], model_cls: type[BaseModel], prefix: tuple[str, ...], src: str) -> None:
    if model_cls.model_config.get("extra") == "allow":
        return  # env options: validated later by the environment's own Options model
    for key, value in data.items():
        if key not in model_cls.model_fields:
            raise ConfigError(_unknown_nested(prefix, key, model_cls, src))
        sub = _nested_model(model_cls, key)
        if sub is not None and isinstance(value, dict):
            _check_keys(value, sub, (*prefix, key), src)


def _unknown_nested(prefix: tuple[str, ...], key: str, model_cls: type[BaseModel], src: str) -> str:
    dotted = ".".join((*prefix, key))
    base = f"unknown key '{dotted}' in {src}"
    section = prefix[0] if prefix else ""
    # A SkillOpt flat name written inside its own section (`optimizer: {edit_budget: 3}`).
    mapped = flat_keys.to_structured(key)
    if len(prefix) == 1 and mapped is not None and mapped.split(".", 1)[0] == section:
        return f"{base}; did you mean '{mapped}'?"
    candidates = list(model_cls.model_fields)
    if prefix == ("model",):  # SkillOpt's role-named spellings are valid here too (teacher_backend, ...)
        candidates += [alias for aliases in flat_keys.ALIASES.values() for alias in aliases]
    match = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
    if match:
        return f"{base}; did you mean '{'.'.join((*prefix, match[0]))}'?"
    return f"{base}; {_DOCS_HINT}"


def _unknown_top_level(key: str, src: str) -> str:
    base = f"unknown key '{key}' in {src}"
    candidates = [*SECTIONS, *flat_keys.FLAT_TO_STRUCTURED, *flat_keys.ALIAS_TO_CANONICAL]
    match = difflib.get_close_matches(key, candidates, n=1, cutoff=0.75)
    if match:
        suggestion = match[0]
        dotted = flat_keys.to_structured(suggestion)
        also = f" ({dotted})" if dotted and dotted.split(".")[-1] != suggestion else ""
        return f"{base}; did you mean '{suggestion}'{also}?"
    if "." not in key:
        return (f"{base}; top-level keys are sections ({', '.join(SECTIONS)}) or SkillOpt flat keys; "
                f"environment options go under env: (env.{key})")
    return f"{base}; {_DOCS_HINT}"


# --------------------------------------------------------------------------- validation errors


def _describe_validation_error(exc: ValidationError, state: _State) -> str:
    errors = exc.errors()
    first = errors[0]
    loc = tuple(str(p) for p in first["loc"])
    msg = str(first["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    if loc:
        dotted = ".".join(loc)
        src = _origin_of(loc, state)
        got = f" (got {first['input']!r})" if first["type"] != "missing" and "input" in first else ""
        return f"{dotted} in {src}: {msg}{got}{more}"
    # Cross-field rule (e.g. min_learning_rate > learning_rate): say where each key it names was set.
    named = dict.fromkeys(re.findall(rf"\b(?:{'|'.join(SECTIONS)})(?:\.\w+)+", msg))
    where = ", ".join(f"{key} from {_origin_of(key.split('.'), state)}" for key in named)
    return f"invalid config: {msg}" + (f" ({where})" if where else "") + more


def _origin_of(loc: Iterable[str], state: _State) -> str:
    path = tuple(loc)
    while path:
        if path in state.origin:
            return state.origin[path]
        path = path[:-1]
    return "the defaults"

