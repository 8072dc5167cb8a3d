"""Speculate (stock exchange with hidden objectives): one test per rule of the brief, its
worked examples, visibility/redaction, validation, determinism, random-play invariants and
the heuristic bot."""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter, defaultdict
from dataclasses import replace

import pytest
from marshmallow import ValidationError

from events.randomness import Draws
from projections import speculate as g
from projections.speculate.state import _set   # the rules' own tuple helper: tests build states with it
from projections.game import BANK, IllegalAction
from projections.templates import fill_template, is_range
from tests.gamekit import random_playout, seed_for, start_game
from workers.bots.speculate import heuristic

pytestmark = pytest.mark.quick

SEED = seed_for(11)
STORES, MINES, PROPS, RAIL, SHIP = range(5)


# --------------------------------------------------------------------------- helpers

def begin(n=4, seed=SEED, **options):
    state, events = start_game(g, options, n, seed)
    return state, events


def act(state, seat, action, label="t"):
    events = g.decide(state, seat, action, Draws(SEED, label))
    for e in events:
        state = g.evolve(state, e)
    return state, events


def types(events):
    return [e["type"] for e in events]


def at(state, seat, phase="trade", **changes):
    """The state with `seat` active in `phase` (a later turn unless first_turn=True)."""
    changes.setdefault("first_turn", False)
    return replace(state, active=seat, phase=phase, **changes)


def with_shares(state, seat, counts):
    return replace(state, shares=_set(state.shares, seat, tuple(counts)))


def with_money(state, seat, amount):
    return replace(state, money=_set(state.money, seat, amount))


def with_hand(state, seat, cards):
    return replace(state, hands=_set(state.hands, seat, tuple(cards)))


def with_prices(state, **prices):
    p = list(state.prices)
    for name, value in prices.items():
        p[g.SHARE_INDEX[name]] = value
    return replace(state, prices=tuple(p))


def rigged_turn(n=4):
    """Seat 0 active, trading, not a first turn, known money/holdings."""
    state, _ = begin(n)
    return at(state, 0)


# --------------------------------------------------------------------------- components and setup

def test_event_deck_has_45_cards_per_brief():
    deck = Counter(g.EVENT_CARDS_TUPLE)
    assert len(g.EVENT_CARDS_TUPLE) == 45 and len(deck) == 45
    for name in g.SHARES:
        assert {c for c in deck if c.startswith(name + ":")} == \
            {f"{name}:{m}" for m in ("+1", "+2", "+3", "+4", "-1", "-2", "-3", "-4", "dividend")}


def test_setup_money_shares_cards_objectives_and_bank():
    for n in range(3, 7):
        state, events = begin(n)
        started = events[0]
        assert started["type"] == "game_started" and 0 <= started["start_player"] < n
        assert state.prices == (10,) * 5
        assert state.bank_money == 300 * n + 50 and state.bank_shares == (2 * n,) * 5   # + the first fee
        for q in range(n):
            assert state.shares[q] == (8,) * 5
            assert len(state.hands[q]) == 3
            assert g.parse_objective(state.objectives[q])[0] == 1
            assert state.money[q] == (200 if q == started["start_player"] else 250)  # the first fee
        assert state.active == started["start_player"] and state.phase == "event1" and state.first_turn
        assert types(events)[-2:] == ["turn_started", "fee_paid"]
        assert len(state.event_deck) == 45 - 3 * n


def test_objective_decks_one_card_per_combination_with_drawn_target_orders():
    _, events = begin(4)
    decks = events[0]["objective_decks"]
    assert len(decks) == 4
    for level, deck in enumerate(decks, start=1):
        assert len(deck) == 10
        combos = set()
        for oid in deck:
            lv, targets = g.parse_objective(oid)
            assert lv == level
            assert sorted(v for v in targets if v) == sorted(g.TARGETS[level])
            combos.add(tuple(t for t, v in enumerate(targets) if v))
        assert combos == set(itertools.combinations(range(5), 3))
    assert g.TARGETS == {1: (100, 80, 60), 2: (200, 150, 100), 3: (300, 225, 150), 4: (400, 300, 200)}
    # Seeded and recorded: the same seed gives the same decks, another seed other orders.
    assert begin(4)[1][0] == events[0]
    other = begin(4, seed_for(12))[1][0]
    assert other["objective_decks"] != decks and other["event_deck"] != events[0]["event_deck"]


