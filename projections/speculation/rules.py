"""Speculation, the Georgian card game (game id `speculation`): the rules, as a pure decider.

Rules as implemented: docs/games/speculation.md. Summary: every player antes into a pot,
each gets a face-down pile nobody may look at, a turned-up card fixes trumps, piles are
revealed one card at a time in rotation, and whoever holds the highest trump revealed when
the piles run out wins the pot. The holder of the best trump may auction it after every
reveal (an open ascending auction); with `blind_exchanges` players may also auction the top
face-down card of their own pile.

Cards are ints inside the state (suit * 13 + rank, rank 0 = deuce .. 12 = ace) and
two-character codes in events and views ("QH", "TS": rank 23456789TJQKA, suit CDHS).
Piles are indexed by seat; index `n` (the number of players) is the dead hand.

Read top to bottom: constants, options, state, the table (rotation and auctions), evolve
(one function per event), the automatic events, decide (one function per action, in the
`ACTIONS` table), legal actions and result. The view is in `view.py`, the ledger in
`ledger.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Optional

from marshmallow import RAISE, Schema, fields, validate

from projections.game import IllegalAction, check_rules_version, replace, rules_version_field
from projections.kernel import Action, Actions, Batch, Int, StrictBoolean, emitting, evolver

NAME = "speculation"
# 2: the default stack is 2.5 x players x ante (rounded up); `ante` given alone is the
# dealer's ante too; every `stock` counts the cards left after the turn-up.
RULES_VERSION = 2
RULES_VERSIONS = (1, 2)
MIN_PLAYERS = 3
MAX_PLAYERS = 8
HIDDEN_INFORMATION = True

RANKS = "23456789TJQKA"
SUITS = "CDHS"
DECK_SIZE = 52
ACE = 12
JACK = 9
FIVE = 3
CODES = tuple(r + s for s in SUITS for r in RANKS)  # card int -> code
CARD_OF = {code: i for i, code in enumerate(CODES)}  # code -> card int
ALL_CARDS = tuple(range(DECK_SIZE))

# hand_size -> (ante, dealer_ante) defaults
DEFAULT_ANTES = {3: (4, 6), 4: (5, 8), 5: (6, 10)}

# Phases. Players act in REVEAL, SALE, BIDDING, CLOSE, BLIND; the others are automatic
# (decide and start emit their events by themselves) or final.
NEW = "new"
PREDEAL = "predeal"          # auto: antes (or the end of the session)
SHUFFLE = "shuffle"          # auto: the deal (shuffled deck)
TURNUP = "turnup"            # auto: the turn-up
REVEAL = "reveal"            # actor reveals the top card of their pile
DEAD_REVEAL = "dead_reveal"  # auto: the dead hand reveals
SALE = "sale"                # actor (holder) keeps or offers the best trump
BIDDING = "bidding"          # actor bids or passes
CLOSE = "close"              # actor (seller) accepts or declines the high bid
BLIND = "blind"              # actor may offer the top face-down card of their pile
SETTLE = "settle"            # auto: the end of the deal (pot to the winner)
OVER = "over"
AUTO_PHASES = frozenset((PREDEAL, SHUFFLE, TURNUP, DEAD_REVEAL, SETTLE))
PLAYER_PHASES = frozenset((REVEAL, SALE, BIDDING, CLOSE, BLIND))

KIND_TRUMP = "trump"
KIND_BLIND = "blind"


# --------------------------------------------------------------------------- options

class OptionsSchema(Schema):
    class Meta:
        unknown = RAISE

    hand_size = fields.Integer(strict=True, load_default=3, validate=validate.OneOf([3, 4, 5]))
    ante = fields.Integer(strict=True, load_default=None, allow_none=True,
                          validate=validate.Range(min=1, max=1000),
                          metadata={"description": "null: by hand size (3: 4, 4: 5, 5: 6)"})
    dealer_ante = fields.Integer(strict=True, load_default=None, allow_none=True,
                                 validate=validate.Range(min=1, max=1000),
                                 metadata={"description": "null: the ante when `ante` is given, else by hand size "
                                                          "(3: 6, 4: 8, 5: 10)"})
    starting_chips = fields.Integer(strict=True, load_default=None, allow_none=True,
                                    validate=validate.Range(min=1, max=1_000_000),
                                    metadata={"description": "null: 2.5 x players x ante, rounded up"})
    deals = fields.Integer(strict=True, load_default=None, allow_none=True,
                           validate=validate.Range(min=1, max=200))
    jack_five_bonus = StrictBoolean(load_default=False)
    dead_hand = StrictBoolean(load_default=False)
    blind_exchanges = StrictBoolean(load_default=False)
    price_cap = fields.Integer(strict=True, load_default=None, allow_none=True,
                               validate=validate.Range(min=1, max=100))

# --------------------------------------------------------------------------- state

@dataclass(frozen=True)
class Config:
    n: int
    hand_size: int
    ante: int
    dealer_ante: int
    starting_chips: int
    deals: int
    jack_five_bonus: bool
    dead_hand: bool
    blind_exchanges: bool
    price_cap: Optional[int]      # in antes, as the option says
    cap: int                      # the highest bid allowed, in chips (a huge number if no cap)
    rotation_len: int             # n, plus 1 with a dead hand


@dataclass(frozen=True)
class State:
    cfg: Config
    phase: str = NEW
    chips: tuple = ()
    pot: int = 0
    house: int = 0
    deal_no: int = 0              # deals started so far (1-based number of the current deal)
    dealer: int = 0
    history: tuple = ()           # ((deal, dealer, winner or -1, amount), ...)
    end_reason: str = ""
    # the current deal
    piles: tuple = ()             # face-down piles, top first; index n = the dead hand
    pending_turn_up: int = -1     # the card under the piles (secret until turned up)
    trump: int = -1               # the trump suit
    table: tuple = ()             # revealed cards: ((card, revealed_by (-1 turn-up, n dead), owner), ...)
    best: int = -1                # the best trump (card int)
    best_idx: int = -1            # its index in `table`
    holder: int = -1              # owner of the best trump (n = the dead hand)
    cursor: int = 0               # rotation index of the last revealer
    actor: int = -1               # the seat to act (or n for the dead hand's reveal)
    # the current auction / blind round
    kind: str = ""
    seller: int = -1
    high: int = 0
    high_bidder: int = -1
    active: tuple = ()            # seats still in the auction
    blind_k: int = 0              # blind round: offset from its base seat of the current offerer
    rules_version: int = rules_version_field(RULES_VERSION)


def default_stakes(options: dict, seats: int, rules_version: int = RULES_VERSION) -> tuple[int, int, int]:
    """(ante, dealer_ante, starting_chips) from the options, defaults filled in.

    Version 2: `ante` given without `dealer_ante` is the dealer's ante too, and the default
    stack is 2.5 x players x ante rounded up, enough for a whole session's antes at every
    hand size. Version 1: the antes' defaults by hand size each, and 10 x players chips."""
    hand = options.get("hand_size", 3)
    ante = options.get("ante") or DEFAULT_ANTES[hand][0]
    dealer_ante = options.get("dealer_ante")
    if not dealer_ante:
        given_alone = rules_version >= 2 and options.get("ante")
        dealer_ante = ante if given_alone else DEFAULT_ANTES[hand][1]
    chips = options.get("starting_chips")
    if not chips:
        chips = (5 * seats * ante + 1) // 2 if rules_version >= 2 else 10 * seats
    return ante, dealer_ante, chips


