"""Speculation (the Georgian card game): one test per rule of the brief, its worked checks,
visibility/redaction, validation, determinism and random-play invariants."""

from __future__ import annotations

import itertools
import json
import re
import time

import pytest
from marshmallow import ValidationError

from events.randomness import Draws
from projections import speculation as g
from projections.game import IllegalAction
from projections.templates import fill_template
from tests.gamekit import random_playout, seed_for, start_game

pytestmark = pytest.mark.quick

SEED = seed_for(7)
CODE_RE = re.compile(r'"(?:card:)?([2-9TJQKA][CDHS])"')


# --------------------------------------------------------------------------- rigging

class Rigged:
    """A stand-in for Draws: a chosen first dealer and chosen decks, then real draws."""

    def __init__(self, dealer: int = 0, decks=()):
        self.dealer = dealer
        self.decks = list(decks)
        self.fallback = Draws(SEED, "rigged")

    def below(self, label, n):
        if label == "first_dealer":
            return self.dealer
        return self.fallback.below(label, n)

    def shuffle(self, label, items):
        if self.decks:
            return [g.CARD_OF[c] for c in self.decks.pop(0)]
        return self.fallback.shuffle(label, items)


def deck(n, dealer, piles, turn_up, hand=3, dead=None):
    """A full deck order (codes) giving each pile the listed cards (top first).

    `piles` maps seat -> codes; `dead` lists the dead hand's codes (dead hand variant).
    Unlisted places are filled with the remaining cards, clubs-low first.
    """
    length = n + (1 if dead is not None else 0)
    order = [None] * 52
    for seat, cards in list(piles.items()) + ([("dead", dead)] if dead is not None else []):
        idx = n if seat == "dead" else (seat - dealer - 1) % n
        for k, code in enumerate(cards):
            order[k * length + idx] = code
    order[length * hand] = turn_up
    used = {c for c in order if c}
    assert len(used) == sum(1 for c in order if c), "a card listed twice"
    rest = iter(c for c in g.CODES if c not in used)
    return [c if c else next(rest) for c in order]


def begin(n=4, dealer=0, decks=(), rules_version=g.RULES_VERSION, **options):
    state = g.new_state(g.OptionsSchema().load(options), n, rules_version=rules_version)
    rng = Rigged(dealer, decks)
    events = g.start(state, rng)
    for e in events:
        state = g.evolve(state, e)
    return state, events, rng


def act(state, seat, action, rng):
    events = g.decide(state, seat, action, rng)
    for e in events:
        state = g.evolve(state, e)
    return state, events


def run(state, rng, steps):
    """Play (seat, action) pairs; returns the state and every event."""
    out = []
    for seat, action in steps:
        if isinstance(action, str):
            action = {"type": action}
        state, events = act(state, seat, action, rng)
        out.extend(events)
    return state, out


def keep_all(state, rng, events):
    """Keep at every sale / blind decision until someone must reveal (or the session ends)."""
    while state.phase in (g.SALE, g.BLIND):
        kind = "keep" if state.phase == g.SALE else "keep_blind"
        state, ev = act(state, state.actor, {"type": kind}, rng)
        events.extend(ev)
    return state


def reveal(state, rng, seat):
    """Keep through pending decisions, then `seat` (who must be next) reveals."""
    events = []
    state = keep_all(state, rng, events)
    assert g.to_act(state) == [seat] and state.phase == g.REVEAL
    state, ev = act(state, seat, {"type": "reveal"}, rng)
    return state, events + ev


def finish_deal(state, rng):
    """Keep and reveal until the current deal is over."""
    deal, events = state.deal_no, []
    while not g.is_over(state) and state.deal_no == deal:
        state = keep_all(state, rng, events)
        if g.is_over(state) or state.deal_no != deal:
            break
        state, ev = act(state, state.actor, {"type": "reveal"}, rng)
        events.extend(ev)
    return state, events


def types(events):
    return [e["type"] for e in events]


def ledger(state0, events_with_states):
    """Balances {(account, asset): qty} from the transfers of (state_before, event) pairs."""
    bal = {}
    for before, e in events_with_states:
        for t in g.transfers(before, e):
            bal[(t.frm, t.asset)] = bal.get((t.frm, t.asset), 0) - t.quantity
            bal[(t.to, t.asset)] = bal.get((t.to, t.asset), 0) + t.quantity
    return bal


def fold_with_before(state, events):
    pairs = []
    for e in events:
        pairs.append((state, e))
        state = g.evolve(state, e)
    return state, pairs


# A standard rigged 4-player deal, dealer 0, hearts trump (turn-up 7H); rotation 1, 2, 3, 0.
NO_TRUMPS = {1: ["2C", "3C", "4C"], 2: ["5C", "6C", "7C"], 3: ["8C", "9C", "TC"],
             0: ["2D", "3D", "4D"]}


# --------------------------------------------------------------------------- options

