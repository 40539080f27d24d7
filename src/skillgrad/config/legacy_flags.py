"""SkillOpt's command-line flags (`--batch_size 8`, `--backend claude_chat`, ...) as `--cfg-options`.

SkillOpt's `scripts/train.py` takes about 150 flat flags; every flag whose name is a SkillOpt flat key
(see flat_keys) maps to that key, and a few have their own meaning (`--backend` fills roles the way
SkillOpt does, `--teacher_model` names the teacher's model). Flags are applied after `--cfg-options`,
as in SkillOpt. A flag that is also one of our own options (`--config`, `--out`, ...) is left alone.
"""

from __future__ import annotations

from skillgrad.config import flat_keys
from skillgrad.config.schema import Config

OVERRIDE = "--cfg-options"
# SkillOpt backends that --backend applies to the student only (the teacher stays openai_chat);
# every other backend fills both roles (SkillOpt's role mapping for --backend).
TARGET_ONLY_BACKENDS = frozenset({"claude_code_exec", "claude_code", "cursor_exec", "copilot_exec", "qwen_chat",
                                  "qwen", "minimax_chat", "minimax"})
# Flag -> structured keys it sets (in order); the value is the flag's argument.
SPECIAL: dict[str, tuple[str, ...]] = {
    "teacher_model": ("model.teacher.model",),
    "optimizer_model": ("model.teacher.model",),
    "student_model": ("model.student.model",),
    "target_model": ("model.student.model",),
    "teacher_backend": ("model.optimizer_backend",),
    "optimizer_backend": ("model.optimizer_backend",),
    "student_backend": ("model.target_backend",),
    "target_backend": ("model.target_backend",),
}
# Our own options on train / eval / estimate (the only commands translated): never rewritten.
OWN = frozenset({"config", "cfg_options", "out", "fresh", "quiet", "log_format", "skill", "split", "debug", "help",
                 "version", "json"})
_BOOL_WORDS = {"true", "false", "1", "0", "yes", "no"}


def _dotted(name: str) -> str | None:
    if name in SPECIAL or name == "backend":
        return name
    dotted = flat_keys.to_structured(name)
    if dotted is None and (name in flat_keys.SKILLOPT_ENV_KEYS or name in flat_keys.ENV_RENAMED
                           or name in flat_keys.ENV_TO_MODEL):
        dotted = f"env.{name}"
    return dotted


def _is_bool(dotted: str) -> bool:
    section, _, key = dotted.partition(".")
    info = Config.model_fields.get(section)
    fields = getattr(info.annotation, "model_fields", {}) if info is not None else {}
    return key in fields and fields[key].annotation is bool


def _expand(name: str, value: str) -> list[str]:
    if name == "backend":
        keys = ["model.backend", "model.target_backend"]
        if value.strip().lower() not in TARGET_ONLY_BACKENDS:
            keys.append("model.optimizer_backend")
        return [f"{k}={value}" for k in keys]
    if name in SPECIAL:
        return [f"{k}={value}" for k in SPECIAL[name]]
    return [f"{_dotted(name)}={value}"]


def translate(argv: list[str]) -> list[str]:
    """argv with SkillOpt legacy flags turned into trailing `--cfg-options key=value` entries."""
    kept: list[str] = []
    overrides: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("--") or arg == "--":
            kept.append(arg)
            i += 1
            continue
        raw, eq, inline = arg[2:].partition("=")
        name = raw.replace("-", "_")
        dotted = None if name in OWN else _dotted(name)
        if dotted is None:
            kept.append(arg)
            i += 1
            continue
        if eq:
            value, i = inline, i + 1
        elif dotted not in SPECIAL and dotted != "backend" and _is_bool(dotted):
            # store_true style: `--use_deep_reflect` alone means true; a following true/false is its value.
            nxt = argv[i + 1] if i + 1 < len(argv) else ""
            if nxt.lower() in _BOOL_WORDS:
                value, i = nxt, i + 2
            else:
                value, i = "true", i + 1
        elif i + 1 < len(argv):
            value, i = argv[i + 1], i + 2
        else:
            kept.append(arg)  # no value: let the command report the missing argument
            i += 1
            continue
        if dotted not in SPECIAL and dotted != "backend" and _is_bool(dotted):
            value = {"1": "true", "yes": "true", "0": "false", "no": "false"}.get(value.lower(), value)
        overrides += _expand(name, value)
    for item in overrides:
        kept += [OVERRIDE, item]
    return kept
