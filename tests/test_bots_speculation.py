"""The speculation heuristic's fixed flaws (issue 18), each with a test that fails on the bot
before the fix.

First fix: the buyer's limit never met the seller's price (10 sales in 12,577 offers), and a
lone bidder bid the minimum and was always declined. Second fix: the bot valued a card at its
survival chance alone (a buyer forgot the chance its own pile gave it anyway, so it overpaid
for what it bought) and weighed chips as chips in a game that only the richest seat wins (it
sold at 0.9 x the card's equity whatever the standings, and refused a price that won the
session outright). Against three `bid-max-value` players it won 20.4% of 2,000 sessions.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import replace

import pytest

from events.randomness import Draws
from ops.tournament.strategies import OUTSIDE
from projections.registry import get_game
from tests.gamekit import seed_for
from workers.bots import speculation as bot
from workers.bots import study
from workers.bots.study import play_session, session_seed

GAME = get_game("speculation")
CLOSE = [{"type": "accept"}, {"type": "decline"}]


def _bid(low=1, high=40):
    return [{"type": "bid", "amount": {"min": low, "max": high}}, {"type": "pass"}]


def _view(**changes) -> dict:
    """A view as the game shows it: 4 players, seat 0 deals the first of 8 deals and holds
    the turn-up, the 9 of hearts, which it has put up for sale."""
    view = {"game": "speculation", "seat": None, "players": 4, "phase": "bidding", "to_act": [1],
            "deal": 1, "deals": 8, "dealer": 0,
            "options": {"hand_size": 3, "ante": 4, "dealer_ante": 6, "starting_chips": 40, "deals": 8,
                        "jack_five_bonus": False, "dead_hand": False, "blind_exchanges": False,
                        "price_cap": None},
            "chips": [34, 36, 36, 36], "pot": 18, "house": 0, "trump": "H", "turn_up": "9H",
            "best_trump": "9H", "holder": 0, "best_in_dead_hand": False, "revealed": [],
            "piles": [3, 3, 3, 3], "dead_hand": None, "stock": 39,
            "auction": {"kind": "trump", "seller": 0, "card": "9H", "high_bid": 0, "high_bidder": None,
                        "bidders": [1, 2, 3]},
            "blind_offerer": None, "max_bid": 36, "history": [], "end_reason": None, "result": None}
    view.update(changes)
    return view


def _closing(view: dict, price: int, buyer: int) -> dict:
    return dict(view, phase="close", auction=dict(view["auction"], high_bid=price, high_bidder=buyer))


def test_heuristics_among_themselves_keep_a_live_market(monkeypatch):
    counted = Counter()

    def count(state, events, seat):
        if seat == 0:
            counted.update(e["type"] for e in events if e["type"] in ("sale", "antes", "offer"))
        return {}

    monkeypatch.setitem(study.EXTRAS, "speculation", count)
    for i in range(20):
        record = play_session(GAME, 4, session_seed("bots-market", "speculation", 4, i), f"bm-{i}",
                              ["heuristic"] * 4)
        assert record.error is None
    # the target: at least 0.5 sales per deal on average (the old bot made 0.06)
    print(f"sales per deal among heuristics: {counted['sale'] / counted['antes']:.2f}")
    assert counted["sale"] / counted["antes"] >= 0.5, counted


def test_a_lone_bidder_bids_what_the_holder_would_accept():
    # seat 1, the first to bid, has a pile of two: the card is worth more to it than to seat 0
    view = _view(revealed=[{"card": "3C", "by": 1, "owner": 1}], piles=[3, 2, 3, 3])
    action = bot.heuristic(view, _bid(), 1, random.Random(3))
    assert action["type"] == "bid" and action["amount"] > 1
    # the holder, deciding on that bid from its own view, accepts it
    assert bot.heuristic(_closing(view, action["amount"], 1), CLOSE, 0, random.Random(3)) == {"type": "accept"}
    # and one chip less it declines: the opening bid is the holder's price, not more
    assert bot.heuristic(_closing(view, action["amount"] - 1, 1), CLOSE, 0, random.Random(3)) == {"type": "decline"}


# ----------------------------------------------------------------------------- the deal's odds

def test_the_deals_odds_worked_by_hand():
    # seat 0 holds the 9; seat 1 and then seat 2 each turn one card; u cards unseen
    view = _view(piles=[0, 1, 1, 0])
    higher, u = bot._higher_and_unseen(view)           # T, J, Q, K, A of hearts
    assert (higher, u) == (5, 51)
    odds = bot._deal_odds(view, 0)
    # seat 1 turns the j-th lowest of the 5 with chance 1/u each, and keeps it unless seat 2
    # then turns one of the 5 - j above it; seat 2 wins when seat 1 missed, or beats seat 1
    p1 = sum(1 / u * (1 - (5 - j) / (u - 1)) for j in range(1, 6))
    p2 = (u - 5) / u * 5 / (u - 1) + sum(1 / u * (5 - j) / (u - 1) for j in range(1, 6))
    assert odds[1] == pytest.approx(p1)
    assert odds[2] == pytest.approx(p2)
    assert odds[0] == pytest.approx(1 - p1 - p2) and odds[3] == 0.0
    # the holder's pile turns only once it is beaten: three cards of its own can win it back
    again = bot._deal_odds(_view(piles=[3, 1, 1, 0]), 0)
    assert again[0] > odds[0] and again[1] < odds[1] and again[2] < odds[2]


def test_the_odds_count_the_unseen_higher_trumps():
    # the source: a queen with most of the deck to turn is likely beaten; with few cards left it
    # is nearly safe; once the king and ace are seen it is safe, and so is the ace
    queen = dict(turn_up="QH", best_trump="QH")
    early = bot._deal_odds(_view(**queen, piles=[3, 3, 3, 3]), 0)[0]
    late = bot._deal_odds(_view(**queen, piles=[0, 0, 0, 1]), 0)[0]
    assert early < 0.75 < 0.95 < late
    seen = [{"card": "KH", "by": 1, "owner": 1}, {"card": "AH", "by": 2, "owner": 2}]
    assert bot._deal_odds(_view(**queen, revealed=seen, piles=[3, 2, 2, 3]), 0)[0] == 1.0
    assert bot._deal_odds(_view(turn_up="AS", best_trump="AS", trump="S", piles=[3, 3, 3, 3]), 0)[0] == 1.0


def _reveal_only(state, seed):
    """Play the deal to its end with reveals only (every holder keeps): the winner's seat."""
    deals = len(state.history)
    version = 0
    while len(state.history) == deals:
        seat = GAME.to_act(state)[0]
        kinds = {a["type"] for a in GAME.legal_actions(state, seat)}
        action = {"type": "reveal" if "reveal" in kinds else "keep"}
        version += 1
        for event in GAME.decide(state, seat, action, Draws(seed, f"v{version}")):
            state = GAME.evolve(state, event)
    return state.history[deals][2]      # (an ace turned up next may end the next deal too)


