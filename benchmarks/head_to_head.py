"""skillgrad vs SkillOpt 0.2.0 vs GEPA vs DSPy's few-shot optimisers and the zero-call baselines: same served
models, same data, same budget in calls and tokens, one command.

    python benchmarks/head_to_head.py --skillopt-src DIR    # 3 seeds, 40 calls a run, the documented tasks
    python benchmarks/head_to_head.py --teacher-url https://host/v1 --teacher-model NAME --teacher-key-env VAR
    python benchmarks/head_to_head.py --tiny --seeds 1 --tasks facts      # the CI setting
    python benchmarks/head_to_head.py --resume --tasks facts --out DIR    # finish a stopped run (h2h/resume.py)

Systems: skillgrad (defaults on every task), SkillOpt, GEPA, DSPy LabeledFewShot (`dspy-labeled`: k verified
training golds, zero calls) and BootstrapFewShot (`dspy-bootstrap`: the teacher's passing traces, then labeled
demos), MIPROv2 (`dspy-mipro`: its proposer asks the teacher for instructions, its search scores them with demo
sets on validation, sized to the call budget), skillgrad's zero-call few-shot baseline (`fewshot`), the initial
skill (`initial`, no training) and, when named, skillgrad's ablations (analysts only, demonstrations only). A
capable teacher (`--teacher-url`: any OpenAI-compatible endpoint, e.g. a handoff model server) answers every
system's teacher calls through the proxy; the student stays the served model.

One `python -m llama_cpp.server` on 127.0.0.1 (the embedded SmolLM2 GGUF unless --gguf, or an existing server via
--endpoint) serves student and teacher for all three systems, behind a logging proxy (h2h/serve.py): its request
log is the ground truth for calls and tokens, and it applies one reply cap per role to every system. For each
task and seed the systems run one after another, the order rotating per seed; each gets the same call budget
(skillgrad: budget.max_calls; GEPA: a stopper on the proxy's count; SkillOpt has no call budget, so it gets the
same epochs and batch size as skillgrad). Each system's best skill is then scored on the task's test split by
the harness with the same student prompt (temperature 0); no optimiser ever sees the test split.

SkillOpt runs from its own venv (benchmarks/.venv-peers, made by h2h/peers_venv.py). Where a system cannot run,
its row says why. Artifacts (skills, logs, configs, request log, results.json, the table) go under --out.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from h2h import fewshot, heldout, resume, run_skillgrad, run_skillopt  # noqa: E402
from h2h.peers_venv import DSPY_SPEC, SKILLOPT_SPEC, VENV, ensure_peers_venv  # noqa: E402
from h2h.serve import Proxy, Upstream, embedded_gguf, read_log, start_llama_server, usage_of  # noqa: E402
from h2h.table import render  # noqa: E402
from h2h.tasks import Task, resolve  # noqa: E402

SYSTEMS = ("skillgrad", "skillopt", "gepa", "dspy-labeled", "dspy-bootstrap", "dspy-mipro", "fewshot", "initial")
DSPY = ("dspy-labeled", "dspy-bootstrap", "dspy-mipro")
# skillgrad's ablations (skillgrad itself is both sources), run only when --systems names them; the
# demonstrations-only arm also drops the epoch-end slow update and meta skill, the other teacher-written text
ABLATIONS = {"skillgrad-analysts-only": ["optimizer.demonstrations=0"],
             "skillgrad-demonstrations-only": ["optimizer.analysts=false", "optimizer.use_slow_update=false",
                                               "optimizer.use_meta_skill=false"],
             # skillgrad started from its zero-call few-shot skill (the demo's setting; the default starts from
             # the initial skill): what the few-shot peers' head start is worth to it
             "skillgrad-fewshot-start": ["optimizer.start_from=fewshot"]}
ALL_SYSTEMS = (*SYSTEMS, *ABLATIONS)
PEERS_VENV = ("skillopt", *DSPY)  # the systems that run from benchmarks/.venv-peers
ROOT = Path(__file__).resolve().parents[1]


# tasks never used in development: the report suite, the demo's task (facts) and a public task set's sample
DEFAULT_TASKS = ("facts", "searchqa", "report:expense-category", "report:sentiment-line", "report:order-extract",
                 "report:iso-date", "report:title-slug", "report:price-lookup", "report:lang-code",
                 "report:csv-contact", "public:banking77")


def skillgrad_version() -> str:
    """The commit the skillgrad rows ran, marked when the shared tree had uncommitted changes under src/."""
    def git(*a: str) -> str:
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+uncommitted-src" if git("status", "--porcelain", "--", "src") else "")


def package_version(name: str) -> str:
    try:
        return f"{name}=={importlib.metadata.version(name)}"
    except importlib.metadata.PackageNotFoundError:
        return f"{name} (not installed)"


def source_version(src: Path) -> str:
    pyproject = src / "pyproject.toml"
    version = re.search(r'^version = "([^"]+)"', pyproject.read_text(), re.M) if pyproject.is_file() else None
    return f"skillopt {version.group(1) if version else '?'} from {src}"


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9-]+", "-", text).strip("-")


def run_gepa(spec: dict[str, Any], out: Path) -> dict[str, Any]:
    (out / "spec.json").write_text(json.dumps(spec, indent=1))
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / "h2h" / "run_gepa.py"), str(out / "spec.json")],
                          capture_output=True, text=True)
    (out / "stdout.log").write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    res = out / "result.json"
    if not res.is_file():
        tail = " | ".join(proc.stderr.strip().splitlines()[-2:])[-300:]
        return {"wall_s": time.monotonic() - t0, "error": f"GEPA process exited {proc.returncode}: {tail}"}
    return dict(json.loads(res.read_text()))


def dspy_spec(name: str, tag: str, seed: int, args: argparse.Namespace, proxy: Proxy, ctx: dict[str, Any],
              out: Path) -> dict[str, Any]:
    side = {"student": {"base": proxy.url(tag, "student"), "model": run_skillgrad.EMBEDDED,
                        "max_tokens": int(proxy.caps.get("student", 0) or 256)},
            "teacher": {"base": proxy.url(tag, "teacher"), "model": teacher_of(args).model,
                        "max_tokens": args.teacher_cap}}
    train, val = list(ctx["splits"].train), list(ctx["splits"].val)
    random.Random(seed).shuffle(train)
    random.Random(seed).shuffle(val)

    def rows(items: list[Any]) -> list[dict[str, Any]]:
        return [{"id": it.id, "question": fewshot.question_text(it), "answer": ctx["golds"].get(it.id)} for it in items]

    return {**side, "optimizer": name.removeprefix("dspy-"), "api_key_env": run_skillgrad.API_KEY_ENV,
            "instructions": ctx["initial"], "score_url": ctx["score_url"], "k": fewshot.K_LABELED,
            "max_bootstrapped": fewshot.MAX_BOOTSTRAPPED, "budget_calls": args.budget_calls, "out": str(out),
            "seed": seed, "train": rows(train), "val": rows(val),
            "mipro": fewshot.mipro_plan(args.budget_calls, len(train), len(val))}


def teacher_of(args: argparse.Namespace) -> run_skillgrad.TeacherRole:
    """The teacher every system is told it has: the embedded model, or --teacher-url's under its own name and window."""
    return run_skillgrad.teacher_role(args.teacher_url, args.teacher_model, args.teacher_n_ctx)


