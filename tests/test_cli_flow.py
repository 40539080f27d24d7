"""train -> eval -> report -> runs list/show through the real CLI on the embedded model (one tiny run,
shared by the module), jsonl progress, and failed reruns that must leave the finished run untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli_support import (
    DEMO_YAML,
    TINY,
    CliResult,
    assert_one_line_error,
    jsonl_events,
    run_cli,
    snapshot,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, gguf_path: Path) -> tuple[Path, Path, CliResult]:
    """(cwd, run_dir, result) of `skillgrad train --log-format jsonl` with the default run directory."""
    cwd = tmp_path_factory.mktemp("cli_flow")
    r = run_cli(["train", "--config", DEMO_YAML, *TINY, "--log-format", "jsonl"], cwd)
    assert r.rc == 0, str(r)
    runs = [p for p in (cwd / "runs").iterdir() if p.is_dir()]
    assert len(runs) == 1 and runs[0].name.startswith("demo-"), runs
    return cwd, runs[0], r


def test_train_writes_a_complete_run(trained: tuple[Path, Path, CliResult]) -> None:
    _, run_dir, _ = trained
    for name in ("best_skill.md", "summary.json", "config.json", "events.jsonl", "skills/skill_v0000.md"):
        assert (run_dir / name).is_file(), name
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["total_steps"] == 1
    assert isinstance(summary["test_hard"], float)


def test_jsonl_progress_is_one_event_per_line(trained: tuple[Path, Path, CliResult]) -> None:
    _, run_dir, r = trained
    events = jsonl_events(r.out)  # every stdout line is one JSON object, nothing else
    names = [e["event"] for e in events]
    assert names[0] == "run_start" and names[-1] == "run_end", names
    assert events[-1]["status"] == "completed"
    starts = [e["stage"] for e in events if e["event"] == "stage_start"]
    ends = [e["stage"] for e in events if e["event"] == "stage_end"]
    assert starts == ends and {"baseline", "rollout", "reflect", "gate", "test_initial"} <= set(starts), starts
    assert "llm_call" in names and "gate" in names
    # stdout carries the same events as the run's log, in the same order
    logged = [json.loads(line)["event"] for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert logged == names
    assert "Traceback" not in r.err


def test_eval_scores_the_trained_skill_like_the_trainer(trained: tuple[Path, Path, CliResult]) -> None:
    cwd, run_dir, _ = trained
    skill = run_dir / "best_skill.md"
    r = run_cli(["eval", "--config", DEMO_YAML, *TINY, "--skill", str(skill), "--split", "test"], cwd)
    assert r.rc == 0, str(r)
    assert "test" in r.out and "results:" in r.out, str(r)
    path = cwd / r.out.split("results:")[1].split()[0]
    result = json.loads(path.read_text())
    assert result["splits"]["test"]["n"] == 5
    # Same student, same 5 test items, greedy decoding: the trainer's test score for the best skill.
    summary = json.loads((run_dir / "summary.json").read_text())
    assert result["splits"]["test"]["hard"] == pytest.approx(summary["test_hard"]), (result, summary["test_hard"])
    # A rerun reuses the saved results (no model calls) and prints the same table.
    again = run_cli(["eval", "--config", DEMO_YAML, *TINY, "--skill", str(skill), "--split", "test"], cwd)
    assert again.rc == 0 and again.out == r.out, str(again)


def test_eval_of_another_skill_does_not_reuse_results(trained: tuple[Path, Path, CliResult]) -> None:
    cwd, run_dir, _ = trained
    other = cwd / "other" / "best_skill.md"  # same file name as the trained skill, different text
    other.parent.mkdir(exist_ok=True)
    other.write_text("# Assistant skill\n\nAlways answer: I do not know.\n")
    out = cwd / "fixed_out"
    r1 = run_cli(["eval", "--config", DEMO_YAML, *TINY, "--skill", str(run_dir / "best_skill.md"),
                  "--out", str(out)], cwd)
    assert r1.rc == 0, str(r1)
    r2 = run_cli(["eval", "--config", DEMO_YAML, *TINY, "--skill", str(other), "--out", str(out)], cwd)
    assert_one_line_error(r2, "--out", "another skill")


def test_report_embeds_plots(trained: tuple[Path, Path, CliResult]) -> None:
    cwd, run_dir, _ = trained
    r = run_cli(["report", str(run_dir)], cwd)
    assert r.rc == 0, str(r)
    html = run_dir / "report.html"
    assert html.is_file() and (run_dir / "report.md").is_file()
    assert "data:image/png;base64" in html.read_text(encoding="utf-8")
    assert str(html) in r.out


def test_runs_list_and_show(trained: tuple[Path, Path, CliResult]) -> None:
    cwd, run_dir, _ = trained
    r = run_cli(["runs", "list", "runs"], cwd)
    assert r.rc == 0, str(r)
    row = next(line for line in r.out.splitlines() if run_dir.name in line)
    assert "facts" in row and "completed" in row, r.out
    assert "evals" not in r.out and "incomplete" not in r.out, r.out  # eval results are not runs
    r = run_cli(["runs", "show", str(run_dir)], cwd)
    assert r.rc == 0, str(r)
    assert "env=facts" in r.out and "status=completed" in r.out, r.out
    r = run_cli(["runs", "show", str(run_dir), "--json"], cwd)
    assert r.rc == 0, str(r)
    data = json.loads(r.out)
    assert data["info"]["status"] == "completed" and data["info"]["env"] == "facts"


def test_failed_reruns_leave_the_run_untouched(trained: tuple[Path, Path, CliResult]) -> None:
    cwd, run_dir, _ = trained
    before = snapshot(run_dir)
    missing = cwd / "no_such_dir"
    bad_data = ["-o", "env.split_mode=split_dir", "-o", f"env.split_dir={missing}"]
    # resume with overrides that cannot load: exit 2 and config.json is not replaced
    r = run_cli(["resume", str(run_dir), *bad_data], cwd)
    assert_one_line_error(r, str(missing))
    # the same train command with a typo, or with a different config into the same --out
    r = run_cli(["train", "--config", DEMO_YAML, *TINY, "-o", "train.num_epoch=2"], cwd)
    assert_one_line_error(r, "did you mean")
    r = run_cli(["train", "--config", DEMO_YAML, *TINY, *bad_data, "--out", str(run_dir)], cwd)
    assert_one_line_error(r, str(run_dir), "different config")
    # the same config with a bad data path into a new default directory: nothing left behind
    r = run_cli(["train", "--config", DEMO_YAML, *TINY, *bad_data], cwd)
    assert_one_line_error(r, str(missing))
    assert snapshot(run_dir) == before
    assert sorted(p.name for p in (cwd / "runs").iterdir() if p.name != "evals") == [run_dir.name]
    # and the untouched run still resumes cleanly: everything is done, nothing is recomputed
    r = run_cli(["resume", str(run_dir), "-q"], cwd)
    assert r.rc == 0 and "best skill" in r.out, str(r)


def test_run_and_eval_state_the_baselines(trained: tuple[Path, Path, CliResult]) -> None:
    """The embedded model end to end: the run's summary holds both baselines on its test items and the gain over the
    better one; `eval --baselines` scores them beside a given skill with no teacher call."""
    cwd, run_dir, _ = trained
    summary = json.loads((run_dir / "summary.json").read_text())
    bs = summary["baselines"]
    assert bs["initial"]["score"] == summary["baseline_test_hard"] and bs["fewshot"]["n"] == summary["n_test"]
    assert bs["fewshot"]["sources"] == {"gold": bs["fewshot"]["examples"]} and bs["fewshot"]["examples"] > 0
    g = summary["gain_over_best_baseline"]
    assert g["over"] == summary["best_baseline"] and g["interval"][0] <= g["delta"] <= g["interval"][1]
    assert g["delta"] == pytest.approx(summary["test_hard"] - bs[g["over"]]["score"])
    r = run_cli(["eval", "--config", DEMO_YAML, *TINY, "--skill", str(run_dir / "best_skill.md"), "--baselines",
                 "--out", str(cwd / "with_baselines")], cwd)
    assert r.rc == 0, str(r)
    assert "test: few-shot baseline (zero teacher calls):" in r.out and "this skill vs the best baseline" in r.out
    result = json.loads((cwd / "with_baselines" / "eval_summary.json").read_text())
    rows = result["baselines"]["splits"]["test"]["baselines"]
    # same student, same items, greedy decoding: the run's own baseline scores
    assert rows["initial"]["score"] == pytest.approx(bs["initial"]["score"])
    calls = [e for e in jsonl_events((cwd / "with_baselines" / "events.jsonl").read_text()) if e["event"] == "llm_call"]
    assert calls and {c["role"] for c in calls} == {"student"}
