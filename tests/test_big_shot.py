"""Tests for the `big-shot` rules module (projections/big_shot.py) and its heuristic bot."""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from dataclasses import replace

import pytest
from marshmallow import ValidationError

from events.randomness import Draws
from projections import big_shot as g
from projections.game import IllegalAction
from projections.templates import fill_template, matches
from tests.gamekit import opening_draws, random_playout, seed_for, start_game
from workers.bots import big_shot as bot

pytestmark = pytest.mark.quick

COLOURS = g.COLOURS
IDX = {c: i for i, c in enumerate(COLOURS)}


# ----------------------------------------------------------------------------- helpers

class FixedDie:
    """A stand-in for Draws that rolls a fixed value (the only draw decide makes)."""

    def __init__(self, value: int):
        self.value = value
        self.labels = []

    def randint(self, label, lo, hi):
        self.labels.append(label)
        assert lo <= self.value <= hi
        return self.value


def started(players=3, seed=0):
    state, events = start_game(g, {}, players, seed_for(seed))
    return state, events


def act(state, seat, action, rng=None):
    events = g.decide(state, seat, action, rng or FixedDie(1))
    for event in events:
        state = g.evolve(state, event)
    return state, events


def counts(**kw):
    return tuple(kw.get(c, 0) for c in COLOURS)


def district(name):
    return g.BOARD.index[name]


def at_auction(players=3, active=0, cash=None, loans=None, space=0, lot=("red", "red", "blue", "green")):
    """A state in an auction that has just opened, the given seat active."""
    state, _ = started(players)
    spaces = list(state.spaces)
    spaces[space] = tuple(lot)
    return replace(state, phase="auction", active=active, auctions=1, promoter=space, space=space,
                   spaces=tuple(spaces), high_bid=0, high_bidder=-1,
                   passed=(False,) * players, borrowed=(False,) * players,
                   bidder=(active + 1) % players,
                   cash=tuple(cash) if cash else state.cash,
                   loans=tuple(loans) if loans else state.loans)


def at_placement(players=3, placer=0, lot=("red", "red", "blue", "green"), auctions=1,
                 colours=None, district_counts=None):
    state, _ = started(players)
    colours = tuple(colours) if colours else tuple(COLOURS[:players])
    spaces = state.spaces
    if auctions == g.NUM_SPACES:
        spaces = ((),) * g.NUM_SPACES
    dc = list(state.district_counts)
    for name, c in (district_counts or {}).items():
        dc[district(name)] = c
    return replace(state, phase="place", active=placer, placer=placer, lot=tuple(lot),
                   auctions=auctions, colours=colours, spaces=spaces, promoter=0,
                   district_counts=tuple(dc))


def place(state, seat, colour, name, rng=None):
    return act(state, seat, {"type": "place", "colour": colour, "district": name}, rng)


# ----------------------------------------------------------------------------- board data

def test_board_data_is_the_reconstructed_table():
    b = g.BOARD
    assert b.reconstructed is True
    table = dict(zip(b.names, zip(b.values, b.kinds)))
    assert table == {
        "Midtown": (21, "rich"), "Financial District": (20, "rich"), "Theatre Row": (18, "rich"),
        "Harbour Front": (17, "rich"), "Old Town": (16, "rich"),
        "Mill Lane": (11, "poor"), "Tannery": (10, "poor"), "Docks": (9, "poor"),
        "Rail Yards": (11, "poor"), "Market Hall": (10, "poor"), "Brickworks": (9, "poor"),
        "West Park": (0, "park"), "East Park": (0, "park"),
    }
    west, east = district("West Park"), district("East Park")
    assert {b.names[d] for d in b.neighbours[west]} == {"Mill Lane", "Tannery", "Docks"}
    assert {b.names[d] for d in b.neighbours[east]} == {"Rail Yards", "Market Hall", "Brickworks"}
    assert b.parks_of[district("Docks")] == (west,)
    assert b.parks_of[district("Midtown")] == ()


@pytest.mark.parametrize("mutate", [
    lambda d: d["districts"].append(dict(d["districts"][0])),                     # duplicate
    lambda d: d["districts"][-1].update(value=3),                                 # park worth >0
    lambda d: d["districts"][-1].update(neighbours=["Nowhere"]),                  # bad neighbour
    lambda d: d["districts"][-1].update(neighbours=["West Park"]),                # park next to park
    lambda d: d["districts"][0].update(kind="slum"),                              # bad kind
    lambda d: d["districts"][0].update(value=-1),                                 # negative
    lambda d: d["districts"][0].update(neighbours=["Docks"]),                     # non-park lists
    lambda d: d.update(districts=d["districts"][:10]),                            # too few (7x10<72)
])
def test_board_validation_rejects_bad_data(mutate):
    with open(g.DATA_PATH, encoding="utf-8") as fh:
        data = json.load(fh)
    g.load_board(data)                   # the shipped file is valid
    mutate(data)
    with pytest.raises(ValueError):
        g.load_board(data)