def run_system(name: str, task: Task, seed: int, args: argparse.Namespace, proxy: Proxy, out: Path,
               peers: Path | str, cfg: Any, splits: Any, initial: str, ctx: dict[str, Any]) -> dict[str, Any]:
    tag = slug(f"{name}-{task.name}-s{seed}")
    proxy.budgets[tag] = (args.budget_calls, args.budget_tokens)  # past it the proxy refuses, whoever asks
    sized = [*task.sized(args.tiny), f"train.seed={seed}", "env.workers=1"]
    route = run_skillgrad.route_overrides(proxy, tag, args.teacher_cap, teacher_of(args))
    out.mkdir(parents=True, exist_ok=True)
    if name == "skillgrad" or name in ABLATIONS:
        res = run_skillgrad.run(task.config, [*sized, *ABLATIONS.get(name, []), *route], out, args.budget_calls,
                                args.budget_tokens)
    elif name == "gepa":
        res = run_gepa({"config": str(task.config), "overrides": [*sized, *route], "seed": seed,
                        "budget": args.budget_calls, "budget_tokens": args.budget_tokens, "out": str(out),
                        "log": str(proxy.log_path), "tag": tag, "teacher_cap": args.teacher_cap,
                        "edit_budget": cfg.optimizer.learning_rate}, out)
    elif name == "initial":
        res = {"wall_s": 0.0, "skill": initial, "steps": 0}
    elif name == "fewshot":
        t0 = time.monotonic()
        skill, info = fewshot.fewshot_baseline(ctx["env"], ctx["student"], list(splits.train), initial, seed)
        res = {"wall_s": time.monotonic() - t0, "skill": skill, "steps": 0, **info}
    elif name.startswith("dspy-") and isinstance(peers, str):
        res = {"wall_s": 0.0, "error": peers}
    elif name.startswith("dspy-"):
        assert isinstance(peers, Path)
        res = fewshot.run_dspy(peers, dspy_spec(name, tag, seed, args, proxy, ctx, out), out, initial,
                               args.skillopt_timeout)
    elif isinstance(peers, str):
        res = {"wall_s": 0.0, "error": peers}
    elif (skillopt_env := run_skillopt.adapter_for(cfg.env.name, splits)) is None:
        res = {"wall_s": 0.0, "error": run_skillopt.NO_ADAPTER}
    else:
        tag = "skillopt"  # its config names the per-role endpoints; one SkillOpt run at a time, split by time
        proxy.budgets[tag] = (0, 0)  # the tag is reused over runs: SkillOpt's budget is its epochs and batch
        data = run_skillopt.write_data(splits, out / "data")
        conf = run_skillopt.write_config(out, proxy, env=skillopt_env, data=data, initial_skill=initial, n_train=len(splits.train),
                                         batch=min(cfg.train.batch_size, len(splits.train)), epochs=cfg.train.num_epochs, seed=seed,
                                         edit_budget=cfg.optimizer.learning_rate, teacher_cap=args.teacher_cap,
                                         student_cap=int(proxy.caps.get("student", 0) or 256),
                                         teacher_model=teacher_of(args).model)
        res = run_skillopt.run(peers, conf, out, args.skillopt_timeout)
    res["tag"] = tag
    return res


