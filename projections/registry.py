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


BUILTIN = ("speculation", "spekulation", "speculate", "big_shot")


def _register_builtin() -> None:
    import importlib

    for name in BUILTIN:
        try:
            register(importlib.import_module(f"projections.{name}"))
        except Exception:  # DEV-ONLY guard while games are being written
            pass


_register_builtin()