# ----------------------------------------------------------------------------- setup

@pytest.mark.parametrize("players", [2, 3, 4])
def test_setup_deals_cubes_colours_capital_and_start_player(players):
    state, events = started(players, seed=players)
    assert [e["type"] for e in events] == ["cubes_shuffled", "colours_dealt", "capital_dealt",
                                           "start_player_drawn"]
    spaces = events[0]["spaces"]
    assert len(spaces) == 18 and all(len(s) == 4 for s in spaces)
    assert Counter(c for s in spaces for c in s) == {c: 18 for c in COLOURS}
    assert all(len(set(s)) >= 2 for s in spaces)
    dealt = events[1]["colours"]
    assert len(dealt) == players == len(set(dealt))
    assert sorted(dealt + events[1]["dummy"]) == sorted(COLOURS)
    assert state.cash == (10,) * players and state.loans == (0,) * players
    assert state.phase == "choose_start" and g.to_act(state) == [events[3]["seat"]]
    assert state.promoter == -1


def test_setup_redraws_until_every_space_has_two_colours_and_records_it():
    found = None
    for n in range(200):
        state, events = started(4, seed=n)
        if events[0]["shuffles"] > 1:
            found = n, events[0]
            break
    assert found, "some seed needs a redraw (p ~ 0.2 each)"
    n, event = found
    rng = opening_draws(seed_for(n))
    cubes = [c for c in COLOURS for _ in range(18)]
    for attempt in range(1, event["shuffles"] + 1):
        shuffled = rng.shuffle(f"cubes/{attempt}", cubes)
        spaces = [shuffled[i:i + 4] for i in range(0, 72, 4)]
        assert g.spaces_ok(spaces) == (attempt == event["shuffles"])
    assert spaces == event["spaces"]


def test_spaces_ok_rejects_a_single_colour_space():
    assert g.spaces_ok([["red", "red", "red", "blue"]])
    assert not g.spaces_ok([["red", "blue", "red", "blue"], ["green"] * 4])


def test_start_player_chooses_the_promoter_starting_space():
    state, _ = started(3)
    first = state.start_player
    other = (first + 1) % 3
    with pytest.raises(IllegalAction):
        g.decide(state, other, {"type": "choose_start_space", "space": 3}, FixedDie(2))
    for bad in (18, -1, True, "3", 2.0, None):
        with pytest.raises(IllegalAction) as err:
            g.decide(state, first, {"type": "choose_start_space", "space": bad}, FixedDie(2))
        assert err.value.field == "space"
    assert g.legal_actions(state, first) == [
        {"type": "choose_start_space", "space": {"min": 0, "max": 17}}]
    die = FixedDie(2)
    after, events = act(state, first, {"type": "choose_start_space", "space": 16}, die)
    assert events[0] == {"type": "start_space_chosen", "seat": first, "space": 16}
    assert events[1] == {"type": "die_rolled", "seat": first, "value": 2, "from": 16,
                         "space": 0, "auction": 1}
    assert die.labels == ["die"]
    assert after.phase == "auction" and after.space == 0 and after.promoter == 0
    assert g.to_act(after) == [(first + 1) % 3]          # bidding starts left of the active player


# ----------------------------------------------------------------------------- promoter

def test_promoter_counts_only_spaces_that_still_hold_cubes():
    spaces = [("red", "blue")] * 18
    assert g.move_promoter(spaces, 0, 3) == 3
    assert g.move_promoter(spaces, 16, 3) == 1                      # clockwise, wrapping
    spaces = list(spaces)
    for empty in (1, 2, 4):
        spaces[empty] = ()
    assert g.move_promoter(spaces, 0, 1) == 3
    assert g.move_promoter(spaces, 0, 2) == 5
    assert g.move_promoter(spaces, 2, 1) == 3                       # promoter on an empty space
    only = [()] * 18
    only[7] = ("red", "blue")
    assert all(g.move_promoter(only, 7, d) == 7 for d in range(1, 7))  # the last lot
    two = [()] * 18
    two[3] = two[9] = ("red", "blue")
    assert [g.move_promoter(two, 3, d) for d in range(1, 7)] == [9, 3, 9, 3, 9, 3]


def test_die_roll_each_turn_is_recorded_and_moves_the_promoter():
    state = at_placement(players=3, placer=1, lot=("red",))
    state = replace(state, active=1, promoter=5,
                    spaces=tuple(() if i in (6, 7) else ("red", "blue") for i in range(18)))
    after, events = place(state, 1, "red", "Midtown", FixedDie(3))
    roll = events[-1]
    assert roll == {"type": "die_rolled", "seat": 2, "value": 3, "from": 5, "space": 10,
                    "auction": 2}
    assert after.active == 2 and g.to_act(after) == [0] and after.last_roll == 3


