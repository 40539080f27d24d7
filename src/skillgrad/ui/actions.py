"""What the Launch page and the run page's buttons do: estimate (engine/estimate.py), then start
`skillgrad train` / `resume` / `eval` as subprocesses writing under the root."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillgrad.errors import SkillgradError
from skillgrad.runs.lock import RunLocked, refuse_if_locked
from skillgrad.runs.report_data import RunData
from skillgrad.ui.data import run_config
from skillgrad.ui.jobs import Job
from skillgrad.ui.safety import PathRefused, resolve_under, scrub

if TYPE_CHECKING:
    from skillgrad.ui.app import Dashboard

PACKAGED = "skillgrad:"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$")
SPLITS = ("train", "val", "test")


class ActionError(ValueError):
    """A form value the dashboard refuses, with the reason."""


def config_choices(root: Path) -> list[str]:
    """Packaged configs, then YAML files under the root (two levels deep, run directories skipped)."""
    from importlib import resources

    out = [PACKAGED + p.name for p in sorted(Path(str(resources.files("skillgrad.configs"))).glob("*.yaml"))]
    for pattern in ("*.yaml", "*.yml", "*/*.yaml", "*/*.yml"):
        out += [p.relative_to(root).as_posix() for p in sorted(root.glob(pattern)) if not p.name.startswith(".")]
    return out


def config_path(root: Path, value: str) -> Path:
    value = value.strip()
    if value.startswith(PACKAGED):
        from skillgrad.config.loader import packaged_config_path

        name = value[len(PACKAGED):]
        if not _NAME.match(name):
            raise ActionError(f"config: no packaged config {name!r}")
        path = packaged_config_path(name)
    else:
        try:
            path = resolve_under(root, value)
        except PathRefused as e:
            raise ActionError(f"config: {value!r} is not a file under the dashboard root ({e})") from None
    if not path.is_file() or path.suffix not in (".yaml", ".yml", ".json"):
        raise ActionError(f"config: {value!r} is not a YAML config file under the dashboard root")
    return path


def overrides(form: dict[str, str]) -> list[str]:
    lines = [x.strip() for x in form.get("overrides", "").splitlines() if x.strip()]
    for line in lines:
        if "=" not in line or line.startswith("-"):
            raise ActionError(f"overrides: {line!r} is not key=value (one per line, e.g. train.num_epochs=1)")
    return lines


def _estimate_sync(root: Path, form: dict[str, str]) -> dict[str, Any]:
    from skillgrad.config.loader import load_config
    from skillgrad.engine.estimate import estimate_run

    return estimate_run(load_config(config_path(root, form.get("config", "")), overrides(form)))


async def estimate(root: Path, form: dict[str, str]) -> tuple[dict[str, Any] | None, str | None]:
    try:
        return await asyncio.to_thread(_estimate_sync, root, form), None
    except (ActionError, SkillgradError) as e:
        return None, str(e)


def _not_locked(run_dir: Path, what: str) -> None:
    """A run another process writes (a terminal, another dashboard, MCP) gets no second writer from here."""
    try:
        refuse_if_locked(run_dir, what)
    except RunLocked as e:
        raise ActionError(str(e)) from None


def launch_train(dash: Dashboard, form: dict[str, str]) -> Job:
    cfg = config_path(dash.root, form.get("config", ""))
    name = form.get("name", "").strip()
    if not _NAME.match(name):
        raise ActionError("run name: letters, digits, '.', '_' and '-' only (it becomes a folder under the root)")
    run_dir = dash.root / name
    if run_dir.exists() and not (run_dir / "config.json").is_file():
        raise ActionError(f"run name: {name} already exists under the root and is not a run directory")
    _not_locked(run_dir, "a training run here")
    args = ["train", "--config", str(cfg), "--out", str(run_dir), "--log-format", "jsonl"]
    for o in overrides(form):
        args += ["-o", o]
    return dash.jobs.start("train", args, run_dir, cwd=dash.root)


async def wait_started(job: Job, timeout_s: float = 30.0) -> None:
    """Until the run directory exists (so the run page can open), or the process has failed."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline:
        if (job.run_dir / "config.json").is_file():
            return
        if not job.alive:
            tail = job.log_tail(600).strip().splitlines()
            raise ActionError(scrub(f"the run did not start (exit {job.returncode}): {tail[-1] if tail else 'no output'}"))
        await asyncio.sleep(0.2)


def launch_resume(dash: Dashboard, run_dir: Path) -> Job:
    _not_locked(run_dir, "a resume")
    return dash.jobs.start("resume", ["resume", str(run_dir), "--log-format", "jsonl"], run_dir, cwd=dash.root)


def launch_eval(dash: Dashboard, run_dir: Path, data: RunData, skill: str, split: str) -> Job:
    """`skillgrad eval` of one of the run's skills with the run's own config, into <root>/.evals/."""
    if split not in SPLITS:
        raise ActionError(f"split must be one of {', '.join(SPLITS)}")
    if skill == "best":
        skill_path = data.best_skill()
    elif re.fullmatch(r"v\d{1,6}", skill):
        skill_path = data.skills.get(int(skill[1:]))
    else:
        raise ActionError("skill must be 'best' or a version like v0003")
    if skill_path is None:
        raise ActionError(f"this run has no {skill} skill yet")
    from skillgrad.engine.session import strip_redacted

    out = dash.root / ".evals" / f"{run_dir.name}-{skill}-{split}"
    _not_locked(out / "result", "another evaluation into it")
    out.mkdir(parents=True, exist_ok=True)
    cfg_file = out / "run_config.yaml"  # JSON is YAML; secrets were redacted and are taken from the environment
    cfg_file.write_text(json.dumps(strip_redacted(run_config(data)), indent=2), encoding="utf-8")
    args = ["eval", "--config", str(cfg_file), "--skill", str(skill_path), "--split", split, "--out", str(out / "result")]
    return dash.jobs.start("eval", args, out, cwd=dash.root)


def eval_result(job: Job) -> dict[str, Any] | None:
    if job.kind != "eval":
        return None
    p = job.run_dir / "result" / "eval_summary.json"
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
