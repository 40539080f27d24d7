"""The dashboard's web app: Starlette routes, server-rendered Jinja2 pages, SSE from events.jsonl.

Every run is addressed by its path relative to the root (`?r=`), resolved by `safety.resolve_under`.
Pages render what the run files say now; a live page then follows `/events` (server-sent events
tailing events.jsonl from the byte offset the page was rendered at), so nothing in the page polls.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, select_autoescape
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from skillgrad.runs.report import baseline_selection, fmt_seconds, step_records
from skillgrad.runs.report_data import RunData, is_run_dir
from skillgrad.runs.report_render import diff_class
from skillgrad.runs.summary_lines import baseline_lines
from skillgrad.skill import unified_diff
from skillgrad.ui import data as D
from skillgrad.ui import svg
from skillgrad.ui.conversation import conversation, gate_flips
from skillgrad.ui.jobs import Jobs
from skillgrad.ui.lineage import lineage
from skillgrad.ui.safety import PathRefused, new_token, resolve_under, scrub, scrub_data
from skillgrad.ui.security import Guard
from skillgrad.ui.step import step_detail

PKG = Path(str(resources.files("skillgrad.ui")))
TAIL_INTERVAL_S = 0.25  # how often the server checks events.jsonl for new lines (the page never polls)
RUNS_WATCH_S = 1.0  # how often the server checks the runs under the root for the runs page's live table


@dataclass
class Settings:
    root: Path
    project: Path | None = None
    token: str | None = None
    loopback: bool = True
    csrf: str = field(default_factory=new_token)


class HTTPError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def _step_number(request: Request) -> int:
    try:
        return int(request.query_params.get("n", ""))
    except ValueError:
        raise HTTPError(404, "step must be a number") from None


def _templates() -> Environment:
    env = Environment(loader=FileSystemLoader(str(PKG / "templates")), autoescape=select_autoescape(["html"]),
                      trim_blocks=True, lstrip_blocks=True)

    def score(v: Any) -> str:
        return "-" if not isinstance(v, (int, float)) else f"{v:.3f}"

    def num(v: Any) -> str:
        return "-" if not isinstance(v, (int, float)) else f"{v:,}" if isinstance(v, int) else f"{v:,.2f}"

    def cost(v: Any) -> str:
        return "unknown" if v is None else f"${v:.4f}"

    def ts(v: Any) -> str:
        import time as _t

        return "-" if not isinstance(v, (int, float)) else _t.strftime("%Y-%m-%d %H:%M", _t.localtime(v))

    env.filters.update(score=score, num=num, cost=cost, ts=ts, secs=fmt_seconds, scrub=lambda s: scrub(str(s)),
                       diffclass=diff_class, q=lambda s: quote(str(s), safe=""),
                       tojson_safe=lambda o: json.dumps(scrub_data(o), ensure_ascii=False, indent=2, default=str))
    return env


class Dashboard:
    def __init__(self, settings: Settings) -> None:
        self.s = settings
        self.root = settings.root.resolve()
        self.cache = D.RunCache()
        self.jobs = Jobs()
        self.env = _templates()

    # -- helpers ----------------------------------------------------------------------------------

    def render(self, request: Request, template: str, http_status: int = 200, **ctx: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(request=request, csrf=self.s.csrf, project=self.s.project,
                                                  root=str(self.root), **ctx)
        return HTMLResponse(html, status_code=http_status)

    def run_dir(self, rel: str | None) -> Path:
        try:
            path = resolve_under(self.root, rel or "")
        except PathRefused as e:
            raise HTTPError(404, f"no run {rel!r} under the root ({e})") from None
        if not is_run_dir(path):
            raise HTTPError(404, f"no run {rel!r} under the root")
        return path

    def rel(self, path: Path) -> str:
        r = path.relative_to(self.root).as_posix()
        return r or "."

    def load(self, rel: str | None) -> tuple[Path, RunData]:
        path = self.run_dir(rel)
        return path, self.cache.get(path)

    async def check_csrf(self, request: Request) -> dict[str, str]:
        form = {k: str(v) for k, v in (await request.form()).items()}
        given = request.headers.get("x-csrf") or form.get("csrf")
        if given != self.s.csrf:
            raise HTTPError(403, "missing or wrong form token; reload the page and try again")
        return form

    # -- pages ------------------------------------------------------------------------------------

    async def runs_page(self, request: Request) -> Response:
        qp = request.query_params
        rows = [D.run_row(self.rel(p), self.cache.get(p), self.jobs.alive_for(p)) for p in D.find_runs(self.root)]
        envs = sorted({r.env for r in rows})
        statuses = sorted({r.status.split(" ")[0] for r in rows})
        sort = qp.get("sort", "started")
        desc = qp.get("dir", "desc") != "asc"
        shown = D.filter_sort(rows, qp.get("q", ""), qp.get("status", ""), qp.get("env", ""), sort, desc)
        return self.render(request, "runs.html", rows=shown, total=len(rows), envs=envs, statuses=statuses,
                           since=self.runs_signature(),
                           q=qp.get("q", ""), status=qp.get("status", ""), env_filter=qp.get("env", ""),
                           sort=sort, desc=desc, sort_keys=D.SORT_KEYS)

    def runs_signature(self) -> str:
        """A short digest of the sizes and mtimes of every run's files under the root."""
        sig = repr(tuple((p.name, D.file_signature(p)) for p in D.find_runs(self.root)))
        return hashlib.sha256(sig.encode()).hexdigest()[:16]

    async def runs_watch(self, request: Request) -> Response:
        """SSE for the runs page: one `changed` event whenever a run under the root appears, moves on or ends;
        the page then re-fetches its table (nothing in the page polls)."""

        async def stream() -> Any:
            # `since`: the state the page was rendered from, so a change between render and connect counts
            last = request.query_params.get("since") or await asyncio.to_thread(self.runs_signature)
            while not await request.is_disconnected():
                now = await asyncio.to_thread(self.runs_signature)
                if now != last:
                    last = now
                    yield {"event": "changed", "data": "{}"}
                await asyncio.sleep(RUNS_WATCH_S)

        return EventSourceResponse(stream(), ping=10)

    def _run_context(self, path: Path, data: RunData) -> dict[str, Any]:
        records = step_records(data)
        baseline = baseline_selection(data)
        job = self.jobs.for_run(path)
        row = D.run_row(self.rel(path), data, None if job is None else job.alive)
        try:
            offset = (path / "events.jsonl").stat().st_size
        except OSError:
            offset = 0
        return {"row": row, "records": records, "stages": D.stage_list(data, row.live),
                "progress": D.progress(data, row.live),
                "gates": D.gates(data), "budget": D.budget(data), "job": job, "offset": offset,
                "curves": self._curves(data, records, baseline), "steps": sorted(data.steps),
                "warnings": data.warnings, "config": scrub_data(D.run_config(data)),
                "has_best": (path / "best_skill.md").is_file(),
                # the zero-call baselines and, for a run that learned nothing, why (runs/summary_lines.py)
                "baseline_lines": baseline_lines(data.summary or {}), "no_learning": (data.summary or {}).get("no_learning")}

    def _curves(self, data: RunData, records: list[dict[str, Any]], baseline: float | None) -> dict[str, str]:
        return {"validation": svg.validation_svg(records, baseline), "train": svg.train_svg(records),
                "test": svg.test_svg(data.test_scores())}

    async def run_page(self, request: Request) -> Response:
        path, data = self.load(request.query_params.get("r"))
        return self.render(request, "run.html", **self._run_context(path, data))

    async def fragment(self, request: Request) -> Response:
        """Parts of the run page re-rendered after an event (curves, budget, gate table)."""
        path, data = self.load(request.query_params.get("r"))
        ctx = self._run_context(path, data)
        return self.render(request, "run_live_parts.html", **ctx)

    async def step_page(self, request: Request) -> Response:
        path, data = self.load(request.query_params.get("r"))
        n = _step_number(request)
        detail = step_detail(data, n)
        if detail is None:
            raise HTTPError(404, f"step {n} not found in {self.rel(path)}")
        q = request.query_params.get("q", "").strip().lower()
        if q:
            detail["trajectories"] = [t for t in detail["trajectories"]
                                      if q in json.dumps(t, ensure_ascii=False, default=str).lower()]
        steps = sorted(set(data.steps) | {r["step"] for r in step_records(data)})
        return self.render(request, "step.html", rel=self.rel(path), d=scrub_data(detail), q=q, steps=steps,
                           name=data.name, flips=gate_flips(data, n))

    async def conversation_page(self, request: Request) -> Response:
        path, data = self.load(request.query_params.get("r"))
        n = _step_number(request)
        item = request.query_params.get("id", "")
        conv = conversation(data, n, item)
        if conv is None:
            raise HTTPError(404, f"no trajectory {item!r} in step {n} of {self.rel(path)}")
        return self.render(request, "conversation.html", rel=self.rel(path), name=data.name, c=scrub_data(conv))

    async def lineage_page(self, request: Request) -> Response:
        path, data = self.load(request.query_params.get("r"))
        rows = lineage(data)
        return self.render(request, "lineage.html", rel=self.rel(path), name=data.name, rows=rows)

    async def compare_page(self, request: Request) -> Response:
        qp = request.query_params
        runs = [self.rel(p) for p in D.find_runs(self.root)]
        ctx: dict[str, Any] = {"runs": runs, "a": qp.get("a", ""), "b": qp.get("b", "")}
        if ctx["a"] and ctx["b"]:
            sides = []
            for rel in (ctx["a"], ctx["b"]):
                path, data = self.load(rel)
                records = step_records(data)
                sides.append({"rel": rel, "data": data, "row": D.run_row(rel, data, self.jobs.alive_for(path)),
                              "curves": self._curves(data, records, baseline_selection(data)),
                              "config": D.flatten(scrub_data(D.run_config(data))),
                              "best": data.read_text(data.best_skill()) or ""})
            keys = sorted(set(sides[0]["config"]) | set(sides[1]["config"]))
            ctx["config_diff"] = [(k, sides[0]["config"].get(k, "—"), sides[1]["config"].get(k, "—")) for k in keys
                                  if sides[0]["config"].get(k, "—") != sides[1]["config"].get(k, "—")]
            ctx["skill_diff"] = scrub(unified_diff(sides[0]["best"], sides[1]["best"], f"{ctx['a']}/best_skill.md",
                                                   f"{ctx['b']}/best_skill.md"))
            ctx["sides"] = sides
        return self.render(request, "compare.html", **ctx)

    async def plot_png(self, request: Request) -> Response:
        """The report's own PNG plots (runs/report_plots.py), for download or comparison with the report."""
        from skillgrad.runs.report_plots import plot_all

        path, data = self.load(request.query_params.get("r"))
        name = request.query_params.get("name", "")
        records = step_records(data)
        for fname, _caption, png in await asyncio.to_thread(plot_all, data, records, baseline_selection(data)):
            if fname == name:
                return Response(png, media_type="image/png")
        raise HTTPError(404, f"no plot {name!r} for this run")

    async def file_view(self, request: Request) -> Response:
        """A text file inside a run, secrets scrubbed (for the links on the step page)."""
        run, _ = self.load(request.query_params.get("r"))
        try:
            target = resolve_under(run, request.query_params.get("path", ""))
        except PathRefused as e:
            raise HTTPError(404, f"no such file in this run ({e})") from None
        if not target.is_file() or target.name.endswith((".sqlite", ".sqlite-wal", ".sqlite-shm")):
            raise HTTPError(404, "no such file in this run")
        text = target.read_bytes()[:2_000_000].decode("utf-8", errors="replace")
        if request.query_params.get("download"):  # e.g. best_skill.md, saved under the run's name
            name = f"{run.name}-{target.name}".replace('"', "")
            return PlainTextResponse(scrub(text), headers={"Content-Disposition": f'attachment; filename="{name}"'})
        return PlainTextResponse(scrub(text))

    async def events(self, request: Request) -> Response:
        """SSE: every new line of events.jsonl from `offset` (or Last-Event-ID), secrets scrubbed."""
        path = self.run_dir(request.query_params.get("r")) / "events.jsonl"
        start = request.headers.get("last-event-id") or request.query_params.get("offset") or "0"
        try:
            offset = max(0, int(start))
        except ValueError:
            offset = 0

        async def stream() -> Any:
            pos, pending = offset, b""  # pos: file offset where `pending` (an incomplete line) starts
            while not await request.is_disconnected():
                try:
                    with open(path, "rb") as f:
                        f.seek(pos + len(pending))
                        chunk = f.read(1 << 20)
                except OSError:
                    chunk = b""
                if not chunk:
                    await asyncio.sleep(TAIL_INTERVAL_S)
                    continue
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    pos += len(line) + 1
                    try:
                        ev = json.loads(line)
                    except ValueError:
                        continue  # a line cut by a kill
                    if not isinstance(ev, dict):
                        continue
                    yield {"event": "run", "id": str(pos), "data": json.dumps(scrub_data(ev), default=str)}
                    if ev.get("event") == "run_end":
                        yield {"event": "end", "data": "{}"}
                        return

        return EventSourceResponse(stream(), ping=10)

    # -- actions (launch, stop, resume, evaluate) ---------------------------------------------------

    async def launch_page(self, request: Request) -> Response:
        from skillgrad.ui import actions

        return self.render(request, "launch.html", configs=actions.config_choices(self.root), form={}, estimate=None,
                           error=None)

    async def launch_estimate(self, request: Request) -> Response:
        from skillgrad.ui import actions

        form = await self.check_csrf(request)
        est, error = await actions.estimate(self.root, form)
        return self.render(request, "launch.html", configs=actions.config_choices(self.root), form=form,
                           estimate=est, error=error, http_status=200 if error is None else 400)

    async def launch(self, request: Request) -> Response:
        from skillgrad.ui import actions

        form = await self.check_csrf(request)
        try:
            job = actions.launch_train(self, form)
            await actions.wait_started(job)
        except actions.ActionError as e:
            return self.render(request, "launch.html", configs=actions.config_choices(self.root), form=form,
                               estimate=None, error=str(e), http_status=400)
        return RedirectResponse(f"/run?r={quote(self.rel(job.run_dir), safe='')}", status_code=303)

    async def stop(self, request: Request) -> Response:
        form = await self.check_csrf(request)
        path = self.run_dir(form.get("r"))
        job = self.jobs.for_run(path)
        if job is None or not job.alive:
            raise HTTPError(409, "this run was not launched from this dashboard or is not running")
        self.jobs.stop(job)
        return RedirectResponse(f"/run?r={quote(self.rel(path), safe='')}", status_code=303)

    async def resume(self, request: Request) -> Response:
        from skillgrad.ui import actions

        form = await self.check_csrf(request)
        path = self.run_dir(form.get("r"))
        if self.jobs.alive_for(path):
            raise HTTPError(409, "this run is already running")
        try:
            actions.launch_resume(self, path)
        except actions.ActionError as e:  # written by another process (run.lock)
            raise HTTPError(409, str(e)) from None
        return RedirectResponse(f"/run?r={quote(self.rel(path), safe='')}", status_code=303)

    async def evaluate(self, request: Request) -> Response:
        from skillgrad.ui import actions

        form = await self.check_csrf(request)
        path, data = self.load(form.get("r"))
        try:
            actions.launch_eval(self, path, data, form.get("skill", "best"), form.get("split", "test"))
        except actions.ActionError as e:
            raise HTTPError(400, str(e)) from None
        return RedirectResponse("/jobs", status_code=303)

    async def jobs_page(self, request: Request) -> Response:
        from skillgrad.ui import actions

        jobs = sorted(self.jobs.items.values(), key=lambda j: -j.id)
        rows = [{"job": j, "rel": self.rel(j.run_dir) if j.run_dir.is_relative_to(self.root) else str(j.run_dir),
                 "log": scrub(j.log_tail()), "result": actions.eval_result(j)} for j in jobs]
        return self.render(request, "jobs.html", rows=rows)

    async def jobs_json(self, request: Request) -> Response:
        return JSONResponse([{"id": j.id, "kind": j.kind, "state": j.state, "run": self.rel(j.run_dir)
                              if j.run_dir.is_relative_to(self.root) else str(j.run_dir)}
                             for j in self.jobs.items.values()])

    # -- Sleep -------------------------------------------------------------------------------------

    async def sleep_page(self, request: Request) -> Response:
        from skillgrad.ui import sleep_view

        props = sleep_view.list_staged(self.s.project) if self.s.project else []
        return self.render(request, "sleep.html", proposals=props)

    async def sleep_item(self, request: Request) -> Response:
        from skillgrad.ui import sleep_view

        prop = sleep_view.load(self.s.project, request.query_params.get("id", ""))
        return self.render(request, "sleep_item.html", p=prop,
                           message=request.query_params.get("msg", ""))

    async def sleep_action(self, request: Request) -> Response:
        from skillgrad.ui import sleep_view

        form = await self.check_csrf(request)
        prop = sleep_view.load(self.s.project, form.get("id", ""))
        action = request.path_params["action"]
        msg = await asyncio.to_thread(sleep_view.act, prop, action)
        return RedirectResponse(f"/sleep/item?id={quote(prop.id, safe='')}&msg={quote(msg, safe='')}", status_code=303)


