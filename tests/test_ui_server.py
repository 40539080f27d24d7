"""Every dashboard route through Starlette's TestClient, over a synthetic run, the sample run and a live one."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from ui_helpers import SECRET, copy_sample, make_run

from skillgrad.ui.app import create_app


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "runs"
    r.mkdir()
    make_run(r, "alpha", steps=4, seed=1)
    beta = make_run(r, "beta", steps=3, seed=2, finished=False)
    old = beta.stat().st_mtime - 3600  # an unfinished run whose events stopped an hour ago: not running
    os.utime(beta / "events.jsonl", (old, old))
    copy_sample(r)
    return r


@pytest.fixture
def client(root: Path) -> TestClient:
    return TestClient(create_app(root), base_url="http://127.0.0.1")


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def csrf(client: TestClient) -> str:
    m = re.search(r'data-csrf="([^"]+)"', client.get("/").text)
    assert m
    return m.group(1)


def test_runs_page_lists_every_run_with_its_facts(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200
    t = text(r.text)
    for name in ("alpha", "beta", "sample"):
        assert f'href="/run?r={name}"' in r.text
    assert "completed" in t and "incomplete" in t
    assert "0.100 → " in t  # baseline -> best
    assert "local/SmolLM2" in t  # teacher / student from llm_call events


def test_runs_page_filters_and_sorts(client: TestClient) -> None:
    only = client.get("/?q=beta").text
    assert 'r=beta"' in only and 'r=alpha"' not in only
    assert 'r=alpha"' not in client.get("/?status=incomplete").text
    by_name = client.get("/?sort=name&dir=asc").text
    assert by_name.index('r=alpha"') < by_name.index('r=beta"') < by_name.index('r=sample"')
    desc = client.get("/?sort=name&dir=desc").text
    assert desc.index('r=sample"') < desc.index('r=alpha"')


def test_run_page_shows_stages_gates_budget_and_curves(client: TestClient) -> None:
    r = client.get("/run?r=alpha")
    assert r.status_code == 200
    t = text(r.text)
    assert "accept_new_best" in t
    assert r.text.count('class="stage done"') == 1 + 4 * 6  # baseline + six stages per step
    assert "Validation: candidate gate score per step" in r.text and "<svg" in r.text
    assert "Test: initial vs best vs final skill" in r.text
    assert 'id="b-max_calls"' in r.text and "100,000" in t
    assert 'data-follow="0"' in r.text  # a finished run opens no event stream
    assert 'data-follow="1"' in client.get("/run?r=beta").text


def test_run_parts_fragment_and_report_png(client: TestClient) -> None:
    parts = client.get("/run/parts?r=alpha")
    assert parts.status_code == 200 and 'id="gates"' in parts.text and "<html" not in parts.text
    png = client.get("/plot.png?r=alpha&name=validation.png")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png" and png.content[:4] == b"\x89PNG"
    assert client.get("/plot.png?r=alpha&name=nope.png").status_code == 404


def test_step_page_has_everything_of_a_step(client: TestClient) -> None:
    r = client.get("/step?r=alpha&n=1")
    assert r.status_code == 200
    t = text(r.text)
    assert "+- Fact 1: the answer to question q1 is value1." in t  # the candidate diff
    assert "skipped_anchor_missing" in t and "anchor not found" in t  # the apply report with why
    assert "truncated JSON" in t and "{&#34;edits&#34;: [ {&#34;op&#34;: " in r.text  # a rejected raw reply
    assert "Merged (1)" in t and "Ranked / selected (1)" in t
    assert "score before" in t and "0.150" in t  # the gate with both scores
    assert "Trajectories (5)" in t
    assert SECRET not in r.text and "***" in r.text  # secret-looking text scrubbed
    found = client.get("/step?r=alpha&n=1&q=q1-3")
    assert "Trajectories (1)" in text(found.text)
    assert client.get("/step?r=alpha&n=99").status_code == 404
    assert client.get("/step?r=alpha&n=x").status_code == 404


def test_step_page_of_the_sample_run(client: TestClient) -> None:
    r = client.get("/step?r=sample&n=1")
    assert r.status_code == 200 and "applied_insert_after" in r.text


def test_lineage_credits_each_line_to_its_step_and_edit(client: TestClient, root: Path) -> None:
    r = client.get("/lineage?r=alpha")
    assert r.status_code == 200
    best = (root / "alpha" / "best_skill.md").read_text().splitlines()
    t = text(r.text)
    for line in best:
        m = re.match(r"- Fact (\d+):", line)
        if m:
            assert f"step {m.group(1)}: append (edit #0)" in t
    assert "initial skill" in t


def test_compare_two_runs(client: TestClient) -> None:
    r = client.get("/compare?a=alpha&b=sample")
    assert r.status_code == 200
    t = text(r.text)
    assert "optimizer.learning_rate" in t  # a config difference
    assert 'id="skill-diff"' in r.text and "+++ sample/best_skill.md" in t
    assert client.get("/compare").status_code == 200


def test_file_view_scrubs_and_refuses_the_cache(client: TestClient) -> None:
    r = client.get("/file?r=alpha&path=steps/step_0001/rollout/results.jsonl")
    assert r.status_code == 200 and SECRET not in r.text and "value1" in r.text
    assert client.get("/file?r=alpha&path=llm_cache.sqlite").status_code == 404


def test_events_stream_from_an_offset(client: TestClient, root: Path) -> None:
    events = root / "alpha" / "events.jsonl"
    lines = events.read_text().splitlines(keepends=True)
    offset = sum(len(x.encode()) for x in lines[:-3])
    with client.stream("GET", f"/events?r=alpha&offset={offset}") as resp:
        assert resp.headers["content-type"].startswith("text/event-stream")
        body = "".join(resp.iter_text())
    datas = [json.loads(x[6:]) for x in body.splitlines() if x.startswith("data: {") and len(x) > 8]
    assert [d["event"] for d in datas][-3:] == [json.loads(x)["event"] for x in lines[-3:]]
    assert "event: end" in body  # the stream ends after run_end
    ids = [int(x[4:]) for x in body.splitlines() if x.startswith("id: ")]
    assert ids[-1] == events.stat().st_size


def test_launch_page_estimate_and_bad_config(client: TestClient, root: Path) -> None:
    page = client.get("/launch")
    assert page.status_code == 200 and "skillgrad:demo.yaml" in page.text
    token = csrf(client)
    bad = client.post("/launch/estimate", data={"csrf": token, "config": "../../etc/passwd", "name": "x"})
    assert bad.status_code == 400 and "not a file under the dashboard root" in bad.text
    bad_o = client.post("/launch/estimate", data={"csrf": token, "config": "skillgrad:demo.yaml", "name": "x",
                                                  "overrides": "not-an-override"})
    assert bad_o.status_code == 400 and "is not key=value" in bad_o.text


def test_posts_need_the_form_token(client: TestClient) -> None:
    for url in ("/launch/estimate", "/launch/start", "/run/stop", "/run/resume", "/run/eval", "/sleep/adopt"):
        r = client.post(url, data={"r": "alpha"})
        assert r.status_code == 403, url


def test_stop_and_resume_refusals(client: TestClient) -> None:
    token = csrf(client)
    assert client.post("/run/stop", data={"csrf": token, "r": "alpha"}).status_code == 409
    assert client.post("/run/eval", data={"csrf": token, "r": "alpha", "skill": "best", "split": "nope"}).status_code == 400


def test_jobs_and_sleep_pages_without_project(client: TestClient) -> None:
    assert client.get("/jobs").status_code == 200
    assert client.get("/jobs.json").json() == []
    r = client.get("/sleep")
    assert r.status_code == 200 and "--project" in r.text
    assert client.get("/sleep/item?id=x").status_code == 404


def test_static_assets_are_package_data(client: TestClient) -> None:
    js = client.get("/static/app.js")
    assert js.status_code == 200 and "EventSource" in js.text
    assert client.get("/static/app.css").status_code == 200
    page = client.get("/run?r=alpha").text
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")  # no CDN, nothing remote
