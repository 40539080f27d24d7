"""The dashboard's safety: paths from the browser stay under the root, tokens, Host check, secrets."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient
from ui_helpers import SECRET, free_port, make_run

from skillgrad.ui.app import create_app
from skillgrad.ui.safety import PathRefused, resolve_under, scrub, scrub_data


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "runs"
    r.mkdir()
    make_run(r, "alpha", steps=2)
    outside = make_run(tmp_path, "outside", steps=1)  # a real run next to the root, never reachable
    (outside / "secret.txt").write_text(f"key {SECRET}")
    (r / "link").symlink_to(outside, target_is_directory=True)
    (r / "alpha" / "escape.txt").symlink_to(outside / "secret.txt")
    return r


@pytest.fixture
def client(root: Path) -> TestClient:
    return TestClient(create_app(root), base_url="http://127.0.0.1")


def test_resolve_under_refuses_escapes(root: Path) -> None:
    assert resolve_under(root, "alpha") == (root / "alpha").resolve()
    for bad in ("..", "../outside", "alpha/../../outside", "/etc", "/etc/passwd", "link", "alpha/escape.txt",
                "", "a\x00b", "C:\\Windows", "\\\\server\\share"):
        with pytest.raises(PathRefused):
            resolve_under(root, bad)


@pytest.mark.parametrize("rel", ["..", "../outside", "..%2Foutside", "%2E%2E%2Foutside", "alpha%2F..%2F..%2Foutside",
                                 "%2Fetc", "/etc", str(Path("/etc").resolve()), "link", "....//outside"])
def test_run_routes_refuse_paths_outside_the_root(client: TestClient, rel: str) -> None:
    for route in ("/run", "/step", "/lineage", "/run/parts", "/events", "/plot.png", "/file"):
        url = f"{route}?r={rel}&n=1&name=validation.png&path=config.json"
        r = client.get(url)
        assert r.status_code == 404, url
        assert SECRET not in r.text


@pytest.mark.parametrize("path", ["../../outside/secret.txt", "..%2F..%2Foutside%2Fsecret.txt", "/etc/passwd",
                                  "escape.txt", "%2Fetc%2Fpasswd", "steps/../../../outside/secret.txt"])
def test_file_route_stays_inside_the_run(client: TestClient, path: str) -> None:
    r = client.get(f"/file?r=alpha&path={path}")
    assert r.status_code == 404
    assert SECRET not in r.text and "root:" not in r.text


def test_compare_refuses_outside_runs(client: TestClient) -> None:
    assert client.get("/compare?a=alpha&b=../outside").status_code == 404
    assert client.get("/compare?a=link&b=alpha").status_code == 404


def test_sleep_ids_stay_in_the_staging_folder(tmp_path: Path, root: Path) -> None:
    project = tmp_path / "proj"
    (project / ".skillgrad" / "sleep").mkdir(parents=True)
    c = TestClient(create_app(root, project=project), base_url="http://127.0.0.1")
    for bad in ("..", "../..", "..%2F..%2Fruns", "/etc"):
        assert c.get(f"/sleep/item?id={bad}").status_code == 404


def test_token_required_on_every_route(root: Path) -> None:
    app = create_app(root, token="s3cret-token-value", loopback=False)
    c = TestClient(app, base_url="http://dash.example:8000")
    for url in ("/", "/run?r=alpha", "/step?r=alpha&n=1", "/events?r=alpha", "/static/app.js", "/jobs.json",
                "/plot.png?r=alpha&name=validation.png", "/launch", "/sleep", "/compare"):
        assert c.get(url).status_code == 401, url
    assert c.get("/?token=wrong").status_code == 401
    assert c.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 401
    ok = c.get("/?token=s3cret-token-value")
    assert ok.status_code == 200
    assert "HttpOnly" in ok.headers["set-cookie"] and "SameSite=Strict" in ok.headers["set-cookie"]
    assert c.get("/run?r=alpha").status_code == 200  # the cookie now carries it
    fresh = TestClient(app, base_url="http://dash.example:8000")
    assert fresh.get("/", headers={"Authorization": "Bearer s3cret-token-value"}).status_code == 200
    assert fresh.post("/run/stop", data={"r": "alpha"}).status_code == 401


def test_loopback_rejects_foreign_host_headers(client: TestClient) -> None:
    assert client.get("/", headers={"host": "evil.example"}).status_code == 421
    assert client.get("/", headers={"host": "localhost:8765"}).status_code == 200
    assert client.get("/", headers={"host": "[::1]:8765"}).status_code == 200


def test_scrub_removes_secret_looking_text() -> None:
    text = (f"key {SECRET} and Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345 "
            "api_key=hunter2hunter2 ghp_abcdefghijklmnopqrstuvwxyz0123 AKIAABCDEFGHIJKLMNOP")
    out = scrub(text)
    for s in (SECRET, "abcdefghijklmnopqrstuvwxyz012345", "hunter2hunter2", "ghp_abcdefghijklmnopqrstuvwxyz0123",
              "AKIAABCDEFGHIJKLMNOP"):
        assert s not in out
    assert scrub("max_tokens: 96, tokens used 1234") == "max_tokens: 96, tokens used 1234"
    assert scrub_data({"api_key": "x", "nested": [{"text": SECRET}], "max_tokens": 5}) == {
        "api_key": "***", "nested": [{"text": "***"}], "max_tokens": 5}


def test_no_secret_reaches_any_page(client: TestClient, root: Path) -> None:
    cfg = root / "alpha" / "config.json"
    cfg.write_text(cfg.read_text().replace('"api_key": "***"', f'"api_key": "{SECRET}"'))
    for url in ("/", "/run?r=alpha", "/step?r=alpha&n=1", "/compare?a=alpha&b=alpha", "/run/parts?r=alpha",
                "/file?r=alpha&path=config.json", "/file?r=alpha&path=steps/step_0001/rollout/results.jsonl"):
        r = client.get(url)
        assert r.status_code == 200, url
        assert SECRET not in r.text, url


def _start(root: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "skillgrad.cli", "ui", "--root", str(root), "--port", str(port),
                             *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if "skillgrad ui: http://" in line:
            return proc, line
        if proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"skillgrad ui did not announce itself: {proc.stdout.read()}")


def test_cli_binds_loopback_by_default_and_needs_no_token(root: Path) -> None:
    proc, line = _start(root)
    try:
        m = re.search(r"http://127\.0\.0\.1:(\d+)/\s", line)
        assert m, line
        assert httpx.get(f"http://127.0.0.1:{m.group(1)}/").status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_cli_beyond_loopback_generates_and_requires_a_token(root: Path) -> None:
    proc, line = _start(root, "--host", "0.0.0.0")
    try:
        m = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)", line)
        assert m, line
        port, token = m.group(1), m.group(2)
        assert len(token) >= 24
        assert httpx.get(f"http://127.0.0.1:{port}/").status_code == 401
        assert httpx.get(f"http://127.0.0.1:{port}/", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_cli_bad_root_is_a_usage_error(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "skillgrad.cli", "ui", "--root", str(tmp_path / "nope")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--root" in r.stderr and len(r.stderr.strip().splitlines()) == 1
