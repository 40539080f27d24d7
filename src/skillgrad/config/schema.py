"""The configuration schema: SkillOpt's sections and key names, with ours beside them.

Sections `model`, `train`, `gradient`, `optimizer`, `evaluation`, `env` carry SkillOpt's keys
(configs/_base_/default.yaml) with the same meaning; `budget`, `compat`, `prompts`, `cache`, `run`
are ours. Unknown keys are errors (the loader adds a did-you-mean), except that `env.*` may carry
environment-specific options validated by that environment's `Options` model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, field_validator, model_validator

Provider = Literal["local", "openai", "azure", "anthropic", "codex", "claude_code", "handoff"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class RoleConfig(_Strict):
    """One role's model: the teacher (SkillOpt: optimizer) or the student (SkillOpt: target)."""

    # Set by `assign_threads` when it chose n_threads (the user left 0): the local model may then follow
    # the machine's load during the run. Private, so it is in no dump, fingerprint or cache key.
    _threads_auto: bool = PrivateAttr(default=False)

    provider: Provider | None = Field(None, description="Backend; None = derived from model.backend.")
    model: str = Field("", description="Model name, or a .gguf path for `local`; '' = provider default.")
    base_url: str = Field("", description="OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server).")
    api_key: SecretStr | None = Field(None, description="Prefer api_key_env; redacted everywhere.")
    api_key_env: str = Field("", description="Environment variable holding the key ('' = provider standard).")
    api: Literal["chat", "responses"] = Field("chat", description="OpenAI API flavour.")
    temperature: float | None = Field(None, description="Sampling temperature; None = role default.")
    reasoning_effort: str = Field("", description="Reasoning effort for reasoning models ('' = not sent).")
    max_tokens: int = Field(0, description="Completion token cap; 0 = stage default.")
    concurrency: int = Field(4, ge=1, description="Concurrent requests for this role.")
    rpm: int = Field(0, ge=0, description="Requests per minute limit (0 = none).")
    tpm: int = Field(0, ge=0, description="Tokens per minute limit (0 = none).")
    timeout_s: float = Field(120.0, gt=0, description="Per-request timeout.")
    max_retries: int = Field(4, ge=0, description="Retries for retryable errors (429, 5xx, timeouts).")
    n_ctx: int = Field(4096, ge=512, description="Context window for `local` (and prompt budgeting).")
    n_threads: int = Field(0, ge=0, description="`local` threads; 0 = one per free core (affinity, "
                           "cgroup quota and load; shared by local models loaded side by side), at least 1.")
    repeat_penalty: float = Field(1.1, description="`local` repeat penalty (the tiny model loops).")
    azure_endpoint: str = Field("", description="Azure OpenAI endpoint (or AZURE_OPENAI_ENDPOINT).")
    api_version: str = Field("2024-12-01-preview", description="Azure OpenAI API version.")
    auth_mode: Literal["key", "entra"] = Field("key", description="Azure auth: API key or Entra ID.")
    deployment: str = Field("", description="Azure deployment name ('' = model).")
    extra_body: dict[str, Any] = Field(default_factory=dict, description="Extra request fields.")
    structured_output: Literal["auto", "json_schema", "json_object_schema", "tools", "prompt"] = Field(
        "auto", description="How schemas are enforced: native json_schema, llama.cpp-style json_object+schema, "
        "Anthropic tools, or prompt + tolerant parsing. auto = best for the provider/endpoint.")
    vision: bool | None = Field(None, description="Whether the model accepts images (None = provider default).")
    binary: str = Field("", description="Agent CLI path for codex / claude_code ('' = on PATH).")
    sandbox: str = Field("read-only", description="codex sandbox mode.")
    profile: str = Field("", description="codex profile.")
    exec_timeout_s: float = Field(600.0, gt=0, description="Agent harness wall-clock limit per task.")
    approval_policy: str = Field("", description="codex approval policy ('' = codex default; SkillOpt: never).")
    network_access: bool | None = Field(None, description="codex workspace-write network access (None = default).")
    web_search: bool | None = Field(None, description="codex web search tool (None = codex default).")
    max_thinking_tokens: int = Field(0, ge=0, description="claude_code thinking-token cap (0 = CLI default).")
    thinking_mode: Literal["", "server_default", "enabled", "disabled"] = Field(
        "", description="Qwen-style servers: chat_template_kwargs.enable_thinking ('' / server_default = omit).")
    ad_scope: str = Field("", description="Azure Entra token scope ('' = cognitiveservices default).")
    managed_identity_client_id: str = Field("", description="Azure user-assigned managed identity client id.")