def new_state(options: dict, seats: int, rules_version: int = RULES_VERSION) -> State:
    if not MIN_PLAYERS <= seats <= MAX_PLAYERS:
        raise ValueError(f"speculation needs {MIN_PLAYERS} to {MAX_PLAYERS} players, not {seats}")
    check_rules_version(rules_version, RULES_VERSIONS, NAME)
    hand = options.get("hand_size", 3)
    ante, dealer_ante, starting_chips = default_stakes(options, seats, rules_version)
    cap_antes = options.get("price_cap")
    cfg = Config(
        n=seats, hand_size=hand, ante=ante, dealer_ante=dealer_ante,
        starting_chips=starting_chips,
        deals=options.get("deals") or 2 * seats,
        jack_five_bonus=bool(options.get("jack_five_bonus", False)),
        dead_hand=bool(options.get("dead_hand", False)),
        blind_exchanges=bool(options.get("blind_exchanges", False)),
        price_cap=cap_antes,
        cap=cap_antes * ante if cap_antes else 1 << 60,
        rotation_len=seats + (1 if options.get("dead_hand") else 0),
    )
    return State(cfg=cfg, chips=(0,) * seats, rules_version=rules_version)


# --------------------------------------------------------------------------- the table

def pile_at(state: State, idx: int) -> int:
    """The pile (seat, or n for the dead hand) at rotation index idx (0 = left of dealer)."""
    n = state.cfg.n
    return n if idx == n else (state.dealer + 1 + idx) % n


