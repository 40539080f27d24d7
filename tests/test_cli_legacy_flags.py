"""SkillOpt's command-line flags and output on the real CLI: legacy flags, `--cfg-options a=1 b=2`,
one-line notices, rich-safe tables (`skillgrad[alfworld]`), id-only split manifests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillgrad.cli import _normalise_argv, main
from skillgrad.errors import UsageError
from tests.test_cli_support import DEMO_YAML, TINY, run_cli

FIX = Path(__file__).parent / "fixtures" / "skillopt_configs"


def _captured(monkeypatch: pytest.MonkeyPatch, argv: list[str], target: str = "skillgrad.engine.session.open_run"
              ) -> Any:
    """The Config the command would run with: the engine entry is replaced by a recorder that stops it."""
    seen: dict[str, Any] = {}

    def record(cfg: Any, *args: Any, **kwargs: Any) -> Any:
        seen["cfg"] = cfg
        raise UsageError("stopped by the test")

    monkeypatch.setattr(target, record)
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and "cfg" in seen
    return seen["cfg"]


def test_train_takes_skillopt_flags(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    cfg = _captured(monkeypatch, [
        "train", "--config", str(FIX / "searchqa" / "default.yaml"),
        "--backend", "claude_chat", "--teacher_model", "claude-opus-4-1", "--student_model", "claude-haiku-4-5",
        "--reasoning_effort", "high", "--split_mode", "ratio", "--split_dir", "data/x", "--data_path", "d.jsonl",
        "--skill_update_mode", "rewrite", "--use_deep_reflect", "--batch_size", "8", "--num_epochs=2",
        "--cfg-options", "optimizer.learning_rate=3", "evaluation.sel_env_num=7", "train.seed=5",
    ])
    assert (cfg.model.backend, cfg.model.optimizer_backend, cfg.model.target_backend) == ("claude_chat",) * 3
    assert (cfg.model.teacher.model, cfg.model.student.model) == ("claude-opus-4-1", "claude-haiku-4-5")
    assert cfg.model.reasoning_effort == "high"
    assert (cfg.env.split_mode, cfg.env.split_dir, cfg.env.data_path) == ("ratio", "data/x", "d.jsonl")
    assert cfg.optimizer.skill_update_mode == "rewrite_from_suggestions"
    assert cfg.gradient.use_deep_reflect is True
    assert (cfg.train.batch_size, cfg.train.num_epochs, cfg.train.seed) == (8, 2, 5)
    assert (cfg.optimizer.learning_rate, cfg.evaluation.sel_env_num) == (3, 7)


def test_role_flags_and_target_only_backends(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    cfg = _captured(monkeypatch, [
        "train", "-c", str(FIX / "_base_" / "default.yaml"), "--backend", "qwen_chat",
        "--optimizer_model", "gpt-4.1", "--target_model", "Qwen/Qwen3-8B", "--teacher_backend", "openai_compatible",
        "--student_backend", "qwen_chat", "-o", "env.name=searchqa",
    ])
    assert cfg.model.optimizer_backend == "openai_compatible"  # the role flag wins over --backend
    assert cfg.model.target_backend == "qwen_chat"
    assert (cfg.model.teacher.model, cfg.model.student.model) == ("gpt-4.1", "Qwen/Qwen3-8B")
    cfg = _captured(monkeypatch, ["train", "-c", str(FIX / "_base_" / "default.yaml"), "--backend", "qwen_chat",
                                  "-o", "env.name=searchqa"])
    assert (cfg.model.optimizer_backend, cfg.model.target_backend) == ("openai_chat", "qwen_chat")


def test_eval_takes_skillopt_flags(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    skill = tmp_path / "s.md"
    skill.write_text("# skill\n", encoding="utf-8")
    cfg = _captured(monkeypatch, ["eval", "-c", DEMO_YAML, "--skill", str(skill), "--split", "valid_seen",
                                  "--student_model", "other.gguf", "--split_dir", "data/y"],
                    target="skillgrad.engine.evaluate.evaluate_skill")
    assert cfg.model.student.model == "other.gguf" and cfg.env.split_dir == "data/y"


def test_normalise_keeps_own_options_and_bool_values():
    assert _normalise_argv(["demo", "--seed", "3"]) == ["demo", "--seed", "3"]  # demo's own option
    assert _normalise_argv(["train", "--seed", "3"])[-2:] == ["--cfg-options", "train.seed=3"]
    argv = _normalise_argv(["--debug", "train", "-c", "x.yaml", "--use_deep_reflect", "false", "--quiet"])
    assert argv == ["--debug", "train", "-c", "x.yaml", "--quiet", "--cfg-options", "gradient.use_deep_reflect=false"]
    assert _normalise_argv(["train", "--batch-size=4"])[-1] == "train.batch_size=4"


@pytest.mark.slow
def test_legacy_flags_reach_a_real_run(tmp_path):
    """A real (tiny, embedded-model) run: the flags end up in the run's saved config."""
    r = run_cli(["train", "--config", DEMO_YAML, *TINY, "--out", str(tmp_path / "run"), "--quiet",
                 "--num_epochs", "1", "--seed", "7", "--lr_scheduler", "constant", "--skill_update_mode", "edits",
                 "--cfg-options", "evaluation.sel_env_num=4", "evaluation.test_env_num=3"], tmp_path, timeout=600)
    assert r.rc == 0, str(r)
    saved = json.loads((tmp_path / "run" / "config.json").read_text(encoding="utf-8"))["config"]
    assert (saved["train"]["num_epochs"], saved["train"]["seed"], saved["optimizer"]["lr_scheduler"]) == (
        1, 7, "constant")
    assert saved["optimizer"]["skill_update_mode"] == "patch"
    assert (saved["evaluation"]["sel_env_num"], saved["evaluation"]["test_env_num"]) == (4, 3)