def test_rules_version_2_retunes_the_objective_targets_at_5_and_6_players_only():
    v1 = {1: (100, 80, 60), 2: (200, 150, 100), 3: (300, 225, 150), 4: (400, 300, 200)}
    assert g.RULES_VERSION == 2 and g.RULES_VERSIONS == (1, 2)
    for n in (3, 4, 5, 6):
        assert g.economy(n, 1) == (dict({3: 11, 4: 10, 5: 8, 6: 7})[n], v1, 300, 125)
    assert g.economy(3, 2) == g.economy(3, 1) and g.economy(4, 2) == g.economy(4, 1)
    assert g.economy(5, 2) == (8, {**v1, 4: (500, 375, 250)}, 300, 125)
    assert g.economy(6, 2) == (7, {**v1, 3: (350, 260, 175), 4: (600, 450, 300)}, 300, 125)
    for n, version in ((5, 2), (6, 2), (6, 1), (4, 2)):
        state = g.new_state({"rounds": None}, n, rules_version=version)
        events = g.start(state, Draws(SEED, "v2"))
        for level, deck in enumerate(events[0]["objective_decks"], start=1):
            for oid in deck:
                targets = g.parse_objective(oid)[1]
                assert sorted(v for v in targets if v) == sorted(g.economy(n, version).targets[level])
        assert events[0]["setup"]["bank_money"] == 300 * n
    with pytest.raises(ValueError):
        g.new_state({"rounds": None}, 5, rules_version=3)


def test_a_version_1_game_at_6_players_keeps_its_targets():
    state, events = begin(6)
    assert state.rules_version == 2 and "=600" in ",".join(events[0]["objective_decks"][3])
    old = g.new_state({"rounds": None}, 6, rules_version=1)
    old_events = g.start(old, Draws(SEED, "v2"))
    assert "=400" in ",".join(old_events[0]["objective_decks"][3])
    assert "=600" not in ",".join(old_events[0]["objective_decks"][3])


def test_rounds_by_player_count_and_option():
    for n, rounds in {3: 11, 4: 10, 5: 8, 6: 7}.items():
        assert begin(n)[0].rounds == rounds
    assert begin(4, rounds=2)[0].rounds == 2


def test_options_validation():
    schema = g.OptionsSchema()
    assert schema.load({}) == {"rounds": None}
    for bad in ({"rounds": 0}, {"rounds": "3"}, {"rounds": True}):
        with pytest.raises(ValidationError):
            schema.load(bad)
    assert (g.MIN_PLAYERS, g.MAX_PLAYERS) == (3, 6)   # others refused: tests/test_conformance.py


# --------------------------------------------------------------------------- the fee

def _end_turn_of(state, seat):
    """Play seat's second event card (a harmless one): the turn ends."""
    state = at(state, seat, "event2")
    state = with_hand(state, seat, ["shipping:+1"] + list(state.hands[seat][1:]))
    return act(state, seat, {"type": "play_event", "card": "shipping:+1"})


def test_fee_50_at_turn_start():
    state, _ = begin(4)
    state = replace(state, start_player=0)
    state = with_money(state, 1, 80)
    state, events = _end_turn_of(state, 0)
    assert {"type": "fee_paid", "seat": 1, "amount": 50} in events
    assert state.money[1] == 30 and state.active == 1


def test_fee_deferred_then_100_after_trading_or_bankrupt():
    state, _ = begin(4)
    state = replace(state, start_player=0)
    state = with_money(state, 1, 40)
    state, events = _end_turn_of(state, 0)
    assert {"type": "fee_deferred", "seat": 1, "due": 100} in events and state.money[1] == 40
    assert state.owes == 100
    # Raises the money while trading: pays 100 before the second card.
    rich = at(with_money(state, 1, 130), 1)
    rich, events = act(rich, 1, {"type": "end_trading"})
    assert types(events) == ["trading_ended", "late_fee_paid"] and rich.money[1] == 30
    assert rich.phase == "event2" and rich.owes == 0
    # Cannot: bankrupt, eliminated, money and shares to the bank, hand discarded.
    poor = at(state, 1)
    bank_money, bank_shares = poor.bank_money, poor.bank_shares
    poor, events = act(poor, 1, {"type": "end_trading"})
    assert types(events)[:2] == ["trading_ended", "bankrupt"]
    assert events[1]["money"] == 40 and events[1]["shares"] == {name: 8 for name in g.SHARES}
    assert not poor.alive[1] and poor.eliminated == (1,)
    assert poor.money[1] == 0 and poor.shares[1] == (0,) * 5 and poor.hands[1] == ()
    assert poor.bank_shares == tuple(b + 8 for b in bank_shares)
    assert poor.bank_money == bank_money + 40 + 50                    # + seat 2's fee
    assert poor.active == 2 and types(events)[2:] == ["turn_started", "fee_paid"]


# --------------------------------------------------------------------------- event cards

def test_price_card_moves_price_held_within_0_30_then_draws():
    state, _ = begin(4)
    seat = state.active
    state = with_prices(replace(state, phase="event1"), mines=28, stores=2)
    state = with_hand(state, seat, ["mines:+4", "stores:-4", "stores:+1"])
    top = state.event_deck[0]
    after, events = act(state, seat, {"type": "play_event", "card": "mines:+4"})
    assert types(events) == ["event_played", "price_moved", "card_drawn"]
    assert events[1] == {"type": "price_moved", "share": "mines", "delta": 2, "price": 30}
    assert after.hands[seat] == ("stores:-4", "stores:+1", top) and after.phase == "trade"
    after, events = act(replace(after, phase="event1"), seat, {"type": "play_event", "card": "stores:-4"})
    assert events[1] == {"type": "price_moved", "share": "stores", "delta": -2, "price": 0}