def _rotation_index(state: State, pile: int) -> int:
    n = state.cfg.n
    return n if pile == n else (pile - state.dealer - 1) % n


def _next_revealer(state: State) -> int:
    """Rotation index of the next pile to reveal, or -1 when the deal is over.

    The holder (a seat) is skipped, as are empty piles. The dead hand holding the best
    trump has no holder: it is not skipped.
    """
    length = state.cfg.rotation_len
    skip = state.holder if state.holder < state.cfg.n else -1
    piles = state.piles
    cursor = state.cursor
    for step in range(1, length + 1):
        idx = (cursor + step) % length
        pile = pile_at(state, idx)
        if pile != skip and piles[pile]:
            return idx
    return -1


def _someone_can_pay(chips: tuple, seller: int) -> bool:
    for seat, amount in enumerate(chips):
        if seat != seller and amount > 0:
            return True
    return False


def max_bid(state: State, seat: int) -> int:
    chips = state.chips[seat]
    cap = state.cfg.cap
    return chips if chips < cap else cap


# The transitions below take the changes still to make and copy the state once where they can
# (copies are most of a fold's cost).
_NO_AUCTION = {"kind": "", "seller": -1, "high": 0, "high_bidder": -1, "active": ()}
_NO_BLIND_ROUND = {**_NO_AUCTION, "blind_k": 0}


def _decision_point(state: State, changes: dict) -> State:
    """Right after the turn-up or a reveal, whose `changes` are not in `state` yet: the
    holder's sale decision comes first."""
    holder = changes.get("holder", state.holder)
    if holder < state.cfg.n and _someone_can_pay(changes.get("chips", state.chips), holder):
        return replace(state, phase=SALE, actor=holder, **changes, **_NO_AUCTION)
    return _after_sale(replace(state, **changes))


def _after_sale(state: State) -> State:
    """The sale decision is over (kept, sold or not sold): blind offers, the next reveal or
    the end of the deal."""
    idx = _next_revealer(state)
    if idx >= 0 and state.cfg.blind_exchanges:
        return _blind_next(state, 0)
    return _to_reveal(state, idx, _NO_AUCTION)


def _blind_base(state: State) -> int:
    return state.holder if state.holder < state.cfg.n else state.dealer


def _blind_next(state: State, k: int) -> State:
    """The next player (after offset k from the holder) who may offer a blind card."""
    n = state.cfg.n
    base = _blind_base(state)
    piles, chips = state.piles, state.chips
    for offset in range(k + 1, n + 1):
        seat = (base + offset) % n
        if piles[seat] and _someone_can_pay(chips, seat):
            return replace(state, phase=BLIND, actor=seat, blind_k=offset, **_NO_AUCTION)
    return _to_reveal(state, _next_revealer(state), _NO_BLIND_ROUND)


