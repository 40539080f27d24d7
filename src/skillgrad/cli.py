"""The `skillgrad` command line.

Exit codes: 0 completed, 1 the run failed, 2 usage or configuration error (or the run is locked by another
writer), 3 answers needed (handoff), 4 stopped by its budget, 130 interrupted (Ctrl-C or SIGTERM). Each prints
one line (the traceback only with --debug). Progress comes from events: a live display, or `--log-format jsonl`.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
import traceback
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from skillgrad import __version__, compare_cli, serve_cli
from skillgrad.config.notices import ConfigWarning, RetiredKeyWarning
from skillgrad.configs_cli import configs_app
from skillgrad.errors import DamageWarning, OrphanedAnswers, RunStopped, SkillgradError, UsageError
from skillgrad.integrations import cli as integrations_cli
from skillgrad.runs.lock import RunLocked, StaleLockWarning, run_lock
from skillgrad.skillfolder.cli import skill_app as skill_cli_app
from skillgrad.sleep.cli import sleep_app
from skillgrad.ui import cli as ui_cli

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Train skills (markdown instructions) for frozen LLM agents. SkillOpt-compatible configs."
                       "\n\nExample: skillgrad demo")
envs_app = typer.Typer(no_args_is_help=True,
                       help="List or scaffold environments.\n\nExample: skillgrad envs new my-bench --dir envs/")
runs_app = typer.Typer(no_args_is_help=True,
                       help="List or inspect run directories.\n\nExample: skillgrad runs list runs/")
data_app = typer.Typer(no_args_is_help=True, help="Convert benchmark data into skillgrad splits.\n\n"
                       "Example: skillgrad data prepare searchqa --from searchqa.jsonl --to data/searchqa")
app.add_typer(envs_app, name="envs")
app.add_typer(runs_app, name="runs")
app.add_typer(data_app, name="data")
app.add_typer(sleep_app, name="sleep")
app.command("ui")(ui_cli.ui)
app.add_typer(ui_cli.export_app, name="export")
app.add_typer(integrations_cli.integrations_app, name="integrations")
app.add_typer(integrations_cli.handoff_app, name="handoff")
app.command("mcp")(integrations_cli.mcp)
app.command("compare")(compare_cli.compare_cmd)
app.command("serve-model")(serve_cli.serve_model)
app.add_typer(configs_app, name="configs")
app.add_typer(skill_cli_app, name="skill")

# soft_wrap: messages, paths and diffs stay on one line each when piped (Rich wraps at 80 columns otherwise).
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="YAML config (SkillOpt format accepted).")]
Overrides = Annotated[list[str] | None, typer.Option("--cfg-options", "-o",
                                                     help="Override a key: a.b=c (repeatable).")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No live display; print the result only.")]
LogFormat = Annotated[str, typer.Option("--log-format", help="text (live display) or jsonl (one event per line).")]


def _check_log_format(log_format: str) -> None:
    """Checked before anything is loaded or written."""
    if log_format not in ("text", "jsonl"):
        raise UsageError(f"--log-format must be text or jsonl, not {log_format!r}")


def _listeners(quiet: bool, log_format: str) -> tuple[list[Any], Any]:
    """The live display on a terminal's stderr, plain lines on a stdout that is a file or a pipe (a log
    keeps its progress while the terminal shows the live view), or every event as JSON."""
    from skillgrad.progress import Displays, JsonlProgress, LogProgress, RichProgress

    _check_log_format(log_format)
    if log_format == "jsonl":
        p: Any = JsonlProgress()
        return [p], p
    if quiet:
        return [], None
    shown: list[Any] = []
    if err.is_terminal:
        shown.append(RichProgress(Console(stderr=True)))  # wrapping on: the live display counts its own lines
    if not out.is_terminal:
        shown.append(LogProgress(sys.stdout))
    return shown, Displays(shown)


def _load(config: Path | None, overrides: list[str] | None) -> tuple[Any, dict[str, Any]]:
    from skillgrad.config.loader import load_config_with_info

    # The loader's notices reach the user through _one_line_warnings (once each, no source line).
    return load_config_with_info(config, overrides or [])


class _LiveCalls:
    """Counts model calls that reached a provider and succeeded in this process."""

    def __init__(self) -> None:
        self.ok = 0

    def __call__(self, ev: dict[str, Any]) -> None:
        if ev.get("event") == "llm_call" and ev.get("ok") and not ev.get("cached"):
            self.ok += 1


def _never_started(e: BaseException, calls: _LiveCalls) -> bool:
    """A usage problem (exit 2: data, credentials, unreachable endpoint) before any model call succeeded.
    A locked run is another writer's: nothing of it may be dropped or restored."""
    return isinstance(e, SkillgradError) and e.exit_code == 2 and calls.ok == 0 and not isinstance(e, RunLocked)


