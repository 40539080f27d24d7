"""TextWorld: locally generated text adventures (tw-make / textworld.generator), the loop ALFWorld shares."""

from skillgrad.envs.textworld.env import TextWorldEnv, generate_games
from skillgrad.envs.textworld.play import TextGame, TextGameEnv, TextWorldGame, parse_command

__all__ = ["TextGame", "TextGameEnv", "TextWorldEnv", "TextWorldGame", "generate_games", "parse_command"]
