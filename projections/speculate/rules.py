"""Speculate's rules: the options, the opening, one decider per action type and the automatic
steps between actions, declared in one action table (its fields, the phases it is legal in,
the legal actions, the step due in each state).

Flow of a turn (phases a seat acts in: event1, trade, respond, event2, pay):
  turn_started, fee_paid | fee_deferred
  event1:  play_event -> event_played, price_moved | dividends_paid, [deck_reshuffled], card_drawn
  trade:   buy | sell -> announced, then each other player in turn (respond phase) ...
           -> traded | passed, ..., the bank's traded, announcement_closed
           end_trading -> trading_ended, [late_fee_paid | bankrupt]
  event2:  play_event -> ... then the objective check: [objective_met, reward_paid...
           (share_payment_due -> pay phase: give_shares -> payment_chosen ...), objective_dealt]
  then the next turn_started, or game_ended.

The kernel checks an action's shape (by the fields declared here), that the game is not
over, that the seat is to act and that the phase allows the action; a decider checks only
what depends on the state, and emits into a `kernel.Batch` that folds as it goes. After the
opening and after every action the kernel runs the automatic steps (the first turn, the bank's
fill, the objective check, one reward at a time, the next turn) until a seat must act.
"""

from __future__ import annotations

from itertools import combinations
from typing import Optional

from marshmallow import RAISE, Schema, fields, validate

from projections.game import IllegalAction
from projections.kernel import Action, Actions, Batch, Choice, Int

from .data import (BANK_MARKUP, BANK_SHARES_PER_PLAYER, CARDS, DIVIDEND_DIVISOR, EVENT_CARDS_TUPLE, FEE,
                   FIRST_TURN_TYPES, HAND_SIZE, LATE_FEE, LEVELS, MAX_ANNOUNCEMENTS, NAME, NT, PLAYER_MONEY,
                   PLAYER_SHARES, PRICE_MAX, PRICE_MIN, REWARD_EACH, REWARD_SHARES_VALUE, SHARE_INDEX, SHARES,
                   START_PRICE, economy, objective_id, parse_objective, shares_json)
from .fold import evolve
from .payment import payment_plan
from .state import (State, bank_fill, buy_limit, capacity, is_over, objective_met, seats_from, sell_fillable,
                    to_act, type_allowed, value)


class OptionsSchema(Schema):
    class Meta:
        unknown = RAISE

    # None: by player count and rules version (data: `rounds_by_players`, `rules_versions`).
    rounds = fields.Integer(strict=True, allow_none=True, load_default=None,
                            validate=validate.Range(min=1, max=50))


# --- the opening -------------------------------------------------------------------------------

def _build_objective_decks(rng, targets: dict[int, tuple[int, ...]]) -> list[list[str]]:
    decks = []
    for level in range(1, LEVELS + 1):
        cards = []
        for i, combo in enumerate(combinations(range(NT), len(targets[level]))):
            order = rng.shuffle(f"objective_targets/{level}/{i}", list(targets[level]))
            cards.append(objective_id(level, dict(zip(combo, order))))
        decks.append(rng.shuffle(f"objective_deck/{level}", cards))
    return decks


def _set_up(b: Batch, rng) -> None:
    state = b.state
    n = state.players
    eco = economy(n, state.rules_version)
    deck = rng.shuffle("event_deck", list(EVENT_CARDS_TUPLE))
    start_player = rng.below("start_player", n)
    b.emit({"type": "game_started", "players": n, "rounds": state.rounds, "start_player": start_player,
            "setup": {"start_price": START_PRICE, "player_money": PLAYER_MONEY, "player_shares": PLAYER_SHARES,
                      "bank_money": eco.bank_money_per_player * n, "bank_shares": BANK_SHARES_PER_PLAYER * n},
            "event_deck": deck, "objective_decks": _build_objective_decks(rng, eco.targets)})
    for seat in range(n):
        b.emit({"type": "cards_dealt", "seat": seat, "cards": list(b.state.event_deck[:HAND_SIZE])})
    for seat in range(n):
        b.emit({"type": "objective_dealt", "seat": seat, "level": 1, "objective": b.state.objective_decks[0][0]})


def start(state: State, rng) -> list[dict]:
    return ACTIONS.start(state, rng, _set_up)        # then the first turn, an automatic step


# --- turns (automatic steps: the kernel runs them until a seat must act) ----------------------