def task_context(cfg: Any, env: Any, splits: Any, initial: str, systems: list[str]) -> dict[str, Any]:
    """What the few-shot systems share on a task: a student client (for the scorer's token counts; it is routed
    under the eval tag), the training golds the environment verifies, and the scoring endpoint DSPy's metric asks."""
    from skillgrad.models.factory import build_models

    models = build_models(cfg, cache_path=None)
    ctx: dict[str, Any] = {"env": env, "splits": splits, "initial": initial, "student": models.student,
                           "golds": {}, "score_url": "", "close": lambda: None}
    if not set(DSPY) & set(systems):
        return ctx
    loop = fewshot.Loop()
    ctx["golds"] = loop.run(fewshot.verified_golds(env, models.student, list(splits.train)))
    loop.close()
    server = fewshot.ScoreServer(env, models.student, [*splits.train, *splits.val])
    ctx["score_url"], ctx["close"] = server.start(), server.stop
    return ctx


def trim_run(rdir: Path, log_lines: int = 150) -> None:
    """Keep what a reader needs from one run (best skill, command or config, result, run summary, the end of its
    output) and drop the rest (run directories with every prediction, caches, data copies)."""
    summary = rdir / "run" / "summary.json"
    if summary.is_file():
        summary.replace(rdir / "summary.json")
    for sub in ("run", "data", "gepa_run", "generic_prompts"):
        if (rdir / sub).is_dir():
            shutil.rmtree(rdir / sub)
    log = rdir / "stdout.log"
    if log.is_file():
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        if len(lines) > log_lines:
            log.write_text(f"[... {len(lines) - log_lines} earlier lines cut]\n" + "\n".join(lines[-log_lines:]) + "\n")