# ----------------------------------------------------------------------------- auction

def test_bids_must_exceed_the_high_bid_and_stay_within_cash():
    state = at_auction(players=3, active=0, cash=(10, 5, 10))
    assert g.to_act(state) == [1]
    legal = g.legal_actions(state, 1)
    assert {"type": "bid", "amount": {"min": 1, "max": 5}} in legal
    for bad in (0, 6, True, "2", 1.5):
        with pytest.raises(IllegalAction) as err:
            g.decide(state, 1, {"type": "bid", "amount": bad}, FixedDie(1))
        assert err.value.field == "amount"
    state, events = act(state, 1, {"type": "bid", "amount": 3})
    assert events == [{"type": "bid", "seat": 1, "amount": 3}]
    assert g.to_act(state) == [2]
    with pytest.raises(IllegalAction):
        g.decide(state, 2, {"type": "bid", "amount": 3}, FixedDie(1))
    state, _ = act(state, 2, {"type": "bid", "amount": 4})
    assert state.high_bid == 4 and state.high_bidder == 2 and g.to_act(state) == [0]


def test_bidding_goes_clockwise_from_the_left_active_last_and_passing_is_final():
    state = at_auction(players=4, active=2)
    order = []
    order.append(g.to_act(state)[0]); state, _ = act(state, 3, {"type": "bid", "amount": 1})
    order.append(g.to_act(state)[0]); state, _ = act(state, 0, {"type": "pass"})
    order.append(g.to_act(state)[0]); state, _ = act(state, 1, {"type": "bid", "amount": 2})
    order.append(g.to_act(state)[0]); state, _ = act(state, 2, {"type": "bid", "amount": 3})
    order.append(g.to_act(state)[0]); state, _ = act(state, 3, {"type": "bid", "amount": 4})
    order.append(g.to_act(state)[0])              # seat 0 passed: skipped for good
    assert order == [3, 0, 1, 2, 3, 1]
    assert g.legal_actions(state, 0) == []
    with pytest.raises(IllegalAction):
        g.decide(state, 0, {"type": "bid", "amount": 9}, FixedDie(1))


def test_auction_ends_when_all_but_one_passed_and_the_winner_pays_and_takes_the_lot():
    state = at_auction(players=3, active=0, space=4, lot=("red", "red", "blue", "green"))
    state, _ = act(state, 1, {"type": "bid", "amount": 2})
    state, _ = act(state, 2, {"type": "pass"})
    state, events = act(state, 0, {"type": "pass"})
    assert events[-1] == {"type": "lot_sold", "seat": 1, "price": 2, "space": 4,
                          "cubes": ["red", "red", "blue", "green"], "free": False}
    assert state.cash[1] == 8 and state.spaces[4] == ()
    assert state.phase == "place" and g.to_act(state) == [1] and state.lot == ("red", "red", "blue", "green")


def test_nobody_bids_the_active_player_takes_the_lot_free():
    # rules version 2: the auction ends the moment all but one have passed
    state = at_auction(players=3, active=1, space=2)
    state, _ = act(state, 2, {"type": "pass"})
    assert g.to_act(state) == [0]
    state, events = act(state, 0, {"type": "pass"})
    assert [e["type"] for e in events] == ["passed", "lot_sold"]   # no bidding turn for the active player
    assert events[-1]["seat"] == 1 and events[-1]["price"] == 0 and events[-1]["free"] is True
    assert events[-1]["cubes"] == ["red", "red", "blue", "green"]
    assert state.cash[1] == 10 and state.loans[1] == 0 and state.phase == "place" and g.to_act(state) == [1]
    assert g.legal_actions(state, 1)[0]["type"] == "place"           # neither bid nor borrow offered


def test_nobody_bids_two_players_the_lot_goes_free_after_one_pass():
    state = at_auction(players=2, active=0)
    state, events = act(state, 1, {"type": "pass"})
    assert events[-1] == {"type": "lot_sold", "seat": 0, "price": 0, "space": 0,
                          "cubes": ["red", "red", "blue", "green"], "free": True}


def test_version_1_gave_the_active_player_a_last_bidding_turn():
    state = replace(at_auction(players=3, active=1, space=2), rules_version=1)
    state, _ = act(state, 2, {"type": "pass"})
    state, _ = act(state, 0, {"type": "pass"})
    assert g.to_act(state) == [1]                 # version 1: the active player still bids
    assert {a["type"] for a in g.legal_actions(state, 1)} == {"pass", "bid", "borrow"}
    state, events = act(state, 1, {"type": "pass"})
    assert events[-1]["type"] == "lot_sold"
    assert events[-1]["seat"] == 1 and events[-1]["price"] == 0 and events[-1]["free"] is True
    assert state.cash[1] == 10 and g.to_act(state) == [1]


