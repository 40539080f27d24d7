"""Run report: `report.html` (self-contained) and `report.md` (+ `report_assets/*.png`) for a run directory.

Everything is read tolerantly (see report_data), so a run stopped early, or one still going,
renders whatever exists so far.
"""

from __future__ import annotations

import difflib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillgrad.core.atomic import write_bytes, write_text
from skillgrad.runs.report_baselines import baseline_blocks
from skillgrad.runs.report_data import (
    ACCEPT_ACTIONS,
    RunData,
    as_float,
    as_int,
    llm_usage,
    load_run,
    stage_seconds,
)
from skillgrad.runs.report_honest import honest_blocks
from skillgrad.runs.report_plots import plot_all
from skillgrad.runs.report_render import (
    Block,
    Diff,
    Heading,
    Image,
    Para,
    Table,
    render_html,
    render_markdown,
)

ASSET_DIR = "report_assets"
SNIPPET_CHARS = 240


def write_report(run_dir: Path) -> tuple[Path, Path]:
    """Write report.html and report.md into `run_dir`; returns their paths."""
    run_dir = Path(run_dir)
    data = load_run(run_dir)
    title = f"skillgrad run report: {data.name}"
    blocks = build_blocks(data)
    html_path, md_path = run_dir / "report.html", run_dir / "report.md"
    for b in blocks:
        if isinstance(b, Image):
            write_bytes(run_dir / ASSET_DIR / b.name, b.png)
    # atomic: a report killed half way leaves the previous one (or none), never a part or a .tmp file
    write_text(html_path, render_html(title, blocks))
    write_text(md_path, render_markdown(title, blocks, ASSET_DIR))
    return html_path, md_path


# -- formatting ----------------------------------------------------------------------------------


def fmt_score(v: Any) -> str:
    f = as_float(v)
    return "—" if f is None else f"{f:.3f}"


def fmt_candidate(r: dict[str, Any]) -> str:
    """A step's candidate score; when the gate stopped scoring it early (engine/gate/early.py) its upper bound,
    marked as one, with the items scored (never the partial mean)."""
    cap = as_float(r.get("candidate_gate_score_upper_bound"))
    if r.get("candidate_gate_score") is None and cap is not None:
        return f"at most {cap:.3f} ({r.get('selection_n_scored', '?')}/{r.get('selection_n_items', '?')} items)"
    return fmt_score(r.get("candidate_gate_score"))


def fmt_delta(v: Any) -> str:
    f = as_float(v)
    return "—" if f is None else f"{f:+.3f}"


def fmt_seconds(v: Any) -> str:
    s = as_float(v)
    if s is None:
        return "—"
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(int(round(s)), 60)
    h, m = divmod(m, 60)
    return f"{h}h {m:02d}m {sec:02d}s" if h else f"{m}m {sec:02d}s"


def fmt_time(ts: float | None) -> str:
    if ts is None:
        return "—"
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def snippet(text: Any, limit: int = SNIPPET_CHARS) -> str:
    if text is None:
        return ""
    s = text if isinstance(text, str) else str(text)
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def row_class(action: str) -> str:
    return "skip" if action.startswith("skip") else action


def status_class(status: str) -> str:
    """applied_* / skipped_* / error (the apply report's statuses) -> a row colour."""
    for prefix in ("applied", "skipped", "error"):
        if status.startswith(prefix):
            return prefix
    return ""


# -- step records --------------------------------------------------------------------------------