def _role_from_string(value: Any) -> Any:
    """SkillOpt's README writes `model.teacher: <model name>`; here that is the role block's model."""
    return {"model": value} if isinstance(value, str) else value


class ModelSection(_Strict):
    """SkillOpt's `model` keys plus `teacher` / `student` role blocks (which win when set).

    `teacher` / `student` also take a plain model name (SkillOpt's README form).
    """

    backend: str = Field("local", description="Default backend for both roles (SkillOpt names accepted).")
    optimizer: str = Field("", description="Teacher model (SkillOpt name).")
    target: str = Field("", description="Student model (SkillOpt name).")
    optimizer_backend: str = Field("", description="Teacher backend (SkillOpt name).")
    target_backend: str = Field("", description="Student backend (SkillOpt name).")
    reasoning_effort: str = Field("", description="Both roles unless set per role.")
    rewrite_reasoning_effort: str = ""
    rewrite_max_completion_tokens: int = 64000
    teacher: RoleConfig = Field(default_factory=RoleConfig)
    student: RoleConfig = Field(default_factory=RoleConfig)

    @field_validator("teacher", "student", mode="before")
    @classmethod
    def _role_name(cls, v: Any) -> Any:
        return _role_from_string(v)

    @field_validator("codex_exec_reasoning_effort", mode="before")
    @classmethod
    def _effort_none(cls, v: Any) -> Any:
        return "none" if v is None else v  # `-o ...=none` reads as null; SkillOpt's "none" = not sent
    prices_file: str = Field("", description="JSON price table overriding the packaged one.")
    # SkillOpt keys accepted for compatibility (mapped where meaningful, otherwise inert).
    codex_exec_path: str = ""
    codex_exec_sandbox: str = ""
    codex_exec_profile: str = ""
    codex_exec_reasoning_effort: str = ""
    codex_exec_approval_policy: str = ""
    codex_exec_use_sdk: Any = None
    codex_exec_network_access: Any = None
    codex_exec_web_search: Any = None
    codex_exec_full_auto: Any = None
    codex_trace_to_optimizer: bool = True
    claude_code_exec_path: str = "claude"
    claude_code_exec_profile: str = ""
    claude_code_exec_use_sdk: Any = "auto"
    claude_code_exec_effort: str = "medium"
    claude_code_exec_max_thinking_tokens: int = 16384
    cursor_exec_path: str = ""
    cursor_exec_sandbox: str = ""
    copilot_exec_path: str = ""
    copilot_exec_home: str = ""
    copilot_exec_allow_all_tools: Any = None
    copilot_chat_optimizer_model: str = ""
    copilot_chat_target_model: str = ""
    copilot_chat_timeout: Any = None
    azure_openai_endpoint: str = ""
    azure_openai_api_version: str = "2024-12-01-preview"
    azure_openai_api_key: SecretStr | None = None
    azure_openai_auth_mode: str = ""
    azure_openai_ad_scope: str = "https://cognitiveservices.azure.com/.default"
    azure_openai_managed_identity_client_id: str = ""
    optimizer_azure_openai_endpoint: str = ""
    optimizer_azure_openai_api_version: str = ""
    optimizer_azure_openai_api_key: SecretStr | None = None
    optimizer_azure_openai_auth_mode: str = ""
    optimizer_azure_openai_ad_scope: str = ""
    optimizer_azure_openai_managed_identity_client_id: str = ""
    target_azure_openai_endpoint: str = ""
    target_azure_openai_api_version: str = ""
    target_azure_openai_api_key: SecretStr | None = None
    target_azure_openai_auth_mode: str = ""
    target_azure_openai_ad_scope: str = ""
    target_azure_openai_managed_identity_client_id: str = ""
    qwen_chat_thinking_mode: str = ""
    optimizer_qwen_chat_thinking_mode: str = ""
    target_qwen_chat_thinking_mode: str = ""
    minimax_region: str = ""
    minimax_base_url: str = ""
    minimax_api_key: SecretStr | None = None
    minimax_model: str = "MiniMax-M3"
    minimax_temperature: Any = "0.7"
    minimax_max_tokens: Any = "8000"
    minimax_enable_thinking: Any = "false"
    optimizer_minimax_base_url: str = ""
    optimizer_minimax_api_key: SecretStr | None = None
    target_minimax_base_url: str = ""
    target_minimax_api_key: SecretStr | None = None