def test_a_bid_still_lets_the_others_answer_until_all_but_one_passed():
    state = at_auction(players=3, active=1, space=2)
    state, _ = act(state, 2, {"type": "bid", "amount": 3})
    state, _ = act(state, 0, {"type": "pass"})
    assert g.to_act(state) == [1]                 # the active player may still outbid
    state, events = act(state, 1, {"type": "pass"})
    assert events[-1]["type"] == "lot_sold" and events[-1]["seat"] == 2 and events[-1]["price"] == 3


def test_a_player_without_enough_cash_may_only_pass_or_borrow():
    state = at_auction(players=2, active=0, cash=(5, 0))
    assert g.legal_actions(state, 1) == [{"type": "pass"}, {"type": "borrow"}]


# ----------------------------------------------------------------------------- loans

def test_loan_pays_nine_minus_the_loans_held():
    state = at_auction(players=2, active=0)
    state, events = act(state, 1, {"type": "borrow"})
    assert events == [{"type": "borrowed", "seat": 1, "amount": 9, "loans": 1}]
    assert state.cash[1] == 19 and state.loans[1] == 1 and g.to_act(state) == [1]
    for held, paid in ((1, 8), (2, 7), (8, 1)):
        s = at_auction(players=2, active=0, loans=(0, held))
        _, events = act(s, 1, {"type": "borrow"})
        assert events[0]["amount"] == paid


def test_view_shows_the_next_loan_only_when_the_seat_may_borrow():
    state = at_auction(players=3, active=0)
    seats = g.view(state, None)["seats"]
    assert [s["next_loan"] for s in seats] == [9, 9, 9] and [s["no_loan"] for s in seats] == [None] * 3
    state, _ = act(state, 1, {"type": "borrow"})
    me = g.view(state, 1)["seats"][1]
    assert me["next_loan"] is None and me["no_loan"] == "already borrowed in this auction"
    assert me["loans"] == 1 and {"type": "borrow"} not in g.legal_actions(state, 1)
    state, _ = act(state, 1, {"type": "pass"})
    assert g.view(state, None)["seats"][1]["no_loan"] == "passed in this auction"
    gone = at_auction(players=2, active=0, loans=(15, 15))
    assert [(s["next_loan"], s["no_loan"]) for s in g.view(gone, 0)["seats"]] == [(None, "no loan cards left")] * 2
    nothing = at_auction(players=2, active=0, loans=(0, 9))
    assert g.view(nothing, 0)["seats"][1]["no_loan"] == "a further loan would pay nothing"
    placing = at_placement(players=2)
    assert g.view(placing, 0)["seats"][0] == {**g.view(placing, 0)["seats"][0], "next_loan": None,
                                              "no_loan": "no auction under way"}


def test_version_1_view_shows_the_next_loan_always():
    state = replace(at_auction(players=3, active=0), rules_version=1)
    state, _ = act(state, 1, {"type": "borrow"})
    me = g.view(state, 1)["seats"][1]
    assert me["next_loan"] == 8 and "no_loan" not in me


def test_no_loan_when_it_would_pay_nothing():
    state = at_auction(players=2, active=0, loans=(0, 9))
    assert {"type": "borrow"} not in g.legal_actions(state, 1)
    with pytest.raises(IllegalAction):
        g.decide(state, 1, {"type": "borrow"}, FixedDie(1))


def test_no_loan_when_the_thirty_loan_cards_are_gone():
    state = at_auction(players=4, active=0, loans=(8, 8, 7, 7))
    assert {"type": "borrow"} not in g.legal_actions(state, 1)
    with pytest.raises(IllegalAction):
        g.decide(state, 1, {"type": "borrow"}, FixedDie(1))
    state = at_auction(players=4, active=0, loans=(8, 7, 7, 7))    # 29 out: one card left
    state, events = act(state, 1, {"type": "borrow"})
    assert events[0]["amount"] == 2 and sum(state.loans) == 30


def test_loan_once_per_auction_on_ones_own_bidding_turn():
    state = at_auction(players=3, active=0)
    with pytest.raises(IllegalAction):
        g.decide(state, 2, {"type": "borrow"}, FixedDie(1))        # not their turn
    state, _ = act(state, 1, {"type": "borrow"})
    assert {"type": "borrow"} not in g.legal_actions(state, 1)
    with pytest.raises(IllegalAction):
        g.decide(state, 1, {"type": "borrow"}, FixedDie(1))
    state, _ = act(state, 1, {"type": "bid", "amount": 12})
    state, _ = act(state, 2, {"type": "borrow"})                   # another seat, same auction
    state, _ = act(state, 2, {"type": "bid", "amount": 13})
    state, _ = act(state, 0, {"type": "pass"})
    assert {"type": "borrow"} not in g.legal_actions(state, 1)     # still this auction
    state, _ = act(state, 1, {"type": "pass"})
    assert state.phase == "place"
    # a new auction: borrowing allowed again
    fresh = g.evolve(state, {"type": "die_rolled", "seat": 1, "value": 1, "from": 0, "space": 1,
                             "auction": 2})
    assert {"type": "borrow"} in g.legal_actions(fresh, 2)


