"""The games this service hosts, by name: each game's declared `GameType` (its own module's
`GAME_TYPE`, projections/game_type.py) and its rules module.

`BUILTIN` is the one list of the hosted games, as their rules modules' paths; its order is the
lobby's. Everything else reads the games from here (`game_types()`, `all_games()`).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .game_type import GameType

# The games this service hosts, in the lobby's order.
BUILTIN = ("projections.speculation", "projections.spekulation", "projections.speculate", "projections.big_shot")

_GAMES: dict[str, ModuleType] = {}
_TYPES: dict[str, GameType] = {}

REQUIRED = ("NAME", "RULES_VERSION", "MIN_PLAYERS", "MAX_PLAYERS", "OptionsSchema", "ACTION_SCHEMAS",
            "HIDDEN_INFORMATION", "new_state", "start", "decide", "evolve", "view", "redact",
            "legal_actions", "to_act", "is_over", "result", "transfers")

__all__ = ["BUILTIN", "GameType", "REQUIRED", "UnknownGame", "all_games", "game_types", "get_game",
           "get_game_type", "register", "register_game"]


class UnknownGame(KeyError):
    pass


def register(game: ModuleType) -> ModuleType:
    """The rules alone: the API serves the game, nothing else knows it (no title, words, drawer
    or typed payloads). For a throwaway game of the tests (tests/conftest.py); a hosted game is
    declared with `register_game`."""
    missing = [name for name in REQUIRED if not hasattr(game, name)]
    if missing:
        raise TypeError(f"game module {game.__name__} lacks {', '.join(missing)}")
    _GAMES[game.NAME] = game
    return game


def register_game(game_type: GameType) -> GameType:
    """A declared game: its rules module (imported and checked here) and its other parts, named
    for the layers above to find (service/games.py checks them at start-up)."""
    rules = importlib.import_module(game_type.rules)
    if getattr(rules, "NAME", None) != game_type.name:
        raise TypeError(f"game type {game_type.name}: {game_type.rules}.NAME is {getattr(rules, 'NAME', None)!r}")
    register(rules)
    _TYPES[game_type.name] = game_type
    return game_type


def get_game(name: str) -> ModuleType:
    try:
        return _GAMES[name]
    except KeyError:
        raise UnknownGame(name) from None


def all_games() -> dict[str, ModuleType]:
    """name -> rules module, in the lobby's order."""
    return dict(_GAMES)


def get_game_type(name: str) -> GameType:
    """A hosted game's declaration; UnknownGame for a game that is not hosted or has its rules only."""
    if name not in _GAMES or name not in _TYPES:
        raise UnknownGame(name)
    return _TYPES[name]


def game_types() -> list[GameType]:
    """Every declared game, in the lobby's order."""
    return [_TYPES[name] for name in _GAMES if name in _TYPES]


def _register_builtin() -> None:
    for path in BUILTIN:
        register_game(importlib.import_module(path).GAME_TYPE)


_register_builtin()
