"""A key given as a config override (`-o model.student.api_key=...`) never reaches a file the run writes: config.json
`sources.overrides` keeps `key=***` (core/redact.py, the one redactor), whatever the key's shape."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from test_engine_plumbing import Scripted, ToyEnv

from skillgrad.config.loader import load_config_with_info
from skillgrad.core.events import EventLog
from skillgrad.core.redact import REDACTED, redact_override
from skillgrad.engine.session import open_run
from skillgrad.engine.trainer import Trainer
from skillgrad.models.budget import Budget
from skillgrad.models.factory import Models
from skillgrad.models.meter import Meter
from skillgrad.runs.report import write_report
from skillgrad.runs.store import RunStore

# no vendor shape, no digit run: only the key's name says it is a secret
KEY = "correct horse battery staple"
LEGACY = "Tr0ub4dor&3xyzzyPLUGH"


def test_secret_overrides_are_redacted_whole() -> None:
    assert redact_override(f"model.student.api_key={KEY}") == f"model.student.api_key={REDACTED}"
    assert redact_override(f"azure_openai_api_key={LEGACY}") == f"azure_openai_api_key={REDACTED}"
    assert redact_override("model.student.max_tokens=64") == "model.student.max_tokens=64"
    assert redact_override("model.student.api_key_env=MY_KEY") == "model.student.api_key_env=MY_KEY"
    assert redact_override("env.name=facts") == "env.name=facts"


def test_no_file_of_a_run_holds_an_override_secret(tmp_path: Path) -> None:
    cfg, info = load_config_with_info(None, ["env.name=toy", "train.batch_size=2", "train.num_epochs=1",
                                             "env.workers=1", "optimizer.use_slow_update=false",
                                             f"model.student.api_key={KEY}", f"model.teacher.api_key={LEGACY}"])
    run_dir = tmp_path / "run"
    open_run(cfg, run_dir, info=info)
    sources = json.loads((run_dir / "config.json").read_text())["sources"]
    assert f"model.student.api_key={REDACTED}" in sources["overrides"]
    assert f"model.teacher.api_key={REDACTED}" in sources["overrides"]
    models = Models(teacher=Scripted("teacher"), student=Scripted("student"), meter=Meter(), budget=Budget(),
                    cache=None)
    asyncio.run(Trainer(cfg, ToyEnv(), models, RunStore(run_dir), EventLog(run_dir / "events.jsonl")).run())
    write_report(run_dir)
    files = [p for p in run_dir.rglob("*") if p.is_file()]
    assert len(files) > 10
    for p in files:
        data = p.read_bytes()
        for secret in (KEY, LEGACY, "horse battery"):
            assert secret.encode() not in data, p