def _begin_turn(b: Batch, seat: int, round_no: int) -> None:
    s = b.state
    b.emit({"type": "turn_started", "seat": seat, "round": round_no, "first_turn": s.turns[seat] == 0})
    if b.state.money[seat] >= FEE:
        b.emit({"type": "fee_paid", "seat": seat, "amount": FEE})
    else:
        b.emit({"type": "fee_deferred", "seat": seat, "due": LATE_FEE})


def _first_turn(b: Batch, rng) -> None:
    _begin_turn(b, b.state.start_player, 1)


def _next_turn(b: Batch, rng=None) -> None:
    s = b.state
    if sum(s.alive) <= 1:
        b.emit({"type": "game_ended", "reason": "last_player"})
        return
    q, round_no = s.active, s.round
    while True:
        q = (q + 1) % s.players
        if q == s.start_player:
            round_no += 1
        if s.alive[q]:
            break
    if round_no > s.rounds:
        b.emit({"type": "game_ended", "reason": "rounds"})
    else:
        _begin_turn(b, q, round_no)


# --- event cards -------------------------------------------------------------------------------

def _draw(b: Batch, seat: int, rng) -> None:
    s = b.state
    if not s.event_deck:
        if not s.discard:
            return
        b.emit({"type": "deck_reshuffled", "order": rng.shuffle("reshuffle", sorted(s.discard))})
    b.emit({"type": "card_drawn", "seat": seat, "card": b.state.event_deck[0]})


def _pay_dividends(b: Batch, share: int) -> None:
    s = b.state
    per_share = s.prices[share] // DIVIDEND_DIVISOR
    bank = s.bank_money
    payments = []
    for q in seats_from(s.active, s.players):
        held = s.shares[q][share]
        if s.alive[q] and held:
            due = held * per_share
            amount = min(due, bank)
            bank -= amount
            payments.append({"seat": q, "amount": amount, "due": due})
    b.emit({"type": "dividends_paid", "share": SHARES[share], "per_share": per_share, "payments": payments})


def _play_event(b: Batch, seat: int, action: dict, rng) -> None:
    card = action["card"]
    if card not in b.state.hands[seat]:
        raise IllegalAction(f"card {card!r} is not in your hand", field="card")
    second = b.state.phase == "event2"
    b.emit({"type": "event_played", "seat": seat, "card": card, "step": 2 if second else 1})
    share, move = CARDS[card]
    if move is None:
        _pay_dividends(b, share)
    else:
        old = b.state.prices[share]
        new = min(PRICE_MAX, max(PRICE_MIN, old + move))
        b.emit({"type": "price_moved", "share": SHARES[share], "delta": new - old, "price": new})
    _draw(b, seat, rng)       # after the second event card: the objective check (phase check)


# --- objectives and rewards --------------------------------------------------------------------

def _end_of_turn(b: Batch, rng) -> None:
    """After the second event card: the objective met opens the rewards, else the next turn."""
    s = b.state
    seat = s.active
    if objective_met(s, seat):
        oid = s.objectives[seat]
        b.emit({"type": "objective_met", "seat": seat, "objective": oid, "level": parse_objective(oid)[0]})
    else:
        _next_turn(b)


def _payment_chosen(s: State) -> bool:
    """In the pay phase: whether the payer's choices so far make a whole payment."""
    return payment_plan(s.prices, s.shares[s.reward_queue[0]], s.pay_prefix)[0] is not None


def _collect_reward(b: Batch, rng) -> None:
    """Pay the achiever one reward: the next other player's (money, every share, or the set of
    shares the payer chose, who is asked first), or, once they have all paid, the bank's and
    the next objective."""
    s = b.state
    if s.reward_queue:
        payer, to = s.reward_queue[0], s.reward_to
        if s.money[payer] >= REWARD_EACH:
            b.emit({"type": "reward_paid", "payer": payer, "to": to, "money": REWARD_EACH, "shares": {}})
            return
        held = s.shares[payer]
        if value(s, payer) < REWARD_SHARES_VALUE:
            b.emit({"type": "reward_paid", "payer": payer, "to": to, "money": 0, "shares": shares_json(held)})
            return
        counts, _, _, _ = payment_plan(s.prices, held, s.pay_prefix or ())
        if counts is None:          # the payer chooses (the pay phase)
            b.emit({"type": "share_payment_due", "seat": payer, "to": to, "value": REWARD_SHARES_VALUE})
            return
        b.emit({"type": "reward_paid", "payer": payer, "to": to, "money": 0, "shares": shares_json(counts)})
        return
    to = s.reward_to
    reward = economy(s.players, s.rules_version).reward_from_bank
    b.emit({"type": "reward_paid", "payer": None, "to": to, "money": min(reward, s.bank_money), "shares": {}})
    level = b.state.levels[to]
    if level <= LEVELS and b.state.objective_decks[level - 1]:
        b.emit({"type": "objective_dealt", "seat": to, "level": level,
                "objective": b.state.objective_decks[level - 1][0]})


