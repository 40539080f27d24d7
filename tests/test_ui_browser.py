"""The dashboard in Debian's headless Chromium (Playwright), against `skillgrad ui` as a real process.

Each test saves screenshots of the pages it visits into a temporary folder (its path is printed), or into
docs/screenshots/ (shown in the docs) when SKILLGRAD_REFRESH_SCREENSHOTS=1.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_helpers import CHROMIUM_ARGS, Server, chromium_path, copy_sample, make_run

from skillgrad.skill import skill_hash

DOCS_SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
SHOTS = DOCS_SHOTS


@pytest.fixture(autouse=True)
def _shots_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Screenshots go to a temporary folder unless SKILLGRAD_REFRESH_SCREENSHOTS=1 asks for docs/screenshots/."""
    if os.environ.get("SKILLGRAD_REFRESH_SCREENSHOTS") != "1":
        folder = tmp_path_factory.getbasetemp() / "screenshots"
        monkeypatch.setitem(globals(), "SHOTS", folder)
        print(f"screenshots: {folder}")


@pytest.fixture
def browser() -> Iterator[Any]:
    exe = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def page_of(browser: Any) -> Any:
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    page.set_default_timeout(20_000)
    return page


def shot(page: Any, name: str, full_page: bool = False) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=full_page)


def test_open_finished_run_and_a_steps_diff(browser: Any, tmp_path: Path) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    make_run(root, "facts-cosine", steps=8, seed=1)
    make_run(root, "facts-constant", steps=6, seed=2)
    copy_sample(root, "sample")
    server = Server(root)
    try:
        page = page_of(browser)
        page.goto(server.url + "/")
        assert page.locator("#runs tbody tr").count() == 3
        shot(page, "runs.png")
        page.click("a.runlink:text('facts-cosine')")
        page.wait_for_selector("#gates tbody tr")
        assert "completed" in page.inner_text("#run-status")
        assert page.locator("#curves svg").count() == 3
        shot(page, "run.png")
        page.click("a.steplink:text-is('2')")
        page.wait_for_selector("#candidate-diff")
        diff = page.inner_text("#candidate-diff")
        assert "+- Fact 2: the answer to question q2 is value2." in diff
        assert page.locator("#candidate-diff span.add").count() >= 1
        shot(page, "step.png")
        # searching trajectories filters rows as you type
        rows = page.locator("#traj-table tbody tr")
        assert rows.count() == 5
        page.fill("#traj-search", "q2-3")
        assert page.locator("#traj-table tbody tr:visible").count() == 1
        page.goto(server.url + "/lineage?r=facts-cosine")
        assert "step 1: append (edit #0)" in page.inner_text("#lineage")
        shot(page, "lineage.png")
        page.goto(server.url + "/compare")
        page.select_option("#cmp-a", "facts-cosine")
        page.select_option("#cmp-b", "facts-constant")
        page.click("button:text('Compare')")
        page.wait_for_selector("#config-diff")
        assert "optimizer.learning_rate" in page.inner_text("#config-diff")
        shot(page, "compare.png")
    finally:
        server.close()


def _stage(project: Path, live: Path, proposed: str) -> Path:
    """A staged proposal in Sleep's folder format (manifest written last)."""
    stamp = "20260101-030000"
    d = project / ".skillgrad" / "sleep" / stamp
    (d / "proposed").mkdir(parents=True)
    (d / "proposed" / live.name).write_text(proposed, encoding="utf-8")
    before = live.read_text(encoding="utf-8")
    (d / "diff.patch").write_text(f"--- a/{live.name}\n+++ b/{live.name}\n@@ -1,1 +1,2 @@\n {before.strip()}\n"
                                  "+- Run the test suite before every commit.\n", encoding="utf-8")
    (d / "report.md").write_text("# Night report\n\nOne learned rule; held-out sessions 2/5 -> 4/5.\n")
    (d / "report.json").write_text(json.dumps({"accepted": 1}))

    def sha(p: Path) -> str:
        return hashlib.sha256(p.read_bytes()).hexdigest()

    manifest = {"version": 1, "created_at": "2026-01-01T03:00:00+00:00", "project": str(project),
                "night_run_dir": str(project / ".skillgrad" / "nights" / stamp), "status": "staged",
                "files": [{"live": str(live), "proposed": f"proposed/{live.name}", "live_sha256": sha(live),
                           "proposed_sha256": sha(d / "proposed" / live.name)}],
                "scores": {"baseline": 0.4, "candidate": 0.8}}
    (d / "manifest.json").write_text(json.dumps(manifest))
    return d


