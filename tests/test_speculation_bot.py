"""The Speculation `heuristic` bot: legal actions only, decisions from the view, and it beats
random players clearly."""

from __future__ import annotations

import json
import random

from events.randomness import Draws
from projections import speculation as g
from projections.templates import matches
from tests.gamekit import seed_for, start_game
from workers.bots import speculation as bot
from workers.bots.random_bot import choose


def play(seed_n, seats, options, heuristic_seats, check=False):
    seed = seed_for(seed_n)
    state, _ = start_game(g, options, seats, seed)
    rng = random.Random(seed_n)
    version = 0
    while not g.is_over(state):
        seat = g.to_act(state)[0]
        legal = g.legal_actions(state, seat)
        view = json.loads(json.dumps(g.view(state, seat)))  # what a remote bot receives
        if seat in heuristic_seats:
            action = bot.heuristic(view, legal, seat, rng)
            if check:
                assert matches(action, legal), (action, legal)
        else:
            action = choose(view, legal, seat, rng)
        version += 1
        for event in g.decide(state, seat, action, Draws(seed, f"v{version}")):
            state = g.evolve(state, event)
    return g.result(state)


def test_heuristic_returns_only_legal_actions():
    variants = [{}, {"blind_exchanges": True}, {"dead_hand": True, "jack_five_bonus": True},
                {"price_cap": 2, "hand_size": 5}, {"hand_size": 4, "blind_exchanges": True,
                                                   "dead_hand": True}]
    for i in range(12):
        seats = 3 + i % 6
        options = dict(variants[i % len(variants)], deals=2)
        play(900 + i, seats, options, heuristic_seats=set(range(0, seats, 2)), check=True)


def test_heuristic_beats_random_players():
    games, wins = 100, 0
    for i in range(games):
        seat = i % 4
        result = play(i, 4, {}, heuristic_seats={seat})
        wins += seat in result["winners"]
    rate = wins / games
    print(f"\nspeculation heuristic win rate vs 3 random bots: {rate:.2f} (fair share 0.25)")
    assert rate > 0.45