def step_records(data: RunData) -> list[dict[str, Any]]:
    """One record per training step: history.json, else the step's own step_record.json, else what its
    `gate` / `step_skipped` events say (history is rewritten after a step; events are appended live)."""
    records = {s: r for r in data.history if (s := as_int(r.get("step"))) is not None and s > 0}
    for step, path in data.steps.items():
        if step > 0 and step not in records:
            rec = data.read_json(Path("steps") / path.name / "step_record.json", dict)
            if rec is not None:
                records[step] = {"step": step, **rec}
    for e in data.events:
        n = as_int(e.get("step"))
        # step 0 is the baseline and gate events with a stage belong to the slow update, not to a step
        if e.get("event") not in ("gate", "step_skipped") or n is None or n <= 0 or e.get("stage"):
            continue
        if n in records:
            continue
        records[n] = {"step": n, "epoch": e.get("epoch"), "action": e.get("action"),
                         "candidate_gate_score": e.get("candidate_score"), "current_score": e.get("current_score"),
                         "best_score": e.get("best_score"), "selection_hard": e.get("selection_hard"),
                         "candidate_gate_score_upper_bound": e.get("candidate_score_upper_bound"),
                         "selection_n_scored": e.get("n_scored"), "selection_n_items": e.get("n_items")}
    return [records[s] for s in sorted(records)]


def baseline_selection(data: RunData) -> float | None:
    """The initial skill's validation score on the gate metric (what candidates are compared with)."""
    for key in ("baseline_selection_gate_score", "baseline_selection_hard"):
        v = as_float(data.summary_get(key))
        if v is not None:
            return v
    for e in data.events_of("gate"):
        if e.get("action") == "baseline":
            return as_float(e.get("selection_hard", e.get("candidate_score")))
    for e in data.events_of("eval"):
        if e.get("skill") == "initial" and e.get("split") in ("selection", "val", "valid", "validation"):
            return as_float(e.get("hard"))
    return None


def action_counts(data: RunData, records: list[dict[str, Any]]) -> tuple[int, int, int]:
    accepts = as_int(data.summary_get("total_accepts"))
    rejects = as_int(data.summary_get("total_rejects"))
    skips_raw = data.summary_get("total_skips")
    actions = [str(r.get("action") or "") for r in records]
    if accepts is None:
        accepts = sum(a in ACCEPT_ACTIONS for a in actions)
    if rejects is None:
        rejects = sum(a == "reject" for a in actions)
    if isinstance(skips_raw, dict):
        skips = sum(as_int(v) or 0 for v in skips_raw.values())
    elif as_int(skips_raw) is not None:
        skips = as_int(skips_raw) or 0
    else:
        skips = sum(a.startswith("skip") for a in actions)
    return accepts, rejects, skips


# -- sections ------------------------------------------------------------------------------------


def build_blocks(data: RunData) -> list[Block]:
    records = step_records(data)
    baseline = baseline_selection(data)
    plots = {name: Image(name, caption, png) for name, caption, png in plot_all(data, records, baseline)}
    blocks: list[Block] = []
    blocks += _overview(data, records)
    blocks += _headline(data, records)
    blocks += baseline_blocks(data)  # the zero-call baselines; why nothing was learned, when so
    blocks += honest_blocks(data, records)  # intervals, gate rule, edit credit, sealed test
    blocks += _curves(plots)
    blocks += _timeline(records, plots)
    blocks += _epochs(data)
    blocks += _task_types(data)
    blocks += _edits(data, records)
    blocks += _usage(data)
    blocks += _skill_diff(data)
    return blocks


def _overview(data: RunData, records: list[dict[str, Any]]) -> list[Block]:
    planned = as_int(data.summary_get("planned_steps"))
    steps = str(data.steps_done) + (f" of {planned}" if planned and planned != data.steps_done else "")
    rows = [
        ["Run directory", str(data.path)],
        ["Environment", data.env_name],
        ["Teacher", data.role_models("teacher")],
        ["Student", data.role_models("student")],
        ["Status", data.status],
        ["Started", fmt_time(data.started)],
        ["Wall time", fmt_seconds(data.wall_time_s)],
        ["Steps done", steps],
    ]
    if data.errors:
        rows.append(["Errors", ", ".join(f"{k} {v}" for k, v in data.errors.items()) + " tasks ended in an error "
                     "(timeout, crash, provider failure; tried twice): left out of every mean, not scored 0"])
    for label, key in (("Stop reason", "stop_reason"), ("Gate metric", "gate_metric"), ("Version", "version")):
        if data.summary_get(key):
            rows.append([label, str(data.summary_get(key))])
    out: list[Block] = [Heading(2, "Overview", "overview"), Table(["", ""], rows)]
    if data.summary is None:
        out.append(Para("summary.json is missing: the run was stopped before its end or is still running; "
                        "this report shows what exists so far.", muted=True))
    for w in data.warnings:
        out.append(Para(f"warning: {w}", muted=True))
    return out