class TrainSection(_Strict):
    num_epochs: int = Field(4, ge=1)
    train_size: int = Field(0, ge=0, description="0 = derive from the train split.")
    batch_size: int = Field(40, ge=1)
    accumulation: int = Field(1, ge=1)
    seed: int = 42
    steps_per_epoch: int = Field(0, description="Derived; a configured value is overwritten.")
    stop_at_ceiling: bool = Field(True, description="ours: stop training once the best skill scores 1.0 on every "
                                  "selection item (no candidate can pass the strict gate; validation only).")
    tiebreak: bool = Field(True, description="ours: a step's candidate that ties the incumbent on validation is run "
                           "on the step's training tasks and accepted when it passes more of them; the run then "
                           "stops at the ceiling only once the best skill passes every training task it was "
                           "measured on (examples' own tasks left out).")


class GradientSection(_Strict):
    minibatch_size: int = Field(8, ge=1, description="Trajectories per analyst call.")
    merge_batch_size: int = Field(8, description="Patches per merge call; must be >= 2.")
    analyst_workers: int = Field(16, ge=1, description="Concurrent analyst calls.")
    failure_only: bool = False
    merge_mode: Literal["llm", "concat"] = Field(
        "llm", description="ours: 'concat' merges deterministically (dedup) with no teacher call."
    )
    max_analyst_rounds: Any = Field(None, description="Retired in SkillOpt (#213); ignored with a warning.")
    max_edit_chars: int = Field(600, ge=20, description="ours: longest edit content a teacher may propose.")
    max_prompt_tokens: int = Field(0, ge=0, description="ours: teacher prompt budget (0 = context window - reply).")
    use_deep_reflect: bool = Field(False, description="Probe selected trajectories with extra turns before "
                                   "the patch is written (SkillOpt's deep reflect).")
    deep_reflect_failures: int = Field(4, ge=0, description="Failed trajectories probed per step by deep reflect.")
    deep_reflect_successes: int = Field(2, ge=0, description="Successful trajectories probed per step by deep reflect.")

    @field_validator("merge_batch_size")
    @classmethod
    def _merge_min(cls, v: int) -> int:
        if v < 2:
            raise ValueError("gradient.merge_batch_size must be >= 2 (a merge combines at least two patches)")
        return v