def _run(handle: Any, quiet: bool, log_format: str, calls: _LiveCalls) -> dict[str, Any]:
    from skillgrad.engine.session import train_sync

    listeners, display = _listeners(quiet, log_format)
    try:
        return train_sync(handle, listeners=[*listeners, calls])
    finally:
        if display is not None:
            display.close()


@contextmanager
def _drop_if_never_started(run_dir: Path, calls: _LiveCalls) -> Iterator[None]:
    """A run that never started leaves no half-made run directory behind (nothing in it is worth keeping)."""
    from skillgrad.engine.session import check_run_dir

    check_run_dir(run_dir)  # --out on a file: one line, before the lock or anything else touches it
    # The highest folder on the way to run_dir that this command is about to create (runs/, runs/evals/, ...).
    created = next((p for p in reversed([run_dir, *run_dir.parents]) if not p.exists()), None)
    try:
        yield
    except SkillgradError as e:
        if created is not None and created.is_dir() and _never_started(e, calls):
            shutil.rmtree(created, ignore_errors=True)
        raise


def _print_result(summary: dict[str, Any], run_dir: Path, *, log_format: str = "text") -> None:
    """The result table; a run its budget stopped raises RunStopped (exit 4) with one line saying how to go on."""
    if summary.get("status") == "stopped":
        raise RunStopped(f"{summary.get('stop_reason')}; state saved in {run_dir}, continue with: "
                         f"skillgrad resume {run_dir} -o budget.max_calls=...")
    if log_format == "jsonl":
        return
    t = Table(title=escape(f"skillgrad run {run_dir}"), show_header=True)
    t.add_column("skill")
    t.add_column("test hard", justify="right")
    t.add_column("test soft", justify="right")
    for name, h, s in (("initial", "baseline_test_hard", "baseline_test_soft"), ("best", "test_hard", "test_soft"),
                       ("final", "final_test_hard", "final_test_soft")):
        t.add_row(name, _pct(summary.get(h)), _pct(summary.get(s)))
    few = (summary.get("baselines") or {}).get("fewshot") or {}
    if few.get("score") is not None:  # the zero-call baseline (engine/baselines.py)
        t.add_row("few-shot baseline", _pct(few.get("score")), _pct(few.get("soft")))
    out.print(t)
    from skillgrad.runs.summary_lines import gain_line, no_learning_line

    for line in [few.get("why", ""), gain_line(summary)]:
        if line:
            out.print(line, markup=False, highlight=False)
    skips = summary.get("total_skips")
    n_skips = sum(skips.values()) if isinstance(skips, dict) else skips  # a dict of reason -> count
    out.print(f"accepts {summary.get('total_accepts')}, rejects {summary.get('total_rejects')}, "
              f"skips {n_skips}; best skill: {run_dir / 'best_skill.md'}", markup=False, highlight=False)
    if why := no_learning_line(summary):  # the last line: why the run learned nothing, and what to do
        out.print(why, markup=False, highlight=False)


def _pct(v: Any) -> str:
    return f"{100 * v:.1f}%" if isinstance(v, (int, float)) else "-"


