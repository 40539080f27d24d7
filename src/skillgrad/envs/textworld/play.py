"""The text-game loop shared by the `textworld` and `alfworld` environments.

A game is anything with reset/step/close (`TextGame`); `TextWorldGame` wraps one compiled TextWorld
game through `textworld.gym` (optionally with ALFWorld's wrappers). Each turn the student sees the
goal, the recent steps and the admissible commands and replies `ACTION: <command>`. hard = soft = 1
when the game is won; a lost or unfinished game is a scored failure whose evaluation message carries
the walkthrough when the game file knows one (what the teacher compares the student's moves with).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import Field

from skillgrad.envs.base import SPLITS, EnvOptions, Item, Splits, Trajectory
from skillgrad.envs.benchkit import BenchEnv
from skillgrad.envs.chat import skill_system_message, usage_extras
from skillgrad.errors import DataError
from skillgrad.models.base import LLM, Message

_ACTION = re.compile(r"^\s*(?:[-*>]\s*)?action\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_BANNER_END = re.compile(r"^.*\$\$\s*$", re.MULTILINE)  # TextWorld's ASCII-art title ends in a '$$' line


class TextGame(Protocol):
    def reset(self) -> tuple[str, list[str]]: ...  # observation, admissible commands
    def step(self, command: str) -> tuple[str, bool, bool, list[str]]: ...  # observation, won, done, admissible
    def close(self) -> None: ...


class TextWorldGame:
    """One compiled TextWorld game (.z8 / .ulx / ALFWorld .tw-pddl) through textworld.gym."""

    def __init__(self, gamefile: Path, max_steps: int, *, wrappers: list[Any] | None = None,
                 extras: list[str] | None = None, walkthrough: bool = True) -> None:
        import textworld  # noqa: PLC0415 - optional extra, imported only when a game is played
        import textworld.gym  # noqa: PLC0415

        # ALFWorld's PDDL games are asked only for what its own agents request (walkthrough=False)
        rich = {"lost": True, "objective": True, "policy_commands": True} if walkthrough else {}
        infos = textworld.EnvInfos(won=True, admissible_commands=True, extras=extras or [], **rich)
        env_id = textworld.gym.register_game(str(gamefile), infos, max_episode_steps=max_steps,
                                             wrappers=wrappers or [])
        self._env = textworld.gym.make(env_id)
        self.objective = ""
        self.walkthrough: list[str] = []
        self.lost = False

    def reset(self) -> tuple[str, list[str]]:
        obs, info = self._env.reset()
        self.objective = str(info.get("objective") or "")
        self.walkthrough = [str(c) for c in (info.get("policy_commands") or [])]
        return strip_banner(str(obs)), list(info.get("admissible_commands") or [])

    def step(self, command: str) -> tuple[str, bool, bool, list[str]]:
        obs, _score, done, info = self._env.step(command)
        self.lost = bool(info.get("lost"))
        return (str(obs).strip(), bool(info.get("won")), bool(done or self.lost),
                list(info.get("admissible_commands") or []))

    def close(self) -> None:
        self._env.close()


def attach_gamefiles(splits: Splits, base: Path, where: str, *, in_folder: str = "") -> Splits:
    """Resolve each item's `gamefile` against `base` (a folder means `<folder>/<in_folder>`) into
    inputs['gamefile_path']; a missing file is a DataError naming the item and the folder."""
    for split in SPLITS:
        for item in splits.get(split):
            path = Path(item.inputs["gamefile"])
            path = path if path.is_absolute() else base / path
            if in_folder and path.is_dir():
                path = path / in_folder
            if not path.is_file():
                raise DataError(f"{split} item {item.id!r}: game file {item.inputs['gamefile']!r} not found "
                                f"under {where} ({base})")
            item.inputs["gamefile_path"] = str(path)
    return splits


def strip_banner(obs: str) -> str:
    """Drop TextWorld's ASCII-art title (noise for a small student) and keep the story text."""
    last = None
    for m in _BANNER_END.finditer(obs):
        last = m
    return (obs[last.end():] if last else obs).strip()


