"""Sleep settings: built-in defaults < `~/.config/skillgrad/sleep.yaml` (or `--config`) < CLI flags.

Every key is validated by pydantic; a bad key or value is one line naming the file and the key.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillgrad.errors import UsageError

DEFAULT_CONFIG = Path("~/.config/skillgrad/sleep.yaml")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RoleSettings(_Strict):
    provider: Literal["local", "openai", "azure", "anthropic", "codex", "claude_code", "handoff"] = "local"
    model: str = Field("", description="Model name or .gguf path ('' = the provider's default / embedded model).")
    base_url: str = ""
    api_key_env: str = ""
    max_tokens: int = Field(0, ge=0, description="Completion cap (0 = the night's default for the role).")
    temperature: float = 0.0
    threads: int = Field(0, ge=0, description="`local` threads (0 = all cores).")


class SleepBudget(_Strict):
    max_tokens: int = Field(400_000, ge=0, description="Tokens per night, all calls (0 = no limit).")
    max_usd: float = Field(0.0, ge=0, description="Spend per night (0 = no limit).")
    max_calls: int = Field(0, ge=0, description="Model calls per night (0 = no limit).")
    max_minutes: float = Field(60.0, ge=0, description="Wall time per night (0 = no limit).")


class SleepSettings(_Strict):
    project: str = Field(".", description="Project whose sessions, SKILL.md and CLAUDE.md/AGENTS.md are used.")
    source: str = Field("auto", description=(
        "claude_code, codex, vscode_copilot, copilot_cli, opencode, gemini_cli, cursor (comma-separated), or auto "
        "(every agent whose home exists)."))
    claude_home: str = "~/.claude"
    codex_home: str = "~/.codex"
    homes: dict[str, str] = Field(default_factory=dict, description=(
        "Session homes of the other agents, e.g. {vscode_copilot: '~/Library/Application Support/Code/User'} "
        "(defaults: ~/.config/Code/User, ~/.copilot, ~/.local/share/opencode, ~/.gemini, ~/.config/Cursor/User)."))
    lookback_hours: float = Field(72.0, gt=0, description=(
        "Sessions from this far back, every night (a night also reads from its cursor when that is older; sessions "
        "already used or judged not minable are skipped)."))
    commit_state: bool = Field(False, description=(
        "Keep .skillgrad/ in git. Off (default): the first night writes .skillgrad/.gitignore ignoring everything "
        "in it (nights hold excerpts of your sessions and named files)."))
    max_sessions: int = Field(0, ge=0, description="Sessions per night (0 = 3 x max_tasks).")
    max_tasks: int = Field(40, ge=1, description="Tasks per night after dedup.")
    miner: Literal["auto", "llm", "heuristic"] = Field(
        "auto", description="auto = heuristic when the teacher is the embedded model, else llm.")
    skill: str = Field("", description=(
        "Live SKILL.md ('' = <project>/.claude/skills/project-preferences/SKILL.md, or skillgrad-learned/ where an "
        "earlier night made it)."))
    memory: str = Field("", description=(
        "Live memory file ('' = the one the student reads: AGENTS.md for Codex, CLAUDE.md for Claude Code, else "
        "CLAUDE.md or AGENTS.md, if present)."))
    evolve_memory: bool = Field(True, description="Also consolidate the memory file's learned block.")
    memory_max_tokens: int = Field(0, ge=0, description=(
        "Tokens of the memory file a local student reads (0 = a sixteenth of its context, 512 for SmolLM2: room for the skill, "
        "examples and task, and prompts a laptop reads in seconds); over it, the sections most relevant to the "
        "night's tasks are kept, the learned block always."))
    student: RoleSettings = Field(default_factory=RoleSettings)
    teacher: RoleSettings = Field(default_factory=RoleSettings)
    budget: SleepBudget = Field(default_factory=SleepBudget)
    epochs: int = Field(3, ge=1, description=(
        "Passes over the night's training tasks. 3: in the sessions benchmark (benchmarks/sleep_sessions.py, seeds "
        "0-4) one pass learned 2 of 3 preferences in seeds 0 and 2 only, three passes in seeds 0, 1 and 2 (3 kept its "
        "change pending for lack of held-out tasks, the held-out guard refused 4's), in 0.8-1.8 minutes."))
    batch_size: int = Field(8, ge=1)
    learning_rate: int = Field(4, ge=1, description="Edits applied per step.")
    val_fraction: float = Field(0.3, gt=0, lt=1, description="Share of real tasks the training gate selects on.")
    test_fraction: float = Field(0.3, gt=0, lt=1, description=(
        "Share of real tasks held out: only the staging decision reads them (near-duplicates of a training or "
        "selection task never land here)."))
    min_heldout: int = Field(5, ge=1, description=(
        "Held-out tasks the staging decision needs; with fewer, the change stays pending and later nights add "
        "their held-out results to its evidence."))
    seed: int = 0
    gate_metric: Literal["hard", "soft", "mixed"] = "mixed"
    gate_no_regression: bool = Field(False, description="Refuse a proposal under which any held-out task regresses.")
    task_max_tokens: int = Field(0, ge=0, description=(
        "Student reply cap per replayed task; 0 = the student's stated room (its max_tokens, else 1/64 of its "
        "context window: 64 for the embedded model), more where a task's checks ask for it (the cap training uses)."))
    workers: int = Field(1, ge=1)


def _key_error(err: ValidationError, source: str) -> UsageError:
    e = err.errors()[0]
    key = ".".join(str(p) for p in e["loc"])
    if e["type"] == "extra_forbidden":
        parent: Any = SleepSettings
        for part in e["loc"][:-1]:
            parent = parent.model_fields[str(part)].annotation
        close = difflib.get_close_matches(str(e["loc"][-1]), list(parent.model_fields), n=1)
        hint = f"; did you mean {'.'.join([*map(str, e['loc'][:-1]), close[0]])}?" if close else ""
        return UsageError(f"{source}: unknown sleep setting {key!r}{hint}")
    return UsageError(f"{source}: {key}: {e['msg']} (got {e.get('input')!r})")


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_settings(config: Path | None = None, overrides: dict[str, Any] | None = None) -> SleepSettings:
    """Defaults < the YAML file (`config`, else the default path when it exists) < overrides (CLI flags)."""
    path = config.expanduser() if config else DEFAULT_CONFIG.expanduser()
    data: dict[str, Any] = {}
    if config is not None and not path.is_file():
        raise UsageError(f"--config {config}: file not found")
    if path.is_file():
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f" line {mark.line + 1}" if mark is not None else ""
            raise UsageError(f"{path}:{where} not valid YAML; fix the file or pass --config") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise UsageError(f"{path}: expected a mapping of sleep settings at the top level")
        data = loaded or {}
    try:
        SleepSettings.model_validate(data)
    except ValidationError as e:
        raise _key_error(e, str(path)) from None
    try:
        return SleepSettings.model_validate(_merge(data, overrides or {}))
    except ValidationError as e:
        raise _key_error(e, "command line") from None
