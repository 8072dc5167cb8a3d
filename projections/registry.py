"""The games this service hosts, by name."""

from __future__ import annotations

from types import ModuleType

_GAMES: dict[str, ModuleType] = {}

REQUIRED = ("NAME", "RULES_VERSION", "MIN_PLAYERS", "MAX_PLAYERS", "OptionsSchema", "ACTION_SCHEMAS",
            "HIDDEN_INFORMATION", "new_state", "start", "decide", "evolve", "view", "redact",
            "legal_actions", "to_act", "is_over", "result", "transfers")


class UnknownGame(KeyError):
    pass


def register(game: ModuleType) -> ModuleType:
    missing = [name for name in REQUIRED if not hasattr(game, name)]
    if missing:
        raise TypeError(f"game module {game.__name__} lacks {', '.join(missing)}")
    _GAMES[game.NAME] = game
    return game


def get_game(name: str) -> ModuleType:
    try:
        return _GAMES[name]
    except KeyError:
        raise UnknownGame(name) from None


def all_games() -> dict[str, ModuleType]:
    return dict(_GAMES)


def _register_builtin() -> None:
    from . import big_shot, speculate, speculation, spekulation

    for game in (speculation, spekulation, speculate, big_shot):
        register(game)


_register_builtin()