def _headline(data: RunData, records: list[dict[str, Any]]) -> list[Block]:
    tests = data.test_scores()
    init_hard = tests["initial"]["hard"]
    rows = []
    for label in ("initial", "best", "final"):
        hard, soft = tests[label]["hard"], tests[label]["soft"]
        delta = None if hard is None or init_hard is None or label == "initial" else hard - init_hard
        rows.append([f"{label} skill", fmt_score(hard), fmt_score(soft), fmt_delta(delta)])
    best_val = data.best_val_score
    sel_rows = [
        ["baseline (initial skill)", fmt_score(baseline_selection(data))],
        ["best gate score", fmt_score(best_val)],
        ["final skill", fmt_score(data.summary_get("final_selection_hard"))],
    ]
    accepts, rejects, skips = action_counts(data, records)
    best_step = data.summary_get("best_step")
    if best_step is None:
        best_step = (data.runtime_state or {}).get("best_step")
    return [
        Heading(2, "Headline numbers", "headline"),
        Para(f"Test delta (best − initial, hard): {fmt_delta(data.test_delta)}. "
             f"Best skill from step {best_step if best_step is not None else '—'}. "
             f"Gate: {accepts} accepted, {rejects} rejected, {skips} skipped."),
        Heading(3, "Test split"),
        Table(["skill", "hard", "soft", "Δ hard vs initial"], rows),
        Heading(3, "Validation split (gate)"),
        Table(["", "score"], sel_rows),
    ]


def _curves(plots: dict[str, Image]) -> list[Block]:
    out: list[Block] = [Heading(2, "Curves", "curves")]
    curves = [img for name, img in plots.items() if name != "timeline.png"]
    if not curves:
        out.append(Para("No step or test scores recorded yet.", muted=True))
    return out + curves


def _timeline(records: list[dict[str, Any]], plots: dict[str, Image]) -> list[Block]:
    out: list[Block] = [Heading(2, "Accept / reject timeline", "timeline")]
    if not records:
        return out + [Para("No training steps recorded.", muted=True)]
    if "timeline.png" in plots:
        out.append(plots["timeline.png"])
    rows, classes = [], []
    for r in records:
        action = str(r.get("action") or "?")
        eas = r.get("edit_apply_summary") if isinstance(r.get("edit_apply_summary"), dict) else {}
        applied = f"{eas.get('applied', '—')}/{eas.get('total', '—')}" if eas else "—"
        rows.append([
            str(r.get("step", "")), str(r.get("epoch", "")), str(r.get("step_in_epoch", "")),
            fmt_score(r.get("rollout_hard")), action, fmt_candidate(r),
            fmt_score(r.get("current_score")), fmt_score(r.get("best_score")),
            str(r.get("edit_budget", "—")), applied,
        ])
        classes.append(row_class(action))
    out.append(Table(["step", "epoch", "in epoch", "train hard", "action", "candidate", "current", "best",
                      "edit budget", "edits applied"], rows, classes))
    return out


def _epochs(data: RunData) -> list[Block]:
    out: list[Block] = []
    stats = data.summary_get("epoch_stats")
    if isinstance(stats, list) and stats:
        rows = [[str(s.get("epoch", "")), str(s.get("steps", "")), str(s.get("accepts", "")),
                 str(s.get("rejects", "")), str(s.get("skips", "")), fmt_score(s.get("best_score_at_epoch_end")),
                 fmt_score(s.get("current_score_at_epoch_end"))] for s in stats if isinstance(s, dict)]
        out += [Table(["epoch", "steps", "accepts", "rejects", "skips", "best at end", "current at end"], rows)]
    slow_rows, slow_classes = [], []
    for epoch, res in slow_update_results(data).items():
        action = str(res.get("action") or "?")
        slow_rows.append([str(epoch), action, fmt_score(res.get("selection_hard")),
                          snippet(res.get("slow_update_content"))])
        slow_classes.append(row_class(action))
    if slow_rows:
        out += [Heading(3, "Slow updates (end of epoch)"),
                Table(["epoch", "action", "selection hard", "slow update content"], slow_rows, slow_classes)]
    return ([Heading(2, "Epochs", "epochs")] + out) if out else []


