"""Bot policies. A policy is a pure function `(view, legal_actions, seat, rng) -> action`.

It sees only its seat's view and the seat's legal actions (never the full state), and draws
its randomness from `rng`, a `random.Random` seeded from (game, seat, version).
"""

from __future__ import annotations

import importlib
from typing import Callable

from . import baseline, random_bot

Policy = Callable[[dict, list, int, object], dict]
LEVELS = ("random", "baseline", "heuristic")


class UnknownBot(KeyError):
    pass


def policy(game_type: str, level: str) -> Policy:
    if level == "random":
        return random_bot.choose
    if level == "baseline":
        return baseline.choose
    if level not in LEVELS:
        raise UnknownBot(level)
    try:
        module = importlib.import_module(f"workers.bots.{game_type.replace('-', '_')}")
    except ImportError:
        raise UnknownBot(level) from None
    return getattr(module, level)