def _to_reveal(state: State, idx: int, changes: dict) -> State:
    """The reveal of the pile at rotation index `idx` (-1: the end of the deal), with
    `changes` to the state."""
    if idx < 0:
        return replace(state, phase=SETTLE, actor=-1, **changes)
    pile = pile_at(state, idx)
    return replace(state, phase=DEAD_REVEAL if pile == state.cfg.n else REVEAL, actor=pile, **changes)


def _open_auction(state: State, kind: str, seller: int) -> State:
    n = state.cfg.n
    chips = state.chips
    active = tuple([s for s in [(seller + k) % n for k in range(1, n)] if chips[s] > 0])
    return _next_bidder(state, seller, 0, -1, active, {"kind": kind, "seller": seller})


def _next_bidder(state: State, after: int, high: int, high_bidder: int, active: tuple,
                 opening: Optional[dict] = None) -> State:
    """Drop bidders who cannot raise; the next one after `after`, or the auction's end.
    `opening` holds the kind and seller of an auction that opens now."""
    if high >= state.cfg.cap:
        active = (high_bidder,) if high_bidder >= 0 else ()
    else:
        chips = state.chips
        active = tuple([s for s in active if s == high_bidder or chips[s] > high])
    n = state.cfg.n
    seat, steps = -1, n   # the first bidder clockwise after `after` (the high bidder waits)
    for bidder in active:
        if bidder != high_bidder and (bidder - after - 1) % n < steps:
            seat, steps = bidder, (bidder - after - 1) % n
    if seat >= 0:
        return replace(state, phase=BIDDING, actor=seat, active=active, high=high,
                       high_bidder=high_bidder, **(opening or {}))
    # nobody left but (perhaps) the high bidder (never at the opening: nobody has bid)
    if high_bidder >= 0:
        return replace(state, phase=CLOSE, actor=state.seller, active=active, high=high,
                       high_bidder=high_bidder)
    return _end_auction(state, opening["kind"] if opening else state.kind)


def _end_auction(state: State, kind: str) -> State:
    """No sale: the blind round goes on, or the sale decision is over (both clear the auction)."""
    if kind == KIND_BLIND:
        return _blind_next(state, state.blind_k)
    return _after_sale(state)


# --------------------------------------------------------------------------- evolve

def _ev_session_started(state: State, e: dict) -> State:
    n = state.cfg.n
    return replace(state, phase=PREDEAL, chips=(e["starting_chips"],) * n,
                   dealer=e["first_dealer"])


def _ev_antes(state: State, e: dict) -> State:
    amounts = e["amounts"]
    chips = tuple(c - a for c, a in zip(state.chips, amounts))
    return replace(state, phase=SHUFFLE, chips=chips, pot=state.pot + sum(amounts),
                   deal_no=e["deal"])


def _ev_deal(state: State, e: dict) -> State:
    deck = [CARD_OF[c] for c in e["deck"]]
    length = state.cfg.rotation_len
    hand = state.cfg.hand_size
    piles = [[] for _ in range(state.cfg.n + 1)]
    for j in range(length * hand):
        piles[pile_at(state, j % length)].append(deck[j])
    return replace(state, phase=TURNUP, piles=tuple(tuple(p) for p in piles),
                   pending_turn_up=deck[length * hand], table=(), trump=-1, best=-1,
                   best_idx=-1, holder=-1)


def _ev_turn_up(state: State, e: dict) -> State:
    card = CARD_OF[e["card"]]
    changes = {"pending_turn_up": -1, "trump": card // 13, "best": card, "best_idx": 0,
               "holder": state.dealer, "table": ((card, -1, state.dealer),),
               "cursor": state.cfg.rotation_len - 1}
    if card % 13 == ACE:
        return replace(state, phase=SETTLE, actor=-1, **changes)
    return _decision_point(state, changes)


