"""The `search` level: information-set Monte Carlo tree search over sampled worlds.

Per game, the search module its GameType names (`search`, e.g. `workers/bots/search/<game>.py`)
gives `determinize(view, seat, rng)` (a full state sampled from the view alone), `evaluate(state)`
(each seat's win chance at a leaf) and its `SETTINGS`; the fixed heuristic (its `bots` module)
plays the rollouts and gives the prior.
"""

from __future__ import annotations

import functools
import importlib
import random

from .budget import Budget
from .core import GameSearch, search

# A game's SETTINGS (in its search module): the default iterations per move, the rollout's
# length (heuristic decisions after the tree, before the evaluator), how many standard errors
# a move must gain over the heuristic's own to replace it, how the root shares out its
# iterations ("ucb" or "halving", workers/bots/search/core.py), and the keyword arguments that turn the game's
# heuristic into the searching seat's own prior and rollout policy ("own_policy"; the rivals
# are always modelled by the heuristic itself), and the function of the game's search module
# that gives the root's move ("root_hint", run once a search; default: the own policy).
# Chosen by short matches against three heuristics (docs/bots.md); what one iteration costs
# differs tenfold between the games. A game without SETTINGS gets these defaults.
DEFAULT_ITERATIONS = 40


def _modules(game_type: str):
    """The game's search module and heuristic module, as its GameType names them; ImportError
    for a game without a search level (the caller's UnknownBot)."""
    from projections.registry import UnknownGame, get_game_type

    try:
        declared = get_game_type(game_type)
    except UnknownGame:
        raise ImportError(f"{game_type!r} is not a declared game") from None
    if not declared.search:
        raise ImportError(f"{game_type!r} declares no search module")
    return importlib.import_module(declared.search), importlib.import_module(declared.bots)


def settings_of(game_type: str) -> dict:
    """The game's SETTINGS (its search module's; {} for the defaults); ImportError for a game
    without a search level."""
    return getattr(_modules(game_type)[0], "SETTINGS", {})


@functools.lru_cache(maxsize=None)
def game_search(game_type: str) -> GameSearch:
    from projections.registry import get_game

    sampler, bots = _modules(game_type)
    heuristic = bots.heuristic
    settings = getattr(sampler, "SETTINGS", {})
    own = settings.get("own_policy")
    root_hint = settings.get("root_hint")
    return GameSearch(game=get_game(game_type), determinize=sampler.determinize, evaluate=sampler.evaluate,
                      heuristic=heuristic, rollout_moves=settings.get("rollout_moves", 4),
                      confidence=settings.get("confidence", 1.0), min_gain=settings.get("min_gain", 0.0),
                      root=settings.get("root", "ucb"),
                      own_policy=None if own is None else functools.partial(heuristic, **own),
                      root_hint=None if root_hint is None else getattr(sampler, root_hint))


def default_iterations(game_type: str) -> int:
    try:
        return settings_of(game_type).get("iterations", DEFAULT_ITERATIONS)
    except ImportError:
        return DEFAULT_ITERATIONS   # a game without a search level: what a search of it would get


def policy(game_type: str, budget: Budget = Budget()):
    """The search policy of a game, `(view, legal_actions, seat, rng) -> action`."""
    spec = game_search(game_type)
    if budget.iterations is None:
        budget = Budget(default_iterations(game_type), budget.time_ms)

    def choose(view: dict, legal_actions: list, seat: int, rng: random.Random) -> dict:
        return search(spec, view, legal_actions, seat, rng, budget)[0]

    choose.budget = budget
    return choose