def test_dividend_price_div_10_per_share_in_seat_order_from_active_as_far_as_bank_can():
    state, _ = begin(4)
    state = at(state, 2, "event1")
    state = with_hand(state, 2, ["mines:dividend", "stores:+1", "stores:+2"])
    state = with_prices(state, mines=25)                     # 2 per share
    state = with_shares(state, 0, (8, 0, 8, 8, 8))           # seat 0 holds no mines
    state = replace(state, bank_money=20)
    after, events = act(state, 2, {"type": "play_event", "card": "mines:dividend"})
    div = events[1]
    assert div["type"] == "dividends_paid" and div["per_share"] == 2
    assert div["payments"] == [{"seat": 2, "amount": 16, "due": 16}, {"seat": 3, "amount": 4, "due": 16},
                               {"seat": 1, "amount": 0, "due": 16}]
    assert after.bank_money == 0 and after.money[2] == state.money[2] + 16
    # The worked example: at price 10, 1 per share; shares the bank holds earn nothing.
    state = replace(with_prices(state, mines=10), bank_money=1000)
    _, events = act(state, 2, {"type": "play_event", "card": "mines:dividend"})
    assert {p["seat"]: p["amount"] for p in events[1]["payments"]} == {2: 8, 3: 8, 1: 8}


def test_event_deck_reshuffles_discards_when_it_runs_out():
    state, _ = begin(4)
    seat = state.active
    hand = state.hands[seat]
    rest = [c for c in g.EVENT_CARDS_TUPLE if not any(c in h for h in state.hands)]
    state = replace(state, event_deck=(), discard=tuple(rest[:5]))
    after, events = act(state, seat, {"type": "play_event", "card": hand[0]})
    assert types(events)[-2:] == ["deck_reshuffled", "card_drawn"]
    order = events[-2]["order"]
    assert sorted(order) == sorted(rest[:5] + [hand[0]])
    assert after.discard == () and after.event_deck == tuple(order[1:]) and after.hands[seat][-1] == order[0]
    for viewer in (None, 0, 1, 2, 3):
        assert g.redact(state, events[-2], viewer) == {"type": "deck_reshuffled", "count": 6}


# --------------------------------------------------------------------------- buying

def test_buy_others_sell_clockwise_at_market_then_bank_at_plus_one():
    state = rigged_turn(4)
    state = with_money(with_prices(state, mines=12), 0, 1000)
    state, events = act(state, 0, {"type": "buy", "share": "mines", "count": 20})
    assert events == [{"type": "announced", "seat": 0, "side": "buy", "share": "mines", "count": 20}]
    assert g.to_act(state) == [1]
    assert g.legal_actions(state, 1) == [{"type": "respond", "count": {"min": 0, "max": 8}}]
    state, events = act(state, 1, {"type": "respond", "count": 3})
    assert events == [{"type": "traded", "share": "mines", "count": 3, "unit_price": 12, "seller": 1, "buyer": 0}]
    state, events = act(state, 2, {"type": "respond", "count": 0})
    assert events == [{"type": "passed", "seat": 2}]
    money0 = state.money[0]
    state, events = act(state, 3, {"type": "respond", "count": 8})
    # 9 still wanted; the bank holds 8: it sells them at 13.
    assert events[1] == {"type": "traded", "share": "mines", "count": 8, "unit_price": 13, "seller": None, "buyer": 0}
    assert events[2] == {"type": "announcement_closed", "seat": 0, "side": "buy", "share": "mines",
                         "filled": 19, "unfilled": 1}
    assert state.money[0] == money0 - 8 * 12 - 8 * 13
    assert state.shares[0][MINES] == 8 + 19 and state.bank_shares[MINES] == 0 and state.phase == "trade"


def test_buy_skips_players_without_shares_and_buyer_must_afford_price_plus_one():
    state = rigged_turn(4)
    state = with_shares(state, 1, (8, 0, 8, 8, 8))
    state = with_money(state, 0, 55)                         # 5 x 11 = 55
    with pytest.raises(IllegalAction) as err:
        g.decide(state, 0, {"type": "buy", "share": "mines", "count": 6}, Draws(SEED))
    assert err.value.field == "count"
    state, _ = act(state, 0, {"type": "buy", "share": "mines", "count": 5})
    assert g.to_act(state) == [2]


def test_sell_others_buy_at_market_then_bank_at_minus_one_as_far_as_it_has_money():
    state = rigged_turn(4)
    state = with_money(state, 1, 25)                         # can buy 2 at 10
    state = with_money(state, 2, 5)                          # cannot buy any: skipped
    state = replace(state, bank_money=27)                    # buys 3 at 9
    state, _ = act(state, 0, {"type": "sell", "share": "mines", "count": 8})
    assert g.to_act(state) == [1]
    assert g.legal_actions(state, 1) == [{"type": "respond", "count": {"min": 0, "max": 2}}]
    state, events = act(state, 1, {"type": "respond", "count": 2})
    assert g.to_act(state) == [3]
    state, events = act(state, 3, {"type": "respond", "count": 1})
    assert events[1] == {"type": "traded", "share": "mines", "count": 3, "unit_price": 9, "seller": 0, "buyer": None}
    assert events[2]["filled"] == 6 and events[2]["unfilled"] == 2
    assert state.shares[0][MINES] == 2 and state.bank_money == 0


