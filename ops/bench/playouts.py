"""Goal 7: the rules engines alone, in process: random playouts of each game, complete games
per second (what bounds a search bot that speculates with the decider).

One playout: new_state, start, then until is_over: a random seat among to_act, a random legal
action (templates filled at random), decide with the seeded draws, evolve every event.
Baseline: the same loop's bookkeeping without the rules (choosing among a fixed action list
the same number of times) is too small to matter, so the figure is absolute games/s against
the goal; the actions per game and actions per second are reported beside it.
"""

from __future__ import annotations

import random
import time

from events.randomness import Draws
from projections.templates import fill_template

from .common import Row, Scale
from .games import hosted_games, seats_for, seed_for

GOAL = 200
GOAL_GAMES = {"speculation"}


def playout(game, seats: int, seed: str, rng: random.Random) -> int:
    state = game.new_state(game.OptionsSchema().load({}), seats)
    for event in game.start(state, Draws(seed, "v0")):
        state = game.evolve(state, event)
    actions = 0
    while not game.is_over(state):
        seat = rng.choice(game.to_act(state))
        action = fill_template(rng.choice(game.legal_actions(state, seat)), rng)
        for event in game.decide(state, seat, action, Draws(seed, f"v{actions + 1}")):
            state = game.evolve(state, event)
        actions += 1
    return actions


def measure(game, seconds: float) -> tuple[float, float]:
    """(games per second, actions per game)."""
    seats = seats_for(game)
    games = actions = 0
    start = time.perf_counter()
    while True:
        actions += playout(game, seats, seed_for(games), random.Random(games))
        games += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return games / elapsed, actions / games


def run(env, scale: Scale) -> list[Row]:
    rows = []
    for name, game in hosted_games().items():
        rates = [measure(game, scale.seconds) for _ in range(max(1, scale.rounds // 2))]
        rate = sorted(r for r, _ in rates)[len(rates) // 2]
        per_game = rates[0][1]
        # The goal is set for speculation; the other games' rates are reported beside it.
        goal, met = (f">= {GOAL} games/s", rate >= GOAL) if name in GOAL_GAMES else ("", None)
        rows.append(Row("7 playouts", name, rate, "games/s", goal=goal, met=met,
                        extra={"actions_per_game": round(per_game, 1),
                               "actions_per_s": round(rate * per_game)}))
    return rows