def _ev_reveal(state: State, e: dict) -> State:
    n = state.cfg.n
    pile = n if e["seat"] is None else e["seat"]
    card = CARD_OF[e["card"]]
    piles = list(state.piles)
    piles[pile] = piles[pile][1:]
    table = state.table + ((card, pile, pile),)
    changes: dict[str, Any] = {"piles": tuple(piles), "table": table,
                               "cursor": _rotation_index(state, pile)}
    bonus = e.get("bonus", 0)
    if bonus:
        chips = list(state.chips)
        chips[pile] -= bonus
        changes["chips"] = tuple(chips)
        changes["pot"] = state.pot + bonus
    if card // 13 == state.trump and card > state.best:
        changes["best"] = card
        changes["best_idx"] = len(table) - 1
        changes["holder"] = pile
    return _decision_point(state, changes)


def _ev_keep(state: State, e: dict) -> State:
    return _after_sale(state)


def _ev_offer(state: State, e: dict) -> State:
    return _open_auction(state, KIND_TRUMP, state.holder)


def _ev_offer_blind(state: State, e: dict) -> State:
    return _open_auction(state, KIND_BLIND, state.actor)


def _ev_keep_blind(state: State, e: dict) -> State:
    return _blind_next(state, state.blind_k)


def _ev_bid(state: State, e: dict) -> State:
    seat = e["seat"]
    return _next_bidder(state, seat, e["amount"], seat, state.active)


def _ev_pass(state: State, e: dict) -> State:
    seat = e["seat"]
    active = tuple([s for s in state.active if s != seat])
    return _next_bidder(state, seat, state.high, state.high_bidder, active)


def _ev_sale(state: State, e: dict) -> State:
    seller, buyer, price = e["seat"], e["buyer"], e["price"]
    chips = list(state.chips)
    chips[seller] += price
    chips[buyer] -= price
    if state.kind == KIND_TRUMP:
        card, by, _owner = state.table[state.best_idx]
        table = list(state.table)
        table[state.best_idx] = (card, by, buyer)
        state = replace(state, chips=tuple(chips), table=tuple(table), holder=buyer)
        return _after_sale(state)
    piles = list(state.piles)
    card = piles[seller][0]
    piles[seller] = piles[seller][1:]
    piles[buyer] = piles[buyer] + (card,)
    state = replace(state, chips=tuple(chips), piles=tuple(piles))
    return _blind_next(state, state.blind_k)


def _ev_decline(state: State, e: dict) -> State:
    return _end_auction(state, state.kind)


def _ev_deal_end(state: State, e: dict) -> State:
    winner = e["winner"]
    chips = state.chips
    pot = state.pot
    if winner is not None:
        chips = list(chips)
        chips[winner] += e["amount"]
        chips = tuple(chips)
        pot -= e["amount"]
    history = state.history + ((e["deal"], state.dealer, -1 if winner is None else winner,
                                e["amount"]),)
    return replace(state, phase=PREDEAL, chips=chips, pot=pot, history=history,
                   dealer=(state.dealer + 1) % state.cfg.n, piles=(), table=(), trump=-1,
                   best=-1, best_idx=-1, holder=-1, actor=-1, cursor=0, kind="", seller=-1,
                   high=0, high_bidder=-1, active=(), blind_k=0, pending_turn_up=-1)


def _ev_session_end(state: State, e: dict) -> State:
    return replace(state, phase=OVER, house=state.house + e["house"], pot=state.pot - e["house"],
                   end_reason=e["reason"], actor=-1)


evolve = evolver({
    "session_started": _ev_session_started,
    "antes": _ev_antes,
    "deal": _ev_deal,
    "turn_up": _ev_turn_up,
    "reveal": _ev_reveal,
    "keep": _ev_keep,
    "offer": _ev_offer,
    "offer_blind": _ev_offer_blind,
    "keep_blind": _ev_keep_blind,
    "bid": _ev_bid,
    "pass": _ev_pass,
    "sale": _ev_sale,
    "decline": _ev_decline,
    "deal_end": _ev_deal_end,
    "session_end": _ev_session_end,
})


