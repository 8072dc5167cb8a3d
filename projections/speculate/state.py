"""Speculate's state, and the facts about it that the rules, the legal actions and the views
all read (whose turn, what a seat could trade, whether an objective is met).

Seat money is an int per seat; `None` in a trade or reward event means the bank.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from projections.game import check_rules_version, rules_version_field

from .data import (BANK_MARKDOWN, BANK_MARKUP, FIRST_TURN_TYPES, MAX_PLAYERS, MAX_TYPES_HELD, MIN_PLAYERS, NAME,
                   RULES_VERSION, RULES_VERSIONS, economy, parse_objective)


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
    rules_version: int = rules_version_field(RULES_VERSION)


def new_state(options: dict, seats: int, rules_version: int = RULES_VERSION) -> State:
    if not isinstance(seats, int) or isinstance(seats, bool) or not MIN_PLAYERS <= seats <= MAX_PLAYERS:
        raise ValueError(f"speculate takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {seats}")
    check_rules_version(rules_version, RULES_VERSIONS, NAME)
    rounds = options.get("rounds") or economy(seats, rules_version).rounds
    return State(players=seats, rounds=rounds, rules_version=rules_version)


def _set(tup: tuple, i: int, value) -> tuple:
    """The tuple with item i replaced."""
    return tup[:i] + (value,) + tup[i + 1:]


# --- whose turn --------------------------------------------------------------------------------

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


def seats_from(start: int, n: int):
    """start, start+1, ... clockwise, every seat once."""
    return [(start + i) % n for i in range(n)]


def others(state: State, seat: int) -> list[int]:
    """The other seats still in the game, clockwise after `seat`."""
    return [q for q in seats_from(seat, state.players)[1:] if state.alive[q]]


# --- holdings and objectives -------------------------------------------------------------------

def value(state: State, seat: int) -> int:
    """What the seat's shares are worth at the current prices."""
    return sum(c * p for c, p in zip(state.shares[seat], state.prices))


def objective_met(state: State, seat: int) -> bool:
    oid = state.objectives[seat]
    if oid is None:
        return False
    holding = state.shares[seat]
    if sum(1 for c in holding if c) > MAX_TYPES_HELD:
        return False
    _, targets = parse_objective(oid)
    return all(holding[t] * state.prices[t] >= target for t, target in enumerate(targets) if target)


# --- trading -----------------------------------------------------------------------------------

def capacity(state: State, offer: Offer, seat: int) -> int:
    """How much of the rest of `offer` that seat could fill at the market price."""
    if offer.side == "buy":
        return min(offer.remaining, state.shares[seat][offer.share])
    price = state.prices[offer.share]
    return offer.remaining if price == 0 else min(offer.remaining, state.money[seat] // price)


def next_responder(state: State, offer: Offer, after: int) -> Optional[int]:
    """The next seat clockwise after `after` (stopping at the announcer) that can fill any."""
    if offer.remaining == 0:
        return None
    n = state.players
    q = after
    while True:
        q = (q + 1) % n
        if q == offer.announcer:
            return None
        if state.alive[q] and capacity(state, offer, q) > 0:
            return q


def bank_fill(state: State, side: str, share: int, remaining: int) -> tuple[int, int]:
    """(count, unit price) the bank fills of what is still open."""
    price = state.prices[share]
    if side == "buy":
        return min(remaining, state.bank_shares[share]), price + BANK_MARKUP
    unit = max(price - BANK_MARKDOWN, 0)
    return (remaining if unit == 0 else min(remaining, state.bank_money // unit)), unit


def buy_limit(state: State, seat: int, share: int) -> int:
    """The most a buy announcement may ask: affordable at price + markup, and existing."""
    available = state.bank_shares[share] + sum(state.shares[q][share] for q in others(state, seat))
    return min(state.money[seat] // (state.prices[share] + BANK_MARKUP), available)


def sell_fillable(state: State, seat: int, share: int) -> bool:
    """Whether anybody, the bank included, could pay for one share of this type."""
    price = state.prices[share]
    if any(price == 0 or state.money[q] >= price for q in others(state, seat)):
        return True
    unit = max(price - BANK_MARKDOWN, 0)
    return unit == 0 or state.bank_money >= unit


def type_allowed(state: State, share: int) -> bool:
    """Whether an announcement may name this share type (a first turn names at most a few)."""
    return not state.first_turn or share in state.traded_types or len(state.traded_types) < FIRST_TURN_TYPES
