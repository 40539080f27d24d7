"""The head to head's MIPROv2 adapter (benchmarks/h2h/run_dspy.py, `optimizer: mipro`) runs DSPy's real MIPROv2
in the peers venv: its proposer asks the teacher endpoint, its search scores candidates with the student through
the scoring endpoint, and the chosen instruction and demos come back as the skill head_to_head scores.

The two endpoints here are scripted (plumbing only): the model answers in DSPy's ChatAdapter form, the gold for a
task question and a fixed instruction for the proposer; the real run is the benchmark's (docs/benchmarks.md). The
CI-size test leaves MIPROv2 out: its tiny run took 158 s on the loaded 2-core machine.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import require

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

from h2h import fewshot  # noqa: E402
from h2h.peers_venv import VENV, ensure_peers_venv  # noqa: E402

GOLD = {"taxi to the hotel": "travel", "team lunch": "meals", "IDE licence": "software", "printer toner": "office",
        "train ticket": "travel", "pizza night": "meals"}
INSTRUCTION = "Reply with the category alone, one of travel, meals, software or office."  # no colon: DSPy strips a "Label:" prefix
SKILL = "# Expenses\n\nBook each receipt line.\n"


@contextlib.contextmanager
def serve(answer: Callable[[dict[str, Any]], dict[str, Any]]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            seen.append(body)
            data = json.dumps(answer(body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()


def chat_reply(body: dict[str, Any], copies: bool = False) -> dict[str, Any]:
    """ChatAdapter's form: each output field the last message asks for under its `[[ ## name ## ]]` marker. A
    student that `copies` answers right only with worked examples in front of it (demo turns), as the 135M one."""
    last = str(body["messages"][-1]["content"])
    fields = re.findall(r"`\[\[ ## (\w+) ## \]\]`", last) or ["answer"]
    question = next((q for q in GOLD if q in last.rsplit("[[ ## question ## ]]", 1)[-1]), "")
    right = not copies or len(body["messages"]) > 2
    values = {"answer": GOLD.get(question, "office") if right else "misc", "proposed_instruction": INSTRUCTION}
    text = "\n\n".join(f"[[ ## {f} ## ]]\n{values.get(f, 'A receipt line and its category.')}"
                       for f in fields if f != "completed") + "\n\n[[ ## completed ## ]]"
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


@pytest.fixture()
def peers() -> Path:
    for venv in (VENV.with_name(".venv-peers-src"), VENV):
        py = venv / "bin" / "python"
        if py.is_file() and subprocess.run([str(py), "-c", "import dspy, optuna"], capture_output=True).returncode == 0:
            return py
    try:
        return ensure_peers_venv()
    except RuntimeError as e:
        require(False, f"the peers venv (dspy[optuna]): {e}")
        raise


@pytest.mark.timeout(300)
def test_mipro_asks_the_teacher_for_instructions_and_returns_its_choice_as_the_skill(peers: Path,
                                                                                     tmp_path: Path) -> None:
    ids = {q: f"t{i}" for i, q in enumerate(GOLD)}
    by_id = {v: GOLD[q] for q, v in ids.items()}

    def score(body: dict[str, Any]) -> dict[str, Any]:
        return {"score": 1.0 if body["reply"].strip() == by_id.get(body["item_id"]) else 0.0}

    rows = [{"id": ids[q], "question": f"Categorise: {q}", "answer": g} for q, g in GOLD.items()]
    with serve(lambda b: chat_reply(b, copies=True)) as (student_url, student_seen), \
            serve(chat_reply) as (teacher_url, teacher_seen), \
            serve(score) as (score_url, _):
        plan = {**fewshot.mipro_plan(40, 4, 2), "num_trials": 8}  # enough trials to reach a demo set
        spec = {"student": {"base": student_url + "/v1", "model": "s", "max_tokens": 64},
                "teacher": {"base": teacher_url + "/v1", "model": "t", "max_tokens": 256},
                "optimizer": "mipro", "api_key_env": "H2H_API_KEY", "instructions": SKILL,
                "score_url": score_url, "k": 16, "max_bootstrapped": 4, "budget_calls": 40, "out": str(tmp_path),
                "seed": 0, "train": rows[:4], "val": rows[4:], "mipro": plan}
        res = fewshot.run_dspy(peers, spec, tmp_path, SKILL, timeout=240)
    got = json.loads((tmp_path / "result.json").read_text())
    assert got["errors"] == [], got
    # the proposer's prompts went to the teacher endpoint, the search's to the student's
    asked = [str(b["messages"][-1]["content"]) for b in teacher_seen]
    assert any("proposed_instruction" in a for a in asked), asked
    assert student_seen and all("proposed_instruction" not in str(b["messages"]) for b in student_seen)
    # the student passes only with demos, so the search keeps a demo set; the instruction is either candidate
    # (both score the same), and it leads the skill, the demos are its worked examples
    assert got["instructions"] in (SKILL.strip(), INSTRUCTION)
    assert res["skill"].startswith(got["instructions"].strip()) and "## Examples" in res["skill"]
    assert res["demos"] == len(got["demos"]) > 0 and res["exceptions"] == 0
    assert res["instruction_changed"] == (got["instructions"] == INSTRUCTION)