class OptimizerSection(_Strict):
    learning_rate: int = Field(4, ge=0, description="Edit budget (max edits applied per step).")
    min_learning_rate: int = Field(2, ge=0)
    lr_scheduler: Literal["constant", "linear", "cosine", "autonomous"] = "cosine"
    lr_control_mode: str = Field("fixed", description="fixed | autonomous | none (SkillOpt aliases accepted).")
    skill_update_mode: str = Field("patch", description="patch | rewrite_from_suggestions | full_rewrite_minibatch.")
    use_slow_update: bool = True
    slow_update_samples: int = Field(20, ge=1)
    slow_update_gate_with_selection: bool = False
    longitudinal_pair_policy: Literal["mixed", "changed", "unchanged"] = "mixed"
    use_meta_skill: bool = True
    use_meta_reflect: bool = Field(False, description="At epoch end the teacher proposes higher-level edits over "
                                   "the epoch's accepted and rejected steps; gated like any candidate.")
    use_skill_aware_reflection: bool = False
    skill_aware_appendix_source: Literal["both", "failure_only"] = "both"
    skill_aware_consolidate_threshold: int = Field(0, ge=0)
    meta_learning_rate: Any = Field(None, description="SkillOpt flat-map key; unused.")
    lenient_anchors: bool = Field(False, description="ours: a missing insert_after anchor appends (SkillOpt).")
    buffer_scope: Literal["run", "epoch"] = Field("run", description="ours: step buffer kept for the run.")
    example_shortcuts: bool = Field(True, description="ours: for a student the probe measured to follow worked examples "
                                    "and ignore stated rules: no analyst calls when verified examples fill the edit "
                                    "budget, and no epoch-end slow-update rule block.")
    analysts: bool = Field(True, description="ours: false = the analysts are never asked; a step's edits are its "
                           "verified worked examples only (the demonstrations-only ablation).")
    demonstrations: int = Field(2, ge=0, description="ours: worked examples proposed per step from each source "
                                "(passing rollouts; failures the teacher corrects), each verified by the "
                                "environment's scorer before it can enter a candidate; 0 = off.")
    max_example_chars: int = Field(1200, ge=20, description="ours: longest worked example (task + reply).")
    student_probe: Literal["auto", "off"] = Field("auto", description="ours: at run start, a few student calls "
                                                  "learn whether it follows stated rules or worked examples; "
                                                  "that steers which edits come first. off = examples first.")
    start_from: Literal["initial", "fewshot"] = Field("fewshot", description="ours: fewshot = the zero-call "
                                                      "few-shot baseline (engine/baselines.py) is the step-0 "
                                                      "candidate through the gate, so the run never ends below it "
                                                      "on validation; initial = steps start from the skill as given.")
    reference_list: bool = Field(True, description="ours: after an accepted few-shot start, a candidate that also "
                                 "lists its verified examples as `- question → reply` lines in the skill's text, "
                                 "judged on validation by the gate (engine/example_search.py).")
    example_search: int = Field(0, ge=0, description="ours: after the few-shot start, this many candidates that "
                                "re-select and reorder its verified examples (DSPy's BootstrapFewShotWithRandomSearch), "
                                "each judged on validation by the gate; 0 = off (engine/example_search.py).")

    @field_validator("lr_control_mode")
    @classmethod
    def _lr_mode(cls, v: str) -> str:
        aliases = {"fixed": "fixed", "manual": "fixed", "scheduler": "fixed", "scheduled": "fixed",
                   "autonomous": "autonomous", "auto": "autonomous", "optimizer": "autonomous",
                   "none": "none", "off": "none", "no_lr": "none"}
        if v not in aliases:
            raise ValueError(f"unknown lr_control_mode {v!r}; use fixed, autonomous or none")
        return aliases[v]

    @field_validator("skill_update_mode")
    @classmethod
    def _mode(cls, v: str) -> str:
        aliases = {"patch": "patch", "edits": "patch",
                   "rewrite_from_suggestions": "rewrite_from_suggestions", "rewrite": "rewrite_from_suggestions",
                   "suggestions": "rewrite_from_suggestions", "rewrite_suggestions": "rewrite_from_suggestions",
                   "full_rewrite_minibatch": "full_rewrite_minibatch", "full_rewrite": "full_rewrite_minibatch",
                   "minibatch_full_rewrite": "full_rewrite_minibatch",
                   "skill_rewrite_minibatch": "full_rewrite_minibatch"}
        if v not in aliases:
            raise ValueError(
                f"unknown skill_update_mode {v!r}; use patch, rewrite_from_suggestions or full_rewrite_minibatch"
            )
        return aliases[v]


DEFAULT_LEADING_WORDS = ["MUST", "ALWAYS", "NEVER", "ONLY", "CRITICAL", "IMPORTANT", "RESOLVE", "PREFER",
                         "ENSURE", "STRICT", "VERIFY"]