def test_bank_buys_for_nothing_at_price_one_or_less():
    state = rigged_turn(4)
    state = with_prices(state, mines=1)
    for q in (1, 2, 3):
        state = with_money(state, q, 0)
    state, events = act(state, 0, {"type": "sell", "share": "mines", "count": 8})
    assert events[1] == {"type": "traded", "share": "mines", "count": 8, "unit_price": 0, "seller": 0, "buyer": None}
    assert [t.asset for t in g.transfers(state, events[1])] == ["share:mines"]     # no money moves


def test_announcement_nobody_could_fill_is_refused():
    state = rigged_turn(4)
    for q in (1, 2, 3):
        state = with_shares(state, q, (8, 0, 8, 8, 8))
    state = replace(state, bank_shares=(8, 0, 8, 8, 8))
    with pytest.raises(IllegalAction, match="refused"):
        g.decide(state, 0, {"type": "buy", "share": "mines", "count": 1}, Draws(SEED))
    assert not any(a.get("share") == "mines" and a["type"] == "buy" for a in g.legal_actions(state, 0))
    state = with_prices(state, stores=20)
    for q in (1, 2, 3):
        state = with_money(state, q, 19)
    state = replace(state, bank_money=18)
    with pytest.raises(IllegalAction, match="refused"):
        g.decide(state, 0, {"type": "sell", "share": "stores", "count": 1}, Draws(SEED))
    assert not any(a.get("share") == "stores" and a["type"] == "sell" for a in g.legal_actions(state, 0))


def test_at_most_10_announcements_per_turn():
    state = replace(rigged_turn(4), announcements=9)
    state, _ = act(state, 0, {"type": "sell", "share": "mines", "count": 1})
    while g.to_act(state) != [0] or state.phase != "trade":
        seat = g.to_act(state)[0]
        state, _ = act(state, seat, {"type": "respond", "count": 0})
    assert state.announcements == 10
    assert g.legal_actions(state, 0) == [{"type": "end_trading"}]
    with pytest.raises(IllegalAction, match="announcement"):
        g.decide(state, 0, {"type": "sell", "share": "mines", "count": 1}, Draws(SEED))


def test_first_turn_at_most_two_share_types():
    state = replace(rigged_turn(4), first_turn=True, traded_types=(STORES, MINES))
    assert {a["share"] for a in g.legal_actions(state, 0) if "share" in a} == {"stores", "mines"}
    with pytest.raises(IllegalAction) as err:
        g.decide(state, 0, {"type": "sell", "share": "shipping", "count": 1}, Draws(SEED))
    assert err.value.field == "share"
    g.decide(state, 0, {"type": "sell", "share": "mines", "count": 1}, Draws(SEED))
    later = replace(state, first_turn=False)
    assert {a["share"] for a in g.legal_actions(later, 0) if "share" in a} == set(g.SHARES)
    # The flag comes from the turn count: a seat's first turn only.
    fresh, _ = begin(4)
    assert fresh.first_turn and fresh.turns[fresh.active] == 1


def test_buy_announcement_cannot_exceed_the_shares_that_exist():
    state = rigged_turn(3)
    # others 16 + bank 6 = 22 mines exist outside seat 0
    assert next(a for a in g.legal_actions(state, 0)
                if a["type"] == "buy" and a["share"] == "mines")["count"] == {"min": 1, "max": 18}  # 200 // 11
    state = with_money(state, 0, 1000)
    assert next(a for a in g.legal_actions(state, 0)
                if a["type"] == "buy" and a["share"] == "mines")["count"] == {"min": 1, "max": 22}
    with pytest.raises(IllegalAction, match="exist"):
        g.decide(state, 0, {"type": "buy", "share": "mines", "count": 23}, Draws(SEED))


# --------------------------------------------------------------------------- objectives

EXAMPLE = "L2:stores=200,mines=150,properties=100"        # the source's example


def objective_turn(n=4, holding=(20, 15, 10, 3, 0), objective=EXAMPLE, seat=0):
    state, _ = begin(n)
    state = at(state, seat, "event2")
    state = replace(state, objectives=_set(state.objectives, seat, objective),
                    levels=_set(state.levels, seat, g.parse_objective(objective)[0]))
    state = with_shares(state, seat, holding)
    return with_hand(state, seat, ["shipping:+1", "shipping:+2", "shipping:+3"])


def test_objective_met_worked_example_at_least_and_four_types():
    state = objective_turn()
    assert g.objective_met(state, 0)                       # 200 / 150 / 100 exactly: "at least"
    assert not g.objective_met(with_shares(state, 0, (20, 15, 10, 3, 1)), 0)    # five types held
    assert not g.objective_met(with_shares(state, 0, (19, 15, 10, 3, 0)), 0)    # 190 < 200


