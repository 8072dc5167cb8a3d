"""Spekulation (Dirk Henn, 1992): the stock race, both editions and both board sides.

Rules: /work/shared/games/spekulation.md (docs: docs/games/spekulation.md).

Eight company markers race along a track of 60 spaces. A company's share price is read
from the table of the section its marker stands in, at the company's rank. Each turn the
active player rolls the symbol die (``dice`` edition) or draws an action tile (``tiles``
edition): a trade round, a +1 / -1 rank move, or nothing; then the number die / a move tile
gives a distance, every player secretly commits one of their two hand cards and the
companies on the revealed cards move (unless a bank holiday card stops them).

Positions are ints: 0 is the start, ``END_SPACE[edition]`` is the END (61 with dice, 60
with tiles); the spaces in between hold at most one marker each.

The price tables are data (projections/data/spekulation.json, RECONSTRUCTED, replaceable).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from marshmallow import RAISE, Schema, fields, validate

from projections.game import BANK, IllegalAction, Transfer, replace, seat_account


NAME = "spekulation"
RULES_VERSION = 1
MIN_PLAYERS = 3
MAX_PLAYERS = 6
HIDDEN_INFORMATION = True

COMPANIES = ("red", "yellow", "dark-blue", "light-blue", "green", "orange", "brown", "grey")
N_COMPANIES = len(COMPANIES)
COMPANY_INDEX = {name: i for i, name in enumerate(COMPANIES)}
HOLIDAY = "holiday"
CARDS = COMPANIES + (HOLIDAY,)
DECK_SIZE = len(CARDS)                 # 9
HAND_SIZE = 2
START = 0
END_SPACE = {"dice": 61, "tiles": 60}  # the END; the track runs 1 .. END-1
SECTION_SIZE = 10
START_MONEY = 20
EDITIONS = ("dice", "tiles")
BOARDS = ("plain", "star")

SYMBOL_FACES = ("H", "H", "H", "+1", "-1", "blank")   # the dice edition's symbol die
FACE_ACTION = {"H": "trade", "+1": "+1", "-1": "-1", "blank": "none"}
ACTION_TILES = ("trade", "trade", "trade", "+1", "-1", "none")
MOVE_TILES = (1, 2, 3, 4, 5, 6)
ACTION_PHASE = {"trade": "trade", "+1": "rank_move", "-1": "rank_move", "none": "movement"}

SUPPLY = "supply"   # the share supply next to the board
BOX = "box"         # where the decks come from (the game box)

DATA_PATH = Path(__file__).with_name("data") / "spekulation.json"


# ---------------------------------------------------------------------------------------
# Price tables (data file, loaded at import)

def load_tables(path: Path = DATA_PATH) -> tuple[int, dict[str, tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]]]:
    """Read and check the price tables: (start price, {board: (sections, end list)})."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    start_price = data["start_price"]
    if type(start_price) is not int:
        raise ValueError("spekulation data: start_price must be an integer")
    boards = {}
    for board in BOARDS:
        table = data["boards"][board]
        sections = tuple(tuple(row) for row in table["sections"])
        end = tuple(table["end"])
        if len(sections) != 6 or any(len(row) != N_COMPANIES for row in sections) \
                or len(end) != N_COMPANIES:
            raise ValueError(f"spekulation data: board {board} needs 6 sections x 8 ranks and 8 END prices")
        if any(type(v) is not int for row in sections + (end,) for v in row):
            raise ValueError(f"spekulation data: board {board} prices must be integers")
        boards[board] = (sections, end)
    return start_price, boards


START_PRICE, TABLES = load_tables()


# ---------------------------------------------------------------------------------------
# Options and action schemas

class OptionsSchema(Schema):
    class Meta:
        unknown = RAISE

    edition = fields.String(load_default="dice", validate=validate.OneOf(EDITIONS))
    board = fields.String(load_default="plain", validate=validate.OneOf(BOARDS))


def _type_field(name: str):
    return fields.String(required=True, validate=validate.OneOf([name]))


class ChooseShareSchema(Schema):
    type = _type_field("choose_share")
    company = fields.String(required=True, validate=validate.OneOf(COMPANIES))


class BuySchema(Schema):
    type = _type_field("buy")
    company = fields.String(required=True, validate=validate.OneOf(COMPANIES))