def _give_shares(b: Batch, seat: int, action: dict, rng) -> None:
    s = b.state
    held = s.shares[seat]
    _, t, options, prefix = payment_plan(s.prices, held, s.pay_prefix)
    if action["share"] != SHARES[t]:
        raise IllegalAction(f"choose how many {SHARES[t]} shares to give now (share types go in table order)",
                            field="share")
    if action["count"] not in options:
        raise IllegalAction(f"giving {action['count']} {SHARES[t]} cannot end in a minimal set worth at least "
                            f"{REWARD_SHARES_VALUE}; allowed counts: {options}", field="count")
    decided = prefix + (action["count"],)
    b.emit({"type": "payment_chosen", "seat": seat, "share": SHARES[t], "count": action["count"],
            "decided": {SHARES[i]: c for i, c in enumerate(decided)}})


# --- trading -----------------------------------------------------------------------------------

def _announcement_refusal(s: State, share: int) -> Optional[IllegalAction]:
    """Why no announcement may name this share type now (None: one may). The one statement of
    the rule: the deciders raise it, the legal actions leave the type out."""
    if s.announcements >= MAX_ANNOUNCEMENTS:
        return IllegalAction(f"no announcement left this turn (at most {MAX_ANNOUNCEMENTS})")
    if not type_allowed(s, share):
        return IllegalAction(f"on a first turn announcements may name at most {FIRST_TURN_TYPES} share types "
                             f"(already: {', '.join(SHARES[t] for t in s.traded_types)})", field="share")
    return None


def _check_announcement(s: State, action: dict) -> int:
    share = SHARE_INDEX[action["share"]]
    refusal = _announcement_refusal(s, share)
    if refusal is not None:
        raise refusal
    return share


def _buy(b: Batch, seat: int, action: dict, rng) -> None:
    s = b.state
    share = _check_announcement(s, action)
    count = action["count"]
    unit = s.prices[share] + BANK_MARKUP
    if count * unit > s.money[seat]:
        raise IllegalAction(f"you must be able to pay {count} x {unit} = {count * unit} (you have "
                            f"{s.money[seat]})", field="count")
    limit = buy_limit(s, seat, share)
    if limit == 0:
        raise IllegalAction(f"refused: nobody, bank included, holds {SHARES[share]} shares to sell",
                            field="share")
    if count > limit:
        raise IllegalAction(f"only {limit} {SHARES[share]} shares exist outside your hands", field="count")
    _announce(b, seat, "buy", share, count)


def _sell(b: Batch, seat: int, action: dict, rng) -> None:
    s = b.state
    share = _check_announcement(s, action)
    count = action["count"]
    if count > s.shares[seat][share]:
        raise IllegalAction(f"you hold only {s.shares[seat][share]} {SHARES[share]}", field="count")
    if not sell_fillable(s, seat, share):
        raise IllegalAction(f"refused: nobody, bank included, can pay for {SHARES[share]}", field="share")
    _announce(b, seat, "sell", share, count)


def _announce(b: Batch, seat: int, side: str, share: int, count: int) -> None:
    b.emit({"type": "announced", "seat": seat, "side": side, "share": SHARES[share], "count": count})


def _close_offer(b: Batch, rng) -> None:
    """Nobody left to respond: the bank fills what it can, and the announcement closes."""
    offer = b.state.offer
    if offer.remaining:
        count, unit = bank_fill(b.state, offer.side, offer.share, offer.remaining)
        if count:
            seller, buyer = (None, offer.announcer) if offer.side == "buy" else (offer.announcer, None)
            b.emit({"type": "traded", "share": SHARES[offer.share], "count": count, "unit_price": unit,
                    "seller": seller, "buyer": buyer})
    offer = b.state.offer
    b.emit({"type": "announcement_closed", "seat": offer.announcer, "side": offer.side,
            "share": SHARES[offer.share], "filled": offer.count - offer.remaining, "unfilled": offer.remaining})


