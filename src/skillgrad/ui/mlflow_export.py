"""`skillgrad export mlflow RUN`: one MLflow run per skillgrad run, from the run files only.

Params: the redacted config, flattened. Metrics per step: the gate's candidate / current / best
scores, train rollout scores, and the calls, tokens and cost of that step's stages (stage_end events).
Artifacts: every skill version, best_skill.md, summary.json, history.json, config.json and the report.
mlflow is an optional extra, imported only here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from skillgrad.errors import UsageError
from skillgrad.runs.report import step_records
from skillgrad.runs.report_data import RunData, as_float, as_int, is_run_dir, load_run
from skillgrad.ui.data import flatten, run_config
from skillgrad.ui.safety import scrub_data

STEP_METRICS = ("candidate_gate_score", "current_score", "best_score", "score_before", "selection_hard",
                "selection_soft", "rollout_hard", "rollout_soft")
MAX_PARAM = 500  # MLflow rejects longer values on some stores


def step_usage(data: RunData) -> dict[int, dict[str, float]]:
    """calls / tokens / cost per step, summed over that step's stage_end events."""
    out: dict[int, dict[str, float]] = {}
    for e in data.events_of("stage_end"):
        step = as_int(e.get("step"))
        if step is None:
            continue
        slot = out.setdefault(step, {"calls": 0.0, "tokens": 0.0, "cost": 0.0})
        slot["calls"] += as_float(e.get("calls")) or 0.0
        slot["tokens"] += (as_float(e.get("prompt_tokens")) or 0.0) + (as_float(e.get("completion_tokens")) or 0.0)
        slot["cost"] += as_float(e.get("cost")) or 0.0
    return out


def params(data: RunData) -> dict[str, str]:
    flat = flatten(scrub_data(run_config(data)))
    return {k[:250]: str(v)[:MAX_PARAM] for k, v in flat.items()}


def existing_run(client: Any, exp_id: str, run_dir: str) -> str | None:
    """The MLflow run an earlier export of this run directory made (re-exporting updates it, never a copy)."""
    quoted = run_dir.replace("\\", "\\\\").replace("'", "\\'")
    found = client.search_runs([exp_id], filter_string=f"tags.`skillgrad.run_dir` = '{quoted}'", max_results=1)
    return found[0].info.run_id if found else None


def export_run(run_dir: Path, tracking_uri: str, experiment: str = "skillgrad") -> str:
    try:
        from mlflow.entities import Metric, Param
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise UsageError("export mlflow needs mlflow: pip install 'skillgrad[mlflow]'") from None
    run_dir = Path(run_dir)
    if not is_run_dir(run_dir):
        raise UsageError(f"{run_dir} is not a run directory (no config.json or events.jsonl); check the path")
    if tracking_uri.startswith("file:"):
        # MLflow 3 refuses file stores unless opted in; a file: URI given on the command line is that opt-in.
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    data = load_run(run_dir)
    client = MlflowClient(tracking_uri=tracking_uri)
    exp = client.get_experiment_by_name(experiment)
    exp_id = exp.experiment_id if exp is not None else client.create_experiment(experiment)
    tags = {"skillgrad.status": data.status, "skillgrad.env": data.env_name,
            "skillgrad.run_dir": str(run_dir.resolve())}
    rid = existing_run(client, exp_id, tags["skillgrad.run_dir"])
    if rid is None:
        rid = client.create_run(exp_id, run_name=data.name, tags=tags).info.run_id
    else:  # exported before: the same MLflow run, with what is new since (a resumed run's later steps)
        for tag, value in tags.items():
            client.set_tag(rid, tag, value)
    logged = client.get_run(rid).data
    # a param keeps its first value (MLflow refuses a change); a resume's new overrides show in config.json
    ps = [Param(k, v) for k, v in params(data).items() if k not in logged.params]
    for i in range(0, len(ps), 100):
        client.log_batch(rid, params=ps[i:i + 100])
    metrics: list[Any] = []
    ts = 0
    for rec in step_records(data):
        step = as_int(rec.get("step"))
        if step is None:
            continue
        for key in STEP_METRICS:
            v = as_float(rec.get(key))
            if v is not None:
                metrics.append(Metric(key, v, ts, step))
    for step, usage in step_usage(data).items():
        for key, v in usage.items():
            metrics.append(Metric(f"usage_{key}", v, ts, step))
    for label, scores in data.test_scores().items():
        for m, v in scores.items():
            if v is not None:
                metrics.append(Metric(f"test_{label}_{m}", v, ts, 0))
    have = {key: {(m.step, m.value) for m in client.get_metric_history(rid, key)} for key in logged.metrics}
    metrics = [m for m in metrics if (m.step, m.value) not in have.get(m.key, set())]
    for i in range(0, len(metrics), 500):
        client.log_batch(rid, metrics=metrics[i:i + 500])
    for path in data.skills.values():
        client.log_artifact(rid, str(path), artifact_path="skills")
    for name in ("best_skill.md", "summary.json", "history.json", "config.json", "report.html", "report.md"):
        if (run_dir / name).is_file():
            client.log_artifact(rid, str(run_dir / name))
    if not (run_dir / "report.html").is_file():
        import tempfile

        from skillgrad.runs.report import build_blocks
        from skillgrad.runs.report_render import render_html

        with tempfile.TemporaryDirectory() as tmp:  # self-contained HTML; the run directory is left as it is
            out = Path(tmp) / "report.html"
            out.write_text(render_html(f"skillgrad run report: {data.name}", build_blocks(data)), encoding="utf-8")
            client.log_artifact(rid, str(out))
    client.set_terminated(rid, status="FINISHED" if data.status == "completed" else "KILLED")
    return str(rid)