def test_envs_list_shows_extras_literally(tmp_path):
    r = run_cli(["envs", "list"], tmp_path, env={"COLUMNS": "400"}, drop_env=("ALFWORLD_DATA",))
    assert r.rc == 0, str(r)
    line = next(ln for ln in r.out.splitlines() if "alfworld" in ln)
    assert "'skillgrad[alfworld]'" in line, line


def test_retired_key_warns_once_on_one_line(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("_base_: skillgrad:demo.yaml\ngradient:\n  max_analyst_rounds: 3\n", encoding="utf-8")
    r = run_cli(["estimate", "--config", str(cfg)], tmp_path)
    assert r.rc == 0, str(r)
    hits = [ln for ln in r.err_lines if "max_analyst_rounds" in ln]
    assert hits == ["warning: c.yaml: gradient.max_analyst_rounds is retired (SkillOpt #213) and ignored; remove it"]
    assert "FutureWarning" not in r.err and "Warning:" not in r.err


def test_env_key_without_meaning_warns_once_and_runs(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("_base_: skillgrad:demo.yaml\nenv:\n  max_turns: 1\n", encoding="utf-8")
    r = run_cli(["estimate", "--config", str(cfg)], tmp_path)
    assert r.rc == 0, str(r)
    assert [ln for ln in r.err_lines if "max_turns" in ln] == [
        "warning: environment facts has no option env.max_turns; ignored (SkillOpt key with no meaning here)"]


def _searchqa_upstream(path: Path, n: int = 12) -> list[str]:
    rows = [{"key": f"sq-{i}", "question": f"Who wrote book {i}?", "context": f"[DOC] Book {i} was written by "
             f"Author {i}.", "answers": [f"Author {i}"]} for i in range(n)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return [r["key"] for r in rows]


def test_data_prepare_rebuilds_the_official_split_from_id_manifests(tmp_path):
    keys = _searchqa_upstream(tmp_path / "searchqa.jsonl")
    manifest = {"train": keys[:2], "val": keys[2:4], "test": keys[4:9]}
    ids = tmp_path / "searchqa_id_split"
    for split, want in manifest.items():
        (ids / split).mkdir(parents=True)
        (ids / split / "items.json").write_text(json.dumps(want), encoding="utf-8")
    # given as split_dir, the manifests are recognised, and envs list does not call them ready
    r = run_cli(["estimate", "-c", DEMO_YAML, "-o", "env.name=searchqa", "-o", f"env.split_dir={ids}",
                 "-o", "env.split_mode=split_dir"], tmp_path)
    assert r.rc == 2 and "holds SkillOpt's id-only manifests" in r.err and "--ids" in r.err, str(r)
    from skillgrad.config.schema import EnvSection
    from skillgrad.envs.searchqa.env import SearchQAEnv
    status = SearchQAEnv(EnvSection(name="searchqa", split_mode="split_dir", split_dir=str(ids))).data_status()
    assert status.startswith("missing:") and "data prepare searchqa" in status
    r = run_cli(["data", "prepare", "searchqa", "--from", str(tmp_path / "searchqa.jsonl"), "--ids", str(ids),
                 "--to", str(tmp_path / "out")], tmp_path)
    assert r.rc == 0, str(r)
    for split, want in manifest.items():
        got = json.loads((tmp_path / "out" / split / "items.json").read_text(encoding="utf-8"))
        assert [g["id"] for g in got] == want and got[0]["question"].startswith("Who wrote")
    r = run_cli(["data", "prepare", "searchqa", "--from", str(tmp_path / "searchqa.jsonl"), "--ids", str(ids),
                 "--to", str(tmp_path / "out2")], tmp_path)
    assert r.rc == 0
    (ids / "test" / "items.json").write_text(json.dumps(["sq-404"]), encoding="utf-8")
    r = run_cli(["data", "prepare", "searchqa", "--from", str(tmp_path / "searchqa.jsonl"), "--ids", str(ids),
                 "--to", str(tmp_path / "out3")], tmp_path)
    assert r.rc == 2 and "1 of 1 ids are not in" in r.err and "'sq-404'" in r.err, str(r)
