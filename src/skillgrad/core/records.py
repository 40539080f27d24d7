"""The files a run writes, as typed and versioned records, and the one tolerant reader for them.

Every reader (report, dashboard, `runs list|show`, MCP, MLflow export, Sleep) goes through `RunFiles`, so
a run stopped at any point, written by an older release, or partly damaged reads the same everywhere:
- unknown fields are kept (`extra="allow"`; a newer writer's fields survive a read and `as_dict()`);
- a known field holding the wrong kind of value reads as None (a report shows "-", never crashes);
- a file that is missing or does not parse reads as None / an empty list plus one warning line;
- a JSONL line that does not parse is skipped and counted (`core.events.read_jsonl`).

`runtime_state.json` is the one file a run resumes from, so it carries `schema_version`;
`migrate_runtime_state` brings any older version up to `RUNTIME_STATE_VERSION` and refuses a newer one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from skillgrad.core.events import read_jsonl
from skillgrad.errors import UsageError

# runtime_state.json versions: 1 = releases up to 0.1.0 (no schema_version field); 2 = adds sel_degenerate
# and judgements (degenerate-reply verdicts and every candidate verdict), both empty for an older run.
RUNTIME_STATE_VERSION = 2


def as_float(v: Any) -> float | None:
    """A number from JSON, or None for anything that is not one (null, '', 'nan', a dict)."""
    if isinstance(v, bool) or v is None:
        return None
    try:
        out = float(v)
    except (TypeError, ValueError):
        return None
    return None if out != out else out  # NaN means "not measured"


def as_int(v: Any) -> int | None:
    f = as_float(v)
    return None if f is None else int(f)


def _str(v: Any) -> str | None:
    return None if v is None or isinstance(v, (dict, list)) else str(v)


def _bool(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


def _dict(v: Any) -> dict[str, Any] | None:
    return v if isinstance(v, dict) else None


def _list(v: Any) -> list[Any] | None:
    return v if isinstance(v, list) else None


Float = Annotated[float | None, BeforeValidator(as_float)]
Int = Annotated[int | None, BeforeValidator(as_int)]
Str = Annotated[str | None, BeforeValidator(_str)]
Bool = Annotated[bool | None, BeforeValidator(_bool)]
Dict = Annotated[dict[str, Any] | None, BeforeValidator(_dict)]
List = Annotated[list[Any] | None, BeforeValidator(_list)]


class Record(BaseModel):
    """A JSON object from a run file: named fields typed, every other field kept as it was."""

    model_config = ConfigDict(extra="allow", frozen=True)

    def as_dict(self) -> dict[str, Any]:
        """The record as plain JSON (named fields that were absent are left out, extras kept)."""
        return self.model_dump(exclude_unset=True)

    def get(self, key: str, default: Any = None) -> Any:
        value = self.as_dict().get(key)
        return default if value is None else value


class EventLine(Record):
    """One line of events.jsonl (core/events.py writes it)."""

    ts: Float = None
    event: Str = None
    step: Int = None
    epoch: Int = None
    stage: Str = None


class StepRecord(Record):
    """steps/step_NNNN/step_record.json; history.json is their list."""

    step: Int = None
    epoch: Int = None
    step_in_epoch: Int = None
    action: Str = None  # accept | accept_new_best | force_accept | reject | skip_... | blocked
    candidate_gate_score: Float = None  # None when the gate stopped early: then see the upper bound
    candidate_gate_score_upper_bound: Float = None  # engine/gate/early.py: at most this, never a measured mean
    selection_n_scored: Int = None  # selection items scored, of selection_n_items
    selection_n_items: Int = None
    selection_errors: Int = None  # selection items that ended in an error (exec/pool.py): outside the score
    gate_early_stop: Bool = None
    current_score: Float = None
    best_score: Float = None
    rollout_hard: Float = None
    rollout_soft: Float = None
    n_patches: Int = None
    timing: Dict = None
    wall_time_s: Float = None


class Summary(Record):
    """summary.json: how the run ended and its held-out scores (written once at the run's end)."""

    version: Str = None  # the release that wrote it, e.g. "skillgrad-0.1.0"
    status: Str = None  # completed | stopped | failed
    stop_reason: Str = None
    env: Str = None
    teacher: Str = None
    student: Str = None
    gate_metric: Str = None
    best_step: Int = None
    total_steps: Int = None
    total_accepts: Int = None
    total_rejects: Int = None
    total_skips: Dict = None  # skip reason -> count
    baseline_test_hard: Float = None
    test_hard: Float = None
    final_test_hard: Float = None
    test_delta_hard: Float = None
    baseline_selection_gate_score: Float = None
    best_selection_gate_score: Float = None
    total_wall_time_s: Float = None
    token_summary: Dict = None
    errors: Dict = None  # split -> tasks that ended in an error (timeout, crash, provider failure): outside the means


class RuntimeState(Record):
    """runtime_state.json as readers see it (engine/state.py's RunState is the writer's full view)."""

    schema_version: Int = None
    last_completed_step: Int = None
    best_step: Int = None
    best_score: Float = None
    current_score: Float = None
    baseline_score: Float = None
    finished: Bool = None
    stopped: Str = None
    initial_skill: Str = None
    best_skill: Str = None
    current_skill: Str = None
    elapsed_s: Float = None
    epochs_done: List = None


class ResultLine(Record):
    """One line of a rollout's results.jsonl (a scored trajectory; envs/base.py Trajectory.to_json)."""

    item_id: Str = None
    task_type: Str = None
    hard: Float = None
    soft: Float = None
    fail_reason: Str = None
    error: Str = None
    env_error: Str = None


class ApplyReport(Record):
    """steps/step_NNNN/edit_apply_report.json: which merged edits applied to the skill and why others did not."""

    outcomes: List = None  # one {index, op, status, detail, match, content, target} per edit
    total: Int = None
    applied: Int = None
    skipped: Int = None
    errors: Int = None


def migrate_runtime_state(data: dict[str, Any], path: Path | str = "runtime_state.json") -> dict[str, Any]:
    """`data` brought up to RUNTIME_STATE_VERSION (a new dict). A state from a newer release is refused with
    the fix rather than resumed with fields this release would silently drop."""
    out = dict(data)
    version = as_int(out.get("schema_version")) or 1
    if version > RUNTIME_STATE_VERSION:
        raise UsageError(f"{path} was written by a newer skillgrad (runtime state schema {version}, this release "
                         f"reads up to {RUNTIME_STATE_VERSION}); upgrade skillgrad (pip install -U skillgrad) "
                         "to resume this run")
    if version < 2:  # 1 -> 2: the verdict lists did not exist; an older run had none
        out.setdefault("sel_degenerate", {})
        out.setdefault("judgements", [])
    out["schema_version"] = RUNTIME_STATE_VERSION
    return out


R = TypeVar("R", bound=Record)


def parse(model: type[R], value: Any) -> R | None:
    """`value` as a `model` record; None for anything that is not a JSON object."""
    if not isinstance(value, dict):
        return None
    try:
        return model.model_validate(value)
    except ValidationError:  # only a non-string key can get here; keep what the lenient fields could not
        return None


class RunFiles:
    """The tolerant reader of one run directory. `warn` receives one line per file it had to skip or repair
    (default: dropped; the report lists them)."""

    def __init__(self, root: Path | str, warn: Callable[[str], None] | None = None) -> None:
        self.root = Path(root)
        self.warn = warn or (lambda _msg: None)

    def json(self, rel: str) -> Any:
        """The file's JSON, None when it is missing or unreadable (one warning)."""
        p = self.root / rel
        if not p.is_file():
            return None
        try:
            return json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as e:
            self.warn(f"{rel}: unreadable ({type(e).__name__}); ignored")
            return None

    def record(self, model: type[R], rel: str) -> R | None:
        value = self.json(rel)
        rec = parse(model, value)
        if value is not None and rec is None:
            self.warn(f"{rel}: unexpected JSON type {type(value).__name__}; ignored")
        return rec

    def summary(self) -> Summary | None:
        return self.record(Summary, "summary.json")

    def runtime_state(self) -> RuntimeState | None:
        return self.record(RuntimeState, "runtime_state.json")

    def history(self) -> list[StepRecord]:
        """history.json (a list, or the older {"history": [...]}); records that are not objects are dropped."""
        value = self.json("history.json")
        if isinstance(value, dict):
            value = value.get("history")
        if value is not None and not isinstance(value, list):
            self.warn(f"history.json: unexpected JSON type {type(value).__name__}; ignored")
            return []
        return [r for r in (parse(StepRecord, x) for x in value or []) if r is not None]

    def lines(self, model: type[R], rel: str) -> Iterator[R]:
        """A JSONL file's records; damaged lines skipped with one warning."""
        def skipped(n: int) -> None:
            self.warn(f"{rel}: {n} damaged line{'s' if n > 1 else ''} skipped")

        for value in read_jsonl(self.root / rel, on_skip=skipped):
            rec = parse(model, value)
            if rec is not None:
                yield rec

    def events(self) -> Iterator[EventLine]:
        return self.lines(EventLine, "events.jsonl")
