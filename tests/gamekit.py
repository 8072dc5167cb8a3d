"""Helpers for testing a game module through the pure interface (no store, no API)."""

from __future__ import annotations

import random
from typing import Callable, Optional

from events.randomness import Draws
from workers.bots.random_bot import fill_template, is_range


def seed_for(n: int) -> str:
    return f"{n:064x}"


def start_game(game, options: dict, seats: int, seed: str):
    """Load options, build the state, fold the opening events. Returns (state, events)."""
    loaded = game.OptionsSchema().load(options)
    state = game.new_state(loaded, seats)
    events = game.start(state, Draws(seed, "v0"))
    for event in events:
        state = game.evolve(state, event)
    return state, events


def random_playout(game, options: dict, seats: int, seed: str, *, max_actions: int = 100_000,
                   on_event: Optional[Callable] = None, pick=None):
    """Play a whole game by picking random legal actions. Calls on_event(before, event, after).

    Returns (final_state, number_of_actions). Fails if the game does not end in max_actions.
    """
    rng = random.Random(seed)
    state, events = start_game(game, options, seats, seed)
    actions = 0
    while not game.is_over(state):
        assert actions < max_actions, "game did not end"
        movers = game.to_act(state)
        assert movers, "nobody to act in a live game"
        seat = rng.choice(movers)
        legal = game.legal_actions(state, seat)
        assert legal, f"seat {seat} is to act but has no legal action"
        action = pick(state, seat, legal, rng) if pick else fill_template(rng.choice(legal), rng)
        new_events = game.decide(state, seat, action, Draws(seed, f"v{actions + 1}"))
        assert new_events, "a legal action produced no event"
        for event in new_events:
            before = state
            state = game.evolve(state, event)
            if on_event:
                on_event(before, event, state)
        actions += 1
    return state, actions


def is_legal(action: dict, legal_actions: list[dict]) -> bool:
    """Whether a complete action is one of the legal actions, or fills one of their templates
    (each {"min", "max"} field an int in range; a bool is not an int)."""
    for template in legal_actions:
        if set(template) != set(action):
            continue
        if all(type(action[k]) is int and v["min"] <= action[k] <= v["max"] if is_range(v) else action[k] == v
               for k, v in template.items()):
            return True
    return False