def all_tables(rows: list[dict[str, Any]]) -> list[str]:
    """One table per task in results.json (this invocation's and earlier ones'), systems in SYSTEMS order."""
    out = []
    for task in dict.fromkeys(r["task"] for r in rows):
        mine = sorted((r for r in rows if r["task"] == task), key=lambda r: (ALL_SYSTEMS.index(r["system"]), r["seed"]))
        out.append(render(task, mine, mine[0]["n_test"]))
    return out


def write_readme(out: Path, args: argparse.Namespace, tables: list[str]) -> None:
    argv = "\n    ".join("python benchmarks/head_to_head.py " + " ".join(json.loads(line)["argv"])
                           for line in (out / "invocations.jsonl").read_text().splitlines())
    (out / "README.md").write_text(f"""# Head to head: skillgrad vs SkillOpt 0.2.0 vs GEPA

Reproduce (from the repository root, skillgrad's venv with the dev extra; the invocations that filled this
directory, in order, each keeping the rows the earlier ones produced):

    {argv}

Setting: one llama_cpp.server ({args.gguf or "the embedded SmolLM2-135M GGUF"}{", endpoint " + args.endpoint
if args.endpoint else ""}, {args.n_threads} thread(s), n_ctx {args.n_ctx}) serves the student{
" and the teacher" if not args.teacher_url else ""} for every system behind a logging proxy{
"; the teacher is " + args.teacher_model + " at " + args.teacher_url + " for every system" if args.teacher_url
else " (the embedded-teacher table)"}; `requests.jsonl` is its log (one line per call: tag = system-task-seed, role,
tokens, status, seconds, the reply cap applied). Reply cap: teacher {args.teacher_cap} tokens for every system,
student the task's own cap. Budget per training run: {args.budget_calls} calls{
f" and {args.budget_tokens} tokens" if args.budget_tokens else ""}, held by the proxy for every system (a request
past it is refused) and by each system's own stopper (skillgrad: budget.max_calls / max_tokens; GEPA: a stopper on
the log's count; DSPy BootstrapFewShot: at most that many training tasks tried; MIPROv2: sizes planned from it
(h2h/fewshot.py `mipro_plan`); SkillOpt has no budget option and
gets skillgrad's epochs and batch size). `dspy-labeled`, `fewshot` and `initial` make no model call in training.
Seeds: {args.seeds}, the system order rotating per seed within one invocation. Held-out: the task's test
split, scored by the harness with the task's student prompt at temperature 0 (the same for every system); no
optimiser reads it (skillgrad seals it with `evaluation.eval_test=false`, GEPA gets train and validation only,
SkillOpt's data directory holds an empty test split). SkillOpt: `--skillopt-src` names a SkillOpt checkout
(its v0.2.0 tag, e.g. `git clone https://github.com/microsoft/SkillOpt && git -C SkillOpt checkout v0.2.0`),
since the PyPI wheel ships no prompts; rule-judged suite skills run through `benchmarks/h2h/skillopt_rules.py`.

Per run, under `<task>/seed<k>/<system>/`: the best skill (`best_skill.md`), the command or spec, the process
output (`stdout.log`); skillgrad's run summary, GEPA's `reflection_template.txt` and result, SkillOpt's config
(`skillopt.yaml`) and run summary. `results.json`: every row with per-item scores, the code version it ran
(`version`) and when it finished.

{chr(10).join(tables)}""")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", nargs="+", default=None, help="facts fewshot-format searchqa suite:<skill> ...")
    ap.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=ALL_SYSTEMS,
                    help=f"default: {' '.join(SYSTEMS)}; also {' '.join(ABLATIONS)}")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--budget-calls", type=int, default=40, help="provider calls per training run (all roles)")
    ap.add_argument("--budget-tokens", type=int, default=0,
                    help="tokens (prompt + completion, all roles) per training run; 0 = no token limit")
    ap.add_argument("--teacher-cap", type=int, default=256, help="reply cap (tokens) of every teacher call")
    ap.add_argument("--teacher-url", default="",
                    help="an OpenAI-compatible endpoint (http(s)://host[:port][/v1]) that answers every system's "
                         "teacher calls (default: the served student model)")
    ap.add_argument("--teacher-model", default="", help="the model name the teacher endpoint serves")
    ap.add_argument("--teacher-n-ctx", type=int, default=0,
                    help="the --teacher-url model's context window in tokens (default: skillgrad's model table's, "
                         "else 200,000, a handoff agent's); 4096 or less gets skillgrad's small-teacher prompts")
    ap.add_argument("--teacher-key-env", default="",
                    help="the environment variable holding the teacher endpoint's API key (read per request)")
    ap.add_argument("--tiny", action="store_true", help="2 steps on 4 items per split (the CI setting)")
    ap.add_argument("--gguf", type=Path, default=None, help="model file for llama_cpp.server (default: SmolLM2)")
    ap.add_argument("--endpoint", default="", help="an already running OpenAI-compatible server, http://host:port")
    ap.add_argument("--n-threads", type=int, default=1, help="llama.cpp threads (1: a second thread spin-waits on a busy machine)")
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--skillopt-src", type=Path, default=None,
                    help="a SkillOpt checkout (e.g. its v0.2.0 tag) to install editable instead of the PyPI wheel, "
                         "which ships no prompt files; goes into benchmarks/.venv-peers-src")
    ap.add_argument("--skillopt-timeout", type=float, default=1800.0)
    ap.add_argument("--out", type=Path, default=None, help="default benchmarks/results/<date>")
    ap.add_argument("--keep-all", action="store_true",
                    help="keep every run directory whole (default: best skill, config, summary, end of the log)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the rows of --out's results.json that have a held-out result from the same options "
                         "and the same code of their system (h2h/resume.py); run only the others")
    return ap