@app.command()
def train(
    config: Annotated[Path | None, typer.Option("--config", "-c", help="YAML config (SkillOpt format accepted).")] = None,
    cfg_options: Overrides = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Run directory (default runs/<config>-<hash>).")] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Delete an existing run directory and start over.")] = False,
    quiet: Quiet = False,
    log_format: LogFormat = "text",
    skill: Annotated[Path | None, typer.Option("--skill", help="Train an Agent Skills folder on its evals/evals.json "
                                               "(docs/guide/skill-folders.md).")] = None,
    target: Annotated[str, typer.Option("--target", help="With --skill: body (SKILL.md + references), "
                                        "description (trigger F1 on eval_queries.json) or all.")] = "body",
) -> None:
    """Train a skill. Rerunning the same command after a kill continues the run.

    Example: skillgrad train -c skillgrad:demo.yaml -o train.num_epochs=1
    """
    from skillgrad import api

    _check_log_format(log_format)
    if skill is not None:
        from skillgrad.skillfolder import cli as skill_cli

        listeners, display = _listeners(quiet, log_format)
        try:
            result = skill_cli.train_folder(skill, config, cfg_options or [], out_dir, fresh, target, None, listeners)
        finally:
            if display is not None:
                display.close()
        for line in skill_cli.describe_result(result):
            out.print(line, markup=False, highlight=False)
        return
    if config is None:
        raise UsageError("train: give --config (-c) with a YAML config, or --skill with a skill folder")
    loaded = api.load_config(config, cfg_options)
    run_dir = out_dir or api.run_dir_for(loaded)
    calls = _LiveCalls()

    def say_continuing(ev: dict[str, Any]) -> None:
        if ev.get("event") == "run_start" and ev.get("resumed") and log_format == "text":
            err.print(f"continuing the run in {run_dir}", markup=False, highlight=False)

    listeners, display = _listeners(quiet, log_format)
    try:
        with _drop_if_never_started(run_dir, calls), run_lock(run_dir, "skillgrad train"):
            run = api.train(loaded, out=run_dir, fresh=fresh, listeners=[say_continuing, *listeners, calls])
    finally:
        if display is not None:
            display.close()
    _print_result(run.summary.raw if run.summary else {"status": run.status}, run_dir, log_format=log_format)


@app.command()
def resume(
    run_dir: Annotated[Path, typer.Argument(help="Run directory to continue.")],
    cfg_options: Overrides = None,
    quiet: Quiet = False,
    log_format: LogFormat = "text",
) -> None:
    """Continue a stopped or killed run from its last completed stage (e.g. with a raised budget).

    Example: skillgrad resume runs/demo-seed1 -o budget.max_calls=2000
    """
    from skillgrad.engine.session import RunHandle, load_saved_config
    from skillgrad.runs.store import RunStore

    _check_log_format(log_format)
    if not (run_dir / "config.json").is_file():
        raise UsageError(f"{run_dir} is not a skillgrad run directory (no config.json); check the path")
    cfg = load_saved_config(run_dir, cfg_options or [])
    store = RunStore(run_dir)
    calls = _LiveCalls()
    with run_lock(run_dir, "skillgrad resume"):
        saved = store.read_json("config.json")
        store.write_json("config.json", {**saved, "config": cfg.redacted()})
        try:
            summary = _run(RunHandle(cfg, run_dir, True), quiet, log_format, calls)
        except SkillgradError as e:
            if _never_started(e, calls):  # overrides that cannot even start must not replace the run's config
                store.write_json("config.json", saved)
            raise
    _print_result(summary, run_dir, log_format=log_format)