def test_objective_check_only_after_the_second_card_and_reward():
    state = objective_turn()
    first = replace(state, phase="event1")
    _, events = act(first, 0, {"type": "play_event", "card": "shipping:+1"})
    assert "objective_met" not in types(events)
    money = state.money
    bank = state.bank_money
    after, events = act(state, 0, {"type": "play_event", "card": "shipping:+1"})
    kinds = types(events)
    assert kinds[kinds.index("objective_met"):kinds.index("objective_met") + 6] == [
        "objective_met", "reward_paid", "reward_paid", "reward_paid", "reward_paid", "objective_dealt"]
    met = events[kinds.index("objective_met")]
    assert met == {"type": "objective_met", "seat": 0, "objective": EXAMPLE, "level": 2}
    pays = [e for e in events if e["type"] == "reward_paid"]
    assert [(e["payer"], e["money"]) for e in pays] == [(1, 25), (2, 25), (3, 25), (None, 125)]
    assert after.money[0] == money[0] + 3 * 25 + 125
    assert after.bank_money == bank - 125 + 50                        # + seat 1's fee
    dealt = events[kinds.index("objective_dealt")]
    assert dealt["level"] == 3 and after.objectives[0] == dealt["objective"]
    # Public once met; the new one hidden from the others.
    for viewer in (None, 1, 2):
        assert g.redact(state, met, viewer) == met
        assert g.redact(state, dealt, viewer) == {"type": "objective_dealt", "seat": 0, "level": 3}
        v = g.view(after, viewer)
        assert v["objectives_met"][0] == [g.objective_json(EXAMPLE)]
        assert dealt["objective"] not in json.dumps(v)
    assert g.view(after, 0)["you"]["objective"]["id"] == dealt["objective"]
    assert g.view(after, 1)["objective_levels"][0] == 3
    # The achiever's turn is over: the next seat plays.
    assert after.active == 1 and after.phase == "event1"


def test_bank_pays_the_reward_as_far_as_it_can():
    state = replace(objective_turn(), bank_money=40)
    after, events = act(state, 0, {"type": "play_event", "card": "shipping:+1"})
    assert [e for e in events if e["type"] == "reward_paid"][-1]["money"] == 40
    assert after.bank_money == 50                                     # then seat 1's fee


def test_level_four_met_means_no_further_objective():
    state = objective_turn(holding=(0, 0, 40, 30, 20), objective="L4:properties=400,railways=300,shipping=200")
    state = with_prices(state, shipping=9)                  # the +1 card brings it to 10
    after, events = act(state, 0, {"type": "play_event", "card": "shipping:+1"})
    assert "objective_met" in types(events) and "objective_dealt" not in types(events)
    assert after.objectives[0] is None and g.view(after, 0)["you"]["objective"] is None
    assert g.view(after, 1)["objective_levels"][0] is None


def _pay_state(payer_holding, payer_money=10, prices=None):
    state = objective_turn(n=3)
    state = with_shares(state, 1, payer_holding)
    state = with_money(state, 1, payer_money)
    if prices:
        state = with_prices(state, **prices)
    return state


def test_reward_in_shares_when_cash_short_single_minimal_set_is_automatic():
    state = _pay_state((0, 8, 0, 0, 0))
    after, events = act(state, 0, {"type": "play_event", "card": "shipping:+1"})
    paid = next(e for e in events if e["type"] == "reward_paid" and e["payer"] == 1)
    assert paid["shares"] == {"mines": 5} and paid["money"] == 0
    assert after.shares[1][MINES] == 3 and after.money[1] == 10


def test_reward_in_shares_all_they_have_when_worth_less_than_50():
    state = _pay_state((0, 4, 0, 0, 0))
    after, events = act(state, 0, {"type": "play_event", "card": "shipping:+1"})
    paid = next(e for e in events if e["type"] == "reward_paid" and e["payer"] == 1)
    assert paid["shares"] == {"mines": 4} and after.shares[1] == (0,) * 5 and after.money[1] == 10


def test_reward_in_shares_payer_chooses_among_minimal_sets():
    # stores at 30, mines at 10: minimal sets {stores 2}, {stores 1, mines 2}, {mines 5}.
    state = _pay_state((3, 8, 0, 0, 0), prices={"stores": 30})
    state, events = act(state, 0, {"type": "play_event", "card": "shipping:+1"})
    assert types(events)[-1] == "share_payment_due" and events[-1]["seat"] == 1
    assert g.to_act(state) == [1] and state.phase == "pay"
    assert g.legal_actions(state, 1) == [{"type": "give_shares", "share": "stores", "count": c} for c in (0, 1, 2)]
    assert g.legal_actions(state, 0) == [] and g.legal_actions(state, 2) == []
    with pytest.raises(IllegalAction) as err:
        g.decide(state, 1, {"type": "give_shares", "share": "stores", "count": 3}, Draws(SEED))
    assert err.value.field == "count"
    with pytest.raises(IllegalAction) as err:
        g.decide(state, 1, {"type": "give_shares", "share": "mines", "count": 2}, Draws(SEED))
    assert err.value.field == "share"
    after, events = act(state, 1, {"type": "give_shares", "share": "stores", "count": 1})
    paid = next(e for e in events if e["type"] == "reward_paid" and e["payer"] == 1)
    assert paid["shares"] == {"stores": 1, "mines": 2}
    assert types(events)[:4] == ["payment_chosen", "reward_paid", "reward_paid", "reward_paid"]
    assert [e["payer"] for e in events[1:4]] == [1, 2, None]          # then seat 2 (cash) and the bank
    assert after.active == 1 and after.phase == "event1"