class SellSchema(Schema):
    type = _type_field("sell")
    company = fields.String(required=True, validate=validate.OneOf(COMPANIES))


class PassSchema(Schema):
    type = _type_field("pass")


class RankMoveSchema(Schema):
    type = _type_field("rank_move")
    company = fields.String(required=True, validate=validate.OneOf(COMPANIES))


class PlaySchema(Schema):
    type = _type_field("play")
    card = fields.String(required=True, validate=validate.OneOf(CARDS))


ACTION_SCHEMAS = {
    "choose_share": ChooseShareSchema,
    "buy": BuySchema,
    "sell": SellSchema,
    "pass": PassSchema,
    "rank_move": RankMoveSchema,
    "play": PlaySchema,
}

# field name -> allowed values, per action type
_ACTION_FIELDS = {
    "choose_share": {"company": COMPANIES},
    "buy": {"company": COMPANIES},
    "sell": {"company": COMPANIES},
    "pass": {},
    "rank_move": {"company": COMPANIES},
    "play": {"card": CARDS},
}
_ACTION_PHASE = {"choose_share": "setup", "buy": "trade", "sell": "trade", "pass": "trade",
                 "rank_move": "rank_move", "play": "commit"}


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


def new_state(options: dict, seats: int) -> State:
    if not MIN_PLAYERS <= seats <= MAX_PLAYERS:
        raise ValueError(f"spekulation needs {MIN_PLAYERS}-{MAX_PLAYERS} players")
    edition = options.get("edition", "dice")
    board = options.get("board", "plain")
    if edition not in EDITIONS or board not in BOARDS:
        raise ValueError("bad spekulation options")
    n = seats
    return State(
        edition=edition, board=board, players=n, end=END_SPACE[edition],
        money=(0,) * n, shares=((0,) * N_COMPANIES,) * n,
        decks=((),) * n, drawn=(0,) * n, hands=((),) * n, discards=((),) * n,
        commits=(None,) * n,
    )


# ---------------------------------------------------------------------------------------
# Prices and ranks

def ranks(state: State) -> list[int]:
    """Rank per company (1 = first): END by arrival, then the track by position, then the
    start (markers on the start share the rank after every marker off the start)."""
    end = state.end
    out = [0] * N_COMPANIES
    for i, c in enumerate(state.arrivals):
        out[c] = i + 1
    ahead = len(state.arrivals)
    track = sorted(((p, c) for c, p in enumerate(state.positions) if START < p < end), reverse=True)
    for k, (_, c) in enumerate(track):
        out[c] = ahead + k + 1
    off = ahead + len(track)
    for c, p in enumerate(state.positions):
        if p == START:
            out[c] = off + 1
    return out