# --------------------------------------------------------------------------- automatic events

def _auto_predeal(state: State, rng) -> dict:
    cfg = state.cfg
    if state.deal_no >= cfg.deals:
        return {"type": "session_end", "reason": "deals", "house": state.pot}
    amounts = [cfg.dealer_ante if s == state.dealer else cfg.ante for s in range(cfg.n)]
    short = [s for s in range(cfg.n) if state.chips[s] < amounts[s]]
    if short:
        return {"type": "session_end", "reason": "ante", "short": short, "house": state.pot}
    return {"type": "antes", "deal": state.deal_no + 1, "dealer": state.dealer,
            "amounts": amounts}


def stock_after_turn_up(state: State) -> int:
    """The cards left in the stock once the piles are dealt and the trump turned up. (Version
    1's `deal` event counted the turn-up in; views never did.)"""
    cfg = state.cfg
    return DECK_SIZE - cfg.rotation_len * cfg.hand_size - 1


def _auto_shuffle(state: State, rng) -> dict:
    cfg = state.cfg
    deck = rng.shuffle(f"deck:{state.deal_no}", ALL_CARDS)
    dealt = cfg.rotation_len * cfg.hand_size
    return {"type": "deal", "deal": state.deal_no, "dealer": state.dealer,
            "deck": [CODES[c] for c in deck],
            "piles": [cfg.hand_size] * cfg.n,
            "dead_hand": cfg.hand_size if cfg.dead_hand else None,
            "stock": stock_after_turn_up(state) if state.rules_version >= 2 else DECK_SIZE - dealt}


def _auto_turn_up(state: State, rng) -> dict:
    return {"type": "turn_up", "deal": state.deal_no, "dealer": state.dealer,
            "card": CODES[state.pending_turn_up]}


def _auto_dead_reveal(state: State, rng) -> dict:
    n = state.cfg.n
    return {"type": "reveal", "seat": None, "card": CODES[state.piles[n][0]], "bonus": 0}


def _auto_settle(state: State, rng) -> dict:
    holder = state.holder
    n = state.cfg.n
    ace = len(state.table) == 1 and state.best % 13 == ACE
    if holder < n:
        return {"type": "deal_end", "deal": state.deal_no, "winner": holder,
                "card": CODES[state.best], "amount": state.pot,
                "reason": "ace" if ace else "reveal"}
    return {"type": "deal_end", "deal": state.deal_no, "winner": None,
            "card": CODES[state.best], "amount": state.pot, "reason": "dead_hand"}


# One automatic phase, one event; the kernel runs them until a player must act.
AUTOMATIC = {PREDEAL: emitting(_auto_predeal), SHUFFLE: emitting(_auto_shuffle),
             TURNUP: emitting(_auto_turn_up), DEAD_REVEAL: emitting(_auto_dead_reveal),
             SETTLE: emitting(_auto_settle)}


def _automatic_step(state: State):
    return AUTOMATIC.get(state.phase)


# --------------------------------------------------------------------------- start / decide

def _open_session(batch: Batch, rng) -> None:
    cfg = batch.state.cfg
    first = rng.below("first_dealer", cfg.n)
    batch.emit({"type": "session_started", "players": cfg.n, "first_dealer": first,
                "starting_chips": cfg.starting_chips})


def start(state: State, rng) -> list[dict]:
    return ACTIONS.start(state, rng, _open_session)


def to_act(state: State) -> list[int]:
    if state.phase in PLAYER_PHASES:
        return [state.actor]
    return []


def is_over(state: State) -> bool:
    return state.phase == OVER