def _minimal_sets(prices, held, need=50):
    out = set()
    for counts in itertools.product(*(range(h + 1) for h in held)):
        total = sum(c * p for c, p in zip(counts, prices))
        if total >= need and all(total - p < need for c, p in zip(counts, prices) if c):
            out.add(counts)
    return out


def _plan_results(prices, held, prefix=()):
    counts, t, options, pre = g.payment_plan(prices, held, prefix)
    if counts is not None:
        return {counts}
    assert len(options) >= 2
    return set().union(*(_plan_results(prices, held, pre + (c,)) for c in options))


def test_payment_plan_reaches_exactly_the_minimal_sets():
    rng = random.Random(5)
    for _ in range(150):
        prices = tuple(rng.choice([0, 1, 3, 7, 10, 12, 17, 25, 30]) for _ in range(5))
        held = tuple(rng.randint(0, 4) for _ in range(5))
        if sum(c * p for c, p in zip(held, prices)) < 50:
            continue
        assert _plan_results(prices, held) == _minimal_sets(prices, held), (prices, held)


# --------------------------------------------------------------------------- rounds, end, scoring

def test_game_lasts_the_rounds_then_ends():
    state, _ = begin(3, rounds=1)
    starts = []
    while not g.is_over(state):
        seat = g.to_act(state)[0]
        legal = g.legal_actions(state, seat)
        action = next((a for a in legal if a["type"] in ("play_event", "end_trading")), None) or \
            fill_template(legal[0], random.Random(0))
        state, events = act(state, seat, action)
        starts += [e["seat"] for e in events if e["type"] == "turn_started"]
    assert len(starts) == 2 and state.end_reason == "rounds"       # + the start player's turn = 3


def test_round_boundary_stays_at_the_eliminated_start_seat():
    state, _ = begin(3)
    state = replace(state, start_player=0, round=1, rounds=2, alive=(False, True, True), eliminated=(0,))
    state, events = _end_turn_of(state, 2)
    assert events[-2]["type"] == "turn_started" and events[-2]["seat"] == 1 and events[-2]["round"] == 2
    state, events = _end_turn_of(state, 1)
    assert events[-2]["seat"] == 2 and events[-2]["round"] == 2
    state, events = _end_turn_of(state, 2)
    assert events[-1] == {"type": "game_ended", "reason": "rounds"}


def test_game_ends_when_one_player_is_left_and_bankrupt_rank_last_in_order():
    state, _ = begin(3)
    state = replace(state, alive=(True, True, False), eliminated=(2,), shares=_set(begin(3)[0].shares, 2, (0,) * 5))
    state = with_money(state, 2, 0)
    state = at(replace(state, owes=100), 1)
    state = with_money(state, 1, 10)
    state, events = act(state, 1, {"type": "end_trading"})
    assert events[-1] == {"type": "game_ended", "reason": "last_player"} and g.is_over(state)
    res = g.result(state)
    assert res["winners"] == [0] and res["ranks"] == [1, 2, 3] and res["scores"][1:] == [0, 0]


def test_score_is_money_plus_shares_at_price_and_ties_share():
    state, _ = begin(4)
    state = replace(state, phase="over", money=(100, 100, 50, 0), prices=(10, 20, 0, 0, 0),
                    shares=((1, 0, 0, 0, 0), (0, 0, 5, 0, 0), (3, 1, 0, 0, 0), (0, 0, 0, 0, 0)))
    res = g.result(state)
    assert res["scores"] == [110, 100, 100, 0]
    assert res["ranks"] == [1, 2, 2, 4] and res["winners"] == [0]
    state = replace(state, money=(100, 110, 50, 0))
    assert g.result(state)["winners"] == [0, 1]


# --------------------------------------------------------------------------- visibility

def test_views_show_own_cards_and_objective_only_counts_for_others():
    state, _ = begin(4)
    spectator = json.dumps(g.view(state, None))
    for seat in range(4):
        v = g.view(state, seat)
        assert v["you"]["hand"] == sorted(state.hands[seat])
        assert v["you"]["objective"]["id"] == state.objectives[seat]
        assert v["hand_counts"] == [3, 3, 3, 3]
        text = json.dumps(v)
        for other in range(4):
            secret = set(state.hands[other]) | {state.objectives[other]}
            if other != seat:
                assert not any(f'"{s}"' in text for s in secret)
            assert not any(f'"{s}"' in spectator for s in secret)
        assert not any(f'"{c}"' in text for c in state.event_deck)
        assert v["event_deck_count"] == len(state.event_deck)
    assert "you" not in g.view(state, None)