def test_option_defaults_depend_on_hand_size_and_players():
    # version 2: the default stack is 2.5 x players x ante, rounded up
    for hand, (ante, dealer_ante), chips in ((3, (4, 6), 50), (4, (5, 8), 63), (5, (6, 10), 75)):
        cfg = g.new_state(g.OptionsSchema().load({"hand_size": hand}), 5).cfg
        assert (cfg.ante, cfg.dealer_ante) == (ante, dealer_ante)
        assert cfg.starting_chips == chips and cfg.deals == 10
        v1 = g.new_state(g.OptionsSchema().load({"hand_size": hand}), 5, rules_version=1).cfg
        assert (v1.ante, v1.dealer_ante, v1.starting_chips) == (ante, dealer_ante, 50)   # version 1: 10 x players
    loaded = g.OptionsSchema().load({})
    assert loaded == {"hand_size": 3, "ante": None, "dealer_ante": None, "starting_chips": None,
                      "deals": None, "jack_five_bonus": False, "dead_hand": False,
                      "blind_exchanges": False, "price_cap": None}
    cfg = g.new_state(g.OptionsSchema().load({"ante": 2, "dealer_ante": 3, "starting_chips": 7,
                                              "deals": 4, "price_cap": 3}), 3).cfg
    assert (cfg.ante, cfg.dealer_ante, cfg.starting_chips, cfg.deals, cfg.cap) == (2, 3, 7, 4, 6)


@pytest.mark.parametrize("bad", [
    {"hand_size": 6}, {"hand_size": "3"}, {"ante": 0}, {"ante": True}, {"dealer_ante": 1.5},
    {"deals": 0}, {"starting_chips": -1}, {"price_cap": 0}, {"dead_hand": 1},
    {"blind_exchanges": "yes"},            # an unknown option: tests/test_conformance.py
])
def test_bad_options_are_rejected(bad):
    with pytest.raises(ValidationError):
        g.OptionsSchema().load(bad)


def test_version_2_default_stack_follows_the_ante():
    def stakes(players, rules_version=g.RULES_VERSION, **options):
        cfg = g.new_state(g.OptionsSchema().load(options), players, rules_version=rules_version).cfg
        return cfg.ante, cfg.dealer_ante, cfg.starting_chips
    assert [stakes(n)[2] for n in range(3, 9)] == [10 * n for n in range(3, 9)]      # ante 4
    assert stakes(3, ante=5) == (5, 5, 38)                   # 37.5 rounded up; the dealer pays the same
    assert [stakes(n, hand_size=5)[2] for n in (3, 4, 7)] == [45, 60, 105]       # ante 6: 15 x players
    assert stakes(4, starting_chips=7) == (4, 6, 7)          # given: as given
    assert stakes(4, ante=2, dealer_ante=3) == (2, 3, 20)    # both given: as given
    assert stakes(4, dealer_ante=9) == (4, 9, 40)            # dealer_ante alone: the ante by hand size
    assert stakes(4, hand_size=4, dealer_ante=9) == (5, 9, 50)
    assert stakes(3, rules_version=1, ante=5) == (5, 6, 30)  # version 1: dealer by hand size, 10 x players


