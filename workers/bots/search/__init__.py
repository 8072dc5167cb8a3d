"""The `search` level: information-set Monte Carlo tree search over sampled worlds.

Per game, `workers/bots/search/<game>.py` gives `determinize(view, seat, rng)` (a full state
sampled from the view alone) and `evaluate(state)` (each seat's win chance at a leaf); the
fixed heuristic (`workers/bots/<game>.py`) plays the rollouts and gives the prior.
"""

from __future__ import annotations

import functools
import importlib
import random

from .budget import Budget
from .core import GameSearch, search

# Per game: the default iterations per move, the rollout's length (heuristic decisions
# after the tree, before the evaluator), how many standard errors a move must gain over the
# heuristic's own to replace it, how the root shares out its iterations ("ucb" or
# "halving", workers/bots/search/core.py), and the keyword arguments that turn the game's
# heuristic into the searching seat's own prior and rollout policy ("own_policy"; the rivals
# are always modelled by the heuristic itself), and the function of the game's search module
# that gives the root's move ("root_hint", run once a search; default: the own policy).
# Chosen by short matches against three heuristics (docs/bots.md); what one iteration costs
# differs tenfold between the games.
SETTINGS = {
    "big-shot": {"iterations": 40, "rollout_moves": 16, "confidence": 2.0},
    "spekulation": {"iterations": 60, "rollout_moves": 12, "confidence": 1.0, "root": "halving"},
    "speculate": {"iterations": 24, "rollout_moves": 30, "confidence": 2.0,
                  "own_policy": {"rival_weight": 1.0, "rival_measure": "leader"}},
    "speculation": {"iterations": 24, "rollout_moves": 6, "confidence": 3.0, "min_gain": 0.03,
                    "root_hint": "auction_lookahead"},
}


@functools.lru_cache(maxsize=None)
def game_search(game_type: str) -> GameSearch:
    from projections.registry import get_game

    name = game_type.replace("-", "_")
    sampler = importlib.import_module(f"workers.bots.search.{name}")
    heuristic = importlib.import_module(f"workers.bots.{name}").heuristic
    settings = SETTINGS.get(game_type, {})
    own = settings.get("own_policy")
    root_hint = settings.get("root_hint")
    return GameSearch(game=get_game(game_type), determinize=sampler.determinize, evaluate=sampler.evaluate,
                      heuristic=heuristic, rollout_moves=settings.get("rollout_moves", 4),
                      confidence=settings.get("confidence", 1.0), min_gain=settings.get("min_gain", 0.0),
                      root=settings.get("root", "ucb"),
                      own_policy=None if own is None else functools.partial(heuristic, **own),
                      root_hint=None if root_hint is None else getattr(sampler, root_hint))


def default_iterations(game_type: str) -> int:
    return SETTINGS.get(game_type, {}).get("iterations", 40)


def policy(game_type: str, budget: Budget = Budget()):
    """The search policy of a game, `(view, legal_actions, seat, rng) -> action`."""
    spec = game_search(game_type)
    if budget.iterations is None:
        budget = Budget(default_iterations(game_type), budget.time_ms)

    def choose(view: dict, legal_actions: list, seat: int, rng: random.Random) -> dict:
        return search(spec, view, legal_actions, seat, rng, budget)[0]

    choose.budget = budget
    return choose