def slow_update_results(data: RunData) -> dict[int, dict[str, Any]]:
    """Per epoch: slow_result.json (content) overlaid with slow_action.json (the gate's action and
    scores), else the slow update's `gate` / `slow_update` events."""
    out: dict[int, dict[str, Any]] = {}
    for e in data.events:
        epoch = as_int(e.get("epoch"))
        if epoch is None:
            continue
        if (e.get("event") == "gate" and e.get("stage") == "slow_update") or e.get("event") == "slow_update":
            out[epoch] = {"action": e.get("action"), "selection_hard": e.get("selection_hard")}
    for epoch, path in data.slow_updates.items():
        rel = Path("slow_update") / path.name
        merged = dict(out.get(epoch, {}))
        for name in ("slow_result.json", "slow_action.json"):
            merged.update({k: v for k, v in (data.read_json(rel / name, dict) or {}).items() if v is not None})
        out[epoch] = merged
    return dict(sorted(out.items()))


def _task_types(data: RunData) -> list[Block]:
    by = data.summary_get("test_by_task_type")
    if not isinstance(by, dict) or not by:
        return []
    labels = [k for k in ("initial", "best", "final") if isinstance(by.get(k), dict)]
    types = sorted({t for k in labels for t in by[k]})
    rows = []
    for t in types:
        cells = [by[k].get(t) if isinstance(by[k].get(t), dict) else {} for k in labels]
        total = next((c.get("total") for c in cells if c.get("total") is not None), "—")
        rows.append([t, str(total)] + [fmt_score(c.get("hard_acc")) for c in cells])
    return [Heading(2, "Test by task type", "task-types"), Table(["task type", "n"] + labels, rows)]


def _edits(data: RunData, records: list[dict[str, Any]]) -> list[Block]:
    out: list[Block] = [Heading(2, "Edits per step", "edits")]
    by_step = {as_int(r.get("step")): r for r in records}
    steps = sorted({s for s in by_step if s is not None} | set(data.steps))
    if not steps:
        return out + [Para("No steps recorded.", muted=True)]
    for step in steps:
        rec = by_step.get(step, {})
        action = str(rec.get("action") or "not finished")
        out.append(Heading(3, f"Step {step} (epoch {rec.get('epoch', '?')}): {action}"))
        gate = rec.get("candidate_gate_score")
        if gate is not None or rec.get("current_score") is not None:
            stopped = (" (the gate stopped scoring once it could not pass: an upper bound)"
                       if rec.get("gate_early_stop") else "")
            out.append(Para(f"Candidate gate score {fmt_candidate(rec)}{stopped}; current "
                            f"{fmt_score(rec.get('current_score'))}; best {fmt_score(rec.get('best_score'))}."))
        if rec.get("rewrite_change_summary"):
            out.append(Para(f"Rewrite summary: {snippet(rec.get('rewrite_change_summary'), 600)}"))
        report: dict[str, Any] = {}
        if step in data.steps:
            report = data.read_json(Path("steps") / data.steps[step].name / "edit_apply_report.json", dict) or {}
        outcomes = report.get("outcomes")
        if isinstance(outcomes, list) and outcomes:
            rows, classes = [], []
            for o in outcomes:
                if not isinstance(o, dict):
                    continue
                status = str(o.get("status") or "?")
                rows.append([str(o.get("index", "")), str(o.get("op") or "?"), status, snippet(o.get("target"), 80),
                             str(o.get("match") or ""), snippet(o.get("content")), snippet(o.get("detail"), 160)])
                classes.append(status_class(status))
            counts = ", ".join(f"{k} {report.get(k)}" for k in ("total", "applied", "skipped", "errors")
                               if report.get(k) is not None)
            if counts:
                out.append(Para(f"Apply report: {counts}."))
            out.append(Table(["#", "op", "status", "target", "match", "content", "detail"], rows, classes))
        else:
            eas = rec.get("edit_apply_summary")
            if isinstance(eas, dict) and eas:
                summary = ", ".join(f"{k} {v}" for k, v in eas.items())
                out.append(Para(f"Apply summary (no per-edit report file): {summary}.", muted=True))
            else:
                out.append(Para("No edits recorded for this step.", muted=True))
    return out