def create_app(root: Path, *, project: Path | None = None, token: str | None = None,
               loopback: bool = True) -> Starlette:
    settings = Settings(root=Path(root), project=Path(project).resolve() if project else None, token=token,
                        loopback=loopback)
    dash = Dashboard(settings)

    def page(fn: Any) -> Any:
        async def handler(request: Request) -> Response:
            try:
                return await fn(request)
            except HTTPError as e:
                return dash.render(request, "error.html", http_status=e.status, message=e.message)
        return handler

    routes = [
        Route("/", page(dash.runs_page)),
        Route("/runs/watch", page(dash.runs_watch)),
        Route("/conversation", page(dash.conversation_page)),
        Route("/run", page(dash.run_page)),
        Route("/run/parts", page(dash.fragment)),
        Route("/step", page(dash.step_page)),
        Route("/lineage", page(dash.lineage_page)),
        Route("/compare", page(dash.compare_page)),
        Route("/plot.png", page(dash.plot_png)),
        Route("/file", page(dash.file_view)),
        Route("/events", page(dash.events)),
        Route("/launch", page(dash.launch_page)),
        Route("/launch/estimate", page(dash.launch_estimate), methods=["POST"]),
        Route("/launch/start", page(dash.launch), methods=["POST"]),
        Route("/run/stop", page(dash.stop), methods=["POST"]),
        Route("/run/resume", page(dash.resume), methods=["POST"]),
        Route("/run/eval", page(dash.evaluate), methods=["POST"]),
        Route("/jobs", page(dash.jobs_page)),
        Route("/jobs.json", page(dash.jobs_json)),
        Route("/sleep", page(dash.sleep_page)),
        Route("/sleep/item", page(dash.sleep_item)),
        Route("/sleep/{action:str}", page(dash.sleep_action), methods=["POST"]),
        Mount("/static", StaticFiles(directory=str(PKG / "static")), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.dashboard = dash
    return Guard(app, token=token, loopback=loopback)  # type: ignore[return-value]
