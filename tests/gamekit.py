"""Helpers for testing a game module through the pure interface (no store, no API).

A playout here is the game the service records for an all-bot game created with the same
seed: the service draws the opening with `Draws(seed, "v2")` (version 1 is `game.created`,
version 2 `game.started`, which an all-bot game gets at creation) and an action decided at
stream version `n` with `Draws(seed, f"v{n + 1}")`, the version counting every event in the
stream, the platform's two included (service/core/commands.py: create and act).
"""

from __future__ import annotations

import random
import time
from typing import Callable, Optional

from events.randomness import Draws
from projections.templates import fill_template

STARTED_VERSION = 2  # game.created, then game.started: the opening events follow


def seed_for(n: int) -> str:
    return f"{n:064x}"


def opening_draws(seed: str) -> Draws:
    """The draws of the opening events, labelled as the service labels them."""
    return Draws(seed, f"v{STARTED_VERSION}")


def action_draws(seed: str, version: int) -> Draws:
    """The draws of an action decided at stream `version`, labelled as the service labels them."""
    return Draws(seed, f"v{version + 1}")


def start_game(game, options: dict, seats: int, seed: str):
    """Load options, build the state, fold the opening events. Returns (state, events); the
    stream's version after them is STARTED_VERSION + len(events)."""
    loaded = game.OptionsSchema().load(options)
    state = game.new_state(loaded, seats)
    events = game.start(state, opening_draws(seed))
    for event in events:
        state = game.evolve(state, event)
    return state, events


def seed_that_plays(game, options: dict, seats: int, started_at: int) -> str:
    """The first test seed whose game still needs a decision after its opening draws, for a
    game started at stream version `started_at` (a one-deal speculation game ends in its
    opening draws about one time in twelve: a test that must see a move cannot take that seed)."""
    loaded = game.OptionsSchema().load(options)
    for n in range(100):
        state = game.new_state(loaded, seats)
        for event in game.start(state, Draws(seed_for(n), f"v{started_at}")):
            state = game.evolve(state, event)
        if not game.is_over(state):
            return seed_for(n)
    raise AssertionError("no seed of the hundred plays")


def random_playout(game, options: dict, seats: int, seed: str, *, max_actions: int = 100_000,
                   on_event: Optional[Callable] = None, pick=None):
    """Play a whole game by picking random legal actions. Calls on_event(before, event, after).

    Returns (final_state, number_of_actions). Fails if the game does not end in max_actions.
    """
    rng = random.Random(seed)
    state, events = start_game(game, options, seats, seed)
    version = STARTED_VERSION + len(events)
    actions = 0
    while not game.is_over(state):
        assert actions < max_actions, "game did not end"
        movers = game.to_act(state)
        assert movers, "nobody to act in a live game"
        seat = rng.choice(movers)
        legal = game.legal_actions(state, seat)
        assert legal, f"seat {seat} is to act but has no legal action"
        action = pick(state, seat, legal, rng) if pick else fill_template(rng.choice(legal), rng)
        new_events = game.decide(state, seat, action, action_draws(seed, version))
        assert new_events, "a legal action produced no event"
        for event in new_events:
            before = state
            state = game.evolve(state, event)
            if on_event:
                on_event(before, event, state)
        version += len(new_events)
        actions += 1
    return state, actions


def check_sampled_worlds(game, states, determinize, rng, seats_of=lambda state: range(state.players)) -> int:
    """For every seat of every state, the world `determinize` samples from the seat's view
    shows the seat that same view and gives it the same legal actions. Returns the checks."""
    checked = 0
    for real in states:
        for seat in seats_of(real):
            view = game.view(real, seat)
            sampled = determinize(view, seat, rng)
            assert game.view(sampled, seat) == view
            assert game.legal_actions(sampled, seat) == game.legal_actions(real, seat)
            checked += 1
    return checked


def sampling_times(views, determinize, evaluate, rng) -> tuple[float, float]:
    """Mean milliseconds of `determinize` over (view, seat) pairs, and of `evaluate` over the
    worlds it sampled."""
    t0 = time.perf_counter()
    sampled = [determinize(view, seat, rng) for view, seat in views]
    t1 = time.perf_counter()
    for world in sampled:
        evaluate(world)
    t2 = time.perf_counter()
    return 1000 * (t1 - t0) / len(views), 1000 * (t2 - t1) / len(views)