# ----------------------------------------------------------------------------- placement

def test_cubes_are_placed_one_by_one_on_any_unsold_district_parks_included():
    state = at_placement(players=2, placer=0, lot=("red", "red", "blue", "green"))
    legal = g.legal_actions(state, 0)
    assert len(legal) == 3 * 13
    assert {"type": "place", "colour": "green", "district": "West Park"} in legal
    assert g.legal_actions(state, 1) == []
    state, events = place(state, 0, "green", "West Park")
    assert events == [{"type": "cube_placed", "seat": 0, "colour": "green", "district": "West Park"}]
    assert state.district_counts[district("West Park")] == counts(green=1)
    assert sorted(state.lot) == ["blue", "red", "red"] and g.to_act(state) == [0]
    with pytest.raises(IllegalAction) as err:
        place(state, 0, "green", "Midtown")                     # no green cube left
    assert err.value.field == "colour"
    with pytest.raises(IllegalAction) as err:
        place(state, 0, "red", "Atlantis")
    assert err.value.field == "district"
    with pytest.raises(IllegalAction):
        place(state, 1, "red", "Midtown")                       # not the auction winner


def test_a_district_is_sold_the_moment_its_seventh_cube_lands():
    state = at_placement(players=3, placer=0, lot=("red", "blue"),
                         district_counts={"Midtown": counts(red=3, blue=2, green=1)})
    state, events = place(state, 0, "red", "Midtown")
    sold = events[-1]
    assert sold == {"type": "district_sold", "district": "Midtown",
                    "counts": {"red": 4, "blue": 2, "green": 1}, "colour": "red", "owner": 0}
    d = district("Midtown")
    assert state.district_closed[d] and state.district_counts[d] == counts(red=1)
    assert state.removed == counts(red=3, blue=2, green=1)
    assert g.district_owner(state, d) == 0
    # no cube may be placed there again; placing continues with the cubes left
    assert all(a["district"] != "Midtown" for a in g.legal_actions(state, 0))
    with pytest.raises(IllegalAction) as err:
        place(state, 0, "blue", "Midtown")
    assert err.value.field == "district"
    assert g.to_act(state) == [0] and state.lot == ("blue",)


@pytest.mark.parametrize("cubes, winner", [
    ({"red": 4, "blue": 3}, "red"),
    ({"red": 3, "blue": 2, "green": 2}, "red"),
    ({"red": 2, "blue": 2, "green": 2, "yellow": 1}, "yellow"),   # ties cancel: the single cube wins
    ({"red": 3, "blue": 3, "green": 1}, "green"),
    ({"red": 1, "blue": 1, "green": 1, "yellow": 4}, "yellow"),
    ({"red": 2, "blue": 2, "green": 3}, "green"),
    ({"red": 1, "blue": 2, "green": 2, "yellow": 2}, "red"),
    ({"red": 2, "blue": 2}, None),                                 # end of game: nothing left
    ({}, None),
])
def test_cancelling_majority_rule(cubes, winner):
    result = g.majority(counts(**cubes))
    assert (None if result is None else COLOURS[result]) == winner


def test_sale_with_cancelling_ties_goes_to_the_single_cube():
    state = at_placement(players=4, placer=2, lot=("yellow",),
                         district_counts={"Theatre Row": counts(red=2, blue=2, green=2)})
    state, events = place(state, 2, "yellow", "Theatre Row")
    assert events[1]["colour"] == "yellow" and events[1]["owner"] == 3
    assert state.removed == counts(red=2, blue=2, green=2)


def test_a_district_won_by_a_dummy_colour_belongs_to_nobody():
    state = at_placement(players=2, placer=0, lot=("green", "red"), colours=("red", "blue"),
                         district_counts={"Docks": counts(green=4, red=2)})
    state, events = place(state, 0, "green", "Docks")
    assert events[1]["colour"] == "green" and events[1]["owner"] is None
    d = district("Docks")
    assert state.district_closed[d] and g.district_owner(state, d) is None
    assert g.view(state, 0)["districts"][d]["owner"] is None


def test_after_the_last_cube_the_next_player_clockwise_rolls():
    state = at_placement(players=3, placer=1, lot=("red",))
    state = replace(state, active=2)             # seat 1 won seat 2's auction
    state, events = place(state, 1, "red", "Old Town", FixedDie(6))
    assert events[-1]["type"] == "die_rolled" and events[-1]["seat"] == 0
    assert state.active == 0 and g.to_act(state) == [1]


