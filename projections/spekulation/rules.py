"""Spekulation's rules: options, state, evolve (one function per event), decide (one
function per action, in one `kernel.Actions` table), legal actions and the result.
The board (tracks, prices, marker moves) is in `board.py`, the views in `view.py`, the
ledger in `ledger.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Optional

from marshmallow import RAISE, Schema, fields, validate

from projections.game import IllegalAction, check_rules_version, replace, rules_version_field
from projections.kernel import Action, Actions, Batch, Choice, evolver

from .board import (ACTION_PHASE, ACTION_TILES, BOARDS, CARDS, COMPANIES, COMPANY_INDEX, DECK_SIZE,
                    EDITIONS, END_SPACE, FACE_ACTION, HAND_SIZE, HOLIDAY, MOVE_TILES, N_COMPANIES,
                    START, START_MONEY, SYMBOL_FACES, forward, price, prices, rank_move_candidates,
                    rank_move_target)

NAME = "spekulation"
# 2: the dice edition rolls both dice together at the start of the turn (the number is public
# while trading and during +1/-1); +1 never moves a marker from the start onto the END.
RULES_VERSION = 2
RULES_VERSIONS = (1, 2)
MIN_PLAYERS = 3
MAX_PLAYERS = 6
HIDDEN_INFORMATION = True


# ---------------------------------------------------------------------------------------
# Options

class OptionsSchema(Schema):
    class Meta:
        unknown = RAISE

    edition = fields.String(load_default="dice", validate=validate.OneOf(EDITIONS))
    board = fields.String(load_default="plain", validate=validate.OneOf(BOARDS))


# ---------------------------------------------------------------------------------------
# State

@dataclass(frozen=True)
class State:
    edition: str
    board: str
    players: int
    end: int                               # the END space (61 dice, 60 tiles)
    phase: str = "new"                     # new setup deal next_turn action trade rank_move
    #                                        movement commit resolve over
    start_player: int = -1
    active: int = -1
    turn: int = 0                          # turns started so far (1 = the first turn)
    chooser: int = -1                      # dice setup: who chooses a share now
    chosen: int = 0                        # dice setup: shares chosen so far
    positions: tuple = (START,) * N_COMPANIES
    arrivals: tuple = ()                   # company indices on the END, by arrival order
    money: tuple = ()
    shares: tuple = ()                     # per seat: tuple of 8 counts
    supply: tuple = (0,) * N_COMPANIES
    decks: tuple = ()                      # per seat: the 9 cards in deck order (secret)
    drawn: tuple = ()                      # per seat: cards drawn from the deck since its shuffle
    hands: tuple = ()                      # per seat: hand cards (owner only)
    discards: tuple = ()                   # per seat: played cards since the shuffle (public)
    action: Optional[str] = None           # this turn's action: trade +1 -1 none
    trade_seat: int = -1
    trades_done: int = 0
    number: int = 0                        # this turn's distance
    commits: tuple = ()                    # per seat: committed card or None (secret)
    revealed: Optional[tuple] = None       # the last revealed cards, per seat
    action_bag: tuple = ACTION_TILES       # tiles edition: tiles still in the bags
    move_bag: tuple = MOVE_TILES
    final_scores: Optional[tuple] = None
    rules_version: int = rules_version_field(RULES_VERSION)


def new_state(options: dict, seats: int, rules_version: int = RULES_VERSION) -> State:
    if not MIN_PLAYERS <= seats <= MAX_PLAYERS:
        raise ValueError(f"spekulation needs {MIN_PLAYERS}-{MAX_PLAYERS} players")
    edition = options.get("edition", "dice")
    board = options.get("board", "plain")
    if edition not in EDITIONS or board not in BOARDS:
        raise ValueError("bad spekulation options")
    n = seats
    return State(
        edition=edition, board=board, players=n, end=END_SPACE[edition],
        rules_version=check_rules_version(rules_version, RULES_VERSIONS, NAME),
        money=(0,) * n, shares=((0,) * N_COMPANIES,) * n,
        decks=((),) * n, drawn=(0,) * n, hands=((),) * n, discards=((),) * n,
        commits=(None,) * n,
    )


def is_over(state: State) -> bool:
    return state.phase == "over"


def to_act(state: State) -> list[int]:
    phase = state.phase
    if phase == "setup":
        return [state.chooser] if state.edition == "dice" and state.chooser >= 0 else []
    if phase == "trade":
        return [state.trade_seat]
    if phase == "rank_move":
        return [state.active]
    if phase == "commit":
        return [s for s, card in enumerate(state.commits) if card is None]
    return []


# ---------------------------------------------------------------------------------------
# Small helpers

def _set(tup: tuple, i: int, value) -> tuple:
    return tup[:i] + (value,) + tup[i + 1:]


def _add_share(shares: tuple, seat: int, company: int, delta: int) -> tuple:
    row = shares[seat]
    return _set(shares, seat, _set(row, company, row[company] + delta))


def _seat_order(state: State, first: int) -> list[int]:
    n = state.players
    return [(first + i) % n for i in range(n)]


def dice_rolled_together(state: State) -> bool:
    """Version 2, dice edition: both dice are rolled at the start of the turn."""
    return state.rules_version >= 2 and state.edition == "dice"


def _to_movement(state: State, **changes) -> State:
    """Step 2 begins. With the number already rolled (version 2, dice) the commit opens at
    once; otherwise the number die is rolled or the move tile drawn first (phase movement)."""
    if dice_rolled_together(state) and state.number:
        return replace(state, phase="commit", commits=(None,) * state.players, **changes)
    return replace(state, phase="movement", **changes)


def _phase_for_action(state: State, action: str) -> State:
    phase = ACTION_PHASE[action]
    if phase == "trade":
        return replace(state, action=action, phase="trade", trade_seat=state.active, trades_done=0)
    if phase == "movement":
        return _to_movement(state, action=action)
    return replace(state, action=action, phase=phase)


# ---------------------------------------------------------------------------------------
# Evolve: one small function per event type

def _ev_start_player_drawn(s: State, e: dict) -> State:
    seat = e["seat"]
    if s.edition == "dice":
        return replace(s, start_player=seat, phase="setup", chooser=seat, chosen=0)
    return replace(s, start_player=seat, phase="setup")


def _ev_supply_filled(s: State, e: dict) -> State:
    return replace(s, supply=(e["count"],) * N_COMPANIES)


def _ev_money_dealt(s: State, e: dict) -> State:
    return replace(s, money=(e["amount"],) * s.players)


def _ev_shares_drawn(s: State, e: dict) -> State:
    shares, supply = s.shares, s.supply
    for seat, name in enumerate(e["shares"]):
        c = COMPANY_INDEX[name]
        shares = _add_share(shares, seat, c, 1)
        supply = _set(supply, c, supply[c] - 1)
    return replace(s, shares=shares, supply=supply, phase="deal")


def _ev_share_chosen(s: State, e: dict) -> State:
    seat, c = e["seat"], COMPANY_INDEX[e["company"]]
    chosen = s.chosen + 1
    s = replace(s, shares=_add_share(s.shares, seat, c, 1), supply=_set(s.supply, c, s.supply[c] - 1),
                chosen=chosen)
    if chosen >= s.players:
        return replace(s, chooser=-1, phase="deal")
    return replace(s, chooser=(seat + 1) % s.players)


def _ev_deck_shuffled(s: State, e: dict) -> State:
    seat = e["seat"]
    return replace(s, decks=_set(s.decks, seat, tuple(e["order"])), drawn=_set(s.drawn, seat, 0),
                   discards=_set(s.discards, seat, ()))


def _ev_cards_drawn(s: State, e: dict) -> State:
    seat, cards = e["seat"], tuple(e["cards"])
    s = replace(s, hands=_set(s.hands, seat, s.hands[seat] + cards),
                drawn=_set(s.drawn, seat, s.drawn[seat] + len(cards)))
    if s.phase == "deal" and all(len(h) == HAND_SIZE for h in s.hands):
        s = replace(s, phase="next_turn")
    return s


def _ev_turn_started(s: State, e: dict) -> State:
    return replace(s, active=e["seat"], turn=e["turn"], phase="action", action=None, number=0,
                   trade_seat=-1, trades_done=0)


def _ev_first_turn_trade(s: State, e: dict) -> State:
    return _phase_for_action(s, "trade")


def _ev_symbol_rolled(s: State, e: dict) -> State:
    return _phase_for_action(s, FACE_ACTION[e["face"]])


def _ev_action_tile_drawn(s: State, e: dict) -> State:
    bag = list(s.action_bag)
    bag.remove(e["tile"])
    return _phase_for_action(replace(s, action_bag=tuple(bag)), e["tile"])


def _after_trade(s: State) -> State:
    done = s.trades_done + 1
    if done >= s.players:
        return _to_movement(s, trades_done=done, trade_seat=-1)
    return replace(s, trades_done=done, trade_seat=(s.trade_seat + 1) % s.players)


def _ev_share_bought(s: State, e: dict) -> State:
    seat, c, p = e["seat"], COMPANY_INDEX[e["company"]], e["price"]
    s = replace(s, money=_set(s.money, seat, s.money[seat] - p),
                shares=_add_share(s.shares, seat, c, 1), supply=_set(s.supply, c, s.supply[c] - 1))
    return _after_trade(s)


def _ev_share_sold(s: State, e: dict) -> State:
    seat, c, p = e["seat"], COMPANY_INDEX[e["company"]], e["price"]
    s = replace(s, money=_set(s.money, seat, s.money[seat] + p),
                shares=_add_share(s.shares, seat, c, -1), supply=_set(s.supply, c, s.supply[c] + 1))
    return _after_trade(s)


def _ev_trade_passed(s: State, e: dict) -> State:
    return _after_trade(s)


def _place(s: State, c: int, frm: int, to: int) -> State:
    arrivals = s.arrivals
    if to >= s.end and frm < s.end:
        arrivals = arrivals + (c,)
    return replace(s, positions=_set(s.positions, c, to), arrivals=arrivals)


def _ev_rank_moved(s: State, e: dict) -> State:
    return _to_movement(_place(s, COMPANY_INDEX[e["company"]], e["from"], e["to"]))


def _ev_rank_move_skipped(s: State, e: dict) -> State:
    return _to_movement(s)


def _ev_number(s: State, e: dict) -> State:
    if dice_rolled_together(s) and s.phase != "movement":
        return replace(s, number=e["number"])        # rolled with the symbol die: step 1 goes on
    return replace(s, number=e["number"], phase="commit", commits=(None,) * s.players)


def _ev_move_tile_drawn(s: State, e: dict) -> State:
    bag = list(s.move_bag)
    bag.remove(e["number"])
    return _ev_number(replace(s, move_bag=tuple(bag)), e)


def _ev_card_committed(s: State, e: dict) -> State:
    return replace(s, commits=_set(s.commits, e["seat"], e["card"]))


def _ev_cards_revealed(s: State, e: dict) -> State:
    hands, discards = list(s.hands), list(s.discards)
    for seat, card in enumerate(e["cards"]):
        hand = list(hands[seat])
        hand.remove(card)
        hands[seat] = tuple(hand)
        discards[seat] = discards[seat] + (card,)
    return replace(s, hands=tuple(hands), discards=tuple(discards), revealed=tuple(e["cards"]),
                   commits=(None,) * s.players, phase="resolve")


def _ev_marker_moved(s: State, e: dict) -> State:
    return _place(s, COMPANY_INDEX[e["company"]], e["from"], e["to"])


def _ev_no_movement(s: State, e: dict) -> State:
    return s


def _ev_tiles_returned(s: State, e: dict) -> State:
    return replace(s, action_bag=ACTION_TILES, move_bag=MOVE_TILES)


def _ev_game_ended(s: State, e: dict) -> State:
    return replace(s, phase="over", final_scores=tuple(e["scores"]), trade_seat=-1)


evolve = evolver({
    "start_player_drawn": _ev_start_player_drawn,
    "supply_filled": _ev_supply_filled,
    "money_dealt": _ev_money_dealt,
    "shares_drawn": _ev_shares_drawn,
    "share_chosen": _ev_share_chosen,
    "deck_shuffled": _ev_deck_shuffled,
    "cards_drawn": _ev_cards_drawn,
    "turn_started": _ev_turn_started,
    "first_turn_trade": _ev_first_turn_trade,
    "symbol_rolled": _ev_symbol_rolled,
    "action_tile_drawn": _ev_action_tile_drawn,
    "share_bought": _ev_share_bought,
    "share_sold": _ev_share_sold,
    "trade_passed": _ev_trade_passed,
    "rank_moved": _ev_rank_moved,
    "rank_move_skipped": _ev_rank_move_skipped,
    "number_rolled": _ev_number,
    "move_tile_drawn": _ev_move_tile_drawn,
    "card_committed": _ev_card_committed,
    "cards_revealed": _ev_cards_revealed,
    "marker_moved": _ev_marker_moved,
    "no_movement": _ev_no_movement,
    "tiles_returned": _ev_tiles_returned,
    "game_ended": _ev_game_ended,
})


# ---------------------------------------------------------------------------------------
# Start and the automatic steps (the kernel runs them until a seat must act)

def _set_up(batch: Batch, rng) -> None:
    state = batch.state
    n = state.players
    batch.emit({"type": "start_player_drawn", "seat": rng.below("start_player", n)})
    batch.emit({"type": "supply_filled", "count": n - 1})
    batch.emit({"type": "money_dealt", "amount": START_MONEY})
    if state.edition == "tiles":
        drawn = rng.shuffle("share_bag", list(COMPANIES))[:n]
        batch.emit({"type": "shares_drawn", "shares": drawn})


def start(state: State, rng) -> list[dict]:
    return ACTIONS.start(state, rng, _set_up)


def _draw_cards(batch: Batch, seat: int, count: int) -> None:
    s = batch.state
    cards = list(s.decks[seat][s.drawn[seat]:s.drawn[seat] + count])
    batch.emit({"type": "cards_drawn", "seat": seat, "cards": cards})


def _shuffle_deck(batch: Batch, rng, seat: int) -> None:
    order = rng.shuffle(f"deck:{seat}:turn{batch.state.turn}", list(CARDS))
    batch.emit({"type": "deck_shuffled", "seat": seat, "order": order})
    _draw_cards(batch, seat, HAND_SIZE)


def _movement_steps(state: State) -> tuple[int, int]:
    """(steps every played company moves, number of holiday cards)."""
    holidays = sum(1 for card in state.revealed if card == HOLIDAY)
    if holidays == 0:
        return state.number, 0
    if state.edition == "tiles" and state.players >= 5 and holidays == 1:
        return (state.number + 1) // 2, holidays
    return 0, holidays


def _game_ends_now(state: State) -> bool:
    if not state.arrivals:
        return False
    if state.edition == "dice":
        return True
    return state.active == (state.start_player - 1) % state.players


def _resolve(batch: Batch, rng) -> None:
    s = batch.state
    order = _seat_order(s, s.active)
    steps, holidays = _movement_steps(s)
    if steps == 0:
        batch.emit({"type": "no_movement", "holidays": holidays})
    else:
        for seat in order:
            card = s.revealed[seat]
            if card == HOLIDAY:
                continue
            c = COMPANY_INDEX[card]
            cur = batch.state
            frm = cur.positions[c]
            to = forward(cur.positions, c, steps, cur.end)
            batch.emit({"type": "marker_moved", "seat": seat, "company": card, "steps": steps,
                "from": frm, "to": to})
    for seat in order:
        played = len(batch.state.discards[seat])
        if played >= DECK_SIZE:
            _shuffle_deck(batch, rng, seat)
        elif played < DECK_SIZE - 1:
            _draw_cards(batch, seat, 1)
    s = batch.state
    if s.edition == "tiles" and s.action == "trade":
        batch.emit({"type": "tiles_returned"})
    if _game_ends_now(batch.state):
        final = batch.state
        batch.emit({"type": "game_ended", "scores": scores(final),
            "prices": dict(zip(COMPANIES, prices(final))),
            "arrivals": [COMPANIES[c] for c in final.arrivals]})
    else:
        _start_turn(batch)


def _start_turn(batch: Batch, rng=None) -> None:
    s = batch.state
    seat = s.start_player if s.turn == 0 else (s.active + 1) % s.players
    batch.emit({"type": "turn_started", "seat": seat, "turn": s.turn + 1})


def _deal_hands(batch: Batch, rng) -> None:
    for seat in range(batch.state.players):
        _shuffle_deck(batch, rng, seat)


def _draw_action(batch: Batch, rng) -> None:
    """Step 1 of a turn: the action (and, version 2 dice, the number rolled with it)."""
    s = batch.state
    if s.turn == 1:
        batch.emit({"type": "first_turn_trade"})
    elif s.edition == "dice":
        batch.emit({"type": "symbol_rolled", "face": SYMBOL_FACES[rng.below(f"symbol:{s.turn}", 6)]})
    else:
        bag = s.action_bag
        batch.emit({"type": "action_tile_drawn", "tile": bag[rng.below(f"action_tile:{s.turn}", len(bag))]})
    if dice_rolled_together(s):     # both dice together (on turn 1 the symbol is set to H)
        batch.emit({"type": "number_rolled", "number": rng.randint(f"number:{s.turn}", 1, 6)})


def _skip_rank_move(batch: Batch, rng) -> None:
    batch.emit({"type": "rank_move_skipped", "direction": batch.state.action})


def _draw_number(batch: Batch, rng) -> None:
    s = batch.state
    if s.edition == "dice":
        batch.emit({"type": "number_rolled", "number": rng.randint(f"number:{s.turn}", 1, 6)})
    else:
        bag = s.move_bag
        batch.emit({"type": "move_tile_drawn", "number": bag[rng.below(f"move_tile:{s.turn}", len(bag))]})


def _reveal_cards(batch: Batch, rng) -> None:
    batch.emit({"type": "cards_revealed", "cards": list(batch.state.commits)})


_STEP_OF_PHASE = {"deal": _deal_hands, "next_turn": _start_turn, "action": _draw_action,
                  "movement": _draw_number, "resolve": _resolve}


def _automatic_step(s: State):
    """The step due in this state (None: some seat must act, or the game is over). A rank move
    no company can make is skipped; the cards are revealed once every seat has committed."""
    phase = s.phase
    if phase == "rank_move":
        return None if rank_move_candidates(s, s.action) else _skip_rank_move
    if phase == "commit":
        return _reveal_cards if None not in s.commits else None
    return _STEP_OF_PHASE.get(phase)


# ---------------------------------------------------------------------------------------
# Decide: one function per action; the generic checks (shape, game over, turn, phase) are
# the kernel's, the automatic steps after an action too. What depends on the state is
# decided once, by a `_..._refusal` (None: allowed, else why not) that the decider raises
# and the legal actions filter by.

def _choice_refusal(state: State, c: int) -> Optional[str]:
    if any(state.shares[s][c] for s in range(state.players)):
        return f"somebody already has a {COMPANIES[c]} share: choose another company"
    return None


def _buy_refusal(state: State, seat: int, c: int, p: int) -> Optional[str]:
    """Why `seat` may not buy company c at price p now (None: it may)."""
    if state.supply[c] <= 0:
        return f"no {COMPANIES[c]} share left in the supply"
    if p > state.money[seat]:
        return f"a {COMPANIES[c]} share costs {p}, you have {state.money[seat]}"
    return None


def _sell_refusal(state: State, seat: int, c: int, p: int) -> Optional[str]:
    """Why `seat` may not sell company c at price p now (None: it may; a negative price costs)."""
    if state.shares[seat][c] <= 0:
        return f"you hold no {COMPANIES[c]} share"
    if -p > state.money[seat]:
        return f"selling {COMPANIES[c]} at {p} costs {-p}, you have {state.money[seat]}"
    return None


def _refuse(reason: Optional[str], field: str) -> None:
    if reason is not None:
        raise IllegalAction(reason, field=field)


def _choose_share(batch: Batch, seat: int, action: dict, rng) -> None:
    name = action["company"]
    _refuse(_choice_refusal(batch.state, COMPANY_INDEX[name]), "company")
    batch.emit({"type": "share_chosen", "seat": seat, "company": name})


def _buy(batch: Batch, seat: int, action: dict, rng) -> None:
    state, name = batch.state, action["company"]
    c = COMPANY_INDEX[name]
    p = price(state, c)
    _refuse(_buy_refusal(state, seat, c, p), "company")
    batch.emit({"type": "share_bought", "seat": seat, "company": name, "price": p})


def _sell(batch: Batch, seat: int, action: dict, rng) -> None:
    state, name = batch.state, action["company"]
    c = COMPANY_INDEX[name]
    p = price(state, c)
    _refuse(_sell_refusal(state, seat, c, p), "company")
    batch.emit({"type": "share_sold", "seat": seat, "company": name, "price": p})


def _pass(batch: Batch, seat: int, action: dict, rng) -> None:
    batch.emit({"type": "trade_passed", "seat": seat})


def _rank_move(batch: Batch, seat: int, action: dict, rng) -> None:
    state, name = batch.state, action["company"]
    c = COMPANY_INDEX[name]
    target = rank_move_target(state, c, state.action)     # rank_move_candidates reads the same
    if target is None:
        raise IllegalAction(f"{name} may not move {state.action} rank now", field="company")
    batch.emit({"type": "rank_moved", "seat": seat, "company": name, "direction": state.action,
                "from": state.positions[c], "to": target})


def _play(batch: Batch, seat: int, action: dict, rng) -> None:
    card = action["card"]
    if card not in batch.state.hands[seat]:
        raise IllegalAction(f"card {card!r} is not in your hand", field="card")
    batch.emit({"type": "card_committed", "seat": seat, "card": card})


def _legal(state: State, seat: int) -> list[dict]:
    """What a seat to act may do (the kernel's guard has checked that it is to act)."""
    phase = state.phase
    if phase == "setup":
        return [{"type": "choose_share", "company": name} for c, name in enumerate(COMPANIES)
                if _choice_refusal(state, c) is None]
    if phase == "trade":
        pr = prices(state)
        out = [{"type": "pass"}]
        out += [{"type": "buy", "company": name} for c, name in enumerate(COMPANIES)
                if _buy_refusal(state, seat, c, pr[c]) is None]
        out += [{"type": "sell", "company": name} for c, name in enumerate(COMPANIES)
                if _sell_refusal(state, seat, c, pr[c]) is None]
        return out
    if phase == "rank_move":
        return [{"type": "rank_move", "company": COMPANIES[c]}
                for c in rank_move_candidates(state, state.action)]
    if phase == "commit":
        return [{"type": "play", "card": card} for card in dict.fromkeys(state.hands[seat])]
    return []


_COMPANY = {"company": Choice(COMPANIES)}

ACTIONS = Actions(NAME, [
    Action("choose_share", _choose_share, _COMPANY, frozenset({"setup"}), schema_name="ChooseShareSchema"),
    Action("buy", _buy, _COMPANY, frozenset({"trade"}), schema_name="BuySchema"),
    Action("sell", _sell, _COMPANY, frozenset({"trade"}), schema_name="SellSchema"),
    Action("pass", _pass, {}, frozenset({"trade"}), schema_name="PassSchema"),
    Action("rank_move", _rank_move, _COMPANY, frozenset({"rank_move"}), schema_name="RankMoveSchema"),
    Action("play", _play, {"card": Choice(CARDS)}, frozenset({"commit"}), schema_name="PlaySchema"),
], players=attrgetter("players"), to_act=to_act, is_over=is_over, phase=attrgetter("phase"), evolve=evolve,
   legal=_legal, automatic=_automatic_step)

decide = ACTIONS.decide
ACTION_SCHEMAS = ACTIONS.schemas
legal_actions = ACTIONS.legal_actions


# ---------------------------------------------------------------------------------------
# The result

def scores(state: State) -> list[int]:
    pr = prices(state)
    return [state.money[s] + sum(k * pr[c] for c, k in enumerate(state.shares[s]))
            for s in range(state.players)]


def result(state: State) -> dict:
    sc = list(state.final_scores) if state.final_scores is not None else scores(state)
    best = max(sc)
    return {
        "winners": [s for s, v in enumerate(sc) if v == best],
        "ranks": [1 + sum(1 for w in sc if w > v) for v in sc],
        "scores": sc,
    }