def _respond(b: Batch, seat: int, action: dict, rng) -> None:
    s = b.state
    offer = s.offer
    count = action["count"]
    cap = capacity(s, offer, seat)
    if count > cap:
        raise IllegalAction(f"count must be between 0 and {cap}", field="count")
    if count == 0:
        b.emit({"type": "passed", "seat": seat})
    else:
        seller, buyer = (seat, offer.announcer) if offer.side == "buy" else (offer.announcer, seat)
        b.emit({"type": "traded", "share": SHARES[offer.share], "count": count,
                "unit_price": s.prices[offer.share], "seller": seller, "buyer": buyer})


def _end_trading(b: Batch, seat: int, action: dict, rng) -> None:
    b.emit({"type": "trading_ended", "seat": seat})
    s = b.state
    if not s.owes:
        return
    if s.money[seat] >= s.owes:
        b.emit({"type": "late_fee_paid", "seat": seat, "amount": s.owes})
        return
    b.emit({"type": "bankrupt", "seat": seat, "money": s.money[seat], "shares": shares_json(s.shares[seat]),
            "cards": list(s.hands[seat])})


# --- the automatic step due in each state ------------------------------------------------------

_STEP_OF_PHASE = {"started": _first_turn, "check": _end_of_turn, "reward": _collect_reward,
                  "turn_over": _next_turn}


def _automatic_step(s: State):
    """The step due in this state; None: a seat must act (or the game is over). The phases
    started, check, reward and turn_over exist only inside a batch; respond and pay go on by
    themselves once nobody is left to respond or the payer's choice is whole."""
    phase = s.phase
    if phase == "respond":
        return _close_offer if s.offer.responder is None else None
    if phase == "pay":
        return _collect_reward if _payment_chosen(s) else None
    return _STEP_OF_PHASE.get(phase)


# --- legal actions -----------------------------------------------------------------------------

def _legal(state: State, seat: int) -> list[dict]:
    """What a seat to act may do (the kernel's guard has checked that it is to act). Each count's
    range is the one its decider checks: capacity, buy_limit, the holding, the payment plan."""
    phase = state.phase
    if phase in ("event1", "event2"):
        return [{"type": "play_event", "card": card} for card in sorted(set(state.hands[seat]))]
    if phase == "respond":
        return [{"type": "respond", "count": {"min": 0, "max": capacity(state, state.offer, seat)}}]
    if phase == "pay":
        _, t, options, _ = payment_plan(state.prices, state.shares[seat], state.pay_prefix)
        return [{"type": "give_shares", "share": SHARES[t], "count": c} for c in options]
    out = []
    for t, name in enumerate(SHARES):
        if _announcement_refusal(state, t) is not None:
            continue
        limit = buy_limit(state, seat, t)
        if limit > 0:
            out.append({"type": "buy", "share": name, "count": {"min": 1, "max": limit}})
        held = state.shares[seat][t]
        if held and sell_fillable(state, seat, t):
            out.append({"type": "sell", "share": name, "count": {"min": 1, "max": held}})
    out.append({"type": "end_trading"})
    return out


# --- the action table --------------------------------------------------------------------------

SHARE_FIELD = Choice(SHARES)

ACTIONS = Actions(NAME, [
    Action("play_event", _play_event, {"card": Choice(tuple(sorted(CARDS)))},
           phases=frozenset({"event1", "event2"})),
    Action("buy", _buy, {"share": SHARE_FIELD, "count": Int(min=1)}, phases=frozenset({"trade"})),
    Action("sell", _sell, {"share": SHARE_FIELD, "count": Int(min=1)}, phases=frozenset({"trade"})),
    Action("end_trading", _end_trading, {}, phases=frozenset({"trade"})),
    Action("respond", _respond, {"count": Int(min=0)}, phases=frozenset({"respond"})),
    Action("give_shares", _give_shares, {"share": SHARE_FIELD, "count": Int(min=0)}, phases=frozenset({"pay"})),
], players=lambda s: s.players, to_act=to_act, is_over=is_over, phase=lambda s: s.phase, evolve=evolve,
   legal=_legal, automatic=_automatic_step)

decide = ACTIONS.decide
ACTION_SCHEMAS = ACTIONS.schemas
legal_actions = ACTIONS.legal_actions