def test_adopt_a_staged_sleep_proposal(browser: Any, tmp_path: Path) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    project = tmp_path / "proj"
    project.mkdir()
    live = project / "CLAUDE.md"
    live.write_text("# Project rules\n", encoding="utf-8")
    proposed = "# Project rules\n- Run the test suite before every commit.\n"
    _stage(project, live, proposed)
    server = Server(root, "--project", str(project))
    try:
        page = page_of(browser)
        page.goto(server.url + "/sleep")
        assert "staged" in page.inner_text("#proposals")
        page.click("a.proplink")
        page.wait_for_selector("#sleep-diff")
        assert "+- Run the test suite before every commit." in page.inner_text("#sleep-diff")
        shot(page, "sleep.png")
        page.click("#adopt-btn")
        page.wait_for_selector("#sleep-message")
        assert "adopted" in page.inner_text("#sleep-message")
        assert "adopted" in page.inner_text("#prop-status")
        assert live.read_text(encoding="utf-8") == proposed
    finally:
        server.close()


TINY_CONFIG = """\
_base_: skillgrad:demo.yaml
model:
  teacher: {n_threads: 1}
  student: {n_threads: 1}
train: {num_epochs: 1, batch_size: 5}
env: {n_facts: 10, workers: 1}
optimizer: {start_from: initial}  # a step to watch: the few-shot start can reach the validation ceiling first
"""


@pytest.mark.slow
def test_launch_watch_live_and_stop_a_run(browser: Any, tmp_path: Path, gguf_path: Path) -> None:
    """Launch from the page, watch the stage list advance over SSE while the embedded model trains, stop it."""
    root = tmp_path / "runs"
    root.mkdir()
    (root / "tiny.yaml").write_text(TINY_CONFIG, encoding="utf-8")
    server = Server(root)
    try:
        page = page_of(browser)
        page.goto(server.url + "/launch")
        page.fill("#cfg", "tiny.yaml")
        page.fill("#run-name", "live-run")
        page.click("#estimate-btn")
        page.wait_for_selector("#estimate")
        assert "rollout" in page.inner_text("#estimate")
        shot(page, "launch.png")
        page.click("#start-btn")
        page.wait_for_url("**/run?r=live-run")
        page.evaluate("window.__sameDocument = true")  # gone if the page reloads
        start = page.locator("#stages li").count()
        page.wait_for_function(f"document.querySelectorAll('#stages li').length >= {start + 3}", timeout=60_000)
        page.wait_for_selector("#stages li.done", timeout=60_000)
        # step 1's gate, drawn from SSE: baseline, rollout, reflect and gate take minutes on a loaded 2-core machine
        page.wait_for_selector("#gates a:text-is('1')", timeout=300_000)
        assert page.evaluate("window.__sameDocument") is True  # updates came over SSE, no reload
        assert page.locator("#curves circle").count() >= 1
        shot(page, "live.png")
        run_dir = root / "live-run"
        page.click("#stop-run")
        deadline = time.monotonic() + 40
        state = ""
        while time.monotonic() < deadline:
            page.goto(server.url + "/jobs")
            state = page.inner_text(".jobstate")
            if state.startswith("stopped"):
                break
            time.sleep(0.5)
        assert state.startswith("stopped"), state
        shot(page, "jobs.png")
        events = [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines() if x.strip()]
        assert not any(e["event"] == "run_end" and e.get("status") == "completed" for e in events)
        assert (run_dir / "runtime_state.json").is_file()  # checkpointed: `skillgrad resume` continues it
        page.goto(server.url + "/run?r=live-run")
        assert page.locator("#resume-run").count() == 1
        # stopped: no progress bar, no stage shown as running, the unfinished stage marked as such
        assert page.locator("#progress-bar").count() == 0 and page.locator("#stages li.running").count() == 0
        assert "running" not in page.inner_text("#run-status")
        shot(page, "stopped.png")
    finally:
        server.close()
        _stop_writer(root / "live-run")