# ----------------------------------------------------------------------------- end and scoring

def test_end_of_game_resolution_repayment_and_result():
    dc = {
        "Midtown": counts(red=1, blue=2),                        # blue wins
        "Financial District": counts(red=2, blue=2),             # cancels: nobody
        "Theatre Row": counts(red=3, blue=2, green=1),           # + blue: green (a dummy in 2p)
        "Mill Lane": counts(red=1),
        "West Park": counts(red=2, blue=1),
    }
    state = at_placement(players=2, placer=0, lot=("blue",), auctions=18,
                         colours=("red", "blue"), district_counts=dc)
    state = replace(state, cash=(30, 12), loans=(2, 0))
    state, events = place(state, 0, "blue", "Theatre Row")
    types = [e["type"] for e in events]
    assert types[:2] == ["cube_placed", "district_sold"]          # 7th cube: sold at once
    assert events[1]["colour"] == "green" and events[1]["owner"] is None
    resolved = {e["district"]: e for e in events if e["type"] == "district_resolved"}
    assert set(resolved) == set(g.BOARD.names) - {"Theatre Row"}
    assert resolved["Midtown"]["colour"] == "blue" and resolved["Midtown"]["owner"] == 1
    assert resolved["Financial District"]["colour"] is None
    assert resolved["Harbour Front"] == {"type": "district_resolved", "district": "Harbour Front",
                                         "counts": {}, "colour": None, "owner": None}
    assert resolved["Mill Lane"]["owner"] == 0 and resolved["West Park"]["owner"] == 0
    assert [e for e in events if e["type"] == "loans_repaid"] == [
        {"type": "loans_repaid", "seat": 0, "loans": 2, "amount": 20}]
    end = events[-1]
    # seat 0: cash 30 - 20 + Mill Lane 11 doubled by West Park = 32, two districts
    # seat 1: cash 12 + Midtown 21 = 33, one district only: ranks below
    assert end == {"type": "game_ended", "scores": [32, 33], "districts": [2, 1],
                   "ranks": [1, 2], "winners": [0]}
    assert g.is_over(state) and g.to_act(state) == []
    assert g.result(state) == {"winners": [0], "ranks": [1, 2], "scores": [32, 33],
                               "districts": [2, 1]}
    assert state.district_counts[district("Financial District")] == counts()
    assert state.district_counts[district("Midtown")] == counts(blue=1)
    assert state.removed == counts(red=7, blue=7)
    assert state.loans == (0, 0) and state.cash == (10, 12)
    with pytest.raises(IllegalAction):
        g.decide(state, 0, {"type": "pass"}, FixedDie(1))


def _closed(state, owners_by_name):
    closed = list(state.district_closed)
    colour = list(state.district_colour)
    for name, c in owners_by_name.items():
        closed[district(name)] = True
        colour[district(name)] = c
    return replace(state, district_closed=tuple(closed), district_colour=tuple(colour))


def test_parks_double_neighbouring_districts_of_the_same_owner_only():
    state, _ = started(3)
    state = replace(state, colours=("red", "blue", "green"), cash=(0, 0, 0), phase="over")
    state = _closed(state, {
        "West Park": "red", "Mill Lane": "red", "Tannery": "red", "Docks": "blue",
        "Midtown": "red",                          # rich: not next to a park, not doubled
        "East Park": "yellow", "Rail Yards": "green",   # park of a dummy colour doubles nothing
    })
    scores, owned = g.final_scores(state)
    assert scores == [(11 + 10) * 2 + 21, 9, 11]
    assert owned == [4, 1, 1]                      # the park counts as a district


def test_scores_subtract_ten_per_loan_via_the_repayment():
    state = at_placement(players=2, placer=0, lot=("red",), auctions=18, colours=("red", "blue"))
    state = replace(state, cash=(5, 40), loans=(1, 3))
    state, events = place(state, 0, "red", "Docks")
    assert events[-1]["scores"] == [5 - 10 + 9, 40 - 30]


def test_two_district_requirement_and_shared_places():
    ranks, winners = g.rank_players([50, 80, 50, 10], [2, 1, 3, 2])
    assert ranks == [1, 4, 1, 3] and winners == [0, 2]           # tie shares the win
    ranks, winners = g.rank_players([5, 9], [1, 0])
    assert ranks == [2, 1] and winners == []                     # nobody meets the requirement
    ranks, winners = g.rank_players([-5, 9], [2, 0])
    assert ranks == [1, 2] and winners == [0]


# ----------------------------------------------------------------------------- views, validation

