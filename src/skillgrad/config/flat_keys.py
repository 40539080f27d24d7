"""SkillOpt's flat key names and how they map onto the structured schema.

SkillOpt keeps three hand-maintained maps (flatten, legacy->structured, credentials) that drift apart.
Here the map is derived from the schema: every key of a SkillOpt-shaped section (`model`, `train`,
`gradient`, `optimizer`, `evaluation`, `env`) has a flat name equal to its own name, except the few
that SkillOpt renamed (`RENAMED`). Adding a field to the schema therefore adds its flat name too.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from skillgrad.config.schema import Config

# Sections whose keys SkillOpt also accepts at the top level of a (legacy) flat config.
SKILLOPT_SECTIONS = ("model", "train", "gradient", "optimizer", "evaluation", "env")

# Structured path -> SkillOpt's flat name, where the two differ.
RENAMED: dict[str, str] = {
    "model.backend": "model_backend",
    "model.optimizer": "optimizer_model",
    "model.target": "target_model",
    "optimizer.learning_rate": "edit_budget",
    "optimizer.min_learning_rate": "min_edit_budget",
    "optimizer.meta_learning_rate": "meta_edit_budget",
    "env.name": "env",
}

# Structured fields that have no flat name: nested role blocks and ours that only make sense nested.
NOT_FLAT = frozenset({"model.teacher", "model.student", "model.prices_file"})

# Legacy spellings, normalised within each layer (top level and inside `model:`); the canonical key
# wins when a layer has both. Codex aliases as in SkillOpt; `azure_*` fills `azure_openai_*`.
ALIASES: dict[str, tuple[str, ...]] = {
    # SkillOpt's README / v0.1.0 role names: teacher = optimizer, student = target.
    "optimizer_backend": ("teacher_backend",),
    "target_backend": ("student_backend",),
    "codex_trace_to_optimizer": ("codex_trace_to_teacher",),
    "codex_exec_path": ("codex_path", "codex_cli_bin", "codex_bin"),
    "codex_exec_sandbox": ("sandbox", "codex_sandbox"),
    "azure_openai_endpoint": ("azure_endpoint",),
    "azure_openai_api_version": ("azure_api_version",),
    "azure_openai_api_key": ("azure_api_key",),
}
# Flat (top-level / --cfg-options) spellings only: inside `model:`, `teacher` / `student` are role blocks.
FLAT_ALIASES: dict[str, tuple[str, ...]] = {
    "optimizer_model": ("teacher_model",),
    "target_model": ("student_model",),
}
ALIAS_TO_CANONICAL: dict[str, str] = {
    a: c for table in (ALIASES, FLAT_ALIASES) for c, aliases in table.items() for a in aliases
}

# SkillOpt `env.*` keys that every environment understands under another name here.
ENV_RENAMED: dict[str, str] = {
    "max_completion_tokens": "max_tokens",  # the student's completion cap per call
    "docs_dirs": "data_dirs",  # OfficeQA's older spelling
}
# SkillOpt `env.*` keys with a meaning outside the environment: env key -> (section, key, role).
# `max_api_workers` caps concurrent student API calls (SkillOpt's ALFWorld), i.e. the student's concurrency.
ENV_TO_MODEL: dict[str, str] = {"max_api_workers": "student.concurrency"}
# SkillOpt `env.*` keys an environment may lack here. An environment without the option drops the
# key with one warning naming it (never a refusal); any other unknown env key is still an error.
SKILLOPT_ENV_KEYS = frozenset({
    "max_turns", "max_tool_turns", "max_steps", "mode", "data_root", "data_dirs", "image_detail",
    "shuffle_choices", "use_theorem", "use_sketch", "use_eval_feedback", "search_mode", "search_api_url",
    "search_auth_env", "search_provider", "search_max_num_results", "search_timeout_seconds",
    "max_queries_per_turn", "use_local_tools", "max_tokens", "split_ratio", "evaluation_target_seed",
    "evaluation_target_temperature", "same_task_rollout_temperature",
})
# SkillOpt top-level sections with no counterpart: ignored with a warning unless at these inert values.
SKILLOPT_SECTIONS_INERT: dict[str, dict[str, object]] = {"human_feedback": {"enabled": False}}

# Keys SkillOpt retired: removed with a FutureWarning.
RETIRED: dict[str, str] = {
    "gradient.max_analyst_rounds": "gradient.max_analyst_rounds is retired (SkillOpt #213) and ignored; remove it",
}

# Keys accepted for compatibility whose configured value has no effect.
IGNORED: dict[str, str] = {
    "train.steps_per_epoch": "train.steps_per_epoch is derived from train_size and batch_size; "
    "the configured value is ignored",
}
# SkillOpt `model.*` keys for backends or features skillgrad lacks: a non-default value gets one warning
# per run naming them all. Keys that are honoured (codex_exec_*, claude_code_exec_*, azure_openai_*,
# *qwen_chat_thinking_mode, rewrite_reasoning_effort) are not listed.
UNSUPPORTED_MODEL_KEYS = (
    "codex_exec_use_sdk", "claude_code_exec_use_sdk", "claude_code_exec_profile",
    "cursor_exec_path", "cursor_exec_sandbox", "copilot_exec_path", "copilot_exec_home",
    "copilot_exec_allow_all_tools", "copilot_chat_optimizer_model", "copilot_chat_target_model",
    "copilot_chat_timeout", "minimax_region", "minimax_base_url", "minimax_api_key", "minimax_model",
    "minimax_temperature", "minimax_max_tokens", "minimax_enable_thinking", "optimizer_minimax_base_url",
    "optimizer_minimax_api_key", "target_minimax_base_url", "target_minimax_api_key",
    # SkillOpt's default (true) sends an exec agent's event trace to the analyst; skillgrad's teacher sees the
    # agent's reply only, so neither value changes anything (false is named, true is the silent default).
    "codex_trace_to_optimizer",
)
DEPRECATED_INERT: dict[str, str] = {
    "model.codex_exec_full_auto": "model.codex_exec_full_auto is deprecated and ignored (as in SkillOpt)",
}


def _build_maps() -> tuple[dict[str, str], dict[str, str]]:
    to_flat: dict[str, str] = {}
    for section in SKILLOPT_SECTIONS:
        model_cls: type[BaseModel] = Config.model_fields[section].annotation  # type: ignore[assignment]
        for key in model_cls.model_fields:
            dotted = f"{section}.{key}"
            if dotted in NOT_FLAT:
                continue
            to_flat[dotted] = RENAMED.get(dotted, key)
    to_structured: dict[str, str] = {}
    for dotted, flat in to_flat.items():
        if flat in to_structured:  # two sections sharing a field name would make flat keys ambiguous
            raise RuntimeError(f"flat key {flat!r} is ambiguous: {to_structured[flat]} and {dotted}")
        to_structured[flat] = dotted
    return to_flat, to_structured


STRUCTURED_TO_FLAT, FLAT_TO_STRUCTURED = _build_maps()


def to_structured(flat_key: str) -> str | None:
    """`edit_budget` -> `optimizer.learning_rate`; aliases resolve too; None when unknown."""
    return FLAT_TO_STRUCTURED.get(ALIAS_TO_CANONICAL.get(flat_key, flat_key))


def to_flat(dotted: str) -> str | None:
    """`optimizer.learning_rate` -> `edit_budget`; None when the key has no flat name."""
    return STRUCTURED_TO_FLAT.get(dotted)


def flatten(data: dict[str, Any]) -> dict[str, Any]:
    """A structured config dict as SkillOpt's flat dict (for interop and side-by-side diffs).

    Mapped keys get their flat names; other `env.*` keys pass through flat (as SkillOpt does);
    our own sections and role blocks are kept nested under their section names.
    """
    flat: dict[str, Any] = {}
    for section, values in data.items():
        if section not in SKILLOPT_SECTIONS or not isinstance(values, dict):
            flat[section] = values
            continue
        rest: dict[str, Any] = {}
        for key, value in values.items():
            name = STRUCTURED_TO_FLAT.get(f"{section}.{key}")
            if name is not None or section == "env":
                flat[name or key] = value
            else:
                rest[key] = value
        if rest:
            flat[section] = rest
    return flat