def _usage(data: RunData) -> list[Block]:
    out: list[Block] = [Heading(2, "Tokens and cost", "usage")]
    rows_in, total = llm_usage(data.events)

    def cost(r: Any) -> str:
        return f"${r.cost:.4f}" if r.cost_known else "unknown"

    if rows_in:
        rows = [[r.stage, r.role, str(r.calls), str(r.cached), str(r.prompt_tokens), str(r.completion_tokens),
                 f"{r.seconds:.1f}", cost(r)] for r in rows_in]
        rows.append(["total", "", str(total.calls), str(total.cached), str(total.prompt_tokens),
                     str(total.completion_tokens), f"{total.seconds:.1f}", cost(total)])
        out.append(Table(["stage", "role", "calls", "cached", "prompt tokens", "completion tokens", "LLM seconds",
                          "cost"], rows, [""] * len(rows_in) + ["total"]))
        if not total.cost_known:
            out.append(Para(f"Cost is unknown: {total.unknown_cost_calls} call(s) used a model with no known price "
                            f"(known part: ${total.cost:.4f}).", muted=True))
        if total.failed:
            out.append(Para(f"{total.failed} call(s) failed.", muted=True))
    else:
        ts = data.summary_get("token_summary")
        if isinstance(ts, dict) and ts:
            rows = [[str(k), snippet(v if not isinstance(v, dict) else ", ".join(f"{a}={b}" for a, b in v.items()))]
                    for k, v in ts.items()]
            out.append(Para("No llm_call events; token summary from summary.json:", muted=True))
            out.append(Table(["key", "value"], rows))
        else:
            out.append(Para("No LLM calls recorded.", muted=True))
    secs = stage_seconds(data)
    if secs:
        out.append(Heading(3, "Wall time by stage"))
        out.append(Table(["stage", "seconds"], [[k, f"{v:.1f}"] for k, v in sorted(secs.items())]))
    return out


def _skill_diff(data: RunData) -> list[Block]:
    out: list[Block] = [Heading(2, "Skill diff: initial → best", "diff")]
    init_path, best_path = data.initial_skill(), data.best_skill()
    init, best = data.read_text(init_path), data.read_text(best_path)
    if init is None or best is None:
        missing = "initial skill (skills/skill_v0000.md)" if init is None else "best skill (best_skill.md)"
        return out + [Para(f"Cannot diff: the {missing} is missing.", muted=True)]
    lines = list(difflib.unified_diff(init.splitlines(), best.splitlines(), fromfile=_rel(data, init_path),
                                      tofile=_rel(data, best_path), lineterm=""))
    if not lines:
        return out + [Para("The best skill is identical to the initial skill.", muted=True)]
    added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
    removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
    out += [Para(f"{added} line(s) added, {removed} removed."), Diff(lines)]
    final_path = data.skills[max(data.skills)] if data.skills else None
    final = data.read_text(final_path)
    if final is not None and final != best:
        out.append(Heading(3, "Best → final skill (the final skill differs from the best)"))
        out.append(Diff(list(difflib.unified_diff(best.splitlines(), final.splitlines(),
                                                  fromfile=_rel(data, best_path), tofile=_rel(data, final_path),
                                                  lineterm=""))))
    return out


def _rel(data: RunData, path: Path | None) -> str:
    if path is None:
        return "?"
    try:
        return str(path.relative_to(data.path))
    except ValueError:
        return str(path)