def _reveal(batch: Batch, seat: int, action: dict, rng) -> None:
    state = batch.state
    card = state.piles[seat][0]
    bonus = 0
    if state.cfg.jack_five_bonus and card % 13 in (JACK, FIVE) and state.chips[seat] > 0:
        bonus = 1
    batch.emit({"type": "reveal", "seat": seat, "card": CODES[card], "bonus": bonus})


def _offer(batch: Batch, seat: int, action: dict, rng) -> None:
    batch.emit({"type": "offer", "seat": seat, "card": CODES[batch.state.best]})


def bid_range(state: State, seat: int) -> tuple[int, int]:
    """The bids this seat may make now, (lowest, highest): the one statement of the rule, read
    by the decider and by the legal actions."""
    return state.high + 1, max_bid(state, seat)


def _bid(batch: Batch, seat: int, action: dict, rng) -> None:
    amount = action["amount"]
    low, high = bid_range(batch.state, seat)
    if not low <= amount <= high:
        raise IllegalAction(f"'amount' must be between {low} and {high}", field="amount")
    batch.emit({"type": "bid", "seat": seat, "amount": amount})


def _accept(batch: Batch, seat: int, action: dict, rng) -> None:
    state = batch.state
    event = {"type": "sale", "kind": state.kind, "seat": seat, "buyer": state.high_bidder,
             "price": state.high}
    if state.kind == KIND_TRUMP:
        event["card"] = CODES[state.best]
    batch.emit(event)


def _as_event(batch: Batch, seat: int, action: dict, rng) -> None:
    """keep, pass, decline, keep_blind, offer_blind: the event is the action and the seat."""
    batch.emit({"type": action["type"], "seat": seat})


def _in(phase: str) -> frozenset:
    return frozenset((phase,))


def _legal(state: State, seat: int) -> list[dict]:
    """What the actor may do (the kernel's guard has checked that `seat` is the actor)."""
    phase = state.phase
    if phase == BIDDING:
        low, high = bid_range(state, seat)
        return [{"type": "bid", "amount": {"min": low, "max": high}}, {"type": "pass"}]
    return [{"type": kind} for kind in PHASE_ACTIONS[phase]]


# The OpenAPI components keep the names of the schema classes this table replaced.
ACTIONS = Actions(NAME, [
    Action("reveal", _reveal, phases=_in(REVEAL), schema_name="RevealAction"),
    Action("keep", _as_event, phases=_in(SALE), schema_name="KeepAction"),
    Action("offer", _offer, phases=_in(SALE), schema_name="OfferAction"),
    Action("bid", _bid, {"amount": Int(min=1)}, phases=_in(BIDDING), schema_name="BidAction"),
    Action("pass", _as_event, phases=_in(BIDDING), schema_name="PassAction"),
    Action("accept", _accept, phases=_in(CLOSE), schema_name="AcceptAction"),
    Action("decline", _as_event, phases=_in(CLOSE), schema_name="DeclineAction"),
    Action("keep_blind", _as_event, phases=_in(BLIND), schema_name="KeepBlindAction"),
    Action("offer_blind", _as_event, phases=_in(BLIND), schema_name="OfferBlindAction"),
], players=attrgetter("cfg.n"), to_act=to_act, is_over=is_over, phase=attrgetter("phase"), evolve=evolve,
   legal=_legal, automatic=_automatic_step)
decide = ACTIONS.decide
ACTION_SCHEMAS = ACTIONS.schemas
PHASE_ACTIONS = {phase: tuple(kind for kind, spec in ACTIONS.by_type.items() if phase in spec.phases)
                 for phase in PLAYER_PHASES}   # each in the order legal_actions lists them


# --------------------------------------------------------------------------- legal actions / result

legal_actions = ACTIONS.legal_actions


def result(state: State) -> dict:
    scores = list(state.chips)
    ranks = [1 + sum(1 for other in scores if other > mine) for mine in scores]
    return {"winners": [s for s, r in enumerate(ranks) if r == 1], "ranks": ranks,
            "scores": scores}
