"""The dashboard's numbers and states say what the run files say: no sentinel scores, no `running` on a run
that stopped, budget use as the budget counts it, and the step page's links (conversation, flips, download)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from ui_helpers import make_run

from skillgrad.skill import skill_hash
from skillgrad.ui.app import create_app


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "runs"
    r.mkdir()
    return r


def client_for(root: Path, **kw: object) -> TestClient:
    return TestClient(create_app(root, **kw), base_url="http://127.0.0.1")  # type: ignore[arg-type]


def test_a_new_run_shows_no_sentinel_best(root: Path) -> None:
    run = root / "fresh"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"config": {"env": {"name": "facts"}, "budget": {"max_calls": 50}}}))
    (run / "runtime_state.json").write_text(json.dumps({"best_score": -1.0, "current_score": -1.0,
                                                        "baseline_done": False, "last_completed_step": 0}))
    (run / "events.jsonl").write_text(json.dumps({"ts": time.time(), "event": "run_start", "env": "facts"}) + "\n")
    c = client_for(root)
    for page in (c.get("/").text, c.get("/run?r=fresh").text):
        assert "-1.000" not in page and "-1.0" not in text(page)
    assert "- → -" in text(c.get("/run?r=fresh").text)  # baseline -> best: nothing scored yet


def test_a_killed_run_has_no_running_stage_or_progress_bar(root: Path) -> None:
    run = make_run(root, "killed", steps=2, finished=False)
    with open(run / "events.jsonl", "a") as f:  # killed in the middle of step 3's rollout
        f.write(json.dumps({"ts": 1_790_000_900.0, "event": "stage_start", "stage": "rollout", "step": 3,
                            "epoch": 2}) + "\n")
        f.write(json.dumps({"ts": 1_790_000_901.0, "event": "task_done", "stage": "rollout", "done": 2,
                            "total": 5}) + "\n")
    old = time.time() - 3600
    os.utime(run / "events.jsonl", (old, old))
    page = client_for(root).get("/run?r=killed").text
    assert 'id="progress-bar"' not in page and "running…" not in page
    assert 'class="stage interrupted"' in page and "interrupted" in text(page)
    assert 'id="run-status">incomplete<' in page
    # the same run while its events are still moving is running, with its progress
    now = time.time()
    os.utime(run / "events.jsonl", (now, now))
    live = client_for(root).get("/run?r=killed").text
    assert 'id="progress-bar"' in live and 'class="stage running"' in live and ">running<" in live


def test_a_finished_run_shows_no_progress(root: Path) -> None:
    make_run(root, "done", steps=2)
    page = client_for(root).get("/run?r=done").text
    assert 'id="progress-bar"' not in page and "running…" not in page and "not running" in page


def test_budget_use_is_what_the_budget_counted(root: Path) -> None:
    run = make_run(root, "budgeted", steps=2)
    cfg = json.loads((run / "config.json").read_text())
    cfg["config"]["budget"] = {"max_calls": 20, "max_tokens": 0, "max_usd": 0.0, "max_minutes": 0.0}
    (run / "config.json").write_text(json.dumps(cfg))
    state = json.loads((run / "runtime_state.json").read_text())
    state["budget"] = {"calls": 10, "tokens": 1000, "usd": 0.0, "minutes": 1.5, "seq": 3}
    (run / "runtime_state.json").write_text(json.dumps(state))
    # three records the checkpoint holds, two settled after it (one a failed call: it counts)
    lines = [{"seq": i, "kind": "budget", "tokens": 100, "usd": 0.0, "minutes": 1.0 + i / 10} for i in (1, 2, 3, 4)]
    lines.append({"seq": 5, "kind": "budget", "tokens": 0, "usd": 0.0, "minutes": 1.9})
    (run / "spend.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    page = client_for(root).get("/run?r=budgeted").text
    assert "<th>budget</th><th>used</th><th>limit</th><th>share of limit</th>" in page
    row = re.search(r'<td>calls</td><td id="b-max_calls">(\d+)</td><td>([\d,]+)</td>.*?(\d+) %', page, re.S)
    assert row and row.groups() == ("12", "20", "60"), row and row.groups()
    assert re.search(r'id="b-max_tokens">1,100<', page)
    assert "As the run's budget counts them" in page


def test_download_best_skill_and_the_conversation_of_a_trajectory(root: Path) -> None:
    run = make_run(root, "r1", steps=2)
    results = run / "steps" / "step_0001" / "rollout" / "results.jsonl"
    recs = [json.loads(x) for x in results.read_text().splitlines()]
    recs[0]["messages"] = [{"role": "system", "content": "You follow the skill."},
                           {"role": "user", "content": [{"type": "text", "text": "What is q1-0?"},
                                                        {"type": "image_url", "image_url": {"url": "data:x"}}]},
                           {"role": "assistant", "content": "no idea"}]
    results.write_text("".join(json.dumps(r) + "\n" for r in recs))
    c = client_for(root)
    assert 'id="download-best"' in c.get("/run?r=r1").text
    dl = c.get("/file?r=r1&path=best_skill.md&download=1")
    assert dl.status_code == 200 and dl.text == (run / "best_skill.md").read_text()
    assert dl.headers["content-disposition"] == 'attachment; filename="r1-best_skill.md"'
    step = c.get("/step?r=r1&n=1").text
    link = re.search(r'<a class="convlink" href="([^"]+)"[^>]*>q1-0</a>', step)
    assert link, "the step page links each trajectory to its conversation"
    conv = c.get(link.group(1).replace("&amp;", "&"))
    assert conv.status_code == 200
    t = text(conv.text)
    assert "You follow the skill." in t and "What is q1-0?" in t and "[image_url]" in t and "no idea" in t
    assert c.get("/conversation?r=r1&n=1&id=nope").status_code == 404


def test_items_that_flipped_at_a_gate(root: Path) -> None:
    run = make_run(root, "flips", steps=2)
    before = (run / "skills" / "skill_v0001.md").read_text()  # the current skill when step 2 started
    incumbent = {"a": [1.0, 1.0], "b": [0.0, 0.0], "c": [0.0, 0.2], "d": [1.0, 1.0]}
    state = json.loads((run / "runtime_state.json").read_text())
    state["sel_items"] = {skill_hash(before): incumbent}
    (run / "runtime_state.json").write_text(json.dumps(state))
    sel = run / "steps" / "step_0002" / "selection_eval"
    sel.mkdir(parents=True)
    cand = {"a": 0.0, "b": 1.0, "c": 1.0, "d": 1.0}
    sel.joinpath("results.jsonl").write_text("".join(json.dumps({"item_id": k, "hard": v}) + "\n"
                                                     for k, v in cand.items()))
    page = client_for(root).get("/step?r=flips&n=2").text
    flips = text(page.split('id="flip-list"', 1)[1].split("</ul>", 1)[0])
    assert "fail → pass (2): b c" in flips and "pass → fail (1): a" in flips
    assert "(4 in both)" in text(page)
    assert "not in the run folder" in client_for(root).get("/step?r=flips&n=1").text


def test_sleep_page_lists_proposals_as_sleep_does(tmp_path: Path, root: Path) -> None:
    from skillgrad.sleep.stage import list_proposals

    project = tmp_path / "proj"
    stage = project / ".skillgrad" / "sleep" / "20260101-030000"
    (stage / "proposed").mkdir(parents=True)
    live = project / "CLAUDE.md"
    live.write_text("# rules\n")
    (stage / "proposed" / "CLAUDE.md").write_text("# rules\n- new\n")
    (stage / "diff.patch").write_text("+- new\n")
    manifest = {"version": 1, "created_at": "2026-01-01T03:00:00+00:00", "status": "staged", "night_run_dir": "n",
                "files": [{"live": str(live), "proposed": "proposed/CLAUDE.md",
                           "live_sha256": hashlib.sha256(b"# rules\n").hexdigest()}], "scores": {"val": 0.5}}
    (stage / "manifest.json").write_text(json.dumps(manifest))
    (project / ".skillgrad" / "sleep" / "20260102-030000").mkdir()  # unfinished staging: no manifest
    c = client_for(root, project=project)
    page = c.get("/sleep").text
    assert page.count('class="proplink"') == 1 and ">staged<" in page
    live.write_text("# rules, edited by hand since\n")
    assert [p.status for p in list_proposals(project)] == ["stale"]
    page = c.get("/sleep").text
    assert ">stale<" in page and ">staged<" not in page
    item = c.get("/sleep/item?id=20260101-030000").text
    assert 'id="adopt-btn"' not in item and "+- new" in item


def test_runs_watch_reports_a_change_since_the_page_was_rendered(root: Path) -> None:
    """The runs page embeds the state it shows; the watch stream compares against it, so a run that appears
    between the render and the stream's start is not missed."""
    make_run(root, "first", steps=1)
    c = client_for(root)
    since = re.search(r'data-watch="/runs/watch\?since=([0-9a-f]+)"', c.get("/").text)
    assert since
    make_run(root, "second", steps=1)
    with c.stream("GET", f"/runs/watch?since={since.group(1)}") as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("event:"):
                assert line.split(":", 1)[1].strip() == "changed"
                break