def test_redacted_setup_events():
    _, events = begin(4)
    started = g.redact(g.new_state({"rounds": None}, 4), events[0], 1)
    assert "event_deck" not in started and "objective_decks" not in started
    assert started["event_deck_count"] == 45 and started["objective_deck_counts"] == [10] * 4
    dealt = [e for e in events if e["type"] == "cards_dealt"]
    assert g.redact(None, dealt[0], 1) == {"type": "cards_dealt", "seat": 0, "count": 3}
    assert g.redact(None, dealt[0], 0) == dealt[0]
    obj = [e for e in events if e["type"] == "objective_dealt"][2]
    assert g.redact(None, obj, None) == {"type": "objective_dealt", "seat": 2, "level": 1}


def test_transfers_keep_deck_order_and_hidden_cards_secret():
    state0 = g.new_state({"rounds": None}, 4)
    _, events = begin(4)
    lines = g.transfers(state0, events[0])
    cards = [t.asset for t in lines if t.asset.startswith("event:")]
    assert cards == sorted(cards) and len(cards) == 45
    assert all(t.visible_to == () for t in lines if t.asset.startswith("objective:"))
    dealt = next(e for e in events if e["type"] == "cards_dealt")
    assert all(t.visible_to == (dealt["seat"],) and t.redacted_asset == "event_card"
               for t in g.transfers(state0, dealt))


# --------------------------------------------------------------------------- validation

def test_action_validation_messages_name_the_field():
    state = rigged_turn(4)
    cases = [
        ({"type": "dance"}, "type"),
        ({"type": "buy", "share": "mines"}, "count"),
        ({"type": "buy", "share": "mines", "count": 1, "x": 1}, "x"),
        ({"type": "buy", "share": "mines", "count": True}, "count"),
        ({"type": "buy", "share": "mines", "count": "2"}, "count"),
        ({"type": "buy", "share": "gold", "count": 1}, "share"),
        ({"type": "buy", "share": "mines", "count": 0}, "count"),
        ({"type": "sell", "share": "mines", "count": 9}, "count"),
        ({"type": "play_event", "card": "mines:+1"}, "type"),        # wrong phase
        ({"type": "respond", "count": 1}, "type"),
    ]
    for action, field in cases:
        with pytest.raises(IllegalAction) as err:
            g.decide(state, 0, action, Draws(SEED))
        assert err.value.field == field, action
        assert err.value.message
    with pytest.raises(IllegalAction, match="not your turn"):
        g.decide(state, 1, {"type": "end_trading"}, Draws(SEED))
    # bad seats and malformed actions, for every game: tests/test_conformance.py
    ev = at(state, 0, "event1")
    missing = next(c for c in g.CARDS if c not in ev.hands[0])
    with pytest.raises(IllegalAction) as err:
        g.decide(ev, 0, {"type": "play_event", "card": missing}, Draws(SEED))
    assert err.value.field == "card"
    state, _ = act(state, 0, {"type": "buy", "share": "mines", "count": 5})
    with pytest.raises(IllegalAction) as err:
        g.decide(state, 1, {"type": "respond", "count": 6}, Draws(SEED))
    assert err.value.field == "count"


def test_action_schemas():
    assert set(g.ACTION_SCHEMAS) == {"play_event", "buy", "sell", "end_trading", "respond", "give_shares"}
    # every action played loads under its schema: tests/test_conformance.py


# --------------------------------------------------------------------------- random play

class Checker:
    """Speculate's invariants at every event: the ledger agrees with the state, the money,
    shares and cards add up, prices within bounds; secrecy by what the state holds (others'
    hands and objectives, the decks). JSON, well-formed transfers, redaction's type: every
    game's, tests/test_conformance.py."""

    def __init__(self, n, options, seed, secrecy=False):
        self.n = n
        self.secrecy = secrecy
        self.balances = defaultdict(Counter)
        self.kinds = Counter()
        # random_playout folds the opening events without reporting them: replay them here.
        state = g.new_state(g.OptionsSchema().load(options), n)
        for event in start_game(g, options, n, seed)[1]:
            before, state = state, g.evolve(state, event)
            self(before, event, state)

    def __call__(self, before, event, after):
        self.kinds[event["type"]] += 1
        for t in g.transfers(before, event):
            self.balances[t.frm][t.asset] -= t.quantity
            self.balances[t.to][t.asset] += t.quantity
        self.check_state(after)
        if self.secrecy:
            self.check_secrecy(before, event, after)

    def check_state(self, s):
        n = self.n
        b = self.balances
        assert b[BANK]["money"] == s.bank_money >= 0
        assert sum(s.money) + s.bank_money == (250 + 300) * n
        for t, name in enumerate(g.SHARES):
            assert b[BANK][f"share:{name}"] == s.bank_shares[t] >= 0
            assert sum(h[t] for h in s.shares) + s.bank_shares[t] == 10 * n
            assert g.PRICE_MIN <= s.prices[t] <= g.PRICE_MAX
        for q in range(n):
            acct = f"seat:{q}"
            assert b[acct]["money"] == s.money[q] >= 0
            assert all(b[acct][f"share:{name}"] == s.shares[q][t] >= 0 for t, name in enumerate(g.SHARES))
            cards = Counter({a[6:]: k for a, k in b[acct].items() if a.startswith("event:") and k})
            assert cards == Counter(s.hands[q])
            if s.objectives[q] is not None:
                assert b[acct][f"objective:{s.objectives[q]}"] == 1
        assert sum(b["event_deck"][f"event:{c}"] for c in set(s.event_deck)) == len(s.event_deck)
        assert len(s.event_deck) + len(s.discard) + sum(map(len, s.hands)) == 45

    def secrets(self, s, seat):
        """What `seat` may not see now: others' hands and objectives, the decks."""
        out = set(s.event_deck)
        for deck in s.objective_decks:
            out.update(deck)
        for q in range(self.n):
            if q != seat:
                out.update(s.hands[q])
                if s.objectives[q]:
                    out.add(s.objectives[q])
        return {f'"{x}"' for x in out}

    def check_secrecy(self, before, event, after):
        if after.phase == "over":
            return
        for seat in [None] + list(range(self.n)):
            hidden = self.secrets(after, seat)
            shown = g.redact(before, event, seat)
            text = json.dumps(shown) + json.dumps(g.view(after, seat))
            leaked = [x for x in hidden if x in text]
            assert not leaked, (seat, event["type"], leaked)