def test_the_deals_odds_match_the_rules_played_out():
    """Mid-deal states of real games: deal the unseen cards again many times, play the deal
    out by the rules with nobody selling, and count who takes the pot."""
    states = []

    def collect(state, seat, view, legal, action):
        if view["phase"] == "reveal" and view["revealed"] and len(states) < 3 and len(view["revealed"]) % 3 == 1:
            states.append((state, view))

    play_session(GAME, 4, session_seed("deal-odds", "speculation", 4, 0), "deal-odds", ["baseline"] * 4,
                 observer=collect)
    assert len(states) == 3
    rng = random.Random(7)
    trials = 3000
    for state, view in states:
        seen = {card for card, _by, _owner in state.table}
        unseen = [c for c in range(52) if c not in seen]
        sizes = [len(p) for p in state.piles]
        wins = Counter()
        for t in range(trials):
            cards = rng.sample(unseen, sum(sizes))
            piles, at = [], 0
            for size in sizes:
                piles.append(tuple(cards[at:at + size]))
                at += size
            wins[_reveal_only(replace(state, piles=tuple(piles)), seed_for(t))] += 1
        odds = bot._deal_odds(view, view["holder"])
        for seat in range(4):
            assert wins[seat] / trials == pytest.approx(odds[seat], abs=0.03), (seat, view["revealed"])


# ----------------------------------------------------------------------------- the second fix

def test_a_buyer_counts_the_chance_its_own_pile_gave_it():
    # seat 0 (3 cards) holds the 8 of hearts; seat 1 (3 cards) bids. If it buys, its own pile
    # stops turning: what the card adds is its chance as holder less its chance from its pile
    view = _view(turn_up="8H", best_trump="8H", auction=dict(_view()["auction"], card="8H"),
                 piles=[3, 3, 1, 0])
    before, after = bot._deal_odds(view, 0), bot._deal_odds(view, 1)
    adds = (after[1] - before[1]) * view["pot"]
    assert 7 < adds < 7.1
    action = bot.heuristic(view, _bid(), 1, random.Random(1))
    # the old bot bid 10 (0.95 x its survival as holder x the pot)
    assert action["type"] == "bid" and action["amount"] <= adds + 1