@app.command("eval")
def eval_cmd(
    config: ConfigOpt,
    skill: Annotated[Path, typer.Option("--skill", help="Skill markdown file to score.")],
    split: Annotated[str, typer.Option("--split", help="train, val, test (SkillOpt names accepted) or all.")] = "test",
    cfg_options: Overrides = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Where to write results.")] = None,
    quiet: Quiet = False,
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="Student samples per item (paired per-item "
                                       "results, an interval over items); needs eval_temperature > 0 to differ.")] = 1,
    baselines: Annotated[bool, typer.Option("--baselines", help="Also score the initial skill and a zero-call "
                                            "few-shot skill on the same items, with the gain over the better one.")]
    = False,
) -> None:
    """Score any skill on any split with any model (the transfer experiment).

    Example: skillgrad eval -c skillgrad:demo.yaml --skill runs/demo-seed1/best_skill.md --split test
    """
    from skillgrad import api
    from skillgrad.engine.evaluate import learned_only_warning

    loaded = api.load_config(config, cfg_options)
    cfg = loaded.config
    if not skill.is_file():
        raise UsageError(f"--skill: file not found: {skill}")
    warning = learned_only_warning(skill, cfg)
    if warning:
        out.print(f"warning: {warning}", style="yellow", markup=False, highlight=False)
    target = out_dir or api.eval_dir_for(loaded, skill, split)
    calls = _LiveCalls()
    with _drop_if_never_started(target, calls), run_lock(target, "skillgrad eval"):
        result = api.evaluate(loaded, skill, split=split, out=target, seeds=seeds, listeners=[calls],
                              baselines=baselines).raw
    t = Table(title=escape(f"{skill} on {cfg.env.name} ({cfg.model.student.model or 'default student'})"))
    for col in ("split", "n", "hard", "soft"):
        t.add_column(col)
    for name, r in result["splits"].items():
        t.add_row(name, str(r["n"]), _pct(r["hard"]), _pct(r["soft"]))
    out.print(t)
    for name, r in result["splits"].items():  # --seeds: the mean over seeds with its interval over items
        if "hard_interval" in r:
            iv = r["hard_interval"]
            out.print(f"{name}: hard over {r['seeds']} seeds {_pct(r['hard_mean_over_seeds'])} "
                      f"(95% interval over items {_pct(iv['ci_low'])} .. {_pct(iv['ci_high'])}); per seed "
                      f"{', '.join(_pct(x) for x in r['hard_per_seed'])}; unstable items {r['items_unstable']}"
                      + (f"; {r['note']}" if r.get("note") else ""), markup=False, highlight=False)
    if baselines:
        from skillgrad.runs.summary_lines import baseline_lines

        for name, b in (result.get("baselines") or {}).get("splits", {}).items():
            for line in baseline_lines(b):
                out.print(f"{name}: {line}".replace("trained vs", "this skill vs"), markup=False, highlight=False)
    if not quiet:
        out.print(f"results: {target / 'eval_summary.json'}", markup=False, highlight=False)


