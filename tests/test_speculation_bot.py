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
    for i in range(30):
        seats = 3 + i % 6
        options = dict(variants[i % len(variants)], deals=2)
        play(900 + i, seats, options, heuristic_seats=set(range(0, seats, 2)), check=True)


def _view(best, revealed=(), piles=(3, 3, 3, 3), dead=None, pot=18):
    return {"trump": best[1], "turn_up": best, "best_trump": best, "pot": pot,
            "revealed": [{"card": c, "by": 1, "owner": 1} for c in revealed],
            "piles": list(piles), "dead_hand": dead}


def test_counts_unseen_higher_trumps():
    # a queen with most of the deck to turn is at risk; with few cards left it is nearly safe
    early = bot._survival(_view("QH", piles=(8, 8, 8, 8)), holder=0)
    late = bot._survival(_view("QH", piles=(0, 1, 0, 0)), holder=0)
    assert early < 0.6 < 0.95 < late
    # once the king and ace are seen the queen is safe
    assert bot._survival(_view("QH", revealed=["KH", "AH"], piles=(8, 8, 8, 8)), 0) == 1.0
    # the ace is always safe
    assert bot._survival(_view("AS", piles=(5, 5, 5)), 0) == 1.0


def test_bids_up_to_its_equity_opening_at_the_holders_price():
    legal = [{"type": "bid", "amount": {"min": 1, "max": 40}}, {"type": "pass"}]
    base = {"phase": "bidding", "chips": [40] * 4, "dealer": 0, "players": 4,
            "options": {"ante": 4, "dealer_ante": 6}, "auction": {"kind": "trump", "seller": 0}}
    # many cards left: a mediocre card is worth little, and never more than 0.95 x its equity
    view = dict(base, **_view("9H", piles=(3, 3, 3, 3)))
    worth = bot.BUY_FACTOR * bot._survival(view, 2) * 18
    action = bot.heuristic(view, legal, 2, random.Random(1))
    assert action["type"] == "bid" and action["amount"] <= worth < 7
    assert bot.heuristic(view, [{"type": "bid", "amount": {"min": 7, "max": 40}}, {"type": "pass"}], 2,
                         random.Random(1)) == {"type": "pass"}
    # the last card to turn, the ace already seen: the king is safe; a lone bidder opens at the
    # price the holder accepts (0.9 x 18 = 16.2 -> 17), not at 1, which would be declined
    view = dict(base, **_view("KH", revealed=["AH"], piles=(0, 0, 0, 1), pot=18))
    assert bot.heuristic(view, legal, 2, random.Random(1)) == {"type": "bid", "amount": 17}
    holder = dict(view, phase="close", auction={"kind": "trump", "seller": 0, "high_bid": 17, "high_bidder": 2})
    assert bot.heuristic(holder, [{"type": "accept"}, {"type": "decline"}], 0, random.Random(1)) == {"type": "accept"}
    # never above its own limit, nor into the chips kept for its next ante
    poor = dict(view, chips=[40, 40, 12, 40])
    assert bot.heuristic(poor, legal, 2, random.Random(1)) == {"type": "bid", "amount": 8}


def test_heuristic_beats_random_players():
    games, wins = 200, 0
    for i in range(games):
        seat = i % 4
        result = play(i, 4, {}, heuristic_seats={seat})
        wins += seat in result["winners"]
    rate = wins / games
    print(f"\nspeculation heuristic win rate vs 3 random bots: {rate:.2f} (fair share 0.25)")
    assert rate > 0.45
