"""The `facts` family: generation, splits, scoring, and an end-to-end run with the embedded student."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from skillgrad.config.schema import EnvSection
from skillgrad.envs.facts import FactsEnv, oracle_skill, score_answer
from skillgrad.envs.registry import create_env
from skillgrad.errors import DataError
from skillgrad.exec.pool import run_tasks


def make(**options: Any) -> FactsEnv:
    env = create_env(EnvSection(name="facts", **options))
    assert isinstance(env, FactsEnv)
    return env


def test_default_splits_are_paraphrases_of_the_same_facts() -> None:
    splits = make().load_splits()
    assert len(splits.train) == len(splits.val) == len(splits.test) == 30
    ids = [i.id for s in ("train", "val", "test") for i in splits.get(s)]
    assert len(set(ids)) == 90
    for a, b, c in zip(splits.train, splits.val, splits.test, strict=True):
        assert a.gold == b.gold == c.gold
        assert len({a.inputs["question"], b.inputs["question"], c.inputs["question"]}) == 3
        assert (a.meta["paraphrase"], b.meta["paraphrase"], c.meta["paraphrase"]) == (1, 2, 3)
    assert {"number", "name", "place"} <= {i.task_type for i in splits.test}


def test_generation_is_deterministic_and_seeded() -> None:
    assert make().oracle_skill() == make().oracle_skill() == oracle_skill()
    other = make(family_seed=1)
    assert other.oracle_skill() != oracle_skill()
    assert len(make(n_facts=10).load_splits().test) == 10
    assert len(make(n_facts=40).load_splits().test) == 40
    assert len(make(limit=4).load_splits().val) == 4


def test_oracle_holds_every_answer_and_initial_holds_none() -> None:
    env = make()
    oracle, initial = env.oracle_skill(), env.initial_skill()
    for item in env.load_splits().test:
        assert score_answer(oracle, item.gold)[0] == 1.0, item.gold
        assert score_answer(initial, item.gold)[0] == 0.0, item.gold


def test_score_answer() -> None:
    assert score_answer("The server listens on port 7431.", "7431") == (1.0, 1.0, "")
    hard, soft, reason = score_answer("It uses port 74312", "7431")
    assert (hard, soft) == (0.0, 0.0) and reason.startswith("missing_knowledge:")
    hard, soft, _ = score_answer("The slogan is Build Bold.", "Build Bold Things")
    assert hard == 0.0 and soft == pytest.approx(2 / 3)
    assert score_answer("   ", "x")[2].startswith("empty_answer")


def test_skill_init_and_prompt_dirs(tmp_path: Path) -> None:
    skill = tmp_path / "s.md"
    skill.write_text("# mine\n")
    assert make(skill_init=str(skill)).initial_skill() == "# mine\n"
    with pytest.raises(DataError, match="env.skill_init"):
        make(skill_init=str(tmp_path / "none.md")).initial_skill()
    dirs = make().prompt_dirs()
    assert dirs[0].name == "prompts" and (dirs[0] / "README.md").is_file()
    assert make().data_status() == "ready (generated)"


def test_custom_data_file(tmp_path: Path) -> None:
    data = tmp_path / "facts.json"
    data.write_text('[' + ",".join(
        f'{{"id": "c{i}", "question": "Q{i}?", "answer": "A{i}"}}' for i in range(10)) + ']')
    splits = make(data_path=str(data), split_output_dir=str(tmp_path / "out")).load_splits()
    assert (len(splits.train), len(splits.val), len(splits.test)) == (2, 1, 7)
    assert make(data_path=str(tmp_path / "missing.json")).data_status().startswith("missing")


@pytest.mark.slow
def test_oracle_beats_initial_with_embedded_student(embedded_student: Any) -> None:
    env = make(max_tokens=32)
    test = env.load_splits().test
    # a headquarters city, a CEO name and the mascot animal (held-out paraphrases)
    picked = [test[1], test[7], test[9]]

    async def score(skill: str) -> list[float]:
        trajs = await run_tasks(env, picked, skill, embedded_student, workers=1, timeout_s=120)
        for t in trajs:
            assert t.error is None and t.answer and t.messages[0]["role"] == "system"
            assert t.messages[-1]["role"] == "evaluation" and str(t.gold) in t.messages[-1]["content"]
            # typed, for the engine: the gold as the contract's content, a wrong fact as a knowledge gap
            assert t.contract is not None and t.contract.gold == (str(t.gold),)
            assert t.fail_kind == ("missing_knowledge" if t.failed else "")
        return [t.hard for t in trajs]

    oracle = asyncio.run(score(env.oracle_skill()))
    initial = asyncio.run(score(env.initial_skill()))
    assert sum(oracle) >= 2, oracle
    assert sum(initial) == 0, initial
