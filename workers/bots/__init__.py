"""Bot policies. A policy is a pure function `(view, legal_actions, seat, rng) -> action`.

It sees only its seat's view and the seat's legal actions (never the full state), and draws
its randomness from `rng`, a `random.Random` seeded from (game, seat, version).

The `search` level (information-set MCTS, `workers/bots/search/`) also takes a budget:
iterations per move with a time cap, never above the configured maximum (`SearchLimits`).
"""

from __future__ import annotations

import importlib
from typing import Callable, Optional

from . import baseline, random_bot
from .search.budget import Budget, SearchLimits, budget_from

Policy = Callable[[dict, list, int, object], dict]
LEVELS = ("random", "baseline", "heuristic", "search")


class UnknownBot(KeyError):
    pass


def policy(game_type: str, level: str, budget: Optional[dict] = None,
           limits: SearchLimits = SearchLimits()) -> Policy:
    """The policy of a level. `budget` ({"iterations", "time_ms"}, either optional) is read
    by the `search` level only, clamped to `limits`."""
    if level == "random":
        return random_bot.choose
    if level == "baseline":
        return baseline.choose
    if level not in LEVELS:
        raise UnknownBot(level)
    if level == "search":
        from .search import policy as search_policy

        try:
            return search_policy(game_type, budget_from(budget, limits))
        except ImportError:
            raise UnknownBot(level) from None
    return getattr(_heuristic_module(game_type, level), level)


def _heuristic_module(game_type: str, level: str):
    """The game's heuristic module, as its GameType names it (`bots`)."""
    from projections.registry import UnknownGame, get_game_type

    try:
        declared = get_game_type(game_type).bots
    except UnknownGame:
        declared = None
    if not declared:
        raise UnknownBot(level)
    return importlib.import_module(declared)


__all__ = ["Budget", "LEVELS", "Policy", "SearchLimits", "UnknownBot", "budget_from", "policy"]
