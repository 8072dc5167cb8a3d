"""Spekulation: one test per rule of the brief, the worked examples, secrecy, random playouts, bot."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import replace

import pytest
from marshmallow import ValidationError

from events.randomness import Draws
from projections import spekulation as g
from projections.spekulation import rules
from projections.game import IllegalAction
from projections.kernel import Batch
from tests.gamekit import opening_draws, random_playout, seed_for, start_game
from workers.bots import spekulation as bot
from workers.bots.random_bot import choose as random_choose

pytestmark = pytest.mark.quick

C = g.COMPANY_INDEX
ALL_OPTIONS = [{"edition": e, "board": b} for e in g.EDITIONS for b in g.BOARDS]


# ---------------------------------------------------------------------------------------
# helpers

class Scripted:
    """A stand-in for Draws: below() returns scripted values, shuffle() keeps the order."""

    def __init__(self, *values):
        self.values = list(values)
        self.labels = []

    def below(self, label, n):
        self.labels.append(label)
        value = self.values.pop(0)
        assert 0 <= value < n
        return value

    def randint(self, label, low, high):
        return low + self.below(label, high - low + 1)

    def choice(self, label, items):
        return items[self.below(label, len(items))]

    def shuffle(self, label, items):
        self.labels.append(label)
        return list(items)


def place(state, **where):
    """Set marker positions by company (dashes as underscores); arrivals in keyword order."""
    pos = list(state.positions)
    arrivals = list(state.arrivals)
    for name, p in where.items():
        c = C[name.replace("_", "-")]
        pos[c] = p
        if p >= state.end and c not in arrivals:
            arrivals.append(c)
    return replace(state, positions=tuple(pos), arrivals=tuple(arrivals))


def spread(state, skip=(), start_at=1):
    """Put the companies not in `skip` on consecutive spaces from start_at."""
    pos = list(state.positions)
    p = start_at
    for name in g.COMPANIES:
        if name not in skip:
            pos[C[name]] = p
            p += 1
    return replace(state, positions=tuple(pos))


def dice_game(n=3, seed=1, options=None):
    """A dice game past the share choices (turn 1, trade round open)."""
    state, _ = start_game(g, dict(options or {}), n, seed_for(seed))
    v = 0
    while state.phase == "setup":
        seat = g.to_act(state)[0]
        v += 1
        for e in g.decide(state, seat, g.legal_actions(state, seat)[0], Draws(seed_for(seed), f"v{v}")):
            state = g.evolve(state, e)
    return state


def tiles_game(n=3, seed=1):
    state, _ = start_game(g, {"edition": "tiles"}, n, seed_for(seed))
    return state


def fold(state, events):
    for e in events:
        state = g.evolve(state, e)
    return state


def act(state, seat, action, rng=None):
    events = g.decide(state, seat, action, rng or Draws(seed_for(99), "t"))
    return fold(state, events), events


def types(events):
    return [e["type"] for e in events]


def commit_phase(state, number, hands, active=0):
    """A state waiting for movement cards: `hands` per seat (lists of cards)."""
    n = state.players
    return replace(state, phase="commit", active=active, number=number,
                   hands=tuple(tuple(h) for h in hands), commits=(None,) * n,
                   action="none", trade_seat=-1)


def play_all(state, cards, rng=None):
    """Every seat commits cards[seat] (in seat order); returns (state, all events)."""
    events = []
    for seat, card in enumerate(cards):
        state, evs = act(state, seat, {"type": "play", "card": card}, rng)
        events += evs
    return state, events


# ---------------------------------------------------------------------------------------
# price tables (data) and worked price examples

def test_tables_are_data_marked_reconstructed_and_match_the_brief():
    data = json.loads(g.DATA_PATH.read_text())
    assert data["reconstructed"] is True
    assert g.START_PRICE == 20
    plain_sections, plain_end = g.TABLES["plain"]
    star_sections, star_end = g.TABLES["star"]
    assert plain_sections[1][1] == 110 and plain_sections[1][2] == 95
    assert plain_sections[2][0] == 175 and plain_sections[3][7] == -10
    assert plain_end == (400, 320, 240, 160, 90, 30, -20, -50)
    assert star_sections[5] == (280, 230, 180, 125, 70, 20, -30, -60)
    assert star_end == (340, 270, 200, 130, 70, 15, -35, -70)


def test_bad_table_file_is_rejected(tmp_path):
    data = json.loads(g.DATA_PATH.read_text())
    data["boards"]["star"]["end"] = [1, 2, 3]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError):
        g.load_tables(bad)


def test_worked_example_red_18_yellow_21_green_19():
    state = dice_game()
    state = spread(state, skip=("red", "yellow", "green"))       # others on 1..5: behind
    state = place(state, red=18, yellow=21, green=19)
    pr = g.prices(state)
    assert g.ranks(state)[C["red"]] == 3
    assert pr[C["red"]] == 95
    assert pr[C["yellow"]] == 175
    assert pr[C["green"]] == 110


def test_worked_example_last_place_on_32_is_minus_10():
    state = spread(dice_game(), start_at=32)                    # red on 32 is the rearmost
    assert g.ranks(state)[C["red"]] == 8
    assert g.price(state, C["red"]) == -10


def test_start_price_is_20_whatever_the_rank():
    state = place(dice_game(), red=50)
    assert all(p == 20 for c, p in enumerate(g.prices(state)) if c != C["red"])
    assert g.ranks(state)[C["yellow"]] == 2                     # start markers share rank 2


def test_end_prices_follow_arrival_order_and_rank_above_the_track():
    state = dice_game()
    state = place(state, grey=61, red=61, yellow=60)             # grey arrived first
    assert state.arrivals == (C["grey"], C["red"])
    rk = g.ranks(state)
    assert (rk[C["grey"]], rk[C["red"]], rk[C["yellow"]]) == (1, 2, 3)
    pr = g.prices(state)
    assert (pr[C["grey"]], pr[C["red"]], pr[C["yellow"]]) == (400, 320, 210)


def test_star_board_prices():
    state = dice_game(options={"board": "star"})
    state = spread(state, skip=("red", "yellow", "green"))
    state = place(state, red=18, yellow=21, green=19)
    pr = g.prices(state)
    assert (pr[C["red"]], pr[C["yellow"]], pr[C["green"]]) == (80, 150, 95)


def test_tiles_track_ends_at_60_and_59_is_the_last_section():
    state = tiles_game()
    assert state.end == 60
    state = place(state, red=59)
    assert g.price(state, C["red"]) == 330
    assert g.forward(state.positions, C["red"], 1, state.end) == 60


# ---------------------------------------------------------------------------------------
# setup

def test_options_defaults_and_validation():
    assert g.OptionsSchema().load({}) == {"edition": "dice", "board": "plain"}
    for bad in ({"edition": "cards"}, {"board": "round"}, {"edition": 1}):
        with pytest.raises(ValidationError):
            g.OptionsSchema().load(bad)
    assert (g.MIN_PLAYERS, g.MAX_PLAYERS) == (3, 6)   # others refused: tests/test_conformance.py


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_start_events_supply_money_and_start_player(n):
    state, events = start_game(g, {}, n, seed_for(n))
    assert events[0]["type"] == "start_player_drawn"
    assert state.start_player == events[0]["seat"]
    assert state.supply == (n - 1,) * 8
    assert state.money == (20,) * n
    assert state.phase == "setup" and g.to_act(state) == [state.start_player]
    assert all(h == () for h in state.hands)                  # cards come after the choices
    starts = {start_game(g, {}, n, seed_for(k))[0].start_player for k in range(40)}
    assert len(starts) > 1                                    # drawn, not fixed


def test_dice_setup_choices_in_seat_order_from_start_player():
    state, _ = start_game(g, {}, 4, seed_for(3))
    first = state.start_player
    order = []
    for i, name in enumerate(["green", "red", "grey", "orange"]):
        seat = g.to_act(state)[0]
        order.append(seat)
        if i == 1:
            with pytest.raises(IllegalAction) as err:
                g.decide(state, seat, {"type": "choose_share", "company": "green"}, Draws(seed_for(1)))
            assert err.value.field == "company"
            assert {"type": "choose_share", "company": "green"} not in g.legal_actions(state, seat)
        state, events = act(state, seat, {"type": "choose_share", "company": name})
    assert order == [(first + k) % 4 for k in range(4)]
    assert state.shares[first][C["green"]] == 1
    assert state.supply[C["green"]] == 2 and state.supply[C["yellow"]] == 3
    # the last choice deals the decks, then the first turn is a trade with no roll
    assert types(events).count("deck_shuffled") == 4 and types(events).count("cards_drawn") == 4
    assert "first_turn_trade" in types(events) and "symbol_rolled" not in types(events)
    assert state.phase == "trade" and state.active == first and g.to_act(state) == [first]
    assert all(len(h) == 2 for h in state.hands)


def test_tiles_setup_draws_one_distinct_share_per_player():
    for n in (3, 6):
        state, events = start_game(g, {"edition": "tiles"}, n, seed_for(n))
        drawn = [e for e in events if e["type"] == "shares_drawn"][0]["shares"]
        assert len(set(drawn)) == n
        for seat, name in enumerate(drawn):
            assert sum(state.shares[seat]) == 1 and state.shares[seat][C[name]] == 1
            assert state.supply[C[name]] == n - 2
        assert state.phase == "trade" and state.active == state.start_player
        assert "action_tile_drawn" not in types(events)
        assert len(state.action_bag) == 6


# ---------------------------------------------------------------------------------------
# trade rounds

@pytest.mark.parametrize("version", [1, 2])
def test_trade_round_once_round_the_table_from_the_active_player(version):
    state = replace(dice_game(4, seed=5), active=2, trade_seat=2, trades_done=0, rules_version=version)
    number = state.number
    seen = []
    for _ in range(4):
        seat = g.to_act(state)[0]
        seen.append(seat)
        with pytest.raises(IllegalAction):
            g.decide(state, (seat + 1) % 4, {"type": "pass"}, Draws(seed_for(1)))
        state, events = act(state, seat, {"type": "pass"})
    assert seen == [2, 3, 0, 1]
    assert state.phase == "commit"
    if version == 1:                                # the number die is rolled after the trade
        assert types(events)[-1] == "number_rolled"
    else:                                           # version 2: rolled with the symbol die
        assert types(events) == ["trade_passed"] and 1 <= number <= 6 and state.number == number


def test_buy_and_sell_at_the_current_price():
    state = spread(dice_game(), start_at=3)                     # red last in 1-10: 15
    seat = state.trade_seat
    money = state.money[seat]
    state2, events = act(state, seat, {"type": "buy", "company": "red"})
    assert events[0] == {"type": "share_bought", "seat": seat, "company": "red", "price": 15}
    assert state2.money[seat] == money - 15
    assert state2.shares[seat][C["red"]] == state.shares[seat][C["red"]] + 1
    assert state2.supply[C["red"]] == state.supply[C["red"]] - 1
    # the next seat sells its share
    nxt = g.to_act(state2)[0]
    held = [c for c in range(8) if state2.shares[nxt][c]][0]
    before = state2.money[nxt]
    state3, _ = act(state2, nxt, {"type": "sell", "company": g.COMPANIES[held]})
    assert state3.money[nxt] == before + g.price(state2, held)


def test_cannot_buy_without_the_money_nor_from_an_empty_supply():
    state = place(spread(dice_game()), red=40)                  # red first in 31-40: 220
    seat = state.trade_seat
    with pytest.raises(IllegalAction) as err:
        g.decide(state, seat, {"type": "buy", "company": "red"}, Draws(seed_for(1)))
    assert err.value.field == "company"
    assert {"type": "buy", "company": "red"} not in g.legal_actions(state, seat)
    empty = replace(state, supply=rules._set(state.supply, C["yellow"], 0))
    with pytest.raises(IllegalAction):
        g.decide(empty, seat, {"type": "buy", "company": "yellow"}, Draws(seed_for(1)))
    assert {"type": "buy", "company": "yellow"} not in g.legal_actions(empty, seat)


def test_negative_price_buy_receives_and_sell_pays():
    state = spread(dice_game(), start_at=32)                    # red last on 32: -10
    seat = state.trade_seat
    money = state.money[seat]
    state2, events = act(state, seat, {"type": "buy", "company": "red"})
    assert events[0]["price"] == -10 and state2.money[seat] == money + 10
    t = g.transfers(state, events[0])
    assert any(x.asset == "money" and x.frm == "bank" and x.quantity == 10 for x in t)
    # selling at a negative price pays it, and needs the money
    seller = g.to_act(state2)[0]
    rich = replace(state2, shares=rules._add_share(state2.shares, seller, C["red"], 1),
                   supply=rules._set(state2.supply, C["red"], state2.supply[C["red"]] - 1))
    poor = replace(rich, money=rules._set(rich.money, seller, 9))
    assert {"type": "sell", "company": "red"} not in g.legal_actions(poor, seller)
    with pytest.raises(IllegalAction):
        g.decide(poor, seller, {"type": "sell", "company": "red"}, Draws(seed_for(1)))
    enough = replace(rich, money=rules._set(rich.money, seller, 10))
    state3, events = act(enough, seller, {"type": "sell", "company": "red"})
    assert events[0]["price"] == -10 and state3.money[seller] == 0


def test_cannot_sell_a_share_not_held():
    state = dice_game()
    seat = state.trade_seat
    name = next(n for c, n in enumerate(g.COMPANIES) if state.shares[seat][c] == 0)
    with pytest.raises(IllegalAction):
        g.decide(state, seat, {"type": "sell", "company": name}, Draws(seed_for(1)))


# ---------------------------------------------------------------------------------------
# +1 / -1

def rank_phase(state, direction, active=0):
    return replace(state, phase="rank_move", action=direction, active=active, trade_seat=-1)


def test_plus_one_worked_example_yellow_jumps_to_30_and_is_first():
    state = place(dice_game(), yellow=23, green=28, dark_blue=29)
    state = rank_phase(state, "+1")
    state2, events = act(state, 0, {"type": "rank_move", "company": "yellow"})
    assert events[0] == {"type": "rank_moved", "seat": 0, "company": "yellow", "direction": "+1",
                         "from": 23, "to": 30}
    assert state2.positions[C["yellow"]] == 30 and g.ranks(state2)[C["yellow"]] == 1
    assert state2.phase == "commit"                              # then the number die


def test_plus_one_not_allowed_for_first_place_nor_on_the_end():
    state = rank_phase(place(dice_game(), red=30, yellow=20), "+1")
    legal = g.legal_actions(state, 0)
    assert {"type": "rank_move", "company": "red"} not in legal
    assert {"type": "rank_move", "company": "yellow"} in legal
    with pytest.raises(IllegalAction) as err:
        g.decide(state, 0, {"type": "rank_move", "company": "red"}, Draws(seed_for(1)))
    assert err.value.field == "company"
    with pytest.raises(IllegalAction):                            # a company must be picked
        g.decide(state, 0, {"type": "pass"}, Draws(seed_for(1)))
    on_end = place(dice_game(), grey=61, red=30)
    assert g.plus_one_target(on_end, C["grey"]) is None
    assert g.plus_one_target(on_end, C["red"]) == 61            # only the END is ahead


def test_plus_one_from_the_start_lands_in_front_of_the_rearmost_marker():
    state = place(dice_game(), red=5, yellow=6, green=20)
    assert g.plus_one_target(state, C["grey"]) == 7
    state = rank_phase(state, "+1")
    state2, _ = act(state, 0, {"type": "rank_move", "company": "grey"})
    assert state2.positions[C["grey"]] == 7


def test_plus_one_past_the_last_space_reaches_the_end_in_arrival_order():
    state = place(dice_game(), grey=61, red=59, yellow=60)
    assert g.plus_one_target(state, C["red"]) == 61
    state2, events = act(rank_phase(state, "+1"), 0, {"type": "rank_move", "company": "red"})
    assert state2.arrivals == (C["grey"], C["red"])
    assert g.price(state2, C["red"]) == 320


def test_minus_one_moves_behind_the_next_marker_and_leapfrogs_back():
    state = place(dice_game(), red=30, yellow=20, green=19, grey=10)
    assert g.minus_one_target(state, C["red"]) == 18            # 19 is taken: 18
    state2, events = act(rank_phase(state, "-1"), 0, {"type": "rank_move", "company": "red"})
    assert events[0]["to"] == 18 and g.ranks(state2)[C["red"]] == 3


def test_minus_one_below_space_one_returns_to_the_start():
    state = place(dice_game(), red=1, yellow=2, green=30)
    assert g.minus_one_target(state, C["yellow"]) == 0
    assert g.minus_one_target(state, C["red"]) == 0             # only start markers behind


def test_minus_one_not_allowed_for_last_place_start_or_end():
    state = spread(dice_game(), start_at=10)                     # all on the track, red last
    assert g.minus_one_target(state, C["red"]) is None
    assert g.minus_one_target(state, C["yellow"]) == 9
    state = place(dice_game(), grey=61, red=30)
    assert g.minus_one_target(state, C["grey"]) is None
    assert g.minus_one_target(state, C["yellow"]) is None        # on the start
    legal = g.legal_actions(rank_phase(state, "-1"), 0)
    assert legal == [{"type": "rank_move", "company": "red"}]


@pytest.mark.parametrize("face_index,direction", [(3, "+1"), (4, "-1")])
def test_rank_move_skipped_when_no_company_may_move(face_index, direction):
    # version 2 (dice): both dice at the start of the turn, then the skip opens the commit
    state = replace(dice_game(), phase="next_turn", active=0, turn=1)
    em = Batch(state, g.evolve)
    rules.ACTIONS.run_automatic(em, Scripted(face_index, 2))                     # symbol, number 3
    assert types(em.events) == ["turn_started", "symbol_rolled", "number_rolled", "rank_move_skipped"]
    assert em.events[1]["face"] == direction and em.events[2]["number"] == 3
    assert em.state.phase == "commit" and em.state.number == 3


@pytest.mark.parametrize("face_index,direction", [(3, "+1"), (4, "-1")])
def test_version_1_rank_move_skipped_then_the_number_die(face_index, direction):
    state = replace(dice_game(), phase="next_turn", active=0, turn=1, rules_version=1)
    em = Batch(state, g.evolve)
    rules.ACTIONS.run_automatic(em, Scripted(face_index, 2))                     # symbol, then number 3
    assert types(em.events) == ["turn_started", "symbol_rolled", "rank_move_skipped", "number_rolled"]
    assert em.events[1]["face"] == direction and em.events[3]["number"] == 3
    assert em.state.phase == "commit"


def test_symbol_die_faces_and_first_turn():
    assert g.SYMBOL_FACES.count("H") == 3 and set(g.SYMBOL_FACES) == {"H", "+1", "-1", "blank"}
    state = replace(dice_game(), phase="next_turn", active=0, turn=1)
    em = Batch(state, g.evolve)
    rules.ACTIONS.run_automatic(em, Scripted(0, 4))                              # H: trade, number 5
    assert types(em.events) == ["turn_started", "symbol_rolled", "number_rolled"]
    assert em.state.phase == "trade" and em.state.trade_seat == 1 and em.state.number == 5
    em = Batch(state, g.evolve)
    rules.ACTIONS.run_automatic(em, Scripted(5, 0))                              # blank: straight to the cards
    assert types(em.events) == ["turn_started", "symbol_rolled", "number_rolled"]
    assert em.events[-1]["number"] == 1 and em.state.phase == "commit" and em.state.commits == (None,) * 3


def test_version_1_symbol_die_then_the_number_die_after_the_action():
    state = replace(dice_game(), phase="next_turn", active=0, turn=1, rules_version=1)
    em = Batch(state, g.evolve)
    rules.ACTIONS.run_automatic(em, Scripted(0))                                 # H: trade, no number yet
    assert types(em.events) == ["turn_started", "symbol_rolled"]
    assert em.state.phase == "trade" and em.state.trade_seat == 1 and em.state.number == 0
    assert g.view(em.state, 1)["number"] is None
    em = Batch(state, g.evolve)
    rules.ACTIONS.run_automatic(em, Scripted(5, 0))                              # blank: straight to the number
    assert types(em.events) == ["turn_started", "symbol_rolled", "number_rolled"]
    assert em.events[-1]["number"] == 1


def test_dice_number_is_public_from_the_start_of_the_turn_and_used_for_the_movement():
    state, events = start_game(g, {}, 3, seed_for(3))                # turn 1 of a dice game
    while state.phase == "setup":
        seat = g.to_act(state)[0]
        state, events = act(state, seat, g.legal_actions(state, seat)[0])
    assert types(events)[-2:] == ["first_turn_trade", "number_rolled"]   # symbol set to H, number rolled
    number = events[-1]["number"]
    assert state.phase == "trade" and state.number == number
    for viewer in (None, 0, 1, 2):                                   # public at once, while trading
        assert g.view(state, viewer)["number"] == number
    while state.phase == "trade":
        state, events = act(state, g.to_act(state)[0], {"type": "pass"})
    assert "number_rolled" not in types(events) and state.phase == "commit"
    hands = [state.hands[s][0] for s in range(3)]
    before = state
    state, events = play_all(state, hands)
    moved = [e for e in events if e["type"] == "marker_moved"]
    assert moved and all(e["steps"] == number for e in moved)
    assert g.view(before, 0)["number"] == number
    later = [e for e in events if e["type"] in ("symbol_rolled", "number_rolled")]
    assert types(later) == ["symbol_rolled", "number_rolled"]        # the next turn rolls both at once


def test_tiles_edition_still_draws_the_move_tile_at_step_two():
    state = tiles_game()
    assert state.phase == "trade" and state.number == 0 and g.view(state, 0)["number"] is None
    while state.phase == "trade":
        state, events = act(state, g.to_act(state)[0], {"type": "pass"})
    assert types(events)[-1] == "move_tile_drawn" and state.phase == "commit"


def test_plus_one_never_moves_a_start_marker_onto_the_end():
    # everything but red and yellow packed up to the last track space: a start marker's
    # target (in front of the rearmost marker off the start) would lie beyond space 60
    state = dice_game()
    state = place(state, green=55, dark_blue=56, light_blue=57, orange=58, brown=59, grey=60)
    assert g.plus_one_target(state, C["red"]) is None and g.plus_one_target(state, C["yellow"]) is None
    assert g.plus_one_target(state, C["green"]) == 61             # from the track it may still arrive
    legal = g.legal_actions(rank_phase(state, "+1"), 0)
    assert {"type": "rank_move", "company": "red"} not in legal
    with pytest.raises(IllegalAction) as err:
        g.decide(rank_phase(state, "+1"), 0, {"type": "rank_move", "company": "red"}, Draws(seed_for(1)))
    assert err.value.field == "company"
    assert g.plus_one_target(replace(state, rules_version=1), C["red"]) == 61   # version 1 allowed it
    # only END markers ahead of the start markers: nobody may move, the +1 is skipped
    only_end = place(dice_game(), grey=61)
    assert g.rank_move_candidates(only_end, "+1") == []
    em = Batch(replace(only_end, phase="next_turn", active=0, turn=1), g.evolve)
    rules.ACTIONS.run_automatic(em, Scripted(3, 0))
    assert types(em.events)[-1] == "rank_move_skipped"
    assert g.rank_move_candidates(replace(only_end, rules_version=1), "+1") != []


# ---------------------------------------------------------------------------------------
# movement

def test_worked_example_grey_blue_grey_moves_45_47_48_by_3():
    state = spread(dice_game(), skip=("grey", "dark-blue", "orange"))
    state = place(state, grey=45, dark_blue=47, orange=48)
    assert g.ranks(state)[C["grey"]] == 3
    state = commit_phase(state, 3, [["grey", "red"], ["dark-blue", "red"], ["grey", "yellow"]])
    state, events = play_all(state, ["grey", "dark-blue", "grey"])
    moves = [(e["company"], e["from"], e["to"]) for e in events if e["type"] == "marker_moved"]
    assert moves == [("grey", 45, 50), ("dark-blue", 47, 52), ("grey", 50, 54)]


def test_movement_starts_with_the_active_player():
    state = place(dice_game(), red=10, yellow=11)
    state = commit_phase(state, 1, [["red", "grey"], ["yellow", "grey"], ["red", "grey"]], active=1)
    _, events = play_all(state, ["red", "yellow", "red"])
    assert [e["seat"] for e in events if e["type"] == "marker_moved"] == [1, 2, 0]


def test_a_marker_reaching_the_end_stops_and_never_moves_again():
    state = place(dice_game(), red=59, yellow=60)
    state = commit_phase(state, 6, [["red", "grey"], ["red", "grey"], ["yellow", "grey"]])
    state, events = play_all(state, ["red", "red", "yellow"])
    moves = [(e["company"], e["from"], e["to"]) for e in events if e["type"] == "marker_moved"]
    assert moves == [("red", 59, 61), ("red", 61, 61), ("yellow", 60, 61)]
    assert state.arrivals == (C["red"], C["yellow"])


def test_moving_from_the_start_jumps_occupied_spaces():
    state = place(dice_game(), red=1, yellow=2, green=4)
    assert g.forward(state.positions, C["grey"], 3, state.end) == 6


@pytest.mark.parametrize("edition,n,holidays,expected", [
    ("dice", 3, 1, 0), ("dice", 6, 1, 0), ("dice", 5, 2, 0),
    ("tiles", 3, 1, 0), ("tiles", 4, 1, 0),
    ("tiles", 5, 1, 3), ("tiles", 6, 1, 3), ("tiles", 5, 2, 0), ("tiles", 6, 3, 0),
    ("tiles", 5, 0, 5),
])
def test_bank_holiday(edition, n, holidays, expected):
    state, _ = start_game(g, {"edition": edition}, n, seed_for(7))
    if edition == "dice":
        state = dice_game(n, seed=7)
    hands = [["holiday", "red"] if s < holidays else ["grey", "red"] for s in range(n)]
    state = commit_phase(state, 5, hands)
    state = place(state, grey=10)
    cards = ["holiday" if s < holidays else "grey" for s in range(n)]
    state2, events = play_all(state, cards)
    moves = [e for e in events if e["type"] == "marker_moved"]
    if expected == 0:
        assert not moves and {"type": "no_movement", "holidays": holidays} in events
        assert state2.positions[C["grey"]] == 10
    else:
        assert moves and all(e["steps"] == expected for e in moves)


def test_tiles_holiday_halves_rounding_up():
    state = commit_phase(tiles_game(5), 3, [["holiday", "red"]] + [["grey", "red"]] * 4)
    state = replace(state, revealed=("holiday", "grey", "grey", "grey", "grey"))
    assert rules._movement_steps(state) == (2, 1)


# ---------------------------------------------------------------------------------------
# secret simultaneous choice, decks and hands

def test_commit_is_secret_until_everybody_has_committed():
    state = commit_phase(dice_game(), 2, [["red", "grey"], ["yellow", "grey"], ["green", "holiday"]])
    state2, events = act(state, 1, {"type": "play", "card": "yellow"})
    assert events == [{"type": "card_committed", "seat": 1, "card": "yellow"}]
    for seat in (0, 2, None):
        assert g.redact(state, events[0], seat) == {"type": "card_committed", "seat": 1}
        v = g.view(state2, seat)
        other_choice = replace(state2, commits=(None, "grey", None))
        assert v == g.view(other_choice, seat) and v.get("committed_card") is None
        assert [s["committed"] for s in v["seats"]] == [False, True, False]
    assert g.redact(state, events[0], 1) == events[0]
    assert g.view(state2, 1)["committed_card"] == "yellow"
    assert g.to_act(state2) == [0, 2] and g.legal_actions(state2, 1) == []
    with pytest.raises(IllegalAction):
        g.decide(state2, 1, {"type": "play", "card": "grey"}, Draws(seed_for(1)))
    with pytest.raises(IllegalAction) as err:
        g.decide(state2, 0, {"type": "play", "card": "green"}, Draws(seed_for(1)))
    assert err.value.field == "card"
    state3, events = act(state2, 0, {"type": "play", "card": "red"})
    assert types(events) == ["card_committed"]
    state4, events = act(state3, 2, {"type": "play", "card": "holiday"})
    assert types(events)[:2] == ["card_committed", "cards_revealed"]
    assert events[1]["cards"] == ["red", "yellow", "holiday"]
    assert g.redact(state3, events[1], None) == events[1]           # the reveal is public


def test_hand_is_owner_only_and_deck_order_hidden_from_everyone():
    state, events = start_game(g, {"edition": "tiles"}, 4, seed_for(11))
    for e in events:
        if e["type"] == "deck_shuffled":
            for seat in (0, 1, 2, 3, None):
                r = g.redact(state, e, seat)
                assert "order" not in r and r == {"type": "deck_shuffled", "seat": e["seat"], "count": 9}
        if e["type"] == "cards_drawn":
            for seat in (0, 1, 2, 3, None):
                r = g.redact(state, e, seat)
                if seat == e["seat"]:
                    assert r["cards"] == e["cards"]
                else:
                    assert r == {"type": "cards_drawn", "seat": e["seat"], "count": 2}
    for seat in range(4):
        v = g.view(state, seat)
        assert v["hand"] == list(state.hands[seat])
        assert "hands" not in v and "decks" not in json.dumps(v)
        assert [s["hand_count"] for s in v["seats"]] == [2] * 4
        assert [s["deck_count"] for s in v["seats"]] == [7] * 4
    assert "hand" not in g.view(state, None)
    # ledger: drawn cards are visible to their owner only
    t = g.transfers(state, next(e for e in events if e["type"] == "cards_drawn"))
    assert all(x.visible_to == (int(x.to.split(":")[1]),) for x in t)
    assert all(x.redacted_asset == "card" for x in t)


def test_eighth_card_draws_nothing_ninth_reshuffles_and_draws_two():
    state = dice_game()
    deck = state.decks[0]
    # seat 0 has played 7 cards and drawn its whole deck: it holds the 8th and 9th cards
    played = deck[:7]
    state = replace(state, hands=rules._set(state.hands, 0, deck[7:]), drawn=rules._set(state.drawn, 0, 9),
                    discards=rules._set(state.discards, 0, played))
    other = [list(state.hands[1]), list(state.hands[2])]
    st = commit_phase(state, 1, [list(deck[7:])] + other)
    st, events = play_all(st, [deck[7], other[0][0], other[1][0]])
    assert not any(e["type"] == "cards_drawn" and e["seat"] == 0 for e in events)
    assert st.hands[0] == (deck[8],) and len(st.discards[0]) == 8
    assert g.view(st, 0)["seats"][0]["deck_count"] == 0
    # the one remaining card must be played
    st = replace(st, phase="commit", commits=(None,) * 3, number=1)
    assert g.legal_actions(st, 0) == [{"type": "play", "card": deck[8]}]
    st, events = play_all(st, [deck[8], st.hands[1][0], st.hands[2][0]])
    shuffles = [e for e in events if e["type"] == "deck_shuffled"]
    assert [e["seat"] for e in shuffles] == [0]
    assert sorted(shuffles[0]["order"]) == sorted(g.CARDS)
    i = events.index(shuffles[0])
    assert events[i + 1] == {"type": "cards_drawn", "seat": 0, "cards": shuffles[0]["order"][:2]}
    assert st.hands[0] == tuple(shuffles[0]["order"][:2]) and st.discards[0] == ()
    # the reshuffle moves the whole discard pile back into the deck in the ledger
    t = g.transfers(replace(st, decks=rules._set(st.decks, 0, deck)), shuffles[0])
    assert {(x.frm, x.to) for x in t} == {("discard:0", "deck:0")} and len(t) == 9


def test_reshuffle_is_a_seeded_random_outcome():
    a = g.start(g.new_state({"edition": "tiles", "board": "plain"}, 3), Draws(seed_for(1), "v0"))
    b = g.start(g.new_state({"edition": "tiles", "board": "plain"}, 3), Draws(seed_for(2), "v0"))
    orders = lambda evs: [e["order"] for e in evs if e["type"] == "deck_shuffled"]  # noqa: E731
    assert orders(a) != orders(b)
    assert orders(a) == orders(g.start(g.new_state({"edition": "tiles", "board": "plain"}, 3),
                                       Draws(seed_for(1), "v0")))


# ---------------------------------------------------------------------------------------
# tiles bags

def test_tiles_drawn_tiles_stay_out_until_a_trade_tile():
    state = replace(tiles_game(3), phase="next_turn", active=0, turn=1)
    em = Batch(state, g.evolve)
    rules.ACTIONS.run_automatic(em, Scripted(5, 0))                             # "none", move tile 1
    assert types(em.events) == ["turn_started", "action_tile_drawn", "move_tile_drawn"]
    assert em.events[1]["tile"] == "none" and em.events[2]["number"] == 1
    st = em.state
    assert st.action_bag == ("trade", "trade", "trade", "+1", "-1") and st.move_bag == (2, 3, 4, 5, 6)
    v = g.view(st, None)
    assert v["action_tiles_out"] == ["none"] and v["move_tiles_out"] == [1]
    # the movement resolves; the tiles stay out; the next turn draws a trade tile
    st, events = play_all(st, [st.hands[0][0], st.hands[1][0], st.hands[2][0]], Scripted(0))
    assert "tiles_returned" not in types(events)
    assert events[-1] == {"type": "action_tile_drawn", "tile": "trade"}
    assert st.action_bag == ("trade", "trade", "+1", "-1") and st.move_bag == (2, 3, 4, 5, 6)
    assert st.phase == "trade" and st.action == "trade"
    for _ in range(3):
        st, events = act(st, g.to_act(st)[0], {"type": "pass"}, Scripted(0))
    assert st.phase == "commit" and st.move_bag == (3, 4, 5, 6)
    # after the trade turn every tile goes back into its bag, before the next draw
    st, events = play_all(st, [st.hands[0][0], st.hands[1][0], st.hands[2][0]], Scripted(5, 5))
    assert "tiles_returned" in types(events)
    i = types(events).index("tiles_returned")
    assert types(events)[i + 1:] == ["turn_started", "action_tile_drawn", "move_tile_drawn"]
    assert st.action_bag == ("trade", "trade", "trade", "+1", "-1") and st.move_bag == (1, 2, 3, 4, 5)


def test_tiles_first_turn_counts_as_a_trade_tile():
    state = tiles_game(3, seed=4)
    assert state.action == "trade" and len(state.action_bag) == 6
    for _ in range(3):
        state, events = act(state, g.to_act(state)[0], {"type": "pass"})
    assert len(state.move_bag) == 5
    state, events = play_all(state, [h[0] for h in state.hands])
    assert "tiles_returned" in types(events)


# ---------------------------------------------------------------------------------------
# end of the game and scoring

def test_dice_game_ends_when_the_turn_with_an_arrival_is_complete():
    state = place(dice_game(), red=60)
    state = commit_phase(state, 2, [["red", "grey"], ["yellow", "grey"], ["green", "grey"]], active=1)
    state, events = play_all(state, ["red", "yellow", "green"])
    assert types(events)[-1] == "game_ended"
    assert types(events).count("cards_drawn") == 3               # the turn is completed first
    assert g.is_over(state) and g.to_act(state) == [] and g.legal_actions(state, 0) == []
    with pytest.raises(IllegalAction):
        g.decide(state, 0, {"type": "pass"}, Draws(seed_for(1)))


def test_tiles_game_completes_the_round():
    state = place(tiles_game(3, seed=2), red=59)
    last = (state.start_player - 1) % 3
    not_last = state.start_player
    st = commit_phase(state, 2, [["red", "grey"], ["yellow", "grey"], ["green", "grey"]], active=not_last)
    st = replace(st, action="none")
    st, events = play_all(st, ["red", "yellow", "green"], Scripted(5, 0))
    assert st.arrivals == (C["red"],) and not g.is_over(st)
    assert "game_ended" not in types(events)
    assert types(events)[-3:] == ["turn_started", "action_tile_drawn", "move_tile_drawn"]
    assert st.active == (not_last + 1) % 3
    st2 = commit_phase(st, 1, [list(h) for h in st.hands], active=last)
    st2, events = play_all(st2, [h[0] for h in st2.hands])
    assert g.is_over(st2)


def test_final_scoring_money_plus_shares_at_final_prices():
    state = dice_game()
    state = place(state, grey=61, red=61, yellow=50)
    state = replace(state, money=(10, 30, 0),
                    shares=(tuple(1 if c == C["grey"] else 0 for c in range(8)),
                            tuple(2 if c == C["red"] else 0 for c in range(8)),
                            tuple(1 if c == C["green"] else 0 for c in range(8))))
    assert g.scores(state) == [410, 670, 20]
    res = g.result(state)
    assert res == {"winners": [1], "ranks": [2, 1, 3], "scores": [410, 670, 20]}
    tie = replace(state, money=(270, 30, 0))
    assert g.result(tie)["winners"] == [0, 1] and g.result(tie)["ranks"] == [1, 1, 3]


def test_last_place_on_the_end_list_scores_negative():
    state = dice_game()
    pos = tuple([61] * 7 + [30])
    state = replace(state, positions=pos, arrivals=tuple(range(7)),
                    shares=(tuple([0] * 6 + [1, 0]),) + state.shares[1:], money=(0,) + state.money[1:])
    assert g.prices(state)[6] == -20 and g.scores(state)[0] == -20


# ---------------------------------------------------------------------------------------
# validation

def test_action_validation():
    state = dice_game()
    seat = state.trade_seat
    rng = Draws(seed_for(1))
    cases = [
        ({"type": "fly"}, "type"),
        ({}, "type"),
        ({"type": 3}, "type"),
        ({"type": "pass", "extra": 1}, "extra"),
        ({"type": "buy"}, "company"),
        ({"type": "buy", "company": True}, "company"),
        ({"type": "buy", "company": "purple"}, "company"),
        ({"type": "play", "card": "red"}, "type"),               # wrong phase
    ]
    for action, fld in cases:
        with pytest.raises(IllegalAction) as err:
            g.decide(state, seat, action, rng)
        assert err.value.field == fld, action
    with pytest.raises(IllegalAction) as err:
        g.decide(state, (seat + 1) % 3, {"type": "pass"}, rng)
    assert err.value.field == "seat"
    # bad seats and malformed actions, for every game: tests/test_conformance.py


# ---------------------------------------------------------------------------------------
# random playouts: invariants at every event

def expected_prices(state):
    """Prices recomputed from scratch: the table of each marker's section, at its rank."""
    sections, end_list = g.TABLES[state.board]
    track = sorted((p for p in state.positions if 0 < p < state.end), reverse=True)
    out = []
    for c, p in enumerate(state.positions):
        if p == 0:
            out.append(20)
        elif p >= state.end:
            out.append(end_list[state.arrivals.index(c)])
        else:
            rank = len(state.arrivals) + track.index(p) + 1
            out.append(sections[(p - 1) // 10][rank - 1])
    return out


def mask_secrets(state, seat):
    """The state with every secret another seat holds scrambled."""
    n = state.players
    hands = tuple(h if s == seat else tuple("red" for _ in h) for s, h in enumerate(state.hands))
    commits = tuple(c if s == seat or c is None else "grey" for s, c in enumerate(state.commits))
    decks = tuple(tuple(reversed(d)) for d in state.decks)
    assert len(hands) == n
    return replace(state, hands=hands, commits=commits, decks=decks)


class Checker:
    """Spekulation's invariants at every event: the ledger agrees with the money, shares,
    supply and hands; the markers and prices; secrets by what the state holds (a view is the
    same with every other seat's cards scrambled). JSON, well-formed transfers, redaction's
    type, views' JSON: every game's, tests/test_conformance.py. random_playout reports only
    decide's events, so the opening events (the same: start is deterministic) are replayed
    through it first."""

    def __init__(self, options, n, seed):
        self.balances = defaultdict(int)
        self.events = 0
        state = g.new_state(g.OptionsSchema().load(options), n)
        for event in g.start(state, opening_draws(seed)):
            after = g.evolve(state, event)
            self(state, event, after)
            state = after

    def __call__(self, before, event, after):
        self.events += 1
        for t in g.transfers(before, event):
            self.balances[(t.frm, t.asset)] -= t.quantity
            self.balances[(t.to, t.asset)] += t.quantity
        # the ledger agrees with the state
        for s in range(after.players):
            acct = f"seat:{s}"
            assert self.balances[(acct, "money")] == after.money[s]
            for c, name in enumerate(g.COMPANIES):
                assert self.balances[(acct, f"share:{name}")] == after.shares[s][c]
            assert sum(q for (a, asset), q in self.balances.items()
                       if a == acct and asset.startswith("card:")) == len(after.hands[s])
            assert len(after.hands[s]) <= 2
            assert after.money[s] >= 0
        if any(after.supply) or any(map(any, after.shares)):
            for c, name in enumerate(g.COMPANIES):
                assert self.balances[("supply", f"share:{name}")] == after.supply[c] >= 0
                assert after.supply[c] + sum(row[c] for row in after.shares) == after.players - 1
        # no two markers share a track space
        track = [p for p in after.positions if 0 < p < after.end]
        assert len(track) == len(set(track))
        assert all(0 <= p <= after.end for p in after.positions)
        assert list(after.arrivals) == sorted(after.arrivals, key=list(after.arrivals).index)
        assert {c for c, p in enumerate(after.positions) if p == after.end} == set(after.arrivals)
        assert g.prices(after) == expected_prices(after)
        # secrecy: redacted events and views show no other seat's secret
        for seat in list(range(before.players)) + [None]:
            r = g.redact(before, event, seat)
            if event["type"] == "deck_shuffled":
                assert "order" not in r
            if event["type"] in ("cards_drawn", "card_committed") and seat != event["seat"]:
                assert "cards" not in r and "card" not in r
        if not g.is_over(after) and self.events % 3 == 0:
            for seat in list(range(after.players)) + [None]:
                v = g.view(after, seat)
                assert v == g.view(mask_secrets(after, seat), seat)
                assert "hands" not in v


@pytest.mark.parametrize("options", ALL_OPTIONS, ids=lambda o: f"{o['edition']}-{o['board']}")
@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_random_playouts_keep_the_invariants(options, n):
    for k in range(3):
        seed = seed_for(1000 * n + k)
        checker = Checker(options, n, seed)
        state, actions = random_playout(g, options, n, seed, on_event=checker,
                                        max_actions=5000)
        assert g.is_over(state)
        assert state.arrivals
        res = g.result(state)
        assert res["scores"] == g.scores(state) == list(state.final_scores)
        assert max(res["scores"]) == res["scores"][res["winners"][0]]
        assert all(res["ranks"][w] == 1 for w in res["winners"])
        v = g.view(state, None)
        assert v["result"] == res and len(v["hands"]) == n


# ---------------------------------------------------------------------------------------
# the heuristic bot

def play_with_bots(seed, n, heuristic_seats, options=None):
    rng = random.Random(seed)
    state, _ = start_game(g, dict(options or {}), n, seed_for(seed))
    v = 0
    while not g.is_over(state):
        assert v < 5000
        seat = rng.choice(g.to_act(state))
        legal = g.legal_actions(state, seat)
        view = g.view(state, seat)
        if seat in heuristic_seats:
            action = bot.heuristic(view, legal, seat, rng)
            assert action in legal, (action, legal)
        else:
            action = random_choose(view, legal, seat, rng)
        v += 1
        for e in g.decide(state, seat, action, Draws(seed_for(seed), f"v{v}")):
            state = g.evolve(state, e)
    return g.result(state)


@pytest.mark.parametrize("options", ALL_OPTIONS, ids=lambda o: f"{o['edition']}-{o['board']}")
def test_heuristic_only_plays_legal_actions(options):
    for n in (3, 6):
        play_with_bots(n, n, set(range(n)), options)


def test_heuristic_beats_random_bots():
    games, wins = 120, 0
    for k in range(games):
        if k % 4 in play_with_bots(500 + k, 4, {k % 4})["winners"]:
            wins += 1
    # fair share is 25%; measured about 70%
    assert wins / games > 0.45, wins / games