class EvaluationSection(_Strict):
    use_gate: bool = True
    sel_env_num: int = Field(0, ge=0, description="Validation items used by the gate (0 = all).")
    test_env_num: int = Field(0, ge=0, description="Test items scored at run end (0 = all).")
    eval_test: bool = True
    min_val_items: int = Field(3, ge=1, description="ours: fewest validation items a run starts with (a gate "
                               "cannot decide on fewer); below it the run is refused before any model call.")
    gate_metric: Literal["hard", "soft", "mixed"] = "hard"
    gate_mixed_weight: float = Field(0.5, ge=0.0, le=1.0)
    use_semantic_density: bool = False
    semantic_density_weight: float = 0.05
    leading_words: list[str] = Field(default_factory=lambda: list(DEFAULT_LEADING_WORDS))
    eval_temperature: float = Field(0.0, ge=0.0, description="ours: student temperature for gate and test.")
    train_temperature: float = Field(0.0, ge=0.0, description="ours: student temperature for train rollouts.")
    gate_test: Literal["strict", "paired_bootstrap", "mcnemar"] = Field(
        "strict", description="ours: rule on per-item selection scores after the strict check (strict = SkillOpt's).")
    gate_alpha: float = Field(0.05, gt=0.0, lt=1.0, description="ours: significance level of gate_test.")
    gate_min_delta: float = Field(0.0, ge=0.0, description="ours: the mean per-item gain must exceed this.")
    gate_no_regression: bool = Field(False, description="ours: reject a candidate that fails any item the "
                                     "incumbent passed.")
    gate_early_stop: bool = Field(True, description="ours: stop scoring a candidate on the selection split once "
                                  "the items scored cap its score where it can no longer pass (the verdict is "
                                  "the full gate's; the step record says how many items were scored).")
    incumbent_reeval: bool = Field(False, description="ours: before a candidate replaces the incumbent, score "
                                   "both on the validation items outside the selection slice and gate on all.")
    edit_credit: bool = Field(False, description="ours: after an accepted step and at run end, drop every edit "
                              "whose removal does not lower the selection score (leave-one-out, sequential; "
                              "one selection evaluation per edit).")
    edit_credit_max_units: int = Field(12, ge=0, description="ours: most edit units tested per credit pass "
                                       "(in document order; the rest are kept untested); 0 = no limit.")
    sealed_test: bool = Field(True, description="ours: test items cannot be read before the run-end test stage.")
    fewshot_baseline: bool = Field(True, description="ours: at run end the held-out test also scores a zero-call few-shot "
                            "skill (verified training examples appended to the initial skill); summary.json states "
                            "the gain over the best baseline.")
    fewshot_k: int = Field(0, ge=0, description="ours: worked examples in the few-shot baseline; 0 = from the "
                           "student probe (32 for a student that follows examples, 16 otherwise).")
    allow_checker_text: bool = Field(False, description="ours: let an edit that copies a checker's text (a regex, a "
                                     "check's description, a rubric, a gold answer) or the teacher prompt's own "
                                     "example into the skill through; off = refused (status refused_checker_text).")


