"""The head-to-head proxy (benchmarks/h2h/serve.py): a role with its own OpenAI-compatible upstream (a capable
teacher for every system), its key never logged, and a per-run budget in calls and tokens that refuses whoever
asks past it. Real HTTP servers on 127.0.0.1: the proxy in front of two scripted OpenAI-compatible servers."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillgrad.models.fakes import Fault, FaultServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from h2h.serve import Proxy, Upstream, count_usage, read_log, usage_of  # noqa: E402


@pytest.fixture
def servers() -> Iterator[tuple[FaultServer, FaultServer]]:
    student, teacher = FaultServer(Fault.ok("student says")), FaultServer(Fault.ok("teacher says"))
    student.start()
    teacher.start()
    yield student, teacher
    student.stop()
    teacher.stop()


def _post(url: str) -> tuple[int, dict]:
    body = json.dumps({"model": "smollm2", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 500})
    req = urllib.request.Request(url + "/chat/completions", data=body.encode(),
                                 headers={"Content-Type": "application/json", "Authorization": "Bearer client-key"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_the_teacher_role_reaches_its_own_endpoint_and_budgets_refuse_past_the_limit(
        servers: tuple[FaultServer, FaultServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    student, teacher = servers
    monkeypatch.setenv("H2H_TEST_TEACHER_KEY", "sk-secret-123")
    log = tmp_path / "requests.jsonl"
    proxy = Proxy(student.base_url.removesuffix("/v1"), log, {"teacher": 64},
                  roles={"teacher": Upstream(teacher.base_url, "capable-model", "H2H_TEST_TEACHER_KEY")})
    proxy.start()
    try:
        proxy.budgets["run-a"] = (3, 0)
        s, out = _post(proxy.url("run-a", "student"))
        assert s == 200 and out["choices"][0]["message"]["content"] == "student says"
        s, out = _post(proxy.url("run-a", "teacher"))
        assert s == 200 and out["choices"][0]["message"]["content"] == "teacher says"
        sent = teacher.requests[-1]
        assert sent["body"]["model"] == "capable-model" and sent["body"]["max_tokens"] == 64  # the one teacher cap
        assert sent["headers"]["authorization"] == "Bearer sk-secret-123"
        assert student.requests[-1]["body"]["model"] == "smollm2" and "authorization" not in student.requests[-1]["headers"]
        assert _post(proxy.url("run-a", "teacher"))[0] == 200
        s, out = _post(proxy.url("run-a", "teacher"))  # the fourth call of a 3-call budget
        assert s == 429 and "budget" in out["error"]["message"] and len(teacher.requests) == 2
        assert _post(proxy.url("run-b", "student"))[0] == 200  # another run's budget is its own
        proxy.budgets["run-c"] = (0, 1)  # a token budget: the first answer spends it
        assert [_post(proxy.url("run-c", "student"))[0] for _ in range(2)] == [200, 429]
    finally:
        proxy.stop()
    rows = read_log(log)
    assert "sk-secret" not in log.read_text()
    use = usage_of(rows, "run-a")
    assert (use["calls"], use["refused"], use["teacher_calls"], use["student_calls"]) == (3, 1, 2, 1)
    assert count_usage(log, "run-a") == (3, use["tokens"]) and use["tokens"] > 0
    # a rerun of the same tag into a reused log counts only its own requests (GEPA's stopper read the old run's)
    assert count_usage(log, "run-a", since=max(r["t"] for r in rows) + 1) == (0, 0)
    assert count_usage(log, "run-a", since=min(r["t"] for r in rows)) == (3, use["tokens"])


def test_an_upstream_url_keeps_its_path_prefix() -> None:
    assert Upstream("https://api.example.com/v1").target("/v1/chat/completions") == (
        "https", "api.example.com", None, "/v1/chat/completions")
    assert Upstream("http://127.0.0.1:9000/openai/v1/").target("/v1/chat/completions") == (
        "http", "127.0.0.1", 9000, "/openai/v1/chat/completions")