LAST_DEAL = dict(deal=8, dealer=3, turn_up="QH", best_trump="QH", holder=0,
                 revealed=[{"card": "3C", "by": 0, "owner": 0}],
                 auction={"kind": "trump", "seller": 0, "card": "QH", "high_bid": 0, "high_bidder": None,
                          "bidders": [1, 2, 3]})


def test_a_trailer_keeps_the_card_it_needs_on_the_last_deal():
    # seat 0 trails (20 against 36) and holds a queen that survives 92% of the time: the pot
    # wins it the session; 15 chips leave it at 35, behind everyone
    view = _closing(_view(**LAST_DEAL, chips=[20, 36, 36, 36], piles=[2, 1, 1, 0]), 15, 1)
    assert bot._deal_odds(view, 0)[0] > 0.92
    # the old bot sold for 0.9 x its survival chance (0.92) x the pot: 14.9 chips
    assert bot.heuristic(view, CLOSE, 0, random.Random(1)) == {"type": "decline"}


def test_a_leader_takes_a_price_that_wins_the_session():
    # seat 0 leads (40 against 30) with a queen that survives 96% of the time; 10 chips from
    # seat 1 put it out of everyone's reach, whoever takes the pot
    view = _closing(_view(**LAST_DEAL, chips=[40, 30, 30, 30], piles=[1, 1, 0, 0]), 10, 1)
    assert bot._win_chance(view, 0, 1, 10) > 0.99 > bot._win_chance(view, 0)
    # the old bot refused anything under 0.9 x its survival chance (0.96) x the pot: 15.6 chips
    assert bot.heuristic(view, CLOSE, 0, random.Random(1)) == {"type": "accept"}


def test_the_heuristic_holds_its_share_against_bid_max_value_players():
    """Seeded sessions, one heuristic against three outside `bid-max-value` players, who bid up
    to the card's full equity (the bot before this fix won 20.4% of 2,000; this one 31%)."""
    policies = {"outside": OUTSIDE["speculation"]["bid-max-value"]}
    sessions, wins = 150, 0.0
    for i in range(sessions):
        seat = i % 4
        levels = ["outside"] * 4
        levels[seat] = "heuristic"
        record = play_session(GAME, 4, session_seed("vs-bmv", "speculation", 4, i), f"vs-bmv-{i}", levels,
                              policies=policies)
        assert record.error is None and not record.anomalies
        wins += record.shares[seat]
    print(f"heuristic vs three bid-max-value: {wins / sessions:.3f} (fair share 0.25)")
    assert wins / sessions > 0.25, wins / sessions


@pytest.mark.timing
def test_large_tables_estimate_the_odds_by_sampled_walks():
    """Past EXACT_CARDS face-down cards the exact walk is too big for its cache; the sampled
    walk agrees with it where both can run, and a bid at 8 players with 5-card piles and a
    dead hand stays well under a second (it took 21 s)."""
    sizes = (5, 5, 5, 4, 4, 3)
    exact = bot._rotation_odds(-1, 5, sizes, 2, 3, 40)
    sampled = bot._sampled_rotation_odds(-1, 5, sizes, 2, 3, 40)
    assert sum(sampled) == pytest.approx(1.0)
    assert max(abs(a - b) for a, b in zip(exact, sampled)) < 0.06
    game = get_game("speculation")
    state = game.new_state(game.OptionsSchema().load({"hand_size": 5, "dead_hand": True}), 8)
    for event in game.start(state, Draws("cd" * 32, "v2")):
        state = game.evolve(state, event)
    version, slowest = 3, 0.0
    for k in range(60):
        if game.is_over(state):
            break
        seat = min(game.to_act(state))
        view, legal = game.view(state, seat), game.legal_actions(state, seat)
        started = time.perf_counter()
        action = bot.heuristic(view, legal, seat, random.Random(k))
        slowest = max(slowest, time.perf_counter() - started)
        for event in game.decide(state, seat, action, Draws("cd" * 32, f"v{version}")):
            state = game.evolve(state, event)
            version += 1
    assert slowest < 1.0