class EnvSection(BaseModel):
    """Common environment keys; other keys are that environment's options (validated by it)."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    name: str = Field("", description="Environment name (see `skillgrad envs list`).")
    skill_init: str = Field("", description="Initial skill file; '' = the environment's initial.md.")
    split_mode: Literal["ratio", "split_dir"] = "ratio"
    split_seed: int = 42
    split_ratio: str = "2:1:7"
    split_dir: str = ""
    data_path: str = ""
    split_output_dir: str = ""
    exec_timeout: float = Field(120, gt=0, description="Per-task limit in seconds on the task's own work (time "
                                "queued for a model is not counted); a task over it is tried once more, then counted "
                                "as an error, outside the means.")
    out_root: str = Field("", description="Run directory ('' = runs/<config file stem, else env name>-<config fingerprint>, so rerunning "
                          "a command continues its run).")
    limit: int = Field(0, ge=0, description="Truncate every split to this many items (0 = all).")
    workers: int = Field(4, ge=1, description="Concurrent task rollouts.")
    max_trajectory_tokens: int = Field(1500, ge=100, description="Trim trajectories shown to the teacher.")

    # The folder of the config file it was loaded from (not part of the config: a private attribute), named by
    # `missing_input` when a relative path is in neither that folder nor the working directory.
    _config_dir: Path | None = PrivateAttr(None)

    def __eq__(self, other: object) -> bool:  # where it was loaded from is not part of what it says
        if not isinstance(other, EnvSection):
            return NotImplemented
        return (type(self) is type(other) and self.__dict__ == other.__dict__
                and self.__pydantic_extra__ == other.__pydantic_extra__)

    __hash__ = None  # type: ignore[assignment]

    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    def missing_input(self, key: str, value: str) -> str:
        """One line for an input file or folder that is not there, naming every place it was looked for."""
        path = Path(value).expanduser()
        if path.is_absolute():
            return f"{key}: {value} not found"
        here = Path.cwd() / path
        if self._config_dir is None or (self._config_dir / path).resolve() == here.resolve():
            return f"{key}: {value} not found in the working directory ({here})"
        return (f"{key}: {value} not found in the config's folder ({self._config_dir / path}) nor the working "
                f"directory ({here})")


class BudgetSection(_Strict):
    max_usd: float = Field(0.0, ge=0, description="Stop at this spend (0 = no limit).")
    max_tokens: int = Field(0, ge=0, description="Stop at this many tokens, all roles (0 = no limit).")
    max_calls: int = Field(0, ge=0, description="Stop at this many provider calls (0 = no limit).")
    max_minutes: float = Field(0.0, ge=0, description="Stop after this much wall time (0 = no limit).")


class CompatSection(_Strict):
    skillopt_analyst_budget: bool = Field(False, description="Analysts get the unscheduled max LR (SkillOpt).")


class PromptsSection(_Strict):
    dir: str = Field("", description="Directory of user prompt overrides (<stage>.md), searched first.")
    use_env_prompts: bool = Field(False, description="ours: also search the environment's family prompts "
                                  "(envs/<name>/prompts/family/), which dictate the edit for one task family; "
                                  "off = the generic prompts and the optimizer's own demonstrations.")


class CacheSection(_Strict):
    enabled: bool = True
    path: str = Field("", description="SQLite cache file ('' = <run dir>/llm_cache.sqlite).")


class ExecSection(_Strict):
    """ours: where rollouts and gate evaluations run (the trainer does not know which)."""

    backend: Literal["local", "ray"] = Field("local", description="local = an asyncio pool in this process; "
                                             "ray = Ray tasks on a cluster (pip install 'skillgrad[ray]').")
    address: str = Field("", description="Ray cluster address ('' = RAY_ADDRESS, else a local Ray instance).")
    num_cpus: float = Field(1.0, gt=0, description="CPUs reserved per Ray task (rollout or evaluation item).")
    num_gpus: float = Field(0.0, ge=0, description="GPUs reserved per Ray task.")
    memory_mb: int = Field(0, ge=0, description="Memory reserved per Ray task in MB (0 = no reservation).")
    max_retries: int = Field(3, ge=0, description="Times a Ray task is re-run when its worker dies.")


class Config(_Strict):
    model: ModelSection = Field(default_factory=ModelSection)
    train: TrainSection = Field(default_factory=TrainSection)
    gradient: GradientSection = Field(default_factory=GradientSection)
    optimizer: OptimizerSection = Field(default_factory=OptimizerSection)
    evaluation: EvaluationSection = Field(default_factory=EvaluationSection)
    env: EnvSection = Field(default_factory=EnvSection)
    budget: BudgetSection = Field(default_factory=BudgetSection)
    compat: CompatSection = Field(default_factory=CompatSection)
    prompts: PromptsSection = Field(default_factory=PromptsSection)
    cache: CacheSection = Field(default_factory=CacheSection)
    exec: ExecSection = Field(default_factory=ExecSection)

    @model_validator(mode="after")
    def _lr_order(self) -> Config:
        if self.optimizer.min_learning_rate > self.optimizer.learning_rate:
            raise ValueError("optimizer.min_learning_rate must not exceed optimizer.learning_rate")
        return self

    def redacted(self) -> dict[str, Any]:
        """JSON-able dict with every secret replaced (for config.json, reports, events)."""
        from skillgrad.core.redact import redact

        return redact(self.model_dump(mode="json"))