@app.command()
def estimate(config: ConfigOpt, cfg_options: Overrides = None,
             as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Print the expected calls, tokens and cost per stage before anything is spent.

    Example: skillgrad estimate -c skillgrad:demo.yaml
    """
    from skillgrad.engine.estimate import estimate_run

    cfg, _ = _load(config, cfg_options)
    est = estimate_run(cfg)
    if as_json:
        out.print_json(json.dumps(est))
        return
    t = Table(title=escape(f"estimate for {config} ({est['steps']} steps)"))
    for col in ("stage", "role", "calls", "prompt tokens", "completion tokens", "cost"):
        t.add_column(col, justify="right" if col != "stage" else "left")
    for r in est["rows"]:
        t.add_row(r["stage"], r["role"], f"{r['calls']:,}", f"{r['prompt_tokens']:,}", f"{r['completion_tokens']:,}",
                  "unknown" if r["cost"] is None else f"${r['cost']:.4f}")
    tot = est["total"]
    t.add_row("total", "", f"{tot['calls']:,}", f"{tot['prompt_tokens']:,}", f"{tot['completion_tokens']:,}",
              "unknown" if tot["cost"] is None else f"${tot['cost']:.4f}")
    out.print(t)
    out.print("Counted by running the loop against counting models (no model call): every train task fails, the "
              "first candidate is accepted; completion tokens at each call's cap.")


@app.command()
def report(run_dir: Annotated[Path, typer.Argument(help="Run directory.")]) -> None:
    """Write report.html (self-contained) and report.md with plots into the run directory.

    Example: skillgrad report runs/demo-seed1
    """
    from skillgrad.runs.report import write_report

    if not (run_dir / "config.json").exists() and not (run_dir / "events.jsonl").exists():
        raise UsageError(f"{run_dir} is not a skillgrad run directory (no config.json or events.jsonl)")
    html, md = write_report(run_dir)
    out.print(f"wrote {html}\nwrote {md}", markup=False, highlight=False)


@app.command()
def demo(
    out_dir: Annotated[Path | None, typer.Option("--out", help="Run directory (default runs/demo-seed<N>).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Training seed.")] = 42,
    small: Annotated[bool, typer.Option("--small", help="A reduced demo (fewer facts, one epoch) for tests.")] = False,
    cfg_options: Overrides = None,
    quiet: Quiet = False,
    log_format: LogFormat = "text",
    family: Annotated[str, typer.Option("--family", help="facts (remembered facts) or fewshot-format (a format "
                                        "skill; no test answer appears in training).")] = "facts",
) -> None:
    """Train a skill offline on the `facts` family with the embedded model, then show the held-out win.

    Example: skillgrad demo --seed 1   (or: skillgrad demo --family fewshot-format)
    """
    demo_configs = {"facts": "demo.yaml", "fewshot-format": "demo-fewshot.yaml"}
    if family not in demo_configs:
        raise UsageError(f"--family: unknown demo family {family!r}; use facts or fewshot-format")
    from skillgrad.config.loader import packaged_config_path
    from skillgrad.engine.session import open_run
    from skillgrad.skill import unified_diff

    _check_log_format(log_format)
    # step 0 is the zero-call few-shot skill (the training questions' gold answers as worked examples), through the
    # gate like any candidate: the demo never ends below the baseline a user could build without the optimizer
    overrides = [f"train.seed={seed}", "optimizer.start_from=fewshot", *(cfg_options or [])]
    if small:
        overrides = [*(["env.n_facts=10"] if family == "facts" else []), "train.num_epochs=1",
                     "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false", *overrides]
    cfg, info = _load(packaged_config_path(demo_configs[family]), overrides)
    name = "demo" if family == "facts" else f"demo-{family}"
    run_dir = out_dir or Path("runs") / f"{name}-seed{seed}{'-small' if small else ''}"
    calls = _LiveCalls()
    with _drop_if_never_started(run_dir, calls), run_lock(run_dir, "skillgrad demo"):
        handle = open_run(cfg, run_dir, info=info, fresh=not (run_dir / "runtime_state.json").exists())
        summary = _run(handle, quiet, log_format, calls)
    if summary.get("status") != "completed":
        _print_result(summary, run_dir, log_format=log_format)  # stopped: exit 4
        raise SkillgradError(f"the demo run ended {summary.get('status')}; see {run_dir / 'events.jsonl'}")
    initial = (run_dir / "skills" / "skill_v0000.md").read_text(encoding="utf-8")
    best = (run_dir / "best_skill.md").read_text(encoding="utf-8")
    if log_format == "text":
        out.print("\n[bold]Skill diff (initial -> trained):[/]")
        out.print(unified_diff(initial, best, "initial", "trained"), markup=False, highlight=False)
    _print_result(summary, run_dir, log_format=log_format)
    b, t = summary.get("baseline_test_hard"), summary.get("test_hard")
    few = ((summary.get("baselines") or {}).get("fewshot") or {}).get("score")
    if log_format == "text" and isinstance(b, (int, float)) and isinstance(t, (int, float)):
        out.print(f"[bold]held-out test: initial {_pct(b)}"
                  + (f", few-shot baseline {_pct(few)} (zero teacher calls)" if isinstance(few, (int, float)) else "")
                  + f" -> trained {_pct(t)} ({100 * (t - b):+.1f} points over initial"
                  + (f", {100 * (t - few):+.1f} over few-shot" if isinstance(few, (int, float)) else "") + ")[/]")


@envs_app.command("list")
def envs_list() -> None:
    """Show each registered environment, its data status and its scorer.

    Example: skillgrad envs list
    """
    from skillgrad.envs.registry import list_envs

    t = Table(show_header=True)
    for col in ("name", "data", "scorer", "origin"):
        t.add_column(col)
    for e in list_envs():
        t.add_row(*_plain(e.name, e.data_status, e.scorer, e.origin))
    out.print(t)


@envs_app.command("new")
def envs_new(
    name: Annotated[str, typer.Argument(help="Environment name, e.g. my-bench.")],
    dest: Annotated[Path, typer.Option("--dir", help="Where to create the package.")] = Path("."),
) -> None:
    """Scaffold a working environment package (loader, runner, scorer, skill, config, test).

    Example: skillgrad envs new my-bench --dir envs/
    """
    from skillgrad.envs.scaffold import scaffold_env

    path = scaffold_env(name, dest)
    out.print(f"created {path}\nnext: cd {path} && PYTHONPATH=. pytest -q && "
              f"PYTHONPATH=. skillgrad train --config config.yaml", markup=False, highlight=False)


@runs_app.command("list")
def runs_list(root: Annotated[Path, typer.Argument(help="Folder holding run directories.")] = Path("runs")) -> None:
    """List runs: env, status, steps, best validation score, test delta.

    Example: skillgrad runs list runs/
    """
    from skillgrad.runs.listing import list_runs

    runs = list_runs(root)
    t = Table(show_header=True)
    # Full run names even when piped (80 columns): they are what the other commands take.
    t.add_column("run", no_wrap=True, min_width=max((len(r.name) for r in runs), default=3))
    for col in ("env", "status", "steps", "best val", "test delta"):
        t.add_column(col)
    for r in runs:
        t.add_row(*_plain(r.name, r.env, r.status, r.steps_done, _f(r.best_val_score), _f(r.test_delta)))
    out.print(t)
    for r in runs:  # a damaged file costs its run a value or two, never the listing
        for w in r.warnings:
            err.print(f"warning: {r.path}: {w}", markup=False, highlight=False)


@runs_app.command("show")
def runs_show(run_dir: Annotated[Path, typer.Argument(help="Run directory.")],
              as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Show a run's summary, last steps and files.

    Example: skillgrad runs show runs/demo-seed1
    """
    from skillgrad.runs.listing import show_run

    data = show_run(run_dir)
    if as_json:
        out.print_json(json.dumps(data, default=str))
        return
    info = data["info"]
    out.print(f"[bold]{escape(str(info['name']))}[/] " + escape(f"env={info['env']} status={info['status']} "
                                                                 f"steps={info['steps_done']}"))
    out.print(f"teacher={data.get('teacher')} student={data.get('student')}", markup=False, highlight=False)
    summary = data.get("summary") or {}
    if isinstance(summary.get("test_hard"), (int, float)):  # the held-out score, beside its baseline
        out.print(f"held-out test (hard): {_f(summary.get('baseline_test_hard'))} -> {_f(summary['test_hard'])}",
                  markup=False, highlight=False)
    t = Table(show_header=True)
    for col in ("step", "action", "rollout", "candidate", "best"):
        t.add_column(col)
    for s in data.get("last_steps", []):
        t.add_row(*_plain(s.get("step"), s.get("action"), _f(s.get("rollout_hard")),
                          _f(s.get("candidate_gate_score")), _f(s.get("best_score"))))
    out.print(t)
    for k, v in (data.get("paths") or {}).items():
        out.print(f"{k}: {v}", markup=False, highlight=False)
    for w in data.get("warnings") or []:
        err.print(f"warning: {run_dir}: {w}", markup=False, highlight=False)


@data_app.command("prepare")
def data_prepare(
    name: Annotated[str, typer.Argument(help="Environment name, e.g. searchqa.")],
    src: Annotated[Path, typer.Option("--from", help="Upstream files (file or folder).")],
    dest: Annotated[Path | None, typer.Option("--to", help="Output split_dir (default data/<name>).")] = None,
    ratio: Annotated[str, typer.Option("--ratio", help="train:val:test ratio.")] = "2:1:7",
    seed: Annotated[int, typer.Option("--seed", help="Split seed.")] = 42,
    ids: Annotated[Path | None, typer.Option("--ids", help="SkillOpt id-only manifest dir (data/<bench>_id_split): "
                                             "rebuild that official split instead of a ratio split.")] = None,
) -> None:
    """Convert a benchmark's upstream files into train/val/test items.json.

    Example: skillgrad data prepare searchqa --from ~/Downloads/searchqa.jsonl --to data/searchqa
    Example: skillgrad data prepare officeqa --from officeqa.csv --ids SkillOpt/data/officeqa_id_split --to data/oq
    """
    from skillgrad.envs.registry import env_class
    from skillgrad.envs.splits import id_only_dir, rebuild_from_ids

    cls = env_class(name)
    prepare = getattr(cls, "prepare", None)
    if prepare is None:
        raise UsageError(f"environment {name!r} has no data converter; its data is generated or ready to use")
    if not src.exists():
        raise UsageError(f"--from: not found: {src}")
    if src.is_dir() and id_only_dir(src):
        raise UsageError(f"--from {src} holds id-only manifests; pass it as --ids and the full upstream data as --from")
    if ids is not None and not id_only_dir(ids):
        raise UsageError(f"--ids {ids}: not a directory of id-only manifests (train/, val/, test/ items.json with ids)")
    target = dest or Path("data") / name
    result = prepare(src, target, ratio=ratio, seed=seed)
    if ids is not None:
        result = {**result, "counts": rebuild_from_ids(target, ids, source=src), "split": f"official ({ids})"}
    out.print_json(json.dumps(result, default=str))


def _f(v: Any) -> str:
    return f"{v:.3f}" if isinstance(v, (int, float)) else "-"


def _plain(*values: Any) -> list[Text]:
    """Table cells shown as written: `skillgrad[alfworld]` must not be read as rich markup."""
    return [Text(str(v)) for v in values]


@contextmanager
def _one_line_warnings() -> Iterator[None]:
    """Configuration notices print once each as `warning: ...` (no Python source line, no duplicates)."""
    shown: set[str] = set()
    original = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if not issubclass(category, (ConfigWarning, RetiredKeyWarning, StaleLockWarning, DamageWarning,
                                         OrphanedAnswers)):
            original(message, category, *args, **kwargs)
            return
        text = str(message)
        if text not in shown:
            shown.add(text)
            err.print(f"warning: {text}", markup=False, highlight=False)

    with warnings.catch_warnings():
        warnings.simplefilter("always", ConfigWarning)
        warnings.simplefilter("always", RetiredKeyWarning)
        warnings.simplefilter("always", StaleLockWarning)
        warnings.simplefilter("always", DamageWarning)
        warnings.simplefilter("always", OrphanedAnswers)
        warnings.showwarning = show
        yield


@app.callback(invoke_without_command=True)
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False,
) -> None:
    if version:
        out.print(f"skillgrad {__version__}")
        raise typer.Exit(0)


