"""Speculate: a stock exchange with hidden objectives (game id `speculate`).

Rules: /work/shared/games/speculate.md, as implemented and with every decision marked:
docs/games/speculate.md. Every amount (money, shares, fees, the event deck, the objective
targets, the rounds by player count) is data: projections/data/speculate.json, loaded at
import. Games record the setup amounts they used in their `game_started` event.

Flow of a turn (phases a seat acts in: event1, trade, respond, event2, pay):
  turn_started, fee_paid | fee_deferred
  event1:  play_event -> event_played, price_moved | dividends_paid, [deck_reshuffled], card_drawn
  trade:   buy | sell -> announced, then each other player in turn (respond phase) ...
           -> traded | passed, ..., the bank's traded, announcement_closed
           end_trading -> trading_ended, [late_fee_paid | bankrupt]
  event2:  play_event -> ... then the objective check: [objective_met, reward_paid...
           (share_payment_due -> pay phase: give_shares -> payment_chosen ...), objective_dealt]
  then the next turn_started, or game_ended.

Internally share types are indexes into SHARES; events and views use their names.
Seat money is an int per seat; `None` in a trade or reward event means the bank.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Optional

from marshmallow import RAISE, Schema, fields, validate

from projections.game import BANK, IllegalAction, Transfer, replace, seat_account

NAME = "speculate"
RULES_VERSION = 1
MIN_PLAYERS = 3
MAX_PLAYERS = 6
HIDDEN_INFORMATION = True

DATA_PATH = Path(__file__).with_name("data") / "speculate.json"

# Ledger accounts and assets (the supply issues everything, so every asset sums to 0).
SUPPLY = "supply"
EVENT_DECK = "event_deck"
EVENT_DISCARD = "event_discard"
OBJECTIVE_DECK = "objective_deck"
OBJECTIVES_MET = "objectives_met"
MONEY = "money"


def _load_data(path: Path = DATA_PATH) -> dict:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    types = data["share_types"]
    if len(types) < 3 or len(set(types)) != len(types):
        raise ValueError("speculate data: share_types needs at least 3 distinct names")
    targets = data["objectives"]["targets"]
    if sorted(targets) != [str(level) for level in range(1, len(targets) + 1)]:
        raise ValueError("speculate data: objective levels must be 1..n")
    if len({len(t) for t in targets.values()}) != 1 or len(targets["1"]) > len(types):
        raise ValueError("speculate data: every level needs the same number of targets")
    rounds = data["rounds_by_players"]
    if sorted(int(k) for k in rounds) != list(range(MIN_PLAYERS, MAX_PLAYERS + 1)):
        raise ValueError("speculate data: rounds_by_players needs every player count 3..6")
    deck = len(types) * (len(data["event_deck"]["price_moves"]) + data["event_deck"]["dividend_cards_per_type"])
    if deck <= MAX_PLAYERS * data["player"]["event_cards"]:
        raise ValueError("speculate data: the event deck must outnumber the cards in hand")
    return data


DATA = _load_data()
SHARES: tuple[str, ...] = tuple(DATA["share_types"])
NT = len(SHARES)
SHARE_INDEX = {name: i for i, name in enumerate(SHARES)}
START_PRICE = DATA["price"]["start"]
PRICE_MIN = DATA["price"]["min"]
PRICE_MAX = DATA["price"]["max"]
PLAYER_MONEY = DATA["player"]["money"]
PLAYER_SHARES = DATA["player"]["shares_per_type"]
HAND_SIZE = DATA["player"]["event_cards"]
BANK_MONEY_PER_PLAYER = DATA["bank_per_player"]["money"]
BANK_SHARES_PER_PLAYER = DATA["bank_per_player"]["shares_per_type"]
FEE = DATA["fee"]["turn"]
LATE_FEE = DATA["fee"]["late"]
DIVIDEND_DIVISOR = DATA["event_deck"]["dividend_price_divisor"]
MAX_TYPES_HELD = DATA["objectives"]["max_types_held"]
TARGETS: dict[int, tuple[int, ...]] = {int(k): tuple(v) for k, v in DATA["objectives"]["targets"].items()}
LEVELS = len(TARGETS)
REWARD_EACH = DATA["reward"]["from_each_player"]
REWARD_SHARES_VALUE = DATA["reward"]["in_shares_value"]
REWARD_BANK = DATA["reward"]["from_bank"]
MAX_ANNOUNCEMENTS = DATA["trading"]["max_announcements"]
FIRST_TURN_TYPES = DATA["trading"]["first_turn_types"]
BANK_MARKUP = DATA["trading"]["bank_buy_markup"]
BANK_MARKDOWN = DATA["trading"]["bank_sell_markdown"]
ROUNDS_BY_PLAYERS = {int(k): v for k, v in DATA["rounds_by_players"].items()}

# Event cards: id -> (share index, price move, or None for a dividend card).
CARDS: dict[str, tuple[int, Optional[int]]] = {}
EVENT_CARDS: list[str] = []          # the whole deck, canonical order (may repeat ids)
for _t, _name in enumerate(SHARES):
    for _move in DATA["event_deck"]["price_moves"]:
        CARDS[f"{_name}:{_move:+d}"] = (_t, _move)
        EVENT_CARDS.append(f"{_name}:{_move:+d}")
    for _ in range(DATA["event_deck"]["dividend_cards_per_type"]):
        CARDS[f"{_name}:dividend"] = (_t, None)
        EVENT_CARDS.append(f"{_name}:dividend")
EVENT_CARDS_TUPLE = tuple(EVENT_CARDS)
del EVENT_CARDS


def objective_id(level: int, targets: dict[int, int]) -> str:
    """`L2:stores=200,mines=150,properties=100` (types in table order)."""
    return f"L{level}:" + ",".join(f"{SHARES[t]}={targets[t]}" for t in sorted(targets))


_OBJECTIVES: dict[str, tuple[int, tuple[int, ...]]] = {}


def parse_objective(oid: str) -> tuple[int, tuple[int, ...]]:
    """(level, target per share type, 0 where the card names no target)."""
    parsed = _OBJECTIVES.get(oid)
    if parsed is None:
        head, body = oid.split(":", 1)
        targets = [0] * NT
        for part in body.split(","):
            name, value = part.split("=")
            targets[SHARE_INDEX[name]] = int(value)
        parsed = _OBJECTIVES[oid] = (int(head[1:]), tuple(targets))
    return parsed


def objective_json(oid: Optional[str]) -> Optional[dict]:
    if oid is None:
        return None
    level, targets = parse_objective(oid)
    return {"id": oid, "level": level,
            "targets": {SHARES[t]: v for t, v in enumerate(targets) if v}}


# ---------------------------------------------------------------------------------------------
# Options and action schemas
# ---------------------------------------------------------------------------------------------

class OptionsSchema(Schema):
    class Meta:
        unknown = RAISE

    # None: by player count (data: 3 players 11, 4: 10, 5: 8, 6: 7).
    rounds = fields.Integer(strict=True, allow_none=True, load_default=None,
                            validate=validate.Range(min=1, max=50))


def _action_schema(type_name: str, **extra) -> type:
    attrs = {"type": fields.String(required=True, validate=validate.OneOf([type_name]))}
    attrs.update(extra)
    return Schema.from_dict(attrs, name=f"Speculate_{type_name}")


def _share_field_schema() -> fields.String:
    return fields.String(required=True, validate=validate.OneOf(list(SHARES)))


def _count_field_schema(low: int) -> fields.Integer:
    return fields.Integer(required=True, strict=True, validate=validate.Range(min=low))


ACTION_SCHEMAS = {
    "play_event": _action_schema("play_event", card=fields.String(required=True, validate=validate.OneOf(sorted(CARDS)))),
    "buy": _action_schema("buy", share=_share_field_schema(), count=_count_field_schema(1)),
    "sell": _action_schema("sell", share=_share_field_schema(), count=_count_field_schema(1)),
    "end_trading": _action_schema("end_trading"),
    "respond": _action_schema("respond", count=_count_field_schema(0)),
    "give_shares": _action_schema("give_shares", share=_share_field_schema(), count=_count_field_schema(0)),
}

# ---------------------------------------------------------------------------------------------
# State
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Offer:
    """An announcement being filled. side: "buy" or "sell"; responder None: nobody left to ask."""

    side: str
    share: int
    count: int
    remaining: int
    announcer: int
    responder: Optional[int]


@dataclass(frozen=True)
class State:
    players: int
    rounds: int
    phase: str = "setup"        # setup, event1, trade, respond, event2, pay, over (others: mid-batch)
    round: int = 0
    start_player: int = 0
    active: int = -1
    prices: tuple[int, ...] = ()
    money: tuple[int, ...] = ()
    shares: tuple[tuple[int, ...], ...] = ()
    bank_money: int = 0
    bank_shares: tuple[int, ...] = ()
    hands: tuple[tuple[str, ...], ...] = ()
    event_deck: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()
    objective_decks: tuple[tuple[str, ...], ...] = ()
    objectives: tuple[Optional[str], ...] = ()
    met: tuple[tuple[str, ...], ...] = ()
    levels: tuple[int, ...] = ()            # level of each seat's current objective (LEVELS+1: done)
    alive: tuple[bool, ...] = ()
    eliminated: tuple[int, ...] = ()        # in order of elimination
    turns: tuple[int, ...] = ()             # turns started, per seat
    first_turn: bool = False
    owes: int = 0                           # late fee due after trading
    announcements: int = 0
    traded_types: tuple[int, ...] = ()
    offer: Optional[Offer] = None
    reward_to: Optional[int] = None
    reward_queue: tuple[int, ...] = ()
    pay_prefix: Optional[tuple[int, ...]] = None
    end_reason: Optional[str] = None


def new_state(options: dict, seats: int) -> State:
    if not isinstance(seats, int) or isinstance(seats, bool) or not MIN_PLAYERS <= seats <= MAX_PLAYERS:
        raise ValueError(f"speculate takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {seats}")
    rounds = options.get("rounds") or ROUNDS_BY_PLAYERS[seats]
    return State(players=seats, rounds=rounds)


def _seats_from(start: int, n: int):
    """start, start+1, ... clockwise, every seat once."""
    return [(start + i) % n for i in range(n)]


def _value(state: State, seat: int) -> int:
    return sum(c * p for c, p in zip(state.shares[seat], state.prices))


def _types_held(holding: tuple[int, ...]) -> int:
    return sum(1 for c in holding if c)


def objective_met(state: State, seat: int) -> bool:
    oid = state.objectives[seat]
    if oid is None:
        return False
    holding = state.shares[seat]
    if _types_held(holding) > MAX_TYPES_HELD:
        return False
    _, targets = parse_objective(oid)
    return all(holding[t] * state.prices[t] >= target for t, target in enumerate(targets) if target)


def _shares_json(counts) -> dict:
    return {SHARES[t]: c for t, c in enumerate(counts) if c}


def _counts_from_json(shares: dict) -> list[int]:
    counts = [0] * NT
    for name, c in shares.items():
        counts[SHARE_INDEX[name]] = c
    return counts

# ---------------------------------------------------------------------------------------------
# Trading helpers
# ---------------------------------------------------------------------------------------------


def _capacity(state: State, offer: Offer, seat: int) -> int:
    """How much of the rest of `offer` that seat could fill at the market price."""
    if offer.side == "buy":
        return min(offer.remaining, state.shares[seat][offer.share])
    price = state.prices[offer.share]
    return offer.remaining if price == 0 else min(offer.remaining, state.money[seat] // price)


def _next_responder(state: State, offer: Offer, after: int) -> Optional[int]:
    """The next seat clockwise after `after` (stopping at the announcer) that can fill any."""
    if offer.remaining == 0:
        return None
    n = state.players
    q = after
    while True:
        q = (q + 1) % n
        if q == offer.announcer:
            return None
        if state.alive[q] and _capacity(state, offer, q) > 0:
            return q


def _bank_fill(state: State, side: str, share: int, remaining: int) -> tuple[int, int]:
    """(count, unit price) the bank fills of what is still open."""
    price = state.prices[share]
    if side == "buy":
        return min(remaining, state.bank_shares[share]), price + BANK_MARKUP
    unit = max(price - BANK_MARKDOWN, 0)
    return (remaining if unit == 0 else min(remaining, state.bank_money // unit)), unit


def _others(state: State, seat: int) -> list[int]:
    return [q for q in _seats_from(seat, state.players)[1:] if state.alive[q]]


def _buy_limit(state: State, seat: int, share: int) -> int:
    """The most a buy announcement may ask: affordable at price + markup, and existing."""
    available = state.bank_shares[share] + sum(state.shares[q][share] for q in _others(state, seat))
    return min(state.money[seat] // (state.prices[share] + BANK_MARKUP), available)


def _sell_fillable(state: State, seat: int, share: int) -> bool:
    price = state.prices[share]
    if any(price == 0 or state.money[q] >= price for q in _others(state, seat)):
        return True
    unit = max(price - BANK_MARKDOWN, 0)
    return unit == 0 or state.bank_money >= unit


def _type_allowed(state: State, share: int) -> bool:
    return not state.first_turn or share in state.traded_types or len(state.traded_types) < FIRST_TURN_TYPES

# ---------------------------------------------------------------------------------------------
# Paying the reward in shares: a minimal set of shares worth at least REWARD_SHARES_VALUE
# (no share can be left out), chosen share type by share type in table order.
# ---------------------------------------------------------------------------------------------


def _completable(prices, held, counts) -> bool:
    """Can the decided counts (types 0..len-1) still end as a minimal set?"""
    need = REWARD_SHARES_VALUE
    value = 0
    low = None
    for t, c in enumerate(counts):
        if c:
            if prices[t] == 0:
                return False            # a share worth 0 can always be left out
            value += c * prices[t]
            low = prices[t] if low is None else min(low, prices[t])
    if value >= need:
        return value - low < need
    rest = [(prices[t], held[t]) for t in range(len(counts), NT) if prices[t] > 0 and held[t] > 0]
    # A minimal set's total lies in [need, need + its cheapest price): try each cheapest price.
    caps = {p for p, _ in rest if low is None or p < low}
    if low is not None:
        caps.add(low)
    for cap in caps:
        mask = (1 << (need + cap)) - 1
        reach = 1 << value
        for p, h in rest:
            if p < cap:
                continue
            step, more = reach, reach
            for _ in range(h):
                step = (step << p) & mask
                if not step:
                    break
                more |= step
            reach = more
        if reach >> need:
            return True
    return False


def payment_plan(prices, held, prefix=()) -> tuple[Optional[tuple[int, ...]], int, list[int], tuple[int, ...]]:
    """Walk the share types from len(prefix) on, filling in every forced count.

    Returns (complete counts, -, -, -) when the set is determined, else
    (None, share index to choose, the counts allowed for it, the prefix so far).
    """
    counts = list(prefix)
    while len(counts) < NT:
        t = len(counts)
        options = [c for c in range(held[t] + 1) if _completable(prices, held, counts + [c])]
        if len(options) != 1:
            return None, t, options, tuple(counts)
        counts.append(options[0])
    return tuple(counts), -1, [], tuple(counts)

# ---------------------------------------------------------------------------------------------
# evolve: one small function per event type
# ---------------------------------------------------------------------------------------------


def _set(tup: tuple, i: int, value) -> tuple:
    return tup[:i] + (value,) + tup[i + 1:]


def _remove_one(hand: tuple[str, ...], card: str) -> tuple[str, ...]:
    i = hand.index(card)
    return hand[:i] + hand[i + 1:]


def _ev_game_started(s: State, e: dict) -> State:
    n = s.players
    setup = e["setup"]
    return replace(
        s, phase="started", start_player=e["start_player"], rounds=e["rounds"],
        prices=(setup["start_price"],) * NT,
        money=(setup["player_money"],) * n, shares=((setup["player_shares"],) * NT,) * n,
        bank_money=setup["bank_money"], bank_shares=(setup["bank_shares"],) * NT,
        hands=((),) * n, event_deck=tuple(e["event_deck"]), discard=(),
        objective_decks=tuple(tuple(d) for d in e["objective_decks"]),
        objectives=(None,) * n, met=((),) * n, levels=(1,) * n, alive=(True,) * n, turns=(0,) * n)


def _ev_cards_dealt(s: State, e: dict) -> State:
    seat, cards = e["seat"], tuple(e["cards"])
    return replace(s, hands=_set(s.hands, seat, s.hands[seat] + cards), event_deck=s.event_deck[len(cards):])


def _ev_objective_dealt(s: State, e: dict) -> State:
    seat, level = e["seat"], e["level"]
    deck = s.objective_decks[level - 1]
    return replace(s, objectives=_set(s.objectives, seat, e["objective"]),
                   objective_decks=_set(s.objective_decks, level - 1, deck[1:]))


def _ev_turn_started(s: State, e: dict) -> State:
    seat = e["seat"]
    return replace(s, phase="event1", active=seat, round=e["round"], first_turn=e["first_turn"],
                   turns=_set(s.turns, seat, s.turns[seat] + 1), owes=0, announcements=0,
                   traded_types=(), offer=None, reward_to=None, reward_queue=(), pay_prefix=None)


def _ev_fee_paid(s: State, e: dict) -> State:
    seat, amount = e["seat"], e["amount"]
    return replace(s, money=_set(s.money, seat, s.money[seat] - amount), bank_money=s.bank_money + amount)


def _ev_fee_deferred(s: State, e: dict) -> State:
    return replace(s, owes=e["due"])


def _ev_late_fee_paid(s: State, e: dict) -> State:
    return replace(_ev_fee_paid(s, e), owes=0)


def _ev_event_played(s: State, e: dict) -> State:
    seat = e["seat"]
    return replace(s, hands=_set(s.hands, seat, _remove_one(s.hands[seat], e["card"])),
                   discard=s.discard + (e["card"],),
                   phase="trade" if s.phase == "event1" else "check")


def _ev_price_moved(s: State, e: dict) -> State:
    return replace(s, prices=_set(s.prices, SHARE_INDEX[e["share"]], e["price"]))


def _ev_dividends_paid(s: State, e: dict) -> State:
    money = list(s.money)
    paid = 0
    for p in e["payments"]:
        money[p["seat"]] += p["amount"]
        paid += p["amount"]
    return replace(s, money=tuple(money), bank_money=s.bank_money - paid)


def _ev_deck_reshuffled(s: State, e: dict) -> State:
    return replace(s, event_deck=s.event_deck + tuple(e["order"]), discard=())


def _ev_card_drawn(s: State, e: dict) -> State:
    seat = e["seat"]
    return replace(s, hands=_set(s.hands, seat, s.hands[seat] + (e["card"],)), event_deck=s.event_deck[1:])


def _ev_announced(s: State, e: dict) -> State:
    share = SHARE_INDEX[e["share"]]
    offer = Offer(e["side"], share, e["count"], e["count"], e["seat"], None)
    s = replace(s, phase="respond", announcements=s.announcements + 1,
                traded_types=s.traded_types if share in s.traded_types else s.traded_types + (share,))
    return replace(s, offer=replace(offer, responder=_next_responder(s, offer, e["seat"])))


def _ev_traded(s: State, e: dict) -> State:
    share, count, unit = SHARE_INDEX[e["share"]], e["count"], e["unit_price"]
    total = count * unit
    money, shares = list(s.money), list(s.shares)
    bank_money, bank_shares = s.bank_money, s.bank_shares
    seller, buyer = e["seller"], e["buyer"]
    if seller is None:
        bank_money += total
        bank_shares = _set(bank_shares, share, bank_shares[share] - count)
    else:
        money[seller] += total
        shares[seller] = _set(shares[seller], share, shares[seller][share] - count)
    if buyer is None:
        bank_money -= total
        bank_shares = _set(bank_shares, share, bank_shares[share] + count)
    else:
        money[buyer] -= total
        shares[buyer] = _set(shares[buyer], share, shares[buyer][share] + count)
    s = replace(s, money=tuple(money), shares=tuple(shares), bank_money=bank_money, bank_shares=bank_shares)
    offer = s.offer
    if offer is not None:
        offer = replace(offer, remaining=offer.remaining - count)
        if offer.responder is not None:
            offer = replace(offer, responder=_next_responder(s, offer, offer.responder))
        s = replace(s, offer=offer)
    return s


def _ev_passed(s: State, e: dict) -> State:
    return replace(s, offer=replace(s.offer, responder=_next_responder(s, s.offer, e["seat"])))


def _ev_announcement_closed(s: State, e: dict) -> State:
    return replace(s, phase="trade", offer=None)


def _ev_trading_ended(s: State, e: dict) -> State:
    return replace(s, phase="event2")


def _ev_bankrupt(s: State, e: dict) -> State:
    seat = e["seat"]
    holding = s.shares[seat]
    return replace(
        s, phase="turn_over", alive=_set(s.alive, seat, False), eliminated=s.eliminated + (seat,),
        bank_money=s.bank_money + s.money[seat], money=_set(s.money, seat, 0),
        bank_shares=tuple(b + c for b, c in zip(s.bank_shares, holding)),
        shares=_set(s.shares, seat, (0,) * NT),
        discard=s.discard + s.hands[seat], hands=_set(s.hands, seat, ()), owes=0)


def _ev_objective_met(s: State, e: dict) -> State:
    seat = e["seat"]
    return replace(s, phase="reward", objectives=_set(s.objectives, seat, None),
                   met=_set(s.met, seat, s.met[seat] + (e["objective"],)),
                   levels=_set(s.levels, seat, s.levels[seat] + 1),
                   reward_to=seat, reward_queue=tuple(_others(s, seat)))


def _ev_share_payment_due(s: State, e: dict) -> State:
    return replace(s, phase="pay", pay_prefix=())


def _ev_payment_chosen(s: State, e: dict) -> State:
    decided = e["decided"]
    return replace(s, pay_prefix=tuple(decided[SHARES[t]] for t in range(len(decided))))


def _ev_reward_paid(s: State, e: dict) -> State:
    payer, to, amount = e["payer"], e["to"], e["money"]
    counts = _counts_from_json(e["shares"])
    money = list(s.money)
    shares = list(s.shares)
    money[to] += amount
    shares[to] = tuple(a + c for a, c in zip(shares[to], counts))
    if payer is None:
        return replace(s, phase="turn_over", money=tuple(money), shares=tuple(shares),
                       bank_money=s.bank_money - amount, reward_to=None)
    money[payer] -= amount
    shares[payer] = tuple(a - c for a, c in zip(shares[payer], counts))
    return replace(s, phase="reward", money=tuple(money), shares=tuple(shares),
                   reward_queue=s.reward_queue[1:], pay_prefix=None)


def _ev_game_ended(s: State, e: dict) -> State:
    return replace(s, phase="over", end_reason=e["reason"], offer=None)


_EVOLVE = {
    "game_started": _ev_game_started,
    "cards_dealt": _ev_cards_dealt,
    "objective_dealt": _ev_objective_dealt,
    "turn_started": _ev_turn_started,
    "fee_paid": _ev_fee_paid,
    "fee_deferred": _ev_fee_deferred,
    "event_played": _ev_event_played,
    "price_moved": _ev_price_moved,
    "dividends_paid": _ev_dividends_paid,
    "deck_reshuffled": _ev_deck_reshuffled,
    "card_drawn": _ev_card_drawn,
    "announced": _ev_announced,
    "traded": _ev_traded,
    "passed": _ev_passed,
    "announcement_closed": _ev_announcement_closed,
    "trading_ended": _ev_trading_ended,
    "late_fee_paid": _ev_late_fee_paid,
    "bankrupt": _ev_bankrupt,
    "objective_met": _ev_objective_met,
    "share_payment_due": _ev_share_payment_due,
    "payment_chosen": _ev_payment_chosen,
    "reward_paid": _ev_reward_paid,
    "game_ended": _ev_game_ended,
}


def evolve(state: State, event: dict) -> State:
    return _EVOLVE[event["type"]](state, event)

# ---------------------------------------------------------------------------------------------
# start / decide
# ---------------------------------------------------------------------------------------------


class _Batch:
    """The events of one decide call, folded as they are emitted."""

    __slots__ = ("state", "events")

    def __init__(self, state: State):
        self.state = state
        self.events: list[dict] = []

    def emit(self, event: dict) -> None:
        self.events.append(event)
        self.state = evolve(self.state, event)


def _build_objective_decks(rng) -> list[list[str]]:
    decks = []
    for level in range(1, LEVELS + 1):
        cards = []
        for i, combo in enumerate(combinations(range(NT), len(TARGETS[level]))):
            order = rng.shuffle(f"objective_targets/{level}/{i}", list(TARGETS[level]))
            cards.append(objective_id(level, dict(zip(combo, order))))
        decks.append(rng.shuffle(f"objective_deck/{level}", cards))
    return decks


def start(state: State, rng) -> list[dict]:
    n = state.players
    b = _Batch(state)
    deck = rng.shuffle("event_deck", list(EVENT_CARDS_TUPLE))
    start_player = rng.below("start_player", n)
    b.emit({"type": "game_started", "players": n, "rounds": state.rounds, "start_player": start_player,
            "setup": {"start_price": START_PRICE, "player_money": PLAYER_MONEY, "player_shares": PLAYER_SHARES,
                      "bank_money": BANK_MONEY_PER_PLAYER * n, "bank_shares": BANK_SHARES_PER_PLAYER * n},
            "event_deck": deck, "objective_decks": _build_objective_decks(rng)})
    for seat in range(n):
        b.emit({"type": "cards_dealt", "seat": seat, "cards": list(b.state.event_deck[:HAND_SIZE])})
    for seat in range(n):
        b.emit({"type": "objective_dealt", "seat": seat, "level": 1, "objective": b.state.objective_decks[0][0]})
    _begin_turn(b, start_player, 1)
    return b.events


def _begin_turn(b: _Batch, seat: int, round_no: int) -> None:
    s = b.state
    b.emit({"type": "turn_started", "seat": seat, "round": round_no, "first_turn": s.turns[seat] == 0})
    if b.state.money[seat] >= FEE:
        b.emit({"type": "fee_paid", "seat": seat, "amount": FEE})
    else:
        b.emit({"type": "fee_deferred", "seat": seat, "due": LATE_FEE})


def _next_turn(b: _Batch) -> None:
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


def _draw(b: _Batch, seat: int, rng) -> None:
    s = b.state
    if not s.event_deck:
        if not s.discard:
            return
        b.emit({"type": "deck_reshuffled", "order": rng.shuffle("reshuffle", sorted(s.discard))})
    b.emit({"type": "card_drawn", "seat": seat, "card": b.state.event_deck[0]})


def _pay_dividends(b: _Batch, share: int) -> None:
    s = b.state
    per_share = s.prices[share] // DIVIDEND_DIVISOR
    bank = s.bank_money
    payments = []
    for q in _seats_from(s.active, s.players):
        held = s.shares[q][share]
        if s.alive[q] and held:
            due = held * per_share
            amount = min(due, bank)
            bank -= amount
            payments.append({"seat": q, "amount": amount, "due": due})
    b.emit({"type": "dividends_paid", "share": SHARES[share], "per_share": per_share, "payments": payments})


def _play_event(b: _Batch, seat: int, action: dict, rng) -> None:
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
    _draw(b, seat, rng)
    if second:
        _end_of_turn(b)


def _end_of_turn(b: _Batch) -> None:
    s = b.state
    seat = s.active
    if objective_met(s, seat):
        oid = s.objectives[seat]
        b.emit({"type": "objective_met", "seat": seat, "objective": oid, "level": parse_objective(oid)[0]})
        _collect_rewards(b)
    else:
        _next_turn(b)


def _collect_rewards(b: _Batch) -> None:
    """Pay the achiever: each other player in turn, then the bank; then the next objective."""
    while b.state.reward_queue:
        s = b.state
        payer, to = s.reward_queue[0], s.reward_to
        if s.money[payer] >= REWARD_EACH:
            b.emit({"type": "reward_paid", "payer": payer, "to": to, "money": REWARD_EACH, "shares": {}})
            continue
        held = s.shares[payer]
        if _value(s, payer) < REWARD_SHARES_VALUE:
            b.emit({"type": "reward_paid", "payer": payer, "to": to, "money": 0, "shares": _shares_json(held)})
            continue
        counts, _, _, _ = payment_plan(s.prices, held, s.pay_prefix or ())
        if counts is None:
            if s.phase != "pay":
                b.emit({"type": "share_payment_due", "seat": payer, "to": to, "value": REWARD_SHARES_VALUE})
            return
        b.emit({"type": "reward_paid", "payer": payer, "to": to, "money": 0, "shares": _shares_json(counts)})
    s = b.state
    to = s.reward_to
    b.emit({"type": "reward_paid", "payer": None, "to": to, "money": min(REWARD_BANK, s.bank_money), "shares": {}})
    level = b.state.levels[to]
    if level <= LEVELS and b.state.objective_decks[level - 1]:
        b.emit({"type": "objective_dealt", "seat": to, "level": level,
                "objective": b.state.objective_decks[level - 1][0]})
    _next_turn(b)


def _give_shares(b: _Batch, seat: int, action: dict, rng) -> None:
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
    _collect_rewards(b)


def _check_announcement(s: State, seat: int, action: dict) -> int:
    share = _share_field(action)
    count = action["count"]
    if count < 1:
        raise IllegalAction("count must be at least 1", field="count")
    if s.announcements >= MAX_ANNOUNCEMENTS:
        raise IllegalAction(f"no announcement left this turn (at most {MAX_ANNOUNCEMENTS})")
    if not _type_allowed(s, share):
        raise IllegalAction(f"on a first turn announcements may name at most {FIRST_TURN_TYPES} share types "
                            f"(already: {', '.join(SHARES[t] for t in s.traded_types)})", field="share")
    return share


def _buy(b: _Batch, seat: int, action: dict, rng) -> None:
    s = b.state
    share = _check_announcement(s, seat, action)
    count = action["count"]
    unit = s.prices[share] + BANK_MARKUP
    if count * unit > s.money[seat]:
        raise IllegalAction(f"you must be able to pay {count} x {unit} = {count * unit} (you have "
                            f"{s.money[seat]})", field="count")
    limit = _buy_limit(s, seat, share)
    if limit == 0:
        raise IllegalAction(f"refused: nobody, bank included, holds {SHARES[share]} shares to sell",
                            field="share")
    if count > limit:
        raise IllegalAction(f"only {limit} {SHARES[share]} shares exist outside your hands", field="count")
    _announce(b, seat, "buy", share, count)


def _sell(b: _Batch, seat: int, action: dict, rng) -> None:
    s = b.state
    share = _check_announcement(s, seat, action)
    count = action["count"]
    if count > s.shares[seat][share]:
        raise IllegalAction(f"you hold only {s.shares[seat][share]} {SHARES[share]}", field="count")
    if not _sell_fillable(s, seat, share):
        raise IllegalAction(f"refused: nobody, bank included, can pay for {SHARES[share]}", field="share")
    _announce(b, seat, "sell", share, count)


def _announce(b: _Batch, seat: int, side: str, share: int, count: int) -> None:
    b.emit({"type": "announced", "seat": seat, "side": side, "share": SHARES[share], "count": count})
    _run_offer(b)


def _run_offer(b: _Batch) -> None:
    """After a response: wait for the next responder, or let the bank fill and close."""
    offer = b.state.offer
    if offer.responder is not None:
        return
    if offer.remaining:
        count, unit = _bank_fill(b.state, offer.side, offer.share, offer.remaining)
        if count:
            seller, buyer = (None, offer.announcer) if offer.side == "buy" else (offer.announcer, None)
            b.emit({"type": "traded", "share": SHARES[offer.share], "count": count, "unit_price": unit,
                    "seller": seller, "buyer": buyer})
    offer = b.state.offer
    b.emit({"type": "announcement_closed", "seat": offer.announcer, "side": offer.side,
            "share": SHARES[offer.share], "filled": offer.count - offer.remaining, "unfilled": offer.remaining})


def _respond(b: _Batch, seat: int, action: dict, rng) -> None:
    s = b.state
    offer = s.offer
    count = action["count"]
    cap = _capacity(s, offer, seat)
    if not 0 <= count <= cap:
        raise IllegalAction(f"count must be between 0 and {cap}", field="count")
    if count == 0:
        b.emit({"type": "passed", "seat": seat})
    else:
        seller, buyer = (seat, offer.announcer) if offer.side == "buy" else (offer.announcer, seat)
        b.emit({"type": "traded", "share": SHARES[offer.share], "count": count,
                "unit_price": s.prices[offer.share], "seller": seller, "buyer": buyer})
    _run_offer(b)


def _end_trading(b: _Batch, seat: int, action: dict, rng) -> None:
    b.emit({"type": "trading_ended", "seat": seat})
    s = b.state
    if not s.owes:
        return
    if s.money[seat] >= s.owes:
        b.emit({"type": "late_fee_paid", "seat": seat, "amount": s.owes})
        return
    b.emit({"type": "bankrupt", "seat": seat, "money": s.money[seat], "shares": _shares_json(s.shares[seat]),
            "cards": list(s.hands[seat])})
    _next_turn(b)


def _share_field(action: dict) -> int:
    share = action["share"]
    if share not in SHARE_INDEX:
        raise IllegalAction(f"unknown share type {share!r}; one of {', '.join(SHARES)}", field="share")
    return SHARE_INDEX[share]


# type -> (handler, phases it is legal in, {field: python type})
_ACTIONS = {
    "play_event": (_play_event, ("event1", "event2"), {"card": str}),
    "buy": (_buy, ("trade",), {"share": str, "count": int}),
    "sell": (_sell, ("trade",), {"share": str, "count": int}),
    "end_trading": (_end_trading, ("trade",), {}),
    "respond": (_respond, ("respond",), {"count": int}),
    "give_shares": (_give_shares, ("pay",), {"share": str, "count": int}),
}

_PHASE_WORDS = {"event1": "play an event card", "event2": "play an event card", "trade": "trade or end trading",
                "respond": "answer an announcement", "pay": "choose shares to pay a reward"}


def _validate(state: State, seat: int, action) -> tuple:
    if not isinstance(action, dict):
        raise IllegalAction("the action must be a JSON object")
    kind = action.get("type")
    if not isinstance(kind, str) or kind not in _ACTIONS:
        raise IllegalAction(f"unknown action type {kind!r}; one of {', '.join(_ACTIONS)}", field="type")
    handler, phases, spec = _ACTIONS[kind]
    for key in action:
        if key != "type" and key not in spec:
            raise IllegalAction(f"unknown field {key!r} for {kind}", field=key)
    for key, typ in spec.items():
        if key not in action:
            raise IllegalAction(f"missing field {key!r}", field=key)
        value = action[key]
        if not isinstance(value, typ) or isinstance(value, bool):
            raise IllegalAction(f"field {key!r} must be {'an integer' if typ is int else 'a string'}", field=key)
    if state.phase == "over":
        raise IllegalAction("the game is over")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < state.players:
        raise IllegalAction(f"no seat {seat!r} in this game")
    movers = to_act(state)
    if seat not in movers:
        raise IllegalAction(f"not your turn: seat {movers[0] if movers else '-'} must "
                            f"{_PHASE_WORDS.get(state.phase, 'act')}")
    if state.phase not in phases:
        raise IllegalAction(f"{kind} is not possible now: you must {_PHASE_WORDS[state.phase]}", field="type")
    return handler


def decide(state: State, seat: int, action: dict, rng) -> list[dict]:
    handler = _validate(state, seat, action)
    b = _Batch(state)
    handler(b, seat, action, rng)
    return b.events

# ---------------------------------------------------------------------------------------------
# Queries
# ---------------------------------------------------------------------------------------------


def to_act(state: State) -> list[int]:
    phase = state.phase
    if phase in ("event1", "trade", "event2"):
        return [state.active]
    if phase == "respond":
        return [] if state.offer.responder is None else [state.offer.responder]
    if phase == "pay":
        return [state.reward_queue[0]]
    return []


def is_over(state: State) -> bool:
    return state.phase == "over"


def legal_actions(state: State, seat: int) -> list[dict]:
    if seat not in to_act(state):
        return []
    phase = state.phase
    if phase in ("event1", "event2"):
        return [{"type": "play_event", "card": card} for card in sorted(set(state.hands[seat]))]
    if phase == "respond":
        return [{"type": "respond", "count": {"min": 0, "max": _capacity(state, state.offer, seat)}}]
    if phase == "pay":
        _, t, options, _ = payment_plan(state.prices, state.shares[seat], state.pay_prefix)
        return [{"type": "give_shares", "share": SHARES[t], "count": c} for c in options]
    out = []
    if state.announcements < MAX_ANNOUNCEMENTS:
        for t, name in enumerate(SHARES):
            if not _type_allowed(state, t):
                continue
            limit = _buy_limit(state, seat, t)
            if limit > 0:
                out.append({"type": "buy", "share": name, "count": {"min": 1, "max": limit}})
            held = state.shares[seat][t]
            if held and _sell_fillable(state, seat, t):
                out.append({"type": "sell", "share": name, "count": {"min": 1, "max": held}})
    out.append({"type": "end_trading"})
    return out


def score(state: State, seat: int) -> int:
    return state.money[seat] + _value(state, seat) if state.alive[seat] else 0


def result(state: State) -> dict:
    n = state.players
    scores = [score(state, q) for q in range(n)]
    alive = [q for q in range(n) if state.alive[q]]
    ranks = [0] * n
    for q in alive:
        ranks[q] = 1 + sum(1 for r in alive if scores[r] > scores[q])
    elim = state.eliminated
    for j, q in enumerate(elim):            # the first eliminated ranks last
        ranks[q] = len(alive) + len(elim) - j
    return {"winners": [q for q in alive if ranks[q] == 1], "ranks": ranks, "scores": scores}


def view(state: State, seat: Optional[int]) -> dict:
    n = state.players
    over = state.phase == "over"
    offer = state.offer
    out = {
        "game": NAME, "players": n, "phase": state.phase, "to_act": to_act(state),
        "round": state.round, "rounds": state.rounds, "start_player": state.start_player,
        "active": state.active,
        "prices": dict(zip(SHARES, state.prices)),
        "money": list(state.money),
        "shares": [dict(zip(SHARES, h)) for h in state.shares],
        "alive": list(state.alive), "eliminated": list(state.eliminated),
        "bank": {"money": state.bank_money, "shares": dict(zip(SHARES, state.bank_shares))},
        "hand_counts": [len(h) for h in state.hands],
        "objective_levels": [lv if lv <= LEVELS else None for lv in state.levels],
        "objectives_met": [[objective_json(o) for o in met] for met in state.met],
        "event_deck_count": len(state.event_deck), "discard": list(state.discard),
        "objective_deck_counts": [len(d) for d in state.objective_decks],
        "turn": {"seat": state.active, "first_turn": state.first_turn, "announcements": state.announcements,
                 "max_announcements": MAX_ANNOUNCEMENTS, "first_turn_types": FIRST_TURN_TYPES,
                 "types_announced": [SHARES[t] for t in state.traded_types], "late_fee_due": state.owes},
        "announcement": None if offer is None else {
            "seat": offer.announcer, "side": offer.side, "share": SHARES[offer.share], "count": offer.count,
            "remaining": offer.remaining, "responder": offer.responder,
            "market_price": state.prices[offer.share]},
        "reward": None if state.reward_to is None else {
            "to": state.reward_to, "payers_left": list(state.reward_queue),
            "share_value_due": REWARD_SHARES_VALUE,
            "decided": None if state.pay_prefix is None else
            {SHARES[t]: c for t, c in enumerate(state.pay_prefix)}},
        "rules": {"price_min": PRICE_MIN, "price_max": PRICE_MAX, "fee": FEE, "late_fee": LATE_FEE, "bank_buy_markup": BANK_MARKUP,
                  "bank_sell_markdown": BANK_MARKDOWN, "max_types_held": MAX_TYPES_HELD,
                  "reward_each": REWARD_EACH, "reward_bank": REWARD_BANK,
                  "dividend_divisor": DIVIDEND_DIVISOR},
        "over": over,
    }
    if seat is not None and 0 <= seat < n and state.hands:   # not before the deal
        out["you"] = {"seat": seat, "hand": sorted(state.hands[seat]),
                      "objective": objective_json(state.objectives[seat]),
                      "objective_met_now": objective_met(state, seat)}
    if over:
        out["hands"] = [sorted(h) for h in state.hands]
        out["objectives"] = [objective_json(o) for o in state.objectives]
        out["end_reason"] = state.end_reason
        out["result"] = result(state)
    return out


def redact(state: State, event: dict, seat: Optional[int]) -> Optional[dict]:
    kind = event["type"]
    if kind == "game_started":
        out = {k: v for k, v in event.items() if k not in ("event_deck", "objective_decks")}
        out["event_deck_count"] = len(event["event_deck"])
        out["objective_deck_counts"] = [len(d) for d in event["objective_decks"]]
        return out
    if kind == "deck_reshuffled":
        return {"type": kind, "count": len(event["order"])}
    if kind not in ("cards_dealt", "card_drawn", "objective_dealt") or seat == event["seat"]:
        return event
    if kind == "cards_dealt":
        return {"type": kind, "seat": event["seat"], "count": len(event["cards"])}
    if kind == "card_drawn":
        return {"type": kind, "seat": event["seat"]}
    return {"type": kind, "seat": event["seat"], "level": event["level"]}      # objective_dealt

# ---------------------------------------------------------------------------------------------
# Ledger
# ---------------------------------------------------------------------------------------------


def _card_asset(card: str) -> str:
    return f"event:{card}"


def _objective_asset(oid: str) -> str:
    return f"objective:{oid}"


def _share_asset(t: int) -> str:
    return f"share:{SHARES[t]}"


def _account(seat: Optional[int]) -> str:
    return BANK if seat is None else seat_account(seat)


def _tr_game_started(s: State, e: dict) -> list[Transfer]:
    setup = e["setup"]
    out = []
    for q in range(e["players"]):
        out.append(Transfer(SUPPLY, seat_account(q), MONEY, setup["player_money"]))
        out.extend(Transfer(SUPPLY, seat_account(q), _share_asset(t), setup["player_shares"]) for t in range(NT))
    out.append(Transfer(SUPPLY, BANK, MONEY, setup["bank_money"]))
    out.extend(Transfer(SUPPLY, BANK, _share_asset(t), setup["bank_shares"]) for t in range(NT))
    # In canonical order, never the deck order.
    out.extend(Transfer(SUPPLY, EVENT_DECK, _card_asset(c), k) for c, k in sorted(Counter(e["event_deck"]).items()))
    out.extend(Transfer(SUPPLY, OBJECTIVE_DECK, _objective_asset(o), 1, visible_to=(), redacted_asset="objective")
               for o in sorted(o for deck in e["objective_decks"] for o in deck))
    return out


def _tr_cards_dealt(s: State, e: dict) -> list[Transfer]:
    seat = e["seat"]
    return [Transfer(EVENT_DECK, seat_account(seat), _card_asset(c), k, visible_to=(seat,), redacted_asset="event_card")
            for c, k in sorted(Counter(e["cards"]).items())]


def _tr_card_drawn(s: State, e: dict) -> list[Transfer]:
    seat = e["seat"]
    return [Transfer(EVENT_DECK, seat_account(seat), _card_asset(e["card"]), 1, visible_to=(seat,),
                     redacted_asset="event_card")]


def _tr_objective_dealt(s: State, e: dict) -> list[Transfer]:
    seat = e["seat"]
    return [Transfer(OBJECTIVE_DECK, seat_account(seat), _objective_asset(e["objective"]), 1, visible_to=(seat,),
                     redacted_asset="objective")]


def _tr_fee(s: State, e: dict) -> list[Transfer]:
    return [Transfer(seat_account(e["seat"]), BANK, MONEY, e["amount"])]


def _tr_event_played(s: State, e: dict) -> list[Transfer]:
    return [Transfer(seat_account(e["seat"]), EVENT_DISCARD, _card_asset(e["card"]), 1)]


def _tr_dividends_paid(s: State, e: dict) -> list[Transfer]:
    return [Transfer(BANK, seat_account(p["seat"]), MONEY, p["amount"]) for p in e["payments"] if p["amount"]]


def _tr_deck_reshuffled(s: State, e: dict) -> list[Transfer]:
    return [Transfer(EVENT_DISCARD, EVENT_DECK, _card_asset(c), k) for c, k in sorted(Counter(e["order"]).items())]


def _tr_traded(s: State, e: dict) -> list[Transfer]:
    seller, buyer = _account(e["seller"]), _account(e["buyer"])
    total = e["count"] * e["unit_price"]
    out = [Transfer(seller, buyer, f"share:{e['share']}", e["count"], price=total)]
    if total:
        out.append(Transfer(buyer, seller, MONEY, total))
    return out


def _tr_bankrupt(s: State, e: dict) -> list[Transfer]:
    acct = seat_account(e["seat"])
    out = [Transfer(acct, BANK, MONEY, e["money"])] if e["money"] else []
    out.extend(Transfer(acct, BANK, f"share:{name}", c) for name, c in e["shares"].items())
    out.extend(Transfer(acct, EVENT_DISCARD, _card_asset(c), k) for c, k in sorted(Counter(e["cards"]).items()))
    return out


def _tr_objective_met(s: State, e: dict) -> list[Transfer]:
    return [Transfer(seat_account(e["seat"]), OBJECTIVES_MET, _objective_asset(e["objective"]), 1)]


def _tr_reward_paid(s: State, e: dict) -> list[Transfer]:
    payer, to = _account(e["payer"]), seat_account(e["to"])
    out = [Transfer(payer, to, MONEY, e["money"])] if e["money"] else []
    out.extend(Transfer(payer, to, f"share:{name}", c) for name, c in e["shares"].items())
    return out


_TRANSFERS = {
    "game_started": _tr_game_started,
    "cards_dealt": _tr_cards_dealt,
    "card_drawn": _tr_card_drawn,
    "objective_dealt": _tr_objective_dealt,
    "fee_paid": _tr_fee,
    "late_fee_paid": _tr_fee,
    "event_played": _tr_event_played,
    "dividends_paid": _tr_dividends_paid,
    "deck_reshuffled": _tr_deck_reshuffled,
    "traded": _tr_traded,
    "bankrupt": _tr_bankrupt,
    "objective_met": _tr_objective_met,
    "reward_paid": _tr_reward_paid,
}


def transfers(state: State, event: dict) -> list[Transfer]:
    fn = _TRANSFERS.get(event["type"])
    return fn(state, event) if fn else []