@pytest.mark.parametrize("hand", [3, 4, 5])
@pytest.mark.parametrize("players", [3, 4, 5, 6, 7, 8])
def test_version_2_default_stack_pays_every_ante_of_a_session(hand, players):
    cfg = g.new_state(g.OptionsSchema().load({"hand_size": hand}), players).cfg
    # each seat deals deals / players times; a seat that never wins pays every ante
    dealing = -(-cfg.deals // players)
    assert cfg.starting_chips >= dealing * cfg.dealer_ante + (cfg.deals - dealing) * cfg.ante


def test_ante_given_alone_is_the_dealers_ante_too():
    state, events, _ = begin(n=4, dealer=2, ante=3)
    assert events[1]["amounts"] == [3, 3, 3, 3] and state.pot == 12
    _, events, _ = begin(n=4, dealer=2, ante=3, rules_version=1)
    assert events[1]["amounts"] == [3, 3, 6, 3]


def test_player_count_is_3_to_8():
    assert (g.MIN_PLAYERS, g.MAX_PLAYERS) == (3, 8)   # others refused: tests/test_conformance.py


# --------------------------------------------------------------------------- a session and a deal

def test_first_dealer_is_drawn_and_recorded():
    dealers = set()
    for i in range(30):
        state, events = start_game(g, {}, 5, seed_for(i))
        assert events[0]["type"] == "session_started"
        dealers.add(events[0]["first_dealer"])
        assert events[1]["type"] == "antes" and events[1]["dealer"] == events[0]["first_dealer"]
    assert len(dealers) > 1


def test_starting_stacks_come_from_the_bank():
    state, events, _ = begin(n=4, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    assert [(t.frm, t.to, t.quantity) for t in g.transfers(g.new_state({}, 4), events[0])] == \
        [("bank", f"seat:{s}", 40) for s in range(4)]


def test_antes_dealer_pays_dealer_ante_others_ante():
    state, events, _ = begin(n=4, dealer=2, decks=[deck(4, 2, {}, "7H")])
    antes = events[1]
    assert antes["type"] == "antes" and antes["amounts"] == [4, 4, 6, 4]
    assert state.pot == 18 and state.chips == (36, 36, 34, 36)


def test_deal_one_at_a_time_from_dealers_left_and_deck_recorded():
    state, events, _ = begin(n=4, dealer=1)
    deal = events[2]
    assert deal["type"] == "deal" and len(deal["deck"]) == 52 and len(set(deal["deck"])) == 52
    d = deal["deck"]
    # rotation from the dealer's left: 2, 3, 0, 1; card j goes to that seat j % 4
    assert [g.CODES[c] for c in state.piles[2]] == [d[0], d[4], d[8]]
    assert [g.CODES[c] for c in state.piles[1]] == [d[3], d[7], d[11]]
    assert deal["piles"] == [3, 3, 3, 3] and deal["stock"] == 39         # after the turn-up, as in views
    assert g.view(state, None)["stock"] == 39
    _, events, _ = begin(n=4, dealer=1, rules_version=1)
    assert events[2]["stock"] == 40                                         # version 1 counted the turn-up
    turn_up = events[3]
    assert turn_up["type"] == "turn_up" and turn_up["card"] == d[12]


def test_turn_up_fixes_trump_and_belongs_to_dealer():
    state, events, _ = begin(n=4, dealer=3, decks=[deck(4, 3, {}, "9S")])
    v = g.view(state, None)
    assert v["trump"] == "S" and v["turn_up"] == "9S" and v["best_trump"] == "9S"
    assert v["holder"] == 3 and state.phase == g.SALE and g.to_act(state) == [3]
    _, pairs = fold_with_before(g.new_state(g.OptionsSchema().load({}), 4), events)
    before, turn_up = pairs[3]
    assert turn_up["type"] == "turn_up"
    tr = g.transfers(before, turn_up)
    assert [(t.frm, t.to, t.asset, t.visible_to) for t in tr] == [("deck", "seat:3", "card:9S", None)]


def test_worked_check_ace_turn_up_dealer_wins_pot_at_once():
    state, events, _ = begin(n=4, dealer=0, decks=[deck(4, 0, {}, "AH"), deck(4, 1, {}, "2S")])
    assert types(events)[:6] == ["session_started", "antes", "deal", "turn_up", "deal_end", "antes"]
    end = events[4]
    assert end["winner"] == 0 and end["amount"] == 18 and end["reason"] == "ace"
    # the deal counted, the deal passed left, the dealer got the pot
    assert state.deal_no == 2 and state.dealer == 1
    assert state.chips == (40 - 6 + 18 - 4, 40 - 4 - 6, 36 - 4, 36 - 4)


def test_opening_offer_dealer_keeps_or_offers():
    state, _, _ = begin(n=4, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    assert g.to_act(state) == [0]
    assert g.legal_actions(state, 0) == [{"type": "keep"}, {"type": "offer"}]
    for seat in (1, 2, 3):
        assert g.legal_actions(state, seat) == []


def test_rotation_reveals_from_dealers_left_non_trump_and_lower_trump_no_effect():
    piles = {1: ["2C", "3C", "4C"], 2: ["8H", "6C", "7C"], 3: ["5H", "9C", "TC"],
             0: ["2D", "3D", "4D"]}
    state, _, rng = begin(n=4, decks=[deck(4, 0, piles, "7H")])
    state, ev = run(state, rng, [(0, "keep")])
    assert state.phase == g.REVEAL and g.to_act(state) == [1]
    state, ev = run(state, rng, [(1, "reveal")])
    assert ev[0] == {"type": "reveal", "seat": 1, "card": "2C", "bonus": 0}
    # a non-trump: no effect; the holder (dealer) gets the decision point
    assert state.holder == 0 and g.to_act(state) == [0] and state.phase == g.SALE
    state, _ = run(state, rng, [(0, "keep"), (2, "reveal")])
    # a higher trump: the new holder may keep it or offer it
    assert state.holder == 2 and g.CODES[state.best] == "8H"
    assert g.to_act(state) == [2] and g.legal_actions(state, 2) == [{"type": "keep"}, {"type": "offer"}]
    state, _ = run(state, rng, [(2, "keep"), (3, "reveal")])
    # a lower trump: no effect
    assert state.holder == 2 and g.CODES[state.best] == "8H" and g.to_act(state) == [2]


def test_worked_check_holder_is_skipped_in_rotation():
    piles = {1: ["2C", "3C", "4C"], 2: ["8H", "6C", "7C"], 3: ["5H", "9C", "TC"],
             0: ["2D", "3D", "4D"]}
    state, _, rng = begin(n=4, decks=[deck(4, 0, piles, "7H")])
    state, _ = run(state, rng, [(0, "keep"), (1, "reveal"), (0, "keep"), (2, "reveal"),
                                (2, "keep"), (3, "reveal"), (2, "keep"), (0, "reveal"),
                                (2, "keep"), (1, "reveal"), (2, "keep")])
    # seat 2 holds the best trump: after seat 1 comes seat 3
    assert g.to_act(state) == [3] and state.phase == g.REVEAL
    with pytest.raises(IllegalAction):
        g.decide(state, 2, {"type": "reveal"}, rng)


def test_seller_reveals_again_from_next_turn():
    piles = {1: ["2C", "3C", "4C"], 2: ["8H", "6C", "7C"], 3: ["5H", "9C", "TC"],
             0: ["2D", "3D", "4D"]}
    state, _, rng = begin(n=4, decks=[deck(4, 0, piles, "7H")])
    state, _ = run(state, rng, [(0, "keep"), (1, "reveal"), (0, "keep"), (2, "reveal"),
                                (2, "offer")])
    assert state.phase == g.BIDDING  # bids clockwise from the holder's left: 3 first
    state, _ = run(state, rng, [(3, {"type": "bid", "amount": 2}), (0, "pass"), (1, "pass")])
    assert state.phase == g.CLOSE and g.to_act(state) == [2]
    state, ev = run(state, rng, [(2, "accept")])
    assert ev[0] == {"type": "sale", "kind": "trump", "seat": 2, "buyer": 3, "price": 2,
                     "card": "8H"}
    assert state.holder == 3
    # the rotation goes on after seat 2's turn: seat 3 now holds (skipped), so seat 0
    assert g.to_act(state) == [0]
    state, _ = run(state, rng, [(0, "reveal"), (3, "keep"), (1, "reveal"), (3, "keep")])
    assert g.to_act(state) == [2]  # the seller reveals again


def test_auction_clockwise_ascending_and_pass_is_out():
    state, _, rng = begin(n=4, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    state, _ = run(state, rng, [(0, "offer")])
    assert g.to_act(state) == [1]
    assert g.legal_actions(state, 1) == [{"type": "bid", "amount": {"min": 1, "max": 36}},
                                         {"type": "pass"}]
    state, _ = run(state, rng, [(1, {"type": "bid", "amount": 2})])
    assert g.to_act(state) == [2]
    assert g.legal_actions(state, 2)[0]["amount"] == {"min": 3, "max": 36}
    with pytest.raises(IllegalAction) as err:
        g.decide(state, 2, {"type": "bid", "amount": 2}, rng)
    assert err.value.field == "amount"
    state, _ = run(state, rng, [(2, {"type": "bid", "amount": 5}), (3, "pass")])
    assert g.to_act(state) == [1]  # round again; 3 is out
    state, _ = run(state, rng, [(1, {"type": "bid", "amount": 6})])
    assert g.to_act(state) == [2]
    state, _ = run(state, rng, [(2, "pass")])
    # only the high bidder is left: the holder decides
    assert state.phase == g.CLOSE and g.to_act(state) == [0]
    assert g.view(state, None)["auction"] == {"kind": "trump", "seller": 0, "card": "7H",
                                              "high_bid": 6, "high_bidder": 1, "bidders": [1]}
    before = state
    state, ev = run(state, rng, [(0, "accept")])
    assert state.chips == (34 + 6, 36 - 6, 36, 36) and state.holder == 1
    tr = [(t.frm, t.to, t.asset, t.quantity, t.price) for t in g.transfers(before, ev[0])]
    assert tr == [("seat:0", "seat:1", "card:7H", 1, 6), ("seat:1", "seat:0", "chips", 6, None)]


def test_last_remaining_player_may_still_bid_when_nobody_has():
    state, _, rng = begin(n=4, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    state, _ = run(state, rng, [(0, "offer"), (1, "pass"), (2, "pass")])
    assert g.to_act(state) == [3] and state.phase == g.BIDDING
    state, _ = run(state, rng, [(3, {"type": "bid", "amount": 1})])
    assert state.phase == g.CLOSE


def test_no_bid_ends_the_sale_without_change():
    state, _, rng = begin(n=4, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    state, ev = run(state, rng, [(0, "offer"), (1, "pass"), (2, "pass"), (3, "pass")])
    assert state.holder == 0 and state.chips == (34, 36, 36, 36)
    assert state.phase == g.REVEAL and g.to_act(state) == [1]


def test_decline_changes_nothing_and_one_sale_per_decision_point():
    state, _, rng = begin(n=4, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    state, _ = run(state, rng, [(0, "offer"), (1, {"type": "bid", "amount": 3}), (2, "pass"),
                                (3, "pass"), (0, "decline")])
    assert state.holder == 0 and state.chips == (34, 36, 36, 36)
    # no second sale at the same decision point: the rotation goes on
    assert state.phase == g.REVEAL and g.to_act(state) == [1]


def test_buyer_cannot_resell_before_the_next_reveal():
    state, _, rng = begin(n=4, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    state, _ = run(state, rng, [(0, "offer"), (1, {"type": "bid", "amount": 3}), (2, "pass"),
                                (3, "pass"), (0, "accept")])
    assert state.holder == 1 and state.phase == g.REVEAL and g.to_act(state) == [2]
    state, _ = run(state, rng, [(2, "reveal")])
    assert state.phase == g.SALE and g.to_act(state) == [1]


def test_bidders_who_cannot_raise_drop_out():
    state, _, rng = begin(n=4, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    state, _ = run(state, rng, [(0, "offer"), (1, {"type": "bid", "amount": 36})])
    # seats 2 and 3 hold 36 chips and cannot bid 37: straight to the holder
    assert state.phase == g.CLOSE and g.to_act(state) == [0]


def test_bid_at_most_the_chips_held():
    state, _, rng = begin(n=4, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    state, _ = run(state, rng, [(0, "offer")])
    with pytest.raises(IllegalAction) as err:
        g.decide(state, 1, {"type": "bid", "amount": 37}, rng)
    assert err.value.field == "amount"


def test_deal_ends_when_non_holder_piles_are_empty_holder_wins_whole_pot():
    piles = {1: ["KH", "3C", "4C"], 2: ["5C", "6C", "7C"], 3: ["8C", "9C", "TC"],
             0: ["2D", "3D", "4D"]}
    state, _, rng = begin(n=4, deals=1, decks=[deck(4, 0, piles, "7H")])
    steps = [(0, "keep"), (1, "reveal"), (1, "keep")]
    for _ in range(2):  # seat 1 holds KH and is skipped
        steps += [(2, "reveal"), (1, "keep"), (3, "reveal"), (1, "keep"), (0, "reveal"), (1, "keep")]
    steps += [(2, "reveal"), (1, "keep"), (3, "reveal"), (1, "keep"), (0, "reveal")]
    state, ev = run(state, rng, steps)
    # after the last reveal the holder's decision still comes first
    assert state.phase == g.SALE and g.to_act(state) == [1]
    before = state
    state, ev = run(state, rng, [(1, "keep")])
    assert types(ev) == ["keep", "deal_end", "session_end"]
    assert ev[1]["winner"] == 1 and ev[1]["amount"] == 18 and ev[1]["card"] == "KH"
    assert state.chips == (34, 36 + 18, 36, 36) and g.is_over(state)
    # seat 1's two unrevealed cards go back to the deck face down, never shown
    back = [t for t in g.transfers(before, ev[1]) if t.asset.startswith("card:")]
    hidden = [t for t in back if t.visible_to == ()]
    assert sorted(t.asset for t in hidden) == ["card:3C", "card:4C"]
    assert all(t.frm == "pile:1" and t.redacted_asset == "card" for t in hidden)
    assert "3C" not in json.dumps(ev) and "4C" not in json.dumps(ev)
    assert g.result(state) == {"winners": [1], "ranks": [4, 1, 2, 2], "scores": [34, 54, 36, 36]}


def test_empty_pile_is_skipped():
    # blind exchange empties seat 1's pile early? simpler: 3 players, seat 2 holds and the
    # dealer's pile runs out last; check the rotation skips empty piles at the end.
    piles = {1: ["2C", "3C", "4C"], 2: ["KH", "6C", "7C"], 0: ["2D", "3D", "4D"]}
    state, _, rng = begin(n=3, deals=1, decks=[deck(3, 0, piles, "7H")])
    state, _ = run(state, rng, [(0, "keep"), (1, "reveal"), (0, "keep"), (2, "reveal"),
                                (2, "keep"), (0, "reveal"), (2, "keep"), (1, "reveal"),
                                (2, "keep"), (0, "reveal"), (2, "keep"), (1, "reveal"),
                                (2, "keep")])
    # seat 1 is empty, seat 2 holds: only seat 0 is left
    assert g.to_act(state) == [0]
    state, ev = run(state, rng, [(0, "reveal"), (2, "keep")])
    assert ev[-2]["type"] == "deal_end" and ev[-2]["winner"] == 2


def test_no_trump_revealed_turn_up_owner_wins():
    state, _, rng = begin(n=4, deals=1, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    for seat in [1, 2, 3] * 3:  # the dealer holds the turn-up: skipped
        state, ev = reveal(state, rng, seat)
    state, ev = finish_deal(state, rng)
    assert types(ev) == ["keep", "deal_end", "session_end"] and ev[1]["winner"] == 0
    # the same deal with the turn-up sold first: the buyer wins
    state, _, rng = begin(n=4, deals=1, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    state, _ = run(state, rng, [(0, "offer"), (1, "pass"), (2, {"type": "bid", "amount": 4}),
                                (3, "pass"), (0, "accept")])
    state, ev = finish_deal(state, rng)
    assert g.is_over(state) and state.history[-1][2] == 2
    assert state.chips == (34 + 4, 36, 36 - 4 + 18, 36)


def test_worked_check_buyer_later_beaten_loses_price_seller_keeps_it():
    piles = {1: ["2C", "3C", "4C"], 2: ["8H", "6C", "7C"], 3: ["5C", "9C", "TC"],
             0: ["2D", "3D", "4D"]}
    state, _, rng = begin(n=4, deals=1, decks=[deck(4, 0, piles, "7H")])
    state, _ = run(state, rng, [(0, "offer"), (1, {"type": "bid", "amount": 5}), (2, "pass"),
                                (3, "pass"), (0, "accept")])
    # seat 1 holds and is skipped: seat 2 reveals 8H and beats the bought 7H
    assert g.to_act(state) == [2]
    state, _ = run(state, rng, [(2, "reveal")])
    assert state.holder == 2
    while not g.is_over(state):
        seat = g.to_act(state)[0]
        kind = "keep" if state.phase == g.SALE else "reveal"
        state, _ = run(state, rng, [(seat, kind)])
    assert state.history[-1][2] == 2
    assert state.chips == (34 + 5, 36 - 5, 36 + 18, 36)


def test_session_ends_after_deals_and_most_chips_wins():
    state, events, rng = begin(n=3, deals=1, decks=[deck(3, 0, {}, "AS")])
    assert types(events)[-2:] == ["deal_end", "session_end"]
    assert events[-1]["reason"] == "deals" and g.is_over(state)
    assert g.result(state) == {"winners": [0], "ranks": [1, 2, 2], "scores": [24 + 14, 26, 26]}
    assert g.to_act(state) == [] and g.legal_actions(state, 0) == []
    with pytest.raises(IllegalAction):
        g.decide(state, 0, {"type": "reveal"}, rng)


def test_session_ends_when_a_player_cannot_pay_own_ante_ties_share_the_win():
    # 3 players, 11 chips: two ace turn-ups; then dealer 2 holds 3 < 6
    state, events, rng = begin(n=3, starting_chips=11,
                               decks=[deck(3, 0, {}, "AS"), deck(3, 1, {}, "AD")])
    assert types(events) == ["session_started", "antes", "deal", "turn_up", "deal_end",
                             "antes", "deal", "turn_up", "deal_end", "session_end"]
    assert events[-1] == {"type": "session_end", "reason": "ante", "short": [2], "house": 0}
    assert state.chips == (15, 15, 3)
    assert g.result(state) == {"winners": [0, 1], "ranks": [1, 1, 3], "scores": [15, 15, 3]}


def test_session_cannot_start_when_stacks_are_below_the_antes():
    state, events, _ = begin(n=3, starting_chips=5)
    assert types(events) == ["session_started", "session_end"]
    assert g.result(state)["winners"] == [0, 1, 2]


def test_deal_passes_left_each_deal():
    state, events, rng = begin(n=3, deals=3, decks=[deck(3, 2, {}, "AS"), deck(3, 0, {}, "AH"),
                                                    deck(3, 1, {}, "AD")], dealer=2)
    assert [e["dealer"] for e in events if e["type"] == "antes"] == [2, 0, 1]
    assert g.is_over(state)


# --------------------------------------------------------------------------- variants

def test_jack_five_bonus_revealer_pays_one_chip():
    piles = {1: ["JC", "3C", "4C"], 2: ["5C", "6C", "7C"], 3: ["8C", "9C", "TC"],
             0: ["2D", "3D", "4D"]}
    state, _, rng = begin(n=4, jack_five_bonus=True, decks=[deck(4, 0, piles, "7H")])
    state, _ = run(state, rng, [(0, "keep")])
    before = state
    state, ev = run(state, rng, [(1, "reveal")])
    assert ev[0]["bonus"] == 1 and state.pot == 19 and state.chips[1] == 35
    assert [(t.frm, t.to, t.asset, t.quantity) for t in g.transfers(before, ev[0])] == \
        [("pile:1", "seat:1", "card:JC", 1), ("seat:1", "pot", "chips", 1)]
    state, ev = run(state, rng, [(0, "keep"), (2, "reveal")])
    assert ev[1]["bonus"] == 1 and state.pot == 20
    state, ev = run(state, rng, [(0, "keep"), (3, "reveal")])
    assert ev[1]["bonus"] == 0 and state.pot == 20


def test_jack_five_bonus_not_paid_by_turn_up_nor_dead_hand():
    piles = {1: ["2C", "3C", "4C"], 2: ["6C", "7C", "8C"], 0: ["2D", "3D", "4D"]}
    state, _, rng = begin(n=3, jack_five_bonus=True, dead_hand=True,
                          decks=[deck(3, 0, piles, "JH", dead=["5S", "9C", "TC"])])
    assert state.chips == (24, 26, 26) and state.pot == 14  # the turn-up jack paid nothing
    state, _ = reveal(state, rng, 1)
    state, _ = reveal(state, rng, 2)
    state, ev = run(state, rng, [(0, "keep")])  # the dealer holds: the dead hand turns
    assert ev[-1] == {"type": "reveal", "seat": None, "card": "5S", "bonus": 0}
    assert state.pot == 14 and state.chips == (24, 26, 26)


def test_jack_five_bonus_not_paid_without_chips():
    # ante 6 for everyone out of 6 chips: nobody has a chip left
    piles = {1: ["JC", "3C", "4C"], 2: ["5C", "7C", "8C"], 0: ["2D", "3D", "4D"]}
    state, _, rng = begin(n=3, starting_chips=6, ante=6, jack_five_bonus=True,
                          decks=[deck(3, 0, piles, "9H")])
    assert state.chips == (0, 0, 0) and state.pot == 18
    # nobody could pay a price: no sale decision is asked, the rotation starts at once
    assert state.phase == g.REVEAL and g.to_act(state) == [1]
    before = state
    state, ev = act(state, 1, {"type": "reveal"}, rng)
    assert ev[0] == {"type": "reveal", "seat": 1, "card": "JC", "bonus": 0}
    assert [t.asset for t in g.transfers(before, ev[0])] == ["card:JC"]
    state, ev = act(state, 2, {"type": "reveal"}, rng)
    assert ev[0]["bonus"] == 0 and state.pot == 18


def test_dead_hand_reveals_by_itself_last_and_cannot_be_sold_pot_carries_over():
    piles = {1: ["2C", "3C", "4C"], 2: ["5C", "6C", "7C"], 0: ["2D", "3D", "4D"]}
    state, events, rng = begin(n=3, deals=1, dead_hand=True,
                               decks=[deck(3, 0, piles, "7H", dead=["KH", "8C", "9C"])])
    assert events[2]["dead_hand"] == 3 and len(state.piles[3]) == 3
    state, _ = reveal(state, rng, 1)
    state, _ = reveal(state, rng, 2)
    # the dealer holds (skipped); after the holder's decision the dead hand turns by itself
    state, ev = run(state, rng, [(0, "keep")])
    assert types(ev) == ["keep", "reveal"] and ev[1]["seat"] is None and ev[1]["card"] == "KH"
    assert state.holder == 3 and g.view(state, None)["best_in_dead_hand"]
    assert g.view(state, None)["holder"] is None
    # nobody may sell it: the rotation goes straight on, the dealer included now
    assert state.phase == g.REVEAL and g.to_act(state) == [1]
    state, _ = reveal(state, rng, 1)
    state, _ = reveal(state, rng, 2)
    state, ev = reveal(state, rng, 0)
    # the dead hand is not skipped while it holds the best trump
    assert types(ev) == ["reveal", "reveal"] and ev[1]["seat"] is None
    before = state
    state, ev = finish_deal(state, rng)
    end = [e for e in ev if e["type"] == "deal_end"][0]
    assert end["winner"] is None and end["reason"] == "dead_hand" and end["card"] == "KH"
    assert ev[-1] == {"type": "session_end", "reason": "deals", "house": 14}
    assert state.house == 14 and state.pot == 0
    tr = g.transfers(_state_before(before, ev, -1), ev[-1])
    assert [(t.frm, t.to, t.asset, t.quantity) for t in tr] == [("pot", "house", "chips", 14)]


def _state_before(state, events, index):
    for e in events[:index]:
        state = g.evolve(state, e)
    return state


def test_dead_hand_carried_pot_goes_to_next_deal():
    piles = {1: ["2C", "3C", "4C"], 2: ["5C", "6C", "7C"], 0: ["2D", "3D", "4D"]}
    state, events, rng = begin(n=3, deals=2, dead_hand=True,
                               decks=[deck(3, 0, piles, "7H", dead=["AH", "8C", "9C"]),
                                      deck(3, 1, {}, "AS", dead=[])])
    while state.deal_no == 1:
        seat = g.to_act(state)[0]
        state, ev = run(state, rng, [(seat, g.legal_actions(state, seat)[0])])
    # deal 1 carried 14, deal 2 (ace for dealer 1) adds 14 more
    end2 = [e for e in ev if e["type"] == "deal_end"][-1]
    assert end2["winner"] == 1 and end2["amount"] == 28 and g.is_over(state)


def test_blind_exchange_round_card_to_bottom_of_buyer_pile_unseen():
    piles = {1: ["2C", "3C", "4C"], 2: ["5C", "6C", "7C"], 0: ["2D", "3D", "4D"]}
    state, _, rng = begin(n=3, blind_exchanges=True, decks=[deck(3, 0, piles, "7H")])
    state, ev = run(state, rng, [(0, "keep")])
    # after the holder's sale: from the holder's left, each may offer the top face-down card
    assert state.phase == g.BLIND and g.to_act(state) == [1]
    assert g.legal_actions(state, 1) == [{"type": "keep_blind"}, {"type": "offer_blind"}]
    state, _ = run(state, rng, [(1, "offer_blind")])
    assert g.to_act(state) == [2]  # bidding from the offerer's left
    state, _ = run(state, rng, [(2, {"type": "bid", "amount": 3}), (0, "pass")])
    assert state.phase == g.CLOSE and g.to_act(state) == [1]
    before = state
    state, ev = run(state, rng, [(1, "accept")])
    assert ev[0] == {"type": "sale", "kind": "blind", "seat": 1, "buyer": 2, "price": 3}
    assert [g.CODES[c] for c in state.piles[1]] == ["3C", "4C"]
    assert [g.CODES[c] for c in state.piles[2]] == ["5C", "6C", "7C", "2C"]
    assert state.chips == (24, 26 + 3, 26 - 3)
    tr = g.transfers(before, ev[0])
    assert (tr[0].frm, tr[0].to, tr[0].asset, tr[0].price, tr[0].visible_to,
            tr[0].redacted_asset) == ("pile:1", "pile:2", "card:2C", 3, (), "card")
    assert "2C" not in json.dumps([g.redact(before, e, s) for e in ev for s in (0, 1, 2, None)])
    assert "2C" not in json.dumps([g.view(state, s) for s in (0, 1, 2, None)])
    # one offer each: seat 2, then the holder (dealer) last, then the rotation
    assert g.to_act(state) == [2]
    state, _ = run(state, rng, [(2, "keep_blind")])
    assert g.to_act(state) == [0] and state.phase == g.BLIND
    state, _ = run(state, rng, [(0, "keep_blind")])
    assert state.phase == g.REVEAL and g.to_act(state) == [1]
    state, ev = run(state, rng, [(1, "reveal")])
    assert ev[0]["card"] == "3C"


def test_price_cap_limits_bids_in_antes():
    state, _, rng = begin(n=4, price_cap=3, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    state, _ = run(state, rng, [(0, "offer")])
    assert g.legal_actions(state, 1)[0]["amount"] == {"min": 1, "max": 12}
    with pytest.raises(IllegalAction):
        g.decide(state, 1, {"type": "bid", "amount": 13}, rng)
    state, _ = run(state, rng, [(1, {"type": "bid", "amount": 12})])
    assert state.phase == g.CLOSE  # nobody may raise past the cap


@pytest.mark.parametrize("hand,antes,pot", [(4, (5, 8), 23), (5, (6, 10), 28)])
def test_longer_hands_raise_the_antes(hand, antes, pot):
    state, events, rng = begin(n=4, hand_size=hand)
    assert events[1]["amounts"] == [antes[1], antes[0], antes[0], antes[0]]
    assert state.pot == pot and all(len(p) == hand for p in state.piles[:4])
    assert events[2]["stock"] == 52 - 4 * hand - 1 == g.view(state, None)["stock"]


# --------------------------------------------------------------------------- who sees what

def _unrevealed(state):
    seen = {g.CODES[c] for c, _by, _owner in state.table}
    return set(g.CODES) - seen


def _leaks(obj, secret):
    return {m for m in CODE_RE.findall(json.dumps(obj)) if m in secret}


def test_views_show_counts_only_even_to_the_owner():
    state, events, rng = begin(n=4, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    views = [g.view(state, s) for s in (0, 1, 2, 3, None)]
    for v in views:
        assert v["piles"] == [3, 3, 3, 3] and v["stock"] == 39
        assert not _leaks(v, _unrevealed(state))
        assert "2C" not in json.dumps(v)
    assert all({k: x for k, x in v.items() if k != "seat"} ==
               {k: x for k, x in views[-1].items() if k != "seat"} for v in views)


def test_deal_event_is_redacted_for_every_seat():
    state0 = g.new_state(g.OptionsSchema().load({}), 4)
    state, events, _ = begin(n=4)
    _, pairs = fold_with_before(state0, events)
    before, deal = pairs[2]
    assert deal["type"] == "deal"
    for seat in (0, 1, 2, 3, None):
        red = g.redact(before, deal, seat)
        assert red == {"type": "deal", "deal": 1, "dealer": 0, "piles": [3, 3, 3, 3],
                       "dead_hand": None, "stock": 39}
        assert not CODE_RE.findall(json.dumps(red))
    for t in g.transfers(before, deal):
        assert t.visible_to == () and t.redacted_asset == "card" and t.frm == "deck"
    assert g.HIDDEN_INFORMATION


def test_reveal_and_turn_up_events_carry_the_card():
    state, events, rng = begin(n=4, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    assert g.redact(state, events[3], 2)["card"] == "7H"
    state, ev = run(state, rng, [(0, "keep"), (1, "reveal")])
    assert g.redact(state, ev[1], 3) == {"type": "reveal", "seat": 1, "card": "2C", "bonus": 0}


# --------------------------------------------------------------------------- validation

@pytest.mark.parametrize("action,field", [
    ({"type": "bid", "amount": "3"}, "amount"),
    ({"type": "bid", "amount": True}, "amount"),
    ({"type": "bid", "amount": 0}, "amount"),
    ({"type": "bid", "amount": 99}, "amount"),
    ({"type": "bid"}, "amount"),
    ({"type": "pass", "amount": 1}, "amount"),
    ({"type": "fold"}, "type"),
    ({"amount": 1}, "type"),
    ({"type": "reveal"}, "type"),
])
def test_invalid_actions_name_the_field(action, field):
    state, _, rng = begin(n=4, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    state, _ = run(state, rng, [(0, "offer")])
    with pytest.raises(IllegalAction) as err:
        g.decide(state, 1, action, rng)
    assert err.value.field == field and err.value.message


def test_out_of_turn_is_refused():
    # bad seats and malformed actions, for every game: tests/test_conformance.py
    state, _, rng = begin(n=4, decks=[deck(4, 0, NO_TRUMPS, "7H")])
    with pytest.raises(IllegalAction) as err:
        g.decide(state, 1, {"type": "keep"}, rng)
    assert "not your turn" in err.value.message


def test_action_schemas_describe_every_action():
    assert set(g.ACTION_SCHEMAS) == {"reveal", "keep", "offer", "bid", "pass", "accept",
                                     "decline", "offer_blind", "keep_blind"}
    # every action played loads under its schema: tests/test_conformance.py


# --------------------------------------------------------------------------- random play

COMBOS = list(itertools.product([False, True], [False, True], [False, True], [None, 2], [3, 4, 5]))


def _pick(state, seat, legal, rng):
    """A random legal action; blind offers one time in four (they make sessions long)."""
    if legal[0]["type"] == "keep_blind" and rng.random() < 0.75:
        return legal[0]
    return fill_template(rng.choice(legal), rng)


def _check_session(options, seats, seed):
    """One random session with speculation's invariants after every event: the ledger agrees
    with the chips, the pot and the house, a face-down card's transfer hides it, the holder is
    asked to sell and never to reveal. (JSON, well-formed transfers, redaction and views, legal
    actions: every game's, tests/test_conformance.py.)"""
    bal: dict = {}
    state0 = g.new_state(g.OptionsSchema().load(options), seats)
    state, opening = start_game(g, options, seats, seed)
    n = seats

    def on_event(before, event, after):
        secret = None
        for t in g.transfers(before, event):
            bal[(t.frm, t.asset)] = bal.get((t.frm, t.asset), 0) - t.quantity
            bal[(t.to, t.asset)] = bal.get((t.to, t.asset), 0) + t.quantity
            if t.asset.startswith("card:"):
                if secret is None:
                    secret = _unrevealed(before) & _unrevealed(after)
                if t.asset[5:] in secret:  # a face-down card: its identity is hidden
                    assert t.visible_to == () and t.redacted_asset == "card"
        for s in range(n):
            assert bal.get((f"seat:{s}", "chips"), 0) == after.chips[s]
        assert bal.get(("pot", "chips"), 0) == after.pot
        assert bal.get(("house", "chips"), 0) == after.house
        assert min(after.chips) >= 0 and after.pot >= 0
        if event["type"] == "deal_end":
            assert all(v == 0 for (acc, asset), v in bal.items() if asset.startswith("card:"))
        if after.phase == g.REVEAL:
            assert after.actor != after.holder  # a holder is never asked to reveal
        if after.phase == g.SALE:
            assert after.actor == after.holder

    before = state0
    for e in opening:
        after = g.evolve(before, e)
        on_event(before, e, after)
        before = after
    final, actions = random_playout(g, options, seats, seed, on_event=on_event, pick=_pick)
    assert g.is_over(final)
    chips_total = sum(final.chips) + final.pot + final.house
    assert chips_total == seats * final.cfg.starting_chips
    assert final.pot == 0
    res = g.result(final)
    assert res["scores"] == [bal.get((f"seat:{s}", "chips"), 0) for s in range(n)]
    assert len(final.history) == final.deal_no
    assert final.deal_no <= final.cfg.deals
    return actions


@pytest.mark.parametrize("jack,dead,blind,cap,hand", COMBOS)
def test_random_sessions_every_variant(jack, dead, blind, cap, hand):
    options = {"jack_five_bonus": jack, "dead_hand": dead, "blind_exchanges": blind,
               "price_cap": cap, "hand_size": hand}
    key = COMBOS.index((jack, dead, blind, cap, hand))
    sessions = 20 if blind else 40
    for i in range(sessions):
        seats = 3 + i % 6
        opts = dict(options)
        if i >= (3 if blind else 6):
            opts["deals"] = 1 + i % 3  # short sessions; the first ones play the default deals
        if i % 5 == 2:
            opts["starting_chips"] = 12
        _check_session(opts, seats, seed_for(10_000 * key + i))


@pytest.mark.timing
def test_engine_speed_4_players_default():
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 1.0:
        random_playout(g, {}, 4, seed_for(50_000 + n))
        n += 1
    rate = n / (time.perf_counter() - t0)
    print(f"\nspeculation: {rate:.0f} random 4-player default sessions per second")
    assert rate > 100  # target > 300 on a quiet machine; loose bound against CI noise