def test_everything_is_public():
    # so every seat sees the same views and events, as JSON: tests/test_conformance.py
    assert g.HIDDEN_INFORMATION is False
    state, _ = started(4, seed=3)
    state, _ = act(state, state.start_player, {"type": "choose_start_space", "space": 0})
    views = [g.view(state, s) for s in (None, 0, 1, 2, 3)]
    for v in views:
        assert v["phase"] == "auction" and v["to_act"] == g.to_act(state)
    v = views[1]
    assert v["auction"]["lot"] == list(state.spaces[state.space])
    assert [s["colour"] for s in v["seats"]] == list(state.colours)
    assert v["loan_cards_left"] == 30 and v["seats"][0]["next_loan"] == 9
    assert len(v["dummy_colours"]) == 0 and v["board_reconstructed"] is True
    assert "seed" not in json.dumps(v) and "die" not in v


def test_action_validation_messages_name_the_field():
    state = at_auction(players=2, active=0)
    cases = [
        ({"type": "shout"}, "type"),
        ({"amount": 3}, "type"),
        ({"type": "bid"}, "amount"),
        ({"type": "bid", "amount": 2, "extra": 1}, "extra"),
        ({"type": "pass", "amount": 1}, "amount"),
        ({"type": "place", "colour": "red", "district": "Midtown"}, "type"),   # wrong phase
        ({"type": "choose_start_space", "space": 1}, "type"),
    ]
    for action, field in cases:
        with pytest.raises(IllegalAction) as err:
            g.decide(state, 1, action, FixedDie(1))
        assert err.value.field == field, action
        assert err.value.message
    with pytest.raises(IllegalAction):
        g.decide(state, 0, {"type": "pass"}, FixedDie(1))                     # out of turn
    # bad seats and malformed actions, for every game: tests/test_conformance.py


def test_options_and_action_schemas():
    assert g.OptionsSchema().load({}) == {}          # unknown options refused: tests/test_conformance.py
    assert set(g.ACTION_SCHEMAS) == {"choose_start_space", "borrow", "bid", "pass", "place"}
    examples = [{"type": "choose_start_space", "space": 5}, {"type": "borrow"},
                {"type": "bid", "amount": 4}, {"type": "pass"},
                {"type": "place", "colour": "red", "district": "West Park"}]
    for example in examples:
        assert g.ACTION_SCHEMAS[example["type"]]().load(example) == example
    with pytest.raises(ValidationError):
        g.ACTION_SCHEMAS["bid"]().load({"type": "bid", "amount": True})
    with pytest.raises(ValidationError):
        g.ACTION_SCHEMAS["place"]().load({"type": "place", "colour": "pink", "district": "Docks"})
    assert g.NAME == "big-shot" and g.RULES_VERSION == 2 and g.RULES_VERSIONS == (1, 2)
    assert g.new_state({}, 3).rules_version == 2 and g.new_state({}, 3, rules_version=1).rules_version == 1
    with pytest.raises(ValueError):
        g.new_state({}, 3, rules_version=3)
    assert (g.MIN_PLAYERS, g.MAX_PLAYERS) == (2, 4)   # others refused: tests/test_conformance.py


def test_ledger_entries_for_a_sale_a_loan_and_a_placement():
    state = at_auction(players=2, active=0, space=3, lot=("red", "red", "blue", "green"))
    tr = g.transfers(state, {"type": "borrowed", "seat": 1, "amount": 9, "loans": 1})
    assert [(t.frm, t.to, t.asset, t.quantity) for t in tr] == [
        ("bank", "seat:1", "money", 9), ("bank", "seat:1", "loan", 1)]
    sale = {"type": "lot_sold", "seat": 1, "price": 6, "space": 3,
            "cubes": ["red", "red", "blue", "green"], "free": False}
    assert [t.as_dict() for t in g.transfers(state, sale)] == [
        {"from": "seat:1", "to": "bank", "asset": "money", "quantity": 6, "price": 6},
        {"from": "space:3", "to": "seat:1", "asset": "cube:red", "quantity": 2, "price": 6},
        {"from": "space:3", "to": "seat:1", "asset": "cube:blue", "quantity": 1, "price": 6},
        {"from": "space:3", "to": "seat:1", "asset": "cube:green", "quantity": 1, "price": 6},
    ]
    placed = {"type": "cube_placed", "seat": 1, "colour": "red", "district": "Docks"}
    assert [t.as_dict() for t in g.transfers(state, placed)] == [
        {"from": "seat:1", "to": "district:Docks", "asset": "cube:red", "quantity": 1,
         "price": None}]
    assert all(t.visible_to is None for t in g.transfers(state, sale))


# ----------------------------------------------------------------------------- random playouts

