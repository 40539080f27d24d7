"""ALFWorld (optional extra): household tasks played as TextWorld text games.

Needs `pip install skillgrad[alfworld]`, the game files (`alfworld-download`) and `ALFWORLD_DATA`
(or `env.data_root`). Without them `data_status()` says what is missing and `load_splits()` raises a
UsageError saying how to install; nothing else imports the package.

Items: SkillOpt's manifests (`{gamefile}` paths relative to ALFWORLD_DATA) through env.split_dir, or,
when none is set, the games found under `json_2.1.1/{train,valid_seen,valid_unseen}` (train / val /
test). The loop shows the observation and the admissible commands; the student replies
`ACTION: <command>`; at most `max_steps` steps. hard = soft = 1 when the game is won.

The game loop is the `textworld` environment's (envs/textworld/play.py), which is tested on games
generated locally with TextWorld; with ALFWORLD_DATA set, tests/test_textworld.py also plays one ALFWorld game.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from skillgrad.envs.base import SPLITS, Item, Splits
from skillgrad.envs.splits import load_splits
from skillgrad.envs.textworld.play import (
    TextGame,
    TextGameEnv,
    TextGameOptions,
    TextWorldGame,
    attach_gamefiles,
    parse_command,
)
from skillgrad.errors import DataError, UsageError

PREAMBLE = ("You play a text game in a household. Each turn, choose one command from the admissible "
            "commands and reply with a single line: ACTION: <command>.")
TASK_TYPES = ("pick_and_place_simple", "look_at_obj_in_light", "pick_clean_then_place_in_recep",
              "pick_heat_then_place_in_recep", "pick_cool_then_place_in_recep", "pick_two_obj_and_place")
INSTALL_HINT = ("pip install 'skillgrad[alfworld]', run alfworld-download, and set ALFWORLD_DATA "
                "(or env.data_root) to the game-file directory")
_SCAN = {"train": "train", "val": "valid_seen", "test": "valid_unseen"}
__all__ = ["ALFWorldEnv", "TextGame", "parse_command", "task_type_of"]


def alfworld_game(gamefile: Path, max_steps: int) -> TextWorldGame:
    """One ALFWorld game: the shared TextWorld game with ALFWorld's name demangler and infos wrapper."""
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos  # noqa: PLC0415

    return TextWorldGame(gamefile, max_steps, wrappers=[AlfredDemangler(), AlfredInfos], extras=["gamefile"],
                          walkthrough=False)


def task_type_of(path: str) -> str:
    for part in reversed(Path(path).parts):
        for t in TASK_TYPES:
            if part.startswith(t):
                return t
    return "default"


class ALFWorldOptions(TextGameOptions):
    data_root: str = Field("", description="ALFWorld game files ('' = $ALFWORLD_DATA).")


class ALFWorldEnv(TextGameEnv):
    name: ClassVar[str] = "alfworld"
    scorer: ClassVar[str] = "won (hard = soft)"
    Options: ClassVar[type[ALFWorldOptions]] = ALFWorldOptions  # type: ignore[assignment]
    package_dir: ClassVar[Path] = Path(__file__).parent
    default_task_types: ClassVar[tuple[str, ...]] = TASK_TYPES
    preamble: ClassVar[str] = PREAMBLE

    def game_root(self) -> Path | None:
        raw = self.options.data_root or os.environ.get("ALFWORLD_DATA", "")
        return Path(raw).expanduser() if raw else None

    def missing(self) -> str:
        """'' when ALFWorld can run, else what is missing."""
        absent = [m for m in ("alfworld", "textworld") if importlib.util.find_spec(m) is None]
        if absent:
            verb = "packages are" if len(absent) > 1 else "package is"
            return f"the {' and '.join(absent)} {verb} not installed"
        root = self.game_root()
        if root is None:
            return "ALFWORLD_DATA is not set"
        if not root.is_dir():
            return f"ALFWORLD_DATA directory {root} does not exist"
        return ""

    def data_status(self) -> str:
        why = self.missing()
        return f"missing: {why} ({INSTALL_HINT})" if why else "ready"

    def parse_item(self, record: Any, split: str) -> Item:
        if isinstance(record, str):
            record = {"gamefile": record}
        if not isinstance(record, dict):
            raise ValueError("expected a gamefile path or an object with 'gamefile'")
        gamefile = str(record["gamefile"])
        return Item(id=str(record.get("id") or gamefile), inputs={"gamefile": gamefile, "question": ""},
                    gold="won", task_type=task_type_of(gamefile))

    def load_splits(self) -> Splits:
        why = self.missing()
        if why:
            raise UsageError(f"environment alfworld: {why}; {INSTALL_HINT}")
        root = self.game_root()
        assert root is not None
        if self.configured_source() is not None:
            splits = load_splits(self.cfg, parse_item=self.parse_item)
        else:
            parsed = {}
            for split, folder in _SCAN.items():
                base = root / "json_2.1.1" / folder
                games = sorted(base.rglob("game.tw-pddl")) if base.is_dir() else []
                if not games:
                    raise DataError(f"ALFWORLD_DATA: no game.tw-pddl files under {base} (run alfworld-download)")
                parsed[split] = [self.parse_item(g.parent.relative_to(root).as_posix() + "/game.tw-pddl", split)
                                 for g in games]
            splits = Splits(parsed["train"], parsed["val"], parsed["test"])
            if self.cfg.limit:
                splits = Splits(*(getattr(splits, s)[: self.cfg.limit] for s in SPLITS))
        return attach_gamefiles(splits, root, "ALFWORLD_DATA", in_folder="game.tw-pddl")

    def make_game(self, item: Item) -> TextGame:
        return alfworld_game(Path(item.inputs["gamefile_path"]), self.options.max_steps)