def _stop_writer(run_dir: Path) -> None:
    """A failed test must not leave the run it launched training on (its writer's pid is in run.lock)."""
    import signal

    try:
        pid = int(json.loads((run_dir / "run.lock").read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


WIDTHS = (1280, 390)  # a laptop and a phone


def _fits(page: Any) -> tuple[int, int]:
    """(page width, viewport width): the page scrolls sideways when the first is larger."""
    return page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")


def test_every_page_fits_a_phone_and_the_runs_table_follows(browser: Any, tmp_path: Path) -> None:
    """Each page at 1280 and 390 px without sideways scrolling (screenshots of both), the conversation of a
    trajectory one click from its step, and a run appearing under the root shows up without a reload."""
    root = tmp_path / "runs"
    root.mkdir()
    run = make_run(root, "facts-cosine-with-a-long-run-name-seed1", steps=4, seed=1)
    make_run(root, "facts-constant", steps=3, seed=2)
    results = run / "steps" / "step_0002" / "rollout" / "results.jsonl"
    recs = [json.loads(x) for x in results.read_text().splitlines()]
    recs[0]["messages"] = [{"role": "system", "content": "# Assistant skill\n\nAnswer briefly."},
                           {"role": "user", "content": "What is q2-0? " + "Please be precise. " * 12},
                           {"role": "assistant", "content": "value2"}]
    results.write_text("".join(json.dumps(r) + "\n" for r in recs))
    sel = run / "steps" / "step_0002" / "selection_eval"  # per-item gate results: two items flipped
    sel.mkdir()
    sel.joinpath("results.jsonl").write_text("".join(json.dumps({"item_id": f"v{i}", "hard": float(i % 2)}) + "\n"
                                                     for i in range(6)))
    state = json.loads((run / "runtime_state.json").read_text())
    state["sel_items"] = {skill_hash((run / "skills" / "skill_v0001.md").read_text()):
                          {f"v{i}": [float(i < 2), 0.0] for i in range(6)}}
    (run / "runtime_state.json").write_text(json.dumps(state))
    project = tmp_path / "proj"
    project.mkdir()
    live = project / "CLAUDE.md"
    live.write_text("# Project rules\n", encoding="utf-8")
    _stage(project, live, "# Project rules\n- Run the test suite before every commit.\n")
    rel = run.name
    pages = {"runs": "/", "run": f"/run?r={rel}", "step": f"/step?r={rel}&n=2",
             "conversation": f"/conversation?r={rel}&n=2&id=q2-0", "lineage": f"/lineage?r={rel}",
             "compare": f"/compare?a={rel}&b=facts-constant", "launch": "/launch", "jobs": "/jobs",
             "sleep": "/sleep", "sleep-item": "/sleep/item?id=20260101-030000"}
    server = Server(root, "--project", str(project))
    try:
        for width in WIDTHS:
            page = browser.new_page(viewport={"width": width, "height": 844 if width < 500 else 900})
            page.set_default_timeout(20_000)
            for name, url in pages.items():
                page.goto(server.url + url)
                assert page.locator("main").count() == 1, name
                scroll, view = _fits(page)
                assert scroll <= view, f"{name} at {width} px is {scroll} px wide"
                shot(page, f"{name}-{width}.png", full_page=True)
            page.close()
        page = page_of(browser)
        page.goto(server.url + f"/step?r={rel}&n=2")
        flips = page.inner_text("#flip-list")
        assert "fail → pass (2): v3 v5" in flips and "pass → fail (1): v0" in flips, flips
        page.click("a.convlink:text-is('q2-0')")  # one click from the step page
        page.wait_for_selector("#messages")
        assert "Please be precise." in page.inner_text("#messages") and "value2" in page.inner_text("#messages")
        assert page.locator("#messages li.msg").count() == 3
        # the runs table follows the root: a new run appears without a reload
        page.goto(server.url + "/")
        page.evaluate("window.__sameDocument = true")
        assert page.locator("#runs tbody tr").count() == 2
        make_run(root, "arrived-later", steps=1, seed=3)
        page.wait_for_selector("a.runlink:text('arrived-later')", timeout=20_000)
        assert page.locator("#runs tbody tr").count() == 3
        assert page.evaluate("window.__sameDocument") is True
    finally:
        server.close()
