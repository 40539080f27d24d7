"""`skillgrad eval --seeds N` (embedded student, real sampling) and `skillgrad compare A B` through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli_support import DEMO_YAML, assert_one_line_error, run_cli
from test_engine_plumbing import run

SMALL = ["-o", "env.n_facts=10", "-o", "evaluation.test_env_num=4", "-o", "env.workers=1",
         "-o", "model.student.n_threads=1"]


@pytest.mark.slow
def test_eval_seeds_gives_paired_per_item_results_and_compare_reads_them(tmp_path: Path, gguf_path: Path) -> None:
    skill = tmp_path / "facts_skill.md"
    skill.write_text("# Assistant skill\n\nAnswer briefly. Zorblax is written in Elixir.\n")
    sampled = tmp_path / "sampled"
    r = run_cli(["eval", "--config", DEMO_YAML, *SMALL, "-o", "evaluation.eval_temperature=1.2", "--skill", str(skill),
                 "--split", "test", "--seeds", "3", "--out", str(sampled)], tmp_path)
    assert r.rc == 0, str(r)
    assert "over 3 seeds" in r.out and "95% interval" in r.out, r.out
    res = json.loads((sampled / "eval_summary.json").read_text())["splits"]["test"]
    assert res["seeds"] == 3 and len(res["hard_per_seed"]) == 3
    assert set(res["per_item_hard"]) == {f"f{i:02d}-p3" for i in range(4)}
    assert all(len(v) == 3 for v in res["per_item_hard"].values())
    iv = res["hard_interval"]
    assert iv["ci_low"] <= res["hard_mean_over_seeds"] <= iv["ci_high"]
    for s in (1, 2):  # each seed's own results, resumable like any eval
        assert len((sampled / f"test/seed_{s}/results.jsonl").read_text().splitlines()) == 4
    answers = [json.loads(line)["answer"] for s in ("test", "test/seed_1", "test/seed_2")
               for line in (sampled / s / "results.jsonl").read_text().splitlines()[:1]]
    assert len(set(answers)) > 1  # temperature 1.2: the seeds really are different samples

    greedy = tmp_path / "greedy"
    r = run_cli(["eval", "--config", DEMO_YAML, *SMALL, "--skill", str(skill), "--split", "test", "--out",
                 str(greedy)], tmp_path)
    assert r.rc == 0, str(r)
    c = run_cli(["compare", str(greedy), str(sampled), "--json"], tmp_path)
    assert c.rc == 0, str(c)
    out = json.loads(c.out)
    assert out["n"] == 4 and out["only_a"] == 0 == out["only_b"]
    greedy_items = {json.loads(x)["item_id"]: json.loads(x)["hard"]
                    for x in (greedy / "test/results.jsonl").read_text().splitlines()}
    assert out["mean_a"] == pytest.approx(sum(greedy_items.values()) / 4)
    assert out["mean_b"] == pytest.approx(sum(sum(v) / 3 for v in res["per_item_hard"].values()) / 4)


def test_compare_two_runs_paired(tmp_path: Path) -> None:
    # toy runs: strict learns two of four words; mcnemar rejects both one-item gains (p = 0.5)
    a, _, _ = run(tmp_path / "a", "train.num_epochs=1", "evaluation.gate_test=mcnemar")
    b, _, _ = run(tmp_path / "b", "train.num_epochs=1")
    r = run_cli(["compare", str(a), str(b), "--json"], tmp_path)
    assert r.rc == 0, str(r)
    out = json.loads(r.out)
    assert out["n"] == 4 and out["mean_a"] == 0.0 and out["mean_b"] == 0.5 and out["mean_diff"] == 0.5
    assert out["gained"] == 2 and out["lost"] == 0 and len(out["gained_items"]) == 2 and out["lost_items"] == []
    assert out["ci_low"] <= 0.5 <= out["ci_high"] and out["p_mcnemar"] == 0.5
    table = run_cli(["compare", str(b), str(a)], tmp_path)
    assert table.rc == 0 and "-0.500" in table.out and "lost:" in table.out, str(table)
    initial = run_cli(["compare", str(a), str(b), "--skill", "initial", "--json"], tmp_path)
    assert json.loads(initial.out)["mean_diff"] == 0.0  # both started from the same skill


def test_compare_errors_are_one_line(tmp_path: Path) -> None:
    a, _, _ = run(tmp_path / "a", "train.num_epochs=1", "evaluation.eval_test=false")
    assert_one_line_error(run_cli(["compare", str(tmp_path / "nope"), str(a)], tmp_path), "not a directory")
    assert_one_line_error(run_cli(["compare", str(a), str(a)], tmp_path), "no run-end test results")
    assert_one_line_error(run_cli(["compare", str(a), str(a), "--skill", "worst"], tmp_path), "--skill")


def test_demo_family_is_checked(tmp_path: Path) -> None:
    assert_one_line_error(run_cli(["demo", "--family", "poems"], tmp_path), "--family", "fewshot-format")


def test_estimate_counts_credit_and_reeval(gguf_path: Path) -> None:
    from skillgrad.config.loader import load_config, packaged_config_path
    from skillgrad.engine.estimate import estimate_run

    base = ["env.n_facts=10", "evaluation.sel_env_num=6", "evaluation.edit_credit=true"]
    on = estimate_run(load_config(packaged_config_path("demo.yaml"), [*base, "evaluation.incumbent_reeval=true"]))
    rows = {r["stage"]: r["calls"] for r in on["rows"]}
    # the forecast accepts one step: its edits are credited, each unit one pass over the 6 selection items
    assert rows["edit_credit"] > 0 and rows["edit_credit"] % 6 == 0
    off = estimate_run(load_config(packaged_config_path("demo.yaml"), [*base, "evaluation.edit_credit=false"]))
    assert "edit_credit" not in {r["stage"] for r in off["rows"]}
    # the incumbent re-evaluation adds gate calls (both skills on the validation items outside the selection)
    assert rows["gate"] > {r["stage"]: r["calls"] for r in off["rows"]}["gate"]