def _check_cubes(state):
    total = Counter()
    for space in state.spaces:
        total.update(space)
    total.update(state.lot)
    for dc in state.district_counts:
        for i, c in enumerate(COLOURS):
            total[c] += dc[i]
    for i, c in enumerate(COLOURS):
        total[c] += state.removed[i]
    assert total == {c: 18 for c in COLOURS}, total


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_playouts_keep_every_invariant(players):
    """Big-shot's invariants at every event: the cubes add up, the ledger agrees with cash,
    loans and spaces, districts sell and resolve by the majority rule. JSON, well-formed
    transfers, redaction, legal actions: every game's, tests/test_conformance.py."""
    for n in range(40):
        seed = seed_for(100 * players + n)
        balances = defaultdict(int)
        start_state = g.new_state({}, players)
        state, opening = start_game(g, {}, players, seed)
        s = start_state
        for e in opening:
            for t in g.transfers(s, e):
                balances[(t.frm, t.asset)] -= t.quantity
                balances[(t.to, t.asset)] += t.quantity
            s = g.evolve(s, e)
        _check_cubes(state)
        seen = Counter()

        def on_event(before, event, after):
            seen[event["type"]] += 1
            for t in g.transfers(before, event):
                balances[(t.frm, t.asset)] -= t.quantity
                balances[(t.to, t.asset)] += t.quantity
            _check_cubes(after)
            # the ledger agrees with the state
            for seat in range(players):
                assert balances[(f"seat:{seat}", "money")] == after.cash[seat]
                assert balances[(f"seat:{seat}", "loan")] == after.loans[seat]
            for i, space in enumerate(after.spaces):
                for c in COLOURS:
                    assert balances[(f"space:{i}", f"cube:{c}")] == space.count(c)
            if event["type"] in ("district_sold", "district_resolved"):
                d = g.BOARD.index[event["district"]]
                assert not before.district_closed[d]
                before_counts = before.district_counts[d]
                if event["type"] == "district_sold":
                    assert sum(before_counts) == 7
                win = g.majority(before_counts)
                assert event["colour"] == (None if win is None else COLOURS[win])
                assert event["owner"] == g.owner_of_colour(before, event["colour"])
                assert after.district_counts[d] == (g._ZERO_COUNTS if win is None else
                                                    tuple(int(i == win) for i in range(4)))
            limit = 7 if event["type"] == "cube_placed" else 6    # the 7th cube sells at once
            assert all(sum(dc) <= limit for dc in after.district_counts)
            assert sum(after.loans) <= 30
            if event["type"] == "lot_sold":
                assert sum(1 for sp in after.spaces if sp) == 18 - after.auctions

        final, actions = random_playout(g, {}, players, seed, on_event=on_event, max_actions=5000)
        assert g.is_over(final) and final.auctions == 18
        assert seen["die_rolled"] == 18 and seen["lot_sold"] == 18 and seen["game_ended"] == 1
        assert seen["cube_placed"] == 72
        assert all(not sp for sp in final.spaces) and final.lot == ()
        assert all(final.district_closed)
        assert final.loans == (0,) * players
        r = g.result(final)
        assert len(r["ranks"]) == len(r["scores"]) == players
        assert all(type(x) is int for x in r["scores"] + r["ranks"])
        scores, owned = g.final_scores(final)
        assert r["scores"] == scores and r["districts"] == owned
        for w in r["winners"]:
            assert r["ranks"][w] == 1 and owned[w] >= 2


# ----------------------------------------------------------------------------- the heuristic bot

def _play(players, seed_n, bots, roundtrip=False):
    seed = seed_for(seed_n)
    state, _ = start_game(g, {}, players, seed)
    rng = random.Random(seed_n)
    version = 0
    while not g.is_over(state):
        seat = g.to_act(state)[0]
        legal = g.legal_actions(state, seat)
        if bots[seat] == "heuristic":
            view = g.view(state, seat)
            if roundtrip:                 # the bot works from the JSON view a client gets
                view = json.loads(json.dumps(view))
            action = bot.heuristic(view, legal, seat, rng)
            assert matches(action, legal), (action, legal)
        else:
            action = fill_template(rng.choice(legal), rng)
        version += 1
        for e in g.decide(state, seat, action, Draws(seed, f"v{version}")):
            state = g.evolve(state, e)
    return g.result(state)


def test_heuristic_only_returns_legal_actions():
    for n in range(6):
        players = 2 + n % 3
        _play(players, 900 + n, ["heuristic"] * players, roundtrip=True)


def test_heuristic_beats_random_bots():
    games, wins = 100, 0
    for n in range(games):
        seat = n % 4
        bots = ["random"] * 4
        bots[seat] = "heuristic"
        wins += seat in _play(4, 2000 + n, bots)["winners"]
    rate = wins / games
    print(f"big-shot heuristic win rate vs 3 random bots: {rate:.3f}")
    assert rate > 0.5                     # fair share: 0.25