def main() -> int:
    ap = parser()
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so `finally` stops the server on a kill
    if args.seeds < 1 or args.budget_calls < 1 or args.budget_tokens < 0:
        print("--seeds and --budget-calls must be >= 1, --budget-tokens >= 0", file=sys.stderr)
        return 2
    if args.teacher_url and not (args.teacher_url.startswith(("http://", "https://")) and args.teacher_model):
        print("--teacher-url needs an http(s):// URL and --teacher-model the name it serves", file=sys.stderr)
        return 2
    if args.teacher_n_ctx and not (args.teacher_url and args.teacher_n_ctx >= 512):
        print("--teacher-n-ctx needs --teacher-url and a window of at least 512 tokens", file=sys.stderr)
        return 2
    if args.teacher_key_env and not os.environ.get(args.teacher_key_env):
        print(f"--teacher-key-env: the environment variable {args.teacher_key_env} is not set", file=sys.stderr)
        return 2
    tasks = resolve(args.tasks or list(DEFAULT_TASKS))
    out = (args.out or Path(__file__).parent / "results" / dt.date.today().isoformat()).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "invocations.jsonl", "a", encoding="utf-8") as f:  # several invocations may fill one --out
        f.write(json.dumps({"argv": sys.argv[1:], "started": dt.datetime.now(dt.timezone.utc).isoformat(),
                            "skillgrad": skillgrad_version()}) + "\n")

    server = None
    if args.endpoint:
        upstream = args.endpoint.rstrip("/").removesuffix("/v1")
    else:
        server, upstream = start_llama_server(args.gguf or embedded_gguf(), args.n_threads, args.n_ctx,
                                              out / "llama_server.log")
    proxy = Proxy(upstream, out / "requests.jsonl", {"teacher": args.teacher_cap})
    if args.teacher_url:
        proxy.roles["teacher"] = Upstream(args.teacher_url, args.teacher_model, args.teacher_key_env)
    proxy.start()
    peers: Path | str = ""
    if set(PEERS_VENV) & set(args.systems):
        try:
            peers = (ensure_peers_venv(VENV.with_name(".venv-peers-src"), source=args.skillopt_src)
                     if args.skillopt_src else ensure_peers_venv())
        except RuntimeError as e:
            peers = f"{SKILLOPT_SPEC} / {DSPY_SPEC} could not be installed: {e}"
    # rows of systems, tasks or seeds this invocation does not run stay in results.json and in the tables; the
    # ones it names run again, unless --resume finds a result from the same options and code (h2h/resume.py)
    old = json.loads((out / "results.json").read_text()) if (out / "results.json").is_file() else []
    resume.backfill(old, out / "invocations.jsonl", ap)
    rows = {(r["task"], r["seed"], r["system"]): r for r in old}
    options = resume.run_options(args)
    versions = {"skillgrad": skillgrad_version(), "gepa": package_version("gepa"),
                "skillopt": args.skillopt_src and source_version(args.skillopt_src) or SKILLOPT_SPEC,
                **{name: DSPY_SPEC for name in DSPY}}
    teacher = f"{args.teacher_model} at {args.teacher_url}" if args.teacher_url else "the served student model"
    tables: list[str] = []
    try:
        for task in tasks:
            eval_route = run_skillgrad.route_overrides(proxy, slug(f"eval-{task.name}"), args.teacher_cap,
                                                       teacher_of(args))
            cfg, env, splits = heldout.load_task_env(task.config, [*task.sized(args.tiny), *eval_route])
            proxy.caps["student"] = int(getattr(env.options, "max_tokens", 0) or 0)
            test, initial = list(splits.test), env.initial_skill()
            before = heldout.score(cfg, env, test, initial)
            ctx = task_context(cfg, env, splits, initial, args.systems)
            tdir = out / slug(task.name)
            tdir.mkdir(exist_ok=True)
            (tdir / "initial_skill.md").write_text(initial)
            for seed in range(args.seeds):
                k = seed % len(args.systems)
                for name in [*args.systems[k:], *args.systems[:k]]:  # the order rotates per seed
                    rdir = tdir / f"seed{seed}" / name
                    if name in ("skillgrad", "fewshot", "initial", *ABLATIONS):  # src/ read at its start
                        versions[name] = skillgrad_version()
                    stamp = resume.code_stamp(ROOT)
                    if args.resume and (kept := rows.get((task.name, seed, name))) is not None:
                        why = resume.rerun_reason(kept, options, versions[name], ROOT, stamp)
                        if why is None:
                            print(f"[h2h] {task.name} seed {seed} {name}: kept from {out / 'results.json'}",
                                  flush=True)
                            continue
                        print(f"[h2h] {task.name} seed {seed} {name}: runs again ({why})", flush=True)
                    t0 = time.time()
                    res = run_system(name, task, seed, args, proxy, rdir, peers, cfg, splits, initial, ctx)
                    usage = usage_of(read_log(proxy.log_path), res.pop("tag"), since=t0,
                                     step_windows=res.get("step_windows"))
                    row = {"task": task.name, "system": name, "seed": seed, "n_test": len(test),
                           "before": sum(before["scores"].values()) / max(1, len(test)), "usage": usage,
                           "version": versions[name], "finished": dt.datetime.now(dt.timezone.utc).isoformat(),
                           "teacher": teacher, "options": options, "code": stamp,
                           **{k2: v for k2, v in res.items() if k2 != "skill"}}
                    if "skill" in res:
                        (rdir / "best_skill.md").write_text(res["skill"])
                        after = heldout.score(cfg, env, test, res["skill"])
                        row["after"] = sum(after["scores"].values()) / max(1, len(test))
                        row["heldout_errors"] = after["errors"]
                        row["per_item"] = after["scores"]
                    print(f"[h2h] {task.name} seed {seed} {name}: "
                          f"{row.get('after', row.get('error'))} in {row['wall_s']:.0f} s, {usage['calls']} calls",
                          flush=True)
                    rows[(task.name, seed, name)] = row
                    if not args.keep_all:
                        trim_run(rdir)
                    (out / "results.json").write_text(json.dumps(list(rows.values()), indent=1))
            ctx["close"]()
            tables = all_tables(list(rows.values()))
            (out / "table.md").write_text("\n".join(tables))
            write_readme(out, args, tables)
    finally:
        proxy.stop()
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    print("\n".join(tables))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