def _normalise_argv(argv: list[str]) -> list[str]:
    """SkillOpt style `--cfg-options a=1 b=2` becomes repeated options; SkillOpt's legacy flags
    (`--batch_size 8`, `--backend claude_chat`, ...) become `--cfg-options` entries after them."""
    from skillgrad.config.legacy_flags import translate

    cmd = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)
    if cmd is not None and argv[cmd] in ("train", "eval", "estimate"):
        argv = [*argv[: cmd + 1], *translate(argv[cmd + 1:])]
    result: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        result.append(a)
        if a in ("--cfg-options", "-o"):
            i += 1
            first = True
            while i < len(argv) and not argv[i].startswith("-") and ("=" in argv[i] or first):
                if not first:
                    result.append("--cfg-options")
                result.append(argv[i])
                first = False
                i += 1
            continue
        i += 1
    return result


INTERRUPTED = 130


def _interrupted() -> None:
    err.print("interrupted; the run is saved: rerun the same command (or skillgrad resume) to continue", markup=False,
              highlight=False)
    sys.exit(INTERRUPTED)


def _on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM (a dashboard Stop, an MCP cancel, `kill`) stops like Ctrl-C: asyncio's SIGINT handler cancels the
    run's task (stages clean up, exit 130). A process started with SIGINT ignored still stops."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler is not signal.default_int_handler:
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    args = _normalise_argv(list(sys.argv[1:] if argv is None else argv))
    debug = "--debug" in args
    if debug:  # accepted anywhere on the line, not only before the command
        args = ["--debug", *(a for a in args if a != "--debug")]
    if argv is None:  # the real process, not a test calling main() in-process
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        with _one_line_warnings():
            # Not standalone: typer then *returns* the exit code of `typer.Exit` and of Ctrl-C (130) instead of
            # exiting, which the line below must pass on (it was dropped: Ctrl-C and demo failures exited 0).
            rv = app(args=args, prog_name="skillgrad", standalone_mode=False)
    except SkillgradError as e:
        if debug:
            traceback.print_exc()
        err.print(f"{'stopped' if isinstance(e, RunStopped) else 'error'}: {e}", markup=False, highlight=False)
        sys.exit(e.exit_code)
    except typer.Exit as e:
        if e.exit_code == INTERRUPTED:
            _interrupted()
        sys.exit(e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        _interrupted()
    except Exception as e:
        # click usage errors (bad option, missing argument) carry exit code 2; typer vendors its own
        # click, so they are recognised by shape rather than by class.
        show, code = getattr(e, "show", None), getattr(e, "exit_code", None)
        if callable(show) and isinstance(code, int):
            show()
            sys.exit(code)
        if debug:
            traceback.print_exc()
        err.print(f"error: {type(e).__name__}: {e} (rerun with --debug for the traceback)", markup=False,
                  highlight=False)
        sys.exit(1)
    if rv == INTERRUPTED:
        _interrupted()
    if isinstance(rv, int) and not isinstance(rv, bool):
        sys.exit(rv)


if __name__ == "__main__":
    main()
