"""TextWorld: text adventures generated locally (no data download), played by the shared text-game loop.

Games come from, in order:
- `env.split_dir` / `env.data_path` manifests of `{"gamefile": ...}` records (paths relative to the
  manifest's folder or to `env.data_root`), as for every benchmark;
- `env.data_root`: a folder with `train/`, `val/`, `test/` sub-folders of compiled games (`*.z8`,
  `*.ulx`), e.g. made with `tw-make custom ... --output <root>/train/g1.z8`;
- otherwise generated here: `n_games` games with `textworld.generator` (seeded, deterministic) into
  `env.game_dir` (default: the user cache), split by `env.split_ratio`. Generation happens once;
  later runs reuse the compiled files.

Task types are the quest lengths (`quest_len_N`). ALFWorld's household games use the same loop
through the `alfworld` environment.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from skillgrad.envs.base import SPLITS, Item, Splits
from skillgrad.envs.benchkit import ratio_split_records
from skillgrad.envs.splits import load_splits
from skillgrad.envs.textworld.play import (
    TextGame,
    TextGameEnv,
    TextGameOptions,
    TextWorldGame,
    attach_gamefiles,
)
from skillgrad.errors import DataError, UsageError

INSTALL_HINT = "pip install 'skillgrad[textworld]' (TextWorld compiles its games locally)"
GAME_SUFFIXES = (".z8", ".ulx", ".z5")


class TextWorldOptions(TextGameOptions):
    data_root: str = Field("", description="Folder with train/ val/ test/ game files ('' = generate games).")
    game_dir: str = Field("", description="Where generated games are kept ('' = ~/.cache/skillgrad/textworld).")
    n_games: int = Field(20, ge=3, description="Games to generate when no data is given.")
    world_size: int = Field(3, ge=1, description="Rooms per generated game.")
    nb_objects: int = Field(4, ge=1, description="Objects per generated game.")
    quest_length: int = Field(2, ge=1, description="Winning walkthrough length of generated games.")
    quest_lengths: list[int] = Field(default_factory=list,
                                     description="Cycle through these quest lengths instead (task types).")
    seed: int = Field(1234, description="Seed of the first generated game (game k uses seed + k).")
    max_steps: int = Field(20, ge=1, description="Game steps per task.")


def generate_games(out_dir: Path, *, n: int, world_size: int, nb_objects: int, quest_lengths: list[int],
                   seed: int) -> list[Path]:
    """Compile `n` seeded games into `out_dir` (skipping files already there); returns their paths."""
    from textworld import GameOptions  # noqa: PLC0415 - optional extra
    from textworld.generator import compile_game, make_game  # noqa: PLC0415

    out_dir.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for k in range(n):
        qlen = quest_lengths[k % len(quest_lengths)]
        path = out_dir / f"tw_s{seed + k}_q{qlen}.z8"
        if not path.is_file():
            opts = GameOptions()
            opts.seeds = seed + k
            opts.nb_rooms, opts.nb_objects, opts.quest_length = world_size, nb_objects, qlen
            opts.path, opts.force_recompile = str(path), True
            compile_game(make_game(opts), opts)
        paths.append(path)
    return paths


def quest_type(path: str) -> str:
    stem = Path(path).stem
    q = stem.rsplit("_q", 1)[-1] if "_q" in stem else ""
    return f"quest_len_{q}" if q.isdigit() else "default"


class TextWorldEnv(TextGameEnv):
    name: ClassVar[str] = "textworld"
    scorer: ClassVar[str] = "won (hard = soft)"
    Options: ClassVar[type[TextWorldOptions]] = TextWorldOptions  # type: ignore[assignment]
    package_dir: ClassVar[Path] = Path(__file__).parent

    def data_status(self) -> str:
        if importlib.util.find_spec("textworld") is None:
            return f"missing: the textworld package is not installed ({INSTALL_HINT})"
        src = self.configured_source()
        if src is not None:
            return "ready" if src.exists() else f"missing: {src} does not exist"
        if self.options.data_root:
            root = Path(self.options.data_root).expanduser()
            return "ready" if root.is_dir() else f"missing: env.data_root {root} does not exist"
        return "ready (games are generated locally)"

    def _game_dir(self) -> Path:
        if self.options.game_dir:
            return Path(self.options.game_dir).expanduser()
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        o = self.options
        lens = "-".join(str(q) for q in (o.quest_lengths or [o.quest_length]))
        return cache / "skillgrad" / "textworld" / f"w{o.world_size}_o{o.nb_objects}_q{lens}_s{o.seed}"

    def parse_item(self, record: Any, split: str) -> Item:
        if isinstance(record, str):
            record = {"gamefile": record}
        if not isinstance(record, dict) or "gamefile" not in record:
            raise ValueError("expected a gamefile path or an object with 'gamefile'")
        gamefile = str(record["gamefile"])
        return Item(id=str(record.get("id") or Path(gamefile).stem), inputs={"gamefile": gamefile, "question": ""},
                    gold="won", task_type=str(record.get("task_type") or quest_type(gamefile)))

    def load_splits(self) -> Splits:
        if importlib.util.find_spec("textworld") is None:
            raise UsageError(f"environment textworld: the textworld package is not installed; {INSTALL_HINT}")
        o = self.options
        src = self.configured_source()
        if src is not None:
            splits = load_splits(self.cfg, parse_item=self.parse_item)
            base = Path(o.data_root).expanduser() if o.data_root else (src.parent if src.is_file() else src)
        elif o.data_root:
            base = Path(o.data_root).expanduser()
            parsed: dict[str, list[Item]] = {}
            for split in SPLITS:
                folder = base / split
                games = sorted(p for p in folder.glob("*") if p.suffix in GAME_SUFFIXES) if folder.is_dir() else []
                if not games:
                    raise DataError(f"env.data_root: no game files ({', '.join(GAME_SUFFIXES)}) under {folder}; "
                                    f"make some with tw-make custom --output {folder}/game.z8")
                parsed[split] = [self.parse_item(p.relative_to(base).as_posix(), split) for p in games]
            splits = Splits(parsed["train"], parsed["val"], parsed["test"])
        else:
            base = self._game_dir()
            paths = generate_games(base, n=o.n_games, world_size=o.world_size, nb_objects=o.nb_objects,
                                   quest_lengths=o.quest_lengths or [o.quest_length], seed=o.seed)
            parts = ratio_split_records([p.name for p in paths], ratio=self.cfg.split_ratio, seed=self.cfg.split_seed)
            if any(not parts[s] for s in SPLITS):
                raise UsageError(f"env.n_games={o.n_games} leaves a split empty under env.split_ratio="
                                 f"{self.cfg.split_ratio}; raise env.n_games")
            splits = Splits(*([self.parse_item(n, s) for n in parts[s]] for s in SPLITS))
            (base / "splits.json").write_text(json.dumps(parts, indent=1), encoding="utf-8")
        if self.cfg.limit:
            splits = Splits(*(splits.get(s)[: self.cfg.limit] for s in SPLITS))
        return attach_gamefiles(splits, base, "the game folder")

    def make_game(self, item: Item) -> TextGame:
        return TextWorldGame(Path(item.inputs["gamefile_path"]), self.options.max_steps)