def _mixed_pick(heuristic_seats):
    def pick(state, seat, legal, rng):
        if seat in heuristic_seats:
            return heuristic(g.view(state, seat), legal, seat, rng)
        return fill_template(rng.choice(legal), rng)
    return pick


@pytest.mark.parametrize("options", [{}, {"rounds": 2}])
def test_random_playouts_keep_every_invariant(options):
    kinds = Counter()
    reasons = Counter()
    for i in range(24):
        n = 3 + i % 4
        checker = Checker(n, options, seed_for(100 + i))
        pick = _mixed_pick({0, 2}) if i % 3 == 2 else None    # some games with objectives met
        state, _ = random_playout(g, options, n, seed_for(100 + i), on_event=checker, pick=pick)
        res = g.result(state)
        assert len(res["ranks"]) == n and res["winners"]
        assert all(res["ranks"][q] > sum(state.alive) for q in state.eliminated)
        kinds.update(checker.kinds)
        reasons[state.end_reason] += 1
    assert kinds["bankrupt"] and kinds["deck_reshuffled"] or options
    assert kinds["objective_met"] and kinds["dividends_paid"]
    assert reasons["rounds"]
    if not options:
        assert reasons["last_player"]


def test_random_playouts_reach_share_payments_and_keep_invariants():
    seen = Counter()
    for i in range(12):
        n = 3 + i % 4
        checker = Checker(n, {}, seed_for(300 + i))
        random_playout(g, {}, n, seed_for(300 + i), on_event=checker, pick=_mixed_pick(set(range(n)) - {1}))
        seen.update(checker.kinds)
    assert seen["share_payment_due"] and seen["payment_chosen"]


def test_no_secret_in_any_view_or_redacted_event_while_live():
    for i, n in enumerate((3, 4, 5, 6)):
        checker = Checker(n, {"rounds": 3}, seed_for(200 + i), secrecy=True)
        pick = _mixed_pick({0}) if i % 2 else None
        random_playout(g, {"rounds": 3}, n, seed_for(200 + i), on_event=checker, pick=pick)
        assert checker.kinds["card_drawn"]


# --------------------------------------------------------------------------- the heuristic bot

def _bot_game(n, seed, hseat):
    state, _ = start_game(g, {}, n, seed_for(seed))
    rng = random.Random(seed)
    version = 0
    met = 0
    while not g.is_over(state):
        seat = g.to_act(state)[0]
        legal = g.legal_actions(state, seat)
        if seat == hseat:
            action = heuristic(g.view(state, seat), legal, seat, rng)
            assert any(_fits(action, a) for a in legal), action
        else:
            action = fill_template(rng.choice(legal), rng)
        version += 1
        for e in g.decide(state, seat, action, Draws(seed_for(seed), f"v{version}")):
            met += e["type"] == "objective_met" and e["seat"] == hseat
            state = g.evolve(state, e)
    return hseat in g.result(state)["winners"], met


def _fits(action, template):
    if set(action) != set(template):
        return False
    return all(v["min"] <= action[k] <= v["max"] if is_range(v) else action[k] == v for k, v in template.items())


def test_heuristic_beats_random_and_meets_objectives():
    games = 120
    wins = met_any = 0
    for i in range(games):
        won, met = _bot_game(4, 1000 + i, i % 4)
        wins += won
        met_any += met > 0
    assert wins / games > 0.6, wins / games          # fair share: 0.25
    assert met_any / games > 0.8, met_any / games


def test_heuristic_reads_the_service_envelope_too():
    state = rigged_turn(4)
    view = g.view(state, 0)
    legal = g.legal_actions(state, 0)
    envelope = {"seat": 0, "state": view, "legal_actions": legal}
    assert heuristic(envelope, legal, 0, random.Random(1)) == heuristic(view, legal, 0, random.Random(1))
