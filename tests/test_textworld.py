"""The text-game environment on real TextWorld games compiled in the test's tmp dir (tw-make and
textworld.generator), played by the embedded model; ALFWorld's games through the same loop when
ALFWORLD_DATA is set."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import require

from skillgrad.config.schema import EnvSection
from skillgrad.envs.registry import list_envs
from skillgrad.envs.textworld import TextWorldEnv
from skillgrad.envs.trajectory import EVALUATION_ROLE
from skillgrad.errors import DataError
from skillgrad.models.base import Completion, Usage


def tw_make(out: Path, seed: int) -> None:
    exe = shutil.which("tw-make") or str(Path(sys.executable).parent / "tw-make")
    require(Path(exe).exists(), "tw-make (pip install textworld)")
    subprocess.run([exe, "custom", "--world-size", "2", "--nb-objects", "2", "--quest-length", "1",
                    "--seed", str(seed), "--output", str(out), "-f", "--silent"], check=True, timeout=120)


@pytest.fixture(scope="module")
def game_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require(importlib.util.find_spec("textworld"), "textworld (pip install textworld)")
    root = tmp_path_factory.mktemp("tw")
    for seed, split in ((1, "train"), (2, "val"), (3, "test")):
        tw_make(root / split / f"game{seed}.z8", seed)
    return root


class Walker:
    """A scripted student that plays a fixed list of commands (to prove that a win scores 1)."""

    name, supports_vision, is_agent = "scripted:walker", False, False

    def __init__(self, commands: list[str]) -> None:
        self.commands = list(commands)

    async def complete(self, messages: list[dict[str, Any]], **_: Any) -> Completion:
        return Completion(text=f"ACTION: {self.commands.pop(0) if self.commands else 'look'}", usage=Usage(1, 1))


@pytest.mark.slow
def test_embedded_model_plays_a_tw_make_game(game_root: Path, embedded_student: Any) -> None:
    env = TextWorldEnv(EnvSection(name="textworld"),
                       TextWorldEnv.Options(data_root=str(game_root), max_steps=3, max_tokens=12))
    splits = env.load_splits()
    assert [len(splits.get(s)) for s in ("train", "val", "test")] == [1, 1, 1]
    item = splits.train[0]
    traj = asyncio.run(env.run_task(item, env.initial_skill(), embedded_student))
    assert traj.error is None, traj.error
    assert traj.hard in (0.0, 1.0) and traj.hard == traj.soft
    steps = traj.extras["steps"]
    assert 1 <= steps <= 3 and len(traj.extras["commands"]) == steps
    assistant = [m for m in traj.messages if m["role"] == "assistant"]
    assert len(assistant) == steps  # every turn was a real model reply
    assert traj.messages[-1]["role"] == EVALUATION_ROLE
    if traj.hard == 0.0:  # a failed game is a scored trajectory with the walkthrough for the teacher
        assert traj.fail_reason.startswith(("not_won", "lost"))
        assert "winning walkthrough" in traj.messages[-1]["content"]
    assert traj.question  # the game's objective


def test_following_the_walkthrough_wins(game_root: Path) -> None:
    env = TextWorldEnv(EnvSection(name="textworld"), TextWorldEnv.Options(data_root=str(game_root), max_steps=8))
    item = env.load_splits().val[0]
    game = env.make_game(item)
    game.reset()
    walkthrough = list(game.walkthrough)  # type: ignore[attr-defined]
    game.close()
    assert walkthrough
    won = asyncio.run(env.run_task(item, env.initial_skill(), Walker(walkthrough)))  # type: ignore[arg-type]
    assert won.hard == 1.0 and won.fail_reason == "" and won.extras["steps"] == len(walkthrough)
    lost = asyncio.run(env.run_task(item, env.initial_skill(), Walker(["look"] * 8)))  # type: ignore[arg-type]
    assert lost.hard == 0.0 and lost.extras["steps"] == 8 and lost.fail_reason.startswith("not_won")


def test_generated_games_are_split_and_reused(tmp_path: Path) -> None:
    require(importlib.util.find_spec("textworld"), "textworld (pip install textworld)")
    opts = TextWorldEnv.Options(game_dir=str(tmp_path / "gen"), n_games=3, quest_lengths=[1, 2], world_size=2,
                                nb_objects=2)
    env = TextWorldEnv(EnvSection(name="textworld", split_ratio="1:1:1"), opts)
    splits = env.load_splits()
    ids = sorted(i.id for s in ("train", "val", "test") for i in splits.get(s))
    assert ids == ["tw_s1234_q1", "tw_s1235_q2", "tw_s1236_q1"]
    assert {i.task_type for s in ("train", "val", "test") for i in splits.get(s)} == {"quest_len_1", "quest_len_2"}
    stamp = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "gen").glob("*.z8")}
    env.load_splits()  # the second run reuses the compiled games
    assert stamp == {p.name: p.stat().st_mtime_ns for p in (tmp_path / "gen").glob("*.z8")}


def test_missing_games_name_the_folder(tmp_path: Path) -> None:
    require(importlib.util.find_spec("textworld"), "textworld (pip install textworld)")
    (tmp_path / "train").mkdir()
    env = TextWorldEnv(EnvSection(name="textworld"), TextWorldEnv.Options(data_root=str(tmp_path)))
    with pytest.raises(DataError, match=r"no game files .*train.*tw-make"):
        env.load_splits()


def test_textworld_is_registered() -> None:
    info = {e.name: e for e in list_envs()}
    assert "textworld" in info and info["textworld"].data_status.startswith(("ready", "missing"))


@pytest.mark.slow
def test_alfworld_game_through_the_same_loop(embedded_student: Any) -> None:
    if not os.environ.get("ALFWORLD_DATA") or importlib.util.find_spec("alfworld") is None:
        pytest.skip("ALFWorld games need `pip install alfworld`, alfworld-download and ALFWORLD_DATA")
    from skillgrad.envs.alfworld import ALFWorldEnv

    env = ALFWorldEnv(EnvSection(name="alfworld", limit=1), ALFWorldEnv.Options(max_steps=2, max_tokens=12))
    item = env.load_splits().val[0]
    traj = asyncio.run(env.run_task(item, env.initial_skill(), embedded_student))
    assert traj.error is None, traj.error
    assert traj.extras["steps"] >= 1 and traj.hard in (0.0, 1.0)
