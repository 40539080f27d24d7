"""The first hour's paths and messages: relative paths in a config resolve against the config's folder first, then
the working directory, and a missing one is named in both places; missing benchmark data points to `skillgrad data
prepare`; every config block of docs/quickstart.md runs as written from a fresh clone's root (`skillgrad estimate`,
which needs no key and calls no model)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.test_cli_support import run_cli

ROOT = Path(__file__).resolve().parents[1]
TASK = {"task": "Write a status update about the migration.", "judge": {"kind": "rule", "checks": [
    {"op": "regex", "arg": "^TL;DR:"}]}}


def mytask(root: Path) -> Path:
    """A config beside its task file and skill, as a user keeps them (mytask/advisor.yaml), plus a sibling folder
    to run from."""
    folder = root / "mytask"
    folder.mkdir()
    lines = [json.dumps({**TASK, "task_id": f"t{i}", "split": ("train", "val", "test")[i % 3]}) for i in range(9)]
    (folder / "tasks.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "SKILL.md").write_text("# Status updates\n\nStart with a one-line summary.\n", encoding="utf-8")
    (folder / "advisor.yaml").write_text(
        "model:\n  student: {n_threads: 1}\n  teacher: {n_threads: 1}\n"
        "env: {name: tasks, tasks_file: tasks.jsonl, skill_init: SKILL.md}\n"
        "train: {num_epochs: 1, batch_size: 3}\n", encoding="utf-8")
    (root / "faults").mkdir()
    return folder / "advisor.yaml"


def test_relative_paths_resolve_against_the_configs_folder(tmp_path: Path, gguf_path: Path) -> None:
    mytask(tmp_path)
    r = run_cli(["estimate", "--config", "../mytask/advisor.yaml"], tmp_path / "faults")
    assert r.rc == 0, str(r)
    assert "rollout" in r.out


def test_a_path_in_neither_place_is_named_in_both(tmp_path: Path) -> None:
    config = mytask(tmp_path)
    (config.parent / "tasks.jsonl").unlink()
    r = run_cli(["estimate", "--config", "../mytask/advisor.yaml"], tmp_path / "faults")
    assert r.rc == 2, str(r)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert lines[0] == (f"error: env.tasks_file: tasks.jsonl not found in the config's folder ({config.parent.resolve()}"
                        f"/tasks.jsonl) nor the working directory ({(tmp_path / 'faults').resolve()}/tasks.jsonl)")


def test_the_working_directory_still_counts_and_the_config_folder_wins(tmp_path: Path) -> None:
    from skillgrad.config.loader import load_config

    config = mytask(tmp_path)
    (config.parent / "SKILL.md").unlink()
    (tmp_path / "faults" / "SKILL.md").write_text("# cwd skill\n", encoding="utf-8")
    (tmp_path / "faults" / "tasks.jsonl").write_text("", encoding="utf-8")
    import os

    here = Path.cwd()
    os.chdir(tmp_path / "faults")
    try:
        cfg = load_config(Path("../mytask/advisor.yaml"))
    finally:
        os.chdir(here)
    assert cfg.env.skill_init == "SKILL.md"  # only the working directory has it: read from there
    assert cfg.env.options()["tasks_file"] == str(config.parent.resolve() / "tasks.jsonl")  # beside the config wins


def test_missing_benchmark_data_points_to_data_prepare(tmp_path: Path) -> None:
    (tmp_path / "my.yaml").write_text("env: {name: searchqa, split_mode: split_dir, split_dir: data/searchqa}\n",
                                      encoding="utf-8")
    r = run_cli(["estimate", "--config", "my.yaml"], tmp_path)
    assert r.rc == 2, str(r)
    assert "env.split_dir: data/searchqa not found in the working directory" in r.err
    assert "skillgrad data prepare searchqa --from <downloaded file> --to data/searchqa" in r.err


def test_every_config_block_of_the_quickstart_runs_from_a_fresh_clone(tmp_path: Path, gguf_path: Path) -> None:
    text = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    assert blocks, "docs/quickstart.md has no config block"
    for i, block in enumerate(blocks):
        config = tmp_path / f"block{i}.yaml"
        config.write_text(block, encoding="utf-8")
        r = run_cli(["estimate", "--config", str(config)], ROOT, drop_env=("OPENAI_API_KEY",))
        assert r.rc == 0, f"block {i} of docs/quickstart.md:\n{block}\n{r}"
        total = next(line for line in r.out.splitlines() if "total" in line)
        assert "unknown" not in total, f"block {i}: budget.max_usd needs priced models: {total}"