def price_at(board: str, position: int, rank: int, arrival: int, end: int) -> int:
    """The table price of a marker at `position` with `rank` (arrival: 0-based, END only)."""
    if position == START:
        return START_PRICE
    sections, end_list = TABLES[board]
    if position >= end:
        return end_list[arrival]
    return sections[(position - 1) // SECTION_SIZE][rank - 1]


def prices(state: State) -> list[int]:
    rk = ranks(state)
    out = []
    for c, p in enumerate(state.positions):
        arrival = state.arrivals.index(c) if p == state.end else 0
        out.append(price_at(state.board, p, rk[c], arrival, state.end))
    return out


def price(state: State, company: int) -> int:
    return prices(state)[company]


# ---------------------------------------------------------------------------------------
# Marker movement

def _occupied(positions: tuple, mover: int, end: int) -> set:
    return {p for c, p in enumerate(positions) if c != mover and START < p < end}


def forward(positions: tuple, company: int, steps: int, end: int) -> int:
    """Where `company` lands moving `steps` spaces forward, occupied spaces not counted."""
    p = positions[company]
    if p >= end:
        return end
    occupied = _occupied(positions, company, end)
    for _ in range(steps):
        p += 1
        while p < end and p in occupied:
            p += 1
        if p >= end:
            return end
    return p


def plus_one_target(state: State, company: int) -> Optional[int]:
    """Where a +1 rank move puts `company`, or None when it is not allowed."""
    end = state.end
    p = state.positions[company]
    if p >= end:
        return None
    ahead = [q for c, q in enumerate(state.positions) if c != company and p < q < end]
    if not ahead:
        if not state.arrivals:
            return None            # first place (or everyone on the start)
        return end                 # only END markers ahead: it joins them
    occupied = _occupied(state.positions, company, end)
    t = min(ahead) + 1
    while t < end and t in occupied:
        t += 1
    return min(t, end)


def minus_one_target(state: State, company: int) -> Optional[int]:
    """Where a -1 rank move puts `company`, or None when it is not allowed."""
    end = state.end
    p = state.positions[company]
    if p == START or p >= end:
        return None
    behind = [q for c, q in enumerate(state.positions) if c != company and START < q < p]
    if not behind:
        if START not in state.positions:
            return None            # last place
        return START               # only start markers behind: it returns to the start
    occupied = _occupied(state.positions, company, end)
    t = max(behind) - 1
    while t > START and t in occupied:
        t -= 1
    return max(t, START)


def rank_move_target(state: State, company: int, direction: str) -> Optional[int]:
    return plus_one_target(state, company) if direction == "+1" else minus_one_target(state, company)


def rank_move_candidates(state: State, direction: str) -> list[int]:
    return [c for c in range(N_COMPANIES) if rank_move_target(state, c, direction) is not None]


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


def _phase_for_action(state: State, action: str) -> State:
    phase = ACTION_PHASE[action]
    if phase == "trade":
        return replace(state, action=action, phase="trade", trade_seat=state.active, trades_done=0)
    return replace(state, action=action, phase=phase)


def can_buy(state: State, seat: int, company: int) -> bool:
    if state.supply[company] <= 0:
        return False
    return price(state, company) <= state.money[seat]


def can_sell(state: State, seat: int, company: int) -> bool:
    if state.shares[seat][company] <= 0:
        return False
    return -price(state, company) <= state.money[seat]


def scores(state: State) -> list[int]:
    pr = prices(state)
    return [state.money[s] + sum(k * pr[c] for c, k in enumerate(state.shares[s]))
            for s in range(state.players)]


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
        return replace(s, trades_done=done, trade_seat=-1, phase="movement")
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
    return replace(_place(s, COMPANY_INDEX[e["company"]], e["from"], e["to"]), phase="movement")


def _ev_rank_move_skipped(s: State, e: dict) -> State:
    return replace(s, phase="movement")


def _ev_number(s: State, e: dict) -> State:
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


EVOLVERS: dict[str, Callable[[State, dict], State]] = {
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
}


def evolve(state: State, event: dict) -> State:
    fn = EVOLVERS.get(event.get("type"))
    if fn is None:
        raise ValueError(f"unknown spekulation event type {event.get('type')!r}")
    return fn(state, event)


# ---------------------------------------------------------------------------------------
# Decide

class _Emitter:
    """Collects events and keeps the state folded up to the last one."""

    __slots__ = ("state", "events")

    def __init__(self, state: State):
        self.state = state
        self.events: list[dict] = []

    def __call__(self, event: dict) -> None:
        self.events.append(event)
        self.state = evolve(self.state, event)


def start(state: State, rng) -> list[dict]:
    em = _Emitter(state)
    n = state.players
    em({"type": "start_player_drawn", "seat": rng.below("start_player", n)})
    em({"type": "supply_filled", "count": n - 1})
    em({"type": "money_dealt", "amount": START_MONEY})
    if state.edition == "tiles":
        drawn = rng.shuffle("share_bag", list(COMPANIES))[:n]
        em({"type": "shares_drawn", "shares": drawn})
    _continue(em, rng)
    return em.events


def _draw_cards(em: _Emitter, seat: int, count: int) -> None:
    s = em.state
    cards = list(s.decks[seat][s.drawn[seat]:s.drawn[seat] + count])
    em({"type": "cards_drawn", "seat": seat, "cards": cards})


def _shuffle_deck(em: _Emitter, rng, seat: int) -> None:
    order = rng.shuffle(f"deck:{seat}:turn{em.state.turn}", list(CARDS))
    em({"type": "deck_shuffled", "seat": seat, "order": order})
    _draw_cards(em, seat, HAND_SIZE)


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


def _resolve(em: _Emitter, rng) -> None:
    s = em.state
    order = _seat_order(s, s.active)
    steps, holidays = _movement_steps(s)
    if steps == 0:
        em({"type": "no_movement", "holidays": holidays})
    else:
        for seat in order:
            card = s.revealed[seat]
            if card == HOLIDAY:
                continue
            c = COMPANY_INDEX[card]
            cur = em.state
            frm = cur.positions[c]
            to = forward(cur.positions, c, steps, cur.end)
            em({"type": "marker_moved", "seat": seat, "company": card, "steps": steps,
                "from": frm, "to": to})
    for seat in order:
        played = len(em.state.discards[seat])
        if played >= DECK_SIZE:
            _shuffle_deck(em, rng, seat)
        elif played < DECK_SIZE - 1:
            _draw_cards(em, seat, 1)
    s = em.state
    if s.edition == "tiles" and s.action == "trade":
        em({"type": "tiles_returned"})
    if _game_ends_now(em.state):
        final = em.state
        em({"type": "game_ended", "scores": scores(final),
            "prices": dict(zip(COMPANIES, prices(final))),
            "arrivals": [COMPANIES[c] for c in final.arrivals]})
    else:
        _start_turn(em)


def _start_turn(em: _Emitter) -> None:
    s = em.state
    seat = s.start_player if s.turn == 0 else (s.active + 1) % s.players
    em({"type": "turn_started", "seat": seat, "turn": s.turn + 1})


def _continue(em: _Emitter, rng) -> None:
    """Run the automatic steps until some seat must act (or the game is over)."""
    while True:
        s = em.state
        phase = s.phase
        if phase == "deal":
            for seat in range(s.players):
                _shuffle_deck(em, rng, seat)
        elif phase == "next_turn":
            _start_turn(em)
        elif phase == "action":
            if s.turn == 1:
                em({"type": "first_turn_trade"})
            elif s.edition == "dice":
                em({"type": "symbol_rolled", "face": SYMBOL_FACES[rng.below(f"symbol:{s.turn}", 6)]})
            else:
                bag = s.action_bag
                em({"type": "action_tile_drawn", "tile": bag[rng.below(f"action_tile:{s.turn}", len(bag))]})
        elif phase == "rank_move" and not rank_move_candidates(s, s.action):
            em({"type": "rank_move_skipped", "direction": s.action})
        elif phase == "movement":
            if s.edition == "dice":
                em({"type": "number_rolled", "number": rng.randint(f"number:{s.turn}", 1, 6)})
            else:
                bag = s.move_bag
                em({"type": "move_tile_drawn", "number": bag[rng.below(f"move_tile:{s.turn}", len(bag))]})
        elif phase == "resolve":
            _resolve(em, rng)
        else:
            return


def _validate(state: State, seat: Any, action: Any) -> tuple[str, Optional[str]]:
    if not isinstance(action, dict):
        raise IllegalAction("the action must be a JSON object", field="action")
    kind = action.get("type")
    if "type" not in action:
        raise IllegalAction("missing field 'type'", field="type")
    if not isinstance(kind, str) or kind not in _ACTION_FIELDS:
        raise IllegalAction(f"unknown action type {kind!r}; expected one of {sorted(_ACTION_FIELDS)}",
                            field="type")
    spec = _ACTION_FIELDS[kind]
    for key in action:
        if key != "type" and key not in spec:
            raise IllegalAction(f"unexpected field {key!r} for action {kind!r}", field=key)
    value = None
    for key, allowed in spec.items():
        if key not in action:
            raise IllegalAction(f"missing field {key!r} for action {kind!r}", field=key)
        value = action[key]
        if not isinstance(value, str):
            raise IllegalAction(f"field {key!r} must be a string", field=key)
        if value not in allowed:
            raise IllegalAction(f"field {key!r} must be one of {list(allowed)}, not {value!r}", field=key)
    if type(seat) is not int or not 0 <= seat < state.players:
        raise IllegalAction(f"no seat {seat!r} in this game", field="seat")
    if state.phase == "over":
        raise IllegalAction("the game is over", field="type")
    if seat not in to_act(state):
        raise IllegalAction(f"seat {seat} may not act now (to act: {to_act(state)})", field="seat")
    if _ACTION_PHASE[kind] != state.phase:
        raise IllegalAction(f"action {kind!r} is not possible in phase {state.phase!r}", field="type")
    return kind, value


def decide(state: State, seat: int, action: dict, rng) -> list[dict]:
    kind, value = _validate(state, seat, action)
    em = _Emitter(state)
    if kind == "choose_share":
        c = COMPANY_INDEX[value]
        if any(state.shares[s][c] for s in range(state.players)):
            raise IllegalAction(f"somebody already has a {value} share: choose another company",
                                field="company")
        em({"type": "share_chosen", "seat": seat, "company": value})
    elif kind == "buy":
        c = COMPANY_INDEX[value]
        if state.supply[c] <= 0:
            raise IllegalAction(f"no {value} share left in the supply", field="company")
        p = price(state, c)
        if p > state.money[seat]:
            raise IllegalAction(f"a {value} share costs {p}, you have {state.money[seat]}", field="company")
        em({"type": "share_bought", "seat": seat, "company": value, "price": p})
    elif kind == "sell":
        c = COMPANY_INDEX[value]
        if state.shares[seat][c] <= 0:
            raise IllegalAction(f"you hold no {value} share", field="company")
        p = price(state, c)
        if -p > state.money[seat]:
            raise IllegalAction(f"selling {value} at {p} costs {-p}, you have {state.money[seat]}",
                                field="company")
        em({"type": "share_sold", "seat": seat, "company": value, "price": p})
    elif kind == "pass":
        em({"type": "trade_passed", "seat": seat})
    elif kind == "rank_move":
        c = COMPANY_INDEX[value]
        target = rank_move_target(state, c, state.action)
        if target is None:
            raise IllegalAction(f"{value} may not move {state.action} rank now", field="company")
        em({"type": "rank_moved", "seat": seat, "company": value, "direction": state.action,
            "from": state.positions[c], "to": target})
    elif kind == "play":
        if value not in state.hands[seat]:
            raise IllegalAction(f"card {value!r} is not in your hand", field="card")
        em({"type": "card_committed", "seat": seat, "card": value})
        if all(card is not None for card in em.state.commits):
            em({"type": "cards_revealed", "cards": list(em.state.commits)})
    _continue(em, rng)
    return em.events


# ---------------------------------------------------------------------------------------
# Queries

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


def legal_actions(state: State, seat: int) -> list[dict]:
    if seat not in to_act(state):
        return []
    phase = state.phase
    if phase == "setup":
        taken = {c for row in state.shares for c, k in enumerate(row) if k}
        return [{"type": "choose_share", "company": name} for c, name in enumerate(COMPANIES)
                if c not in taken]
    if phase == "trade":
        pr = prices(state)
        money = state.money[seat]
        out = [{"type": "pass"}]
        out += [{"type": "buy", "company": name} for c, name in enumerate(COMPANIES)
                if state.supply[c] > 0 and pr[c] <= money]
        out += [{"type": "sell", "company": name} for c, name in enumerate(COMPANIES)
                if state.shares[seat][c] > 0 and -pr[c] <= money]
        return out
    if phase == "rank_move":
        return [{"type": "rank_move", "company": COMPANIES[c]}
                for c in rank_move_candidates(state, state.action)]
    if phase == "commit":
        return [{"type": "play", "card": card} for card in dict.fromkeys(state.hands[seat])]
    return []


def result(state: State) -> dict:
    sc = list(state.final_scores) if state.final_scores is not None else scores(state)
    best = max(sc)
    return {
        "winners": [s for s, v in enumerate(sc) if v == best],
        "ranks": [1 + sum(1 for w in sc if w > v) for v in sc],
        "scores": sc,
    }


def view(state: State, seat: Optional[int]) -> dict:
    rk = ranks(state)
    pr = prices(state)
    over = state.phase == "over"
    out: dict[str, Any] = {
        "game": NAME,
        "edition": state.edition,
        "board": state.board,
        "players": state.players,
        "phase": state.phase,
        "turn": state.turn,
        "start_player": state.start_player,
        "active": state.active,
        "to_act": to_act(state),
        "end_space": state.end,
        "last_track_space": state.end - 1,
        "companies": {
            name: {"position": state.positions[c], "at_start": state.positions[c] == START,
                   "at_end": state.positions[c] >= state.end, "rank": rk[c], "price": pr[c],
                   "supply": state.supply[c]}
            for c, name in enumerate(COMPANIES)
        },
        "arrivals": [COMPANIES[c] for c in state.arrivals],
        "seats": [
            {"seat": s,
             "money": state.money[s] if state.money else 0,
             "shares": {name: state.shares[s][c] for c, name in enumerate(COMPANIES)},
             "hand_count": len(state.hands[s]),
             "deck_count": (DECK_SIZE - state.drawn[s]) if state.decks[s] else 0,
             "discard": list(state.discards[s]),
             "committed": state.phase == "commit" and state.commits[s] is not None}
            for s in range(state.players)
        ],
        "action": state.action,
        "number": state.number if state.phase in ("commit", "resolve") else None,
        "trade_seat": state.trade_seat if state.phase == "trade" else None,
        "trades_done": state.trades_done if state.phase == "trade" else None,
        "last_reveal": list(state.revealed) if state.revealed is not None else None,
        "you": seat,
    }
    if state.edition == "tiles":
        out["action_tiles_in_bag"] = len(state.action_bag)
        out["move_tiles_in_bag"] = len(state.move_bag)
        out["action_tiles_out"] = _missing(ACTION_TILES, state.action_bag)
        out["move_tiles_out"] = _missing(MOVE_TILES, state.move_bag)
    if seat is not None and 0 <= seat < state.players:
        out["hand"] = list(state.hands[seat])
        out["committed_card"] = state.commits[seat] if state.phase == "commit" else None
    if over:
        out["hands"] = [list(h) for h in state.hands]
        out["result"] = result(state)
    return out


def _missing(full: tuple, rest: tuple) -> list:
    out = list(full)
    for item in rest:
        out.remove(item)
    return out


def redact(state: State, event: dict, seat: Optional[int]) -> Optional[dict]:
    kind = event.get("type")
    if kind == "deck_shuffled":
        # the deck order is hidden from everyone, the owner included
        return {"type": kind, "seat": event["seat"], "count": len(event["order"])}
    if kind == "cards_drawn" and seat != event["seat"]:
        return {"type": kind, "seat": event["seat"], "count": len(event["cards"])}
    if kind == "card_committed" and seat != event["seat"]:
        return {"type": kind, "seat": event["seat"]}
    return event


# ---------------------------------------------------------------------------------------
# Ledger

def _money(frm: str, to: str, amount: int) -> list[Transfer]:
    if amount > 0:
        return [Transfer(frm, to, "money", amount)]
    if amount < 0:
        return [Transfer(to, frm, "money", -amount)]
    return []


def transfers(state: State, event: dict) -> list[Transfer]:
    kind = event.get("type")
    if kind == "supply_filled":
        return [Transfer(BANK, SUPPLY, f"share:{name}", event["count"]) for name in COMPANIES]
    if kind == "money_dealt":
        return [Transfer(BANK, seat_account(s), "money", event["amount"]) for s in range(state.players)]
    if kind == "shares_drawn":
        return [Transfer(SUPPLY, seat_account(s), f"share:{name}", 1) for s, name in enumerate(event["shares"])]
    if kind == "share_chosen":
        return [Transfer(SUPPLY, seat_account(event["seat"]), f"share:{event['company']}", 1)]
    if kind == "share_bought":
        acct, p = seat_account(event["seat"]), event["price"]
        return [Transfer(SUPPLY, acct, f"share:{event['company']}", 1, price=p)] + _money(acct, BANK, p)
    if kind == "share_sold":
        acct, p = seat_account(event["seat"]), event["price"]
        return [Transfer(acct, SUPPLY, f"share:{event['company']}", 1, price=p)] + _money(BANK, acct, p)
    if kind == "deck_shuffled":
        seat = event["seat"]
        source = BOX if not state.decks[seat] else f"discard:{seat}"
        return [Transfer(source, f"deck:{seat}", f"card:{card}", 1) for card in CARDS]
    if kind == "cards_drawn":
        seat = event["seat"]
        return [Transfer(f"deck:{seat}", seat_account(seat), f"card:{card}", 1, visible_to=(seat,),
                         redacted_asset="card") for card in event["cards"]]
    if kind == "cards_revealed":
        return [Transfer(seat_account(s), f"discard:{s}", f"card:{card}", 1)
                for s, card in enumerate(event["cards"])]
    return []