def parse_command(reply: str, admissible: list[str]) -> str:
    """The ACTION: line (else the last line), matched case-insensitively to an admissible command."""
    found = _ACTION.findall(reply or "")
    lines = [ln.strip() for ln in (reply or "").splitlines() if ln.strip()]
    command = (found[-1] if found else (lines[-1] if lines else "")).strip().strip("`'\".").lstrip("> ")
    lookup = {a.lower(): a for a in admissible}
    return lookup.get(command.lower(), command)


class TextGameOptions(EnvOptions):
    max_steps: int = Field(50, ge=1, description="Game steps per task.")
    history_steps: int = Field(6, ge=1, description="Recent steps shown to the student each turn.")
    max_tokens: int = Field(48, ge=4, description="Completion token cap per step.")


class TextGameEnv(BenchEnv):
    """Base of the text-game environments: subclasses say where games come from (`make_game`)."""

    Options: ClassVar[type[EnvOptions]] = TextGameOptions
    preamble: ClassVar[str] = ("You play a text adventure. Each turn, choose one command from the admissible "
                               "commands and reply with a single line: ACTION: <command>.")

    def make_game(self, item: Item) -> TextGame:
        raise NotImplementedError

    async def _run(self, item: Item, skill: str, student: LLM, *, sample: int, temperature: float,
                   feedback: bool) -> Trajectory:
        game = await asyncio.to_thread(self.make_game, item)
        try:
            obs, admissible = await asyncio.to_thread(game.reset)
            goal = str(getattr(game, "objective", "") or "") or next(
                (ln.strip() for ln in obs.splitlines() if "your task is" in ln.lower()), "")
            system = skill_system_message(skill, self.preamble)
            log: list[Message] = [system, {"role": "user", "content": obs}]
            steps: list[tuple[str, str]] = []  # (command, observation)
            won, usage = False, {}
            for _ in range(self.options.max_steps):
                recent = steps[-self.options.history_steps:]
                history = "".join(f"> {c}\n{o}\n" for c, o in recent)
                prompt = (f"Start:\n{log[1]['content']}\n\n"
                          + (f"Goal: {goal}\n\n" if goal and goal not in log[1]["content"] else "")
                          + (f"Recent steps:\n{history}\n" if history else "")
                          + f"Admissible commands: {', '.join(admissible[:60])}\n"
                          "Reply with ACTION: <command>.")
                completion = await self.ask(student, [system, {"role": "user", "content": prompt}],
                                            max_tokens=self.options.max_tokens, temperature=temperature,
                                            sample=sample)
                usage = usage_extras(completion)
                command = parse_command(completion.text or "", admissible)
                obs, won, done, admissible = await asyncio.to_thread(game.step, command)
                steps.append((command, obs))
                log += [{"role": "assistant", "content": completion.text or ""}, {"role": "user", "content": obs}]
                if won or done:
                    break
            walkthrough = list(getattr(game, "walkthrough", []) or [])
            lost = bool(getattr(game, "lost", False))
        finally:
            await asyncio.to_thread(game.close)
        score = 1.0 if won else 0.0
        if won:
            reason = ""
        elif lost:
            reason = f"lost: the game ended without the goal after {len(steps)} steps"
        else:
            reason = f"not_won: the task was not completed in {len(steps)} steps"
        gold = f"complete the task ({goal or 'see the first observation'})"
        if walkthrough:
            gold += "; a winning walkthrough: " + "; ".join(walkthrough)
        traj = self.finish(item, log, "won" if won else "not won", hard=score, soft=score, fail_reason=reason,
                           gold=gold, extras={**usage, "steps": len(steps),
                                              "commands": [c for c, _ in steps]})
        traj.question = goal
        return traj
