"""Big Shot (Alex Randolph): auction lots of coloured cubes, place them to win districts.

The rules as implemented, and the decisions taken where the rules leave a choice: docs/games/big-shot.md.
The board (district names, values, kinds, park neighbours) is a reconstruction kept as data
in projections/data/big_shot.json, loaded and validated at import.

Flow: setup events (cubes shuffled onto the 18 auction spaces, colours dealt, capital
dealt, start player drawn) -> the start player chooses the promoter's starting space ->
18 turns of: die rolled (promoter moves) -> auction (borrow / bid / pass) -> lot sold ->
four cubes placed one by one (a district is sold when its 7th cube lands) -> ... ->
unsold districts resolved, loans repaid, game ended.

The module reads top to bottom: constants and the board, state, evolve (one function per
event), start, the automatic steps, decide (one function per action, declared in the `ACTIONS`
table; the kernel runs the generic checks first and the automatic steps after), legal actions,
view and redact, result, ledger.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Optional, Sequence

from marshmallow import RAISE, Schema

from projections.game import (BANK, IllegalAction, Transfer, check_rules_version, replace, rules_version_field,
                              seat_account)
from projections.kernel import Action, Actions, Batch, Choice, Int, evolver, ledger


NAME = "big-shot"
# 2: an auction ends as soon as all players but one have passed (nobody bid: the active
# player takes the lot free at once); a seat's next loan is shown only when it may borrow.
RULES_VERSION = 2
RULES_VERSIONS = (1, 2)
MIN_PLAYERS = 2
MAX_PLAYERS = 4
HIDDEN_INFORMATION = False

COLOURS = ("red", "blue", "green", "yellow")
CUBES_PER_COLOUR = 18
NUM_SPACES = 18
CUBES_PER_SPACE = 4
TOTAL_CUBES = CUBES_PER_COLOUR * len(COLOURS)          # 72
START_CASH = 10
LOAN_CARDS = 30
LOAN_FIRST = 9          # a loan pays LOAN_FIRST - loans already held
LOAN_REPAY = 10         # repaid per loan token at the end
SALE_SIZE = 7           # a district is sold when its 7th cube lands
DIE_SIDES = 6
MIN_DISTRICTS_TO_WIN = 2
MAX_SHUFFLES = 1000     # safety bound on the set-up redraws (never reached in practice)
KINDS = ("rich", "poor", "park")

SUPPLY = "supply"
REMOVED = "removed"
MONEY = "money"
LOAN = "loan"

_COLOUR_INDEX = {c: i for i, c in enumerate(COLOURS)}
_ZERO_COUNTS = (0,) * len(COLOURS)

DATA_PATH = os.path.join(os.path.dirname(__file__), "data", "big_shot.json")


# ---------------------------------------------------------------------------------------
# The board (data)

@dataclass(frozen=True)
class Board:
    names: tuple[str, ...]
    values: tuple[int, ...]
    kinds: tuple[str, ...]
    parks_of: tuple[tuple[int, ...], ...]       # per district: the parks next to it
    neighbours: tuple[tuple[int, ...], ...]     # per park: the districts next to it
    reconstructed: bool
    index: dict


def load_board(data: dict) -> Board:
    """Validate board data (the JSON file's content) and build the Board. Raises ValueError."""
    if not isinstance(data, dict) or not isinstance(data.get("districts"), list):
        raise ValueError("board data needs a 'districts' list")
    rows = data["districts"]
    # every cube placed must find an unsold district: 7 x districts must exceed 72
    if len(rows) * SALE_SIZE <= TOTAL_CUBES:
        raise ValueError(f"the board needs more than {TOTAL_CUBES // SALE_SIZE} districts")
    names, values, kinds, neigh_names = [], [], [], []
    for row in rows:
        if not isinstance(row, dict) or set(row) - {"name", "value", "kind", "neighbours"}:
            raise ValueError(f"bad district entry {row!r}")
        name, value, kind = row.get("name"), row.get("value"), row.get("kind")
        if not isinstance(name, str) or not name or name in names:
            raise ValueError(f"district names must be distinct non-empty strings: {name!r}")
        if type(value) is not int or value < 0:
            raise ValueError(f"{name}: value must be a non-negative integer")
        if kind not in KINDS:
            raise ValueError(f"{name}: kind must be one of {KINDS}")
        if kind == "park" and value != 0:
            raise ValueError(f"{name}: a park is worth 0")
        neigh = row.get("neighbours", [])
        if kind != "park" and neigh:
            raise ValueError(f"{name}: only parks list neighbours")
        if not isinstance(neigh, list) or not all(isinstance(n, str) for n in neigh):
            raise ValueError(f"{name}: neighbours must be a list of names")
        names.append(name)
        values.append(value)
        kinds.append(kind)
        neigh_names.append(neigh)
    index = {n: i for i, n in enumerate(names)}
    neighbours = []
    parks_of: list[list[int]] = [[] for _ in names]
    for i, neigh in enumerate(neigh_names):
        row = []
        for n in neigh:
            j = index.get(n)
            if j is None or kinds[j] == "park" or j in row:
                raise ValueError(f"{names[i]}: bad neighbour {n!r}")
            row.append(j)
            parks_of[j].append(i)
        neighbours.append(tuple(row))
    return Board(tuple(names), tuple(values), tuple(kinds), tuple(tuple(p) for p in parks_of),
                 tuple(neighbours), bool(data.get("reconstructed", True)), index)


def _read_board(path: str = DATA_PATH) -> Board:
    with open(path, encoding="utf-8") as fh:
        return load_board(json.load(fh))


BOARD = _read_board()
NUM_DISTRICTS = len(BOARD.names)


# ---------------------------------------------------------------------------------------
# Options (the action table is with the deciders, below)

class OptionsSchema(Schema):
    """Big Shot has no options (the board is data, see projections/data/big_shot.json)."""

    class Meta:
        unknown = RAISE


# ---------------------------------------------------------------------------------------
# State

@dataclass(frozen=True)
class State:
    players: int
    phase: str = "setup"              # setup, choose_start, auction, place, over
    colours: tuple = ()               # colour per seat
    spaces: tuple = ()                # per auction space: tuple of cube colours (() once sold)
    shuffles: int = 0                 # how many shuffles the set-up needed
    start_player: int = -1
    promoter: int = -1                # auction space index, -1 before it is placed
    active: int = -1                  # whose turn it is (rolls the die, bids last)
    auctions: int = 0                 # auctions opened so far (1..18)
    last_roll: int = 0
    cash: tuple = ()
    loans: tuple = ()
    district_counts: tuple = ()       # per district: cube count per colour (COLOURS order)
    district_closed: tuple = ()       # per district: sold (or resolved at the end)
    district_colour: tuple = ()       # per district: winning colour, None if none / not yet
    removed: tuple = _ZERO_COUNTS     # cubes out of the game, per colour
    # auction
    space: int = -1                   # the space whose lot is up for auction
    high_bid: int = 0
    high_bidder: int = -1
    passed: tuple = ()
    bidder: int = -1
    borrowed: tuple = ()              # borrowed during this auction, per seat
    # placement
    lot: tuple = ()                   # cube colours still to place
    placer: int = -1
    # end
    scores: tuple = ()
    ranks: tuple = ()
    winners: tuple = ()
    owned: tuple = ()                 # districts owned per seat at the end
    rules_version: int = rules_version_field(RULES_VERSION)


def new_state(options: dict, seats: int, rules_version: int = RULES_VERSION) -> State:
    if not MIN_PLAYERS <= seats <= MAX_PLAYERS:
        raise ValueError(f"{NAME} is for {MIN_PLAYERS}-{MAX_PLAYERS} players")
    return State(
        players=seats, rules_version=check_rules_version(rules_version, RULES_VERSIONS, NAME),
        cash=(0,) * seats,
        loans=(0,) * seats,
        passed=(False,) * seats,
        borrowed=(False,) * seats,
        district_counts=(_ZERO_COUNTS,) * NUM_DISTRICTS,
        district_closed=(False,) * NUM_DISTRICTS,
        district_colour=(None,) * NUM_DISTRICTS,
    )


# ---------------------------------------------------------------------------------------
# Rule helpers (pure, also used by tests and the bot)

def majority(counts: Sequence[int]) -> Optional[int]:
    """The cancelling-majority rule: colours whose counts equal another colour's cancel out;
    the highest remaining count wins. Returns the winning colour index, or None."""
    best = None
    for i, c in enumerate(counts):
        if c > 0 and counts.count(c) == 1 and (best is None or c > counts[best]):
            best = i
    return best


def spaces_ok(spaces: Sequence[Sequence[str]]) -> bool:
    """Every auction space holds at least two colours."""
    return all(len(set(space)) >= 2 for space in spaces)


def move_promoter(spaces: Sequence[Sequence[str]], start: int, steps: int) -> int:
    """Move clockwise `steps` spaces from `start`, counting only spaces that hold cubes."""
    order = [(start + k) % NUM_SPACES for k in range(1, NUM_SPACES + 1)]
    full = [s for s in order if spaces[s]]
    if not full:
        raise ValueError("no auction space holds cubes")
    return full[(steps - 1) % len(full)]


def loan_amount(state: State, seat: int) -> int:
    """What a loan would pay this seat now (0: no loan possible)."""
    if sum(state.loans) >= LOAN_CARDS:
        return 0
    return max(0, LOAN_FIRST - state.loans[seat])


def no_loan_reason(state: State, seat: int) -> Optional[str]:
    """Why this seat may not borrow in the auction under way (None: it may, on its bidding turn).
    The one statement of the loan rule: the `borrow` decider refuses with it, the legal
    actions offer `borrow` when it is None, and the view shows it."""
    if state.phase != "auction":
        return "no auction under way"
    if state.passed[seat]:
        return "passed in this auction"
    if state.borrowed[seat]:
        return "already borrowed in this auction"
    if sum(state.loans) >= LOAN_CARDS:
        return "no loan cards left"
    if loan_amount(state, seat) <= 0:
        return "a further loan would pay nothing"
    return None


def owner_of_colour(state: State, colour: Optional[str]) -> Optional[int]:
    if colour is None:
        return None
    try:
        return state.colours.index(colour)
    except ValueError:
        return None             # a dummy colour


def district_owner(state: State, d: int) -> Optional[int]:
    return owner_of_colour(state, state.district_colour[d]) if state.district_closed[d] else None


def _counts_dict(counts: Sequence[int]) -> dict:
    return {c: counts[i] for i, c in enumerate(COLOURS) if counts[i]}


def final_scores(state: State) -> tuple[list[int], list[int]]:
    """Per seat: (total = cash + district values (doubled next to an owned park), districts owned).
    Cash is taken as it stands (the end-of-game loan repayment already done)."""
    owners = [district_owner(state, d) for d in range(NUM_DISTRICTS)]
    scores = list(state.cash)
    owned = [0] * state.players
    for d, owner in enumerate(owners):
        if owner is None:
            continue
        owned[owner] += 1
        double = any(owners[p] == owner for p in BOARD.parks_of[d])
        scores[owner] += BOARD.values[d] * (2 if double else 1)
    return scores, owned


def rank_players(scores: Sequence[int], owned: Sequence[int]) -> tuple[list[int], list[int]]:
    """Ranks (1 = best, ties share, competition style) and winners. Players owning fewer than
    two districts rank below all who own two or more; winning needs two districts."""
    keys = [(owned[s] >= MIN_DISTRICTS_TO_WIN, scores[s]) for s in range(len(scores))]
    ranks = [1 + sum(1 for other in keys if other > mine) for mine in keys]
    winners = [s for s in range(len(scores)) if ranks[s] == 1 and keys[s][0]]
    return ranks, winners


def _next_seat(state: State, seat: int) -> int:
    return (seat + 1) % state.players


def _next_bidder(state: State, seat: int, passed: tuple) -> int:
    for k in range(1, state.players + 1):
        candidate = (seat + k) % state.players
        if not passed[candidate]:
            return candidate
    return -1


def _replace_at(items: tuple, i: int, value: Any) -> tuple:
    return items[:i] + (value,) + items[i + 1:]


# ---------------------------------------------------------------------------------------
# Evolve: one small function per event type

def _ev_cubes_shuffled(state: State, e: dict) -> State:
    return replace(state, spaces=tuple(tuple(s) for s in e["spaces"]), shuffles=e["shuffles"])


def _ev_colours_dealt(state: State, e: dict) -> State:
    return replace(state, colours=tuple(e["colours"]))


def _ev_capital_dealt(state: State, e: dict) -> State:
    return replace(state, cash=(e["amount"],) * state.players)


def _ev_start_player_drawn(state: State, e: dict) -> State:
    return replace(state, start_player=e["seat"], active=e["seat"], phase="choose_start")


def _ev_start_space_chosen(state: State, e: dict) -> State:
    return replace(state, promoter=e["space"])


def _ev_die_rolled(state: State, e: dict) -> State:
    n = state.players
    seat = e["seat"]
    return replace(state, phase="auction", active=seat, last_roll=e["value"],
                   promoter=e["space"], space=e["space"], auctions=e["auction"],
                   high_bid=0, high_bidder=-1, passed=(False,) * n, borrowed=(False,) * n,
                   bidder=(seat + 1) % n, lot=(), placer=-1)


def _ev_borrowed(state: State, e: dict) -> State:
    seat = e["seat"]
    return replace(state, cash=_replace_at(state.cash, seat, state.cash[seat] + e["amount"]),
                   loans=_replace_at(state.loans, seat, state.loans[seat] + 1),
                   borrowed=_replace_at(state.borrowed, seat, True))


def _bidder_after(state: State, seat: int, passed: tuple, high_bidder: int) -> int:
    """Who bids after `seat`'s turn: -1 once the auction is over. Version 2: as soon as all but
    one have passed (with no bid, the one left is the active player, who takes the lot free).
    Version 1 gave that last player one more bidding turn unless they held the high bid."""
    alive = passed.count(False)
    if alive == 0 or (alive == 1 and (high_bidder >= 0 or state.rules_version >= 2)):
        return -1
    return _next_bidder(state, seat, passed)


def _ev_bid(state: State, e: dict) -> State:
    seat = e["seat"]
    return replace(state, high_bid=e["amount"], high_bidder=seat,
                   bidder=_bidder_after(state, seat, state.passed, seat))


def _ev_passed(state: State, e: dict) -> State:
    seat = e["seat"]
    passed = _replace_at(state.passed, seat, True)
    return replace(state, passed=passed, bidder=_bidder_after(state, seat, passed, state.high_bidder))


def _ev_lot_sold(state: State, e: dict) -> State:
    seat = e["seat"]
    return replace(state, phase="place", bidder=-1, placer=seat, lot=tuple(e["cubes"]),
                   cash=_replace_at(state.cash, seat, state.cash[seat] - e["price"]),
                   spaces=_replace_at(state.spaces, e["space"], ()))


def _ev_cube_placed(state: State, e: dict) -> State:
    d = BOARD.index[e["district"]]
    ci = _COLOUR_INDEX[e["colour"]]
    lot, counts = state.lot, state.district_counts[d]
    i = lot.index(e["colour"])                      # one cube of that colour leaves the lot
    return replace(state, lot=lot[:i] + lot[i + 1:],
                   district_counts=_replace_at(state.district_counts, d,
                                               _replace_at(counts, ci, counts[ci] + 1)))


def _ev_district_closed(state: State, e: dict) -> State:
    d = BOARD.index[e["district"]]
    counts = state.district_counts[d]
    colour = e["colour"]
    marker = _ZERO_COUNTS if colour is None else _replace_at(_ZERO_COUNTS, _COLOUR_INDEX[colour], 1)
    removed = tuple(state.removed[i] + counts[i] - marker[i] for i in range(len(COLOURS)))
    return replace(state, removed=removed,
                   district_counts=_replace_at(state.district_counts, d, marker),
                   district_closed=_replace_at(state.district_closed, d, True),
                   district_colour=_replace_at(state.district_colour, d, colour))


def _ev_loans_repaid(state: State, e: dict) -> State:
    seat = e["seat"]
    return replace(state, cash=_replace_at(state.cash, seat, state.cash[seat] - e["amount"]),
                   loans=_replace_at(state.loans, seat, state.loans[seat] - e["loans"]))


def _ev_game_ended(state: State, e: dict) -> State:
    return replace(state, phase="over", bidder=-1, placer=-1, scores=tuple(e["scores"]),
                   ranks=tuple(e["ranks"]), winners=tuple(e["winners"]),
                   owned=tuple(e["districts"]))


evolve = evolver({
    "cubes_shuffled": _ev_cubes_shuffled,
    "colours_dealt": _ev_colours_dealt,
    "capital_dealt": _ev_capital_dealt,
    "start_player_drawn": _ev_start_player_drawn,
    "start_space_chosen": _ev_start_space_chosen,
    "die_rolled": _ev_die_rolled,
    "borrowed": _ev_borrowed,
    "bid": _ev_bid,
    "passed": _ev_passed,
    "lot_sold": _ev_lot_sold,
    "cube_placed": _ev_cube_placed,
    "district_sold": _ev_district_closed,
    "district_resolved": _ev_district_closed,
    "loans_repaid": _ev_loans_repaid,
    "game_ended": _ev_game_ended,
})


# ---------------------------------------------------------------------------------------
# Start

def _set_up(batch: Batch, rng) -> None:
    state = batch.state
    cubes = [c for c in COLOURS for _ in range(CUBES_PER_COLOUR)]
    for attempt in range(1, MAX_SHUFFLES + 1):
        shuffled = rng.shuffle(f"cubes/{attempt}", cubes)
        spaces = [shuffled[i:i + CUBES_PER_SPACE] for i in range(0, TOTAL_CUBES, CUBES_PER_SPACE)]
        if spaces_ok(spaces):
            break
    else:  # pragma: no cover - probability ~0.2**1000
        raise RuntimeError("could not deal the cubes")
    dealt = rng.shuffle("colours", list(COLOURS))[:state.players]
    batch.extend([
        {"type": "cubes_shuffled", "spaces": spaces, "shuffles": attempt},
        {"type": "colours_dealt", "colours": dealt,
         "dummy": [c for c in COLOURS if c not in dealt]},
        {"type": "capital_dealt", "amount": START_CASH},
        {"type": "start_player_drawn", "seat": rng.below("start_player", state.players)},
    ])


def start(state: State, rng) -> list[dict]:
    return ACTIONS.start(state, rng, _set_up)


# ---------------------------------------------------------------------------------------
# Decide

def to_act(state: State) -> list[int]:
    if state.phase == "choose_start":
        return [state.active]
    if state.phase == "auction" and state.bidder >= 0:
        return [state.bidder]
    if state.phase == "place" and state.lot:
        return [state.placer]
    return []


def is_over(state: State) -> bool:
    return state.phase == "over"


# The automatic steps (the kernel runs them after an action until a seat must act): the
# first die roll once the start space is chosen, the sale of a lot once nobody is left to bid,
# the next roll (or the end of the game) once a lot is placed.

def _roll(state: State, seat: int, rng) -> dict:
    value = rng.randint("die", 1, DIE_SIDES)
    return {"type": "die_rolled", "seat": seat, "value": value, "from": state.promoter,
            "space": move_promoter(state.spaces, state.promoter, value),
            "auction": state.auctions + 1}


def _first_roll(batch: Batch, rng) -> None:
    """The start player, who chose the start space, rolls first."""
    batch.emit(_roll(batch.state, batch.state.active, rng))


def _sell_lot(batch: Batch, rng) -> None:
    """The auction is over (nobody left to bid): the lot goes to the high bidder, or free to the
    active player when nobody bid."""
    state = batch.state
    free = state.high_bidder < 0
    seat = state.active if free else state.high_bidder
    batch.emit({"type": "lot_sold", "seat": seat, "price": 0 if free else state.high_bid,
                "space": state.space, "cubes": list(state.spaces[state.space]), "free": free})


def _after_placing(batch: Batch, rng) -> None:
    """The lot is placed: the next player rolls, or after the last auction the game ends."""
    state = batch.state
    if state.auctions < NUM_SPACES:
        batch.emit(_roll(state, _next_seat(state, state.active), rng))
    else:
        _end_game(batch)


def _automatic_step(state: State):
    phase = state.phase
    if phase == "choose_start":
        return _first_roll if state.promoter >= 0 else None
    if phase == "auction":
        return _sell_lot if state.bidder < 0 else None
    if phase == "place":
        return None if state.lot else _after_placing
    return None


def _end_game(batch: Batch) -> None:
    """Unsold districts resolved, loans repaid, final scores and ranks."""
    state = batch.state
    for d in range(NUM_DISTRICTS):
        if state.district_closed[d]:
            continue
        counts = state.district_counts[d]
        win = majority(counts)
        colour = None if win is None else COLOURS[win]
        batch.emit({"type": "district_resolved", "district": BOARD.names[d],
                    "counts": _counts_dict(counts), "colour": colour,
                    "owner": owner_of_colour(state, colour)})
    for seat in range(state.players):
        if state.loans[seat]:
            batch.emit({"type": "loans_repaid", "seat": seat, "loans": state.loans[seat],
                        "amount": state.loans[seat] * LOAN_REPAY})
    scores, owned = final_scores(batch.state)
    ranks, winners = rank_players(scores, owned)
    batch.emit({"type": "game_ended", "scores": scores, "districts": owned,
                "ranks": ranks, "winners": winners})


# Deciders: only the checks that depend on the state; the kernel has already checked the
# action's shape and static ranges (the field declarations in ACTIONS), that the game is
# live, that this seat is to act, and that the action fits the phase.

def _choose_start_space(batch: Batch, seat: int, action: dict, rng) -> None:
    batch.emit({"type": "start_space_chosen", "seat": seat, "space": action["space"]})


def _borrow(batch: Batch, seat: int, action: dict, rng) -> None:
    state = batch.state
    reason = no_loan_reason(state, seat)
    if reason is not None:
        raise IllegalAction(f"you may not borrow now: {reason}", field="type")
    batch.emit({"type": "borrowed", "seat": seat, "amount": loan_amount(state, seat),
                "loans": state.loans[seat] + 1})


def bid_range(state: State, seat: int) -> tuple[int, int]:
    """The bids this seat may make, (lowest, highest): more than the high bid, at most its cash
    (none when highest < lowest). Read by the decider and by the legal actions."""
    return state.high_bid + 1, state.cash[seat]


def _bid(batch: Batch, seat: int, action: dict, rng) -> None:
    state = batch.state
    (low, cash), amount = bid_range(state, seat), action["amount"]
    if cash < low:
        raise IllegalAction(f"you cannot outbid {state.high_bid} with {cash} in cash",
                            field="amount")
    if not low <= amount <= cash:
        raise IllegalAction(f"amount must be between {low} and {cash} (more than the high bid, "
                            f"at most your cash), got {amount}", field="amount")
    batch.emit({"type": "bid", "seat": seat, "amount": amount})


def _pass(batch: Batch, seat: int, action: dict, rng) -> None:
    batch.emit({"type": "passed", "seat": seat})


def _place(batch: Batch, seat: int, action: dict, rng) -> None:
    state = batch.state
    colour, name = action["colour"], action["district"]
    if colour not in state.lot:
        raise IllegalAction(f"colour must be one of the cubes left to place: {sorted(set(state.lot))}",
                            field="colour")
    d = BOARD.index[name]
    if state.district_closed[d]:
        raise IllegalAction(f"{name} is already sold", field="district")
    after = batch.emit({"type": "cube_placed", "seat": seat, "colour": colour, "district": name})
    counts = after.district_counts[d]
    if sum(counts) >= SALE_SIZE:
        sold_colour = COLOURS[majority(counts)]          # always exists with 7 cubes
        batch.emit({"type": "district_sold", "district": name, "counts": _counts_dict(counts),
                    "colour": sold_colour, "owner": owner_of_colour(after, sold_colour)})


def _legal(state: State, seat: int) -> list[dict]:
    """What a seat to act may do (the kernel's guard has checked that it is to act)."""
    if state.phase == "choose_start":
        return [{"type": "choose_start_space", "space": {"min": 0, "max": NUM_SPACES - 1}}]
    if state.phase == "auction":
        out = [{"type": "pass"}]
        low, high = bid_range(state, seat)
        if low <= high:
            out.append({"type": "bid", "amount": {"min": low, "max": high}})
        if no_loan_reason(state, seat) is None:
            out.append({"type": "borrow"})
        return out
    colours = [c for c in COLOURS if c in state.lot]
    unsold = [name for name, sold in zip(BOARD.names, state.district_closed) if not sold]
    return [{"type": "place", "colour": c, "district": name} for c in colours for name in unsold]


_AUCTION = frozenset({"auction"})

# schema_name keeps each schema class's name as it was before the kernel (the OpenAPI
# component names, BigShotBidAction and so on, are given by service/schemas.py).
ACTIONS = Actions(NAME, [
    Action("choose_start_space", _choose_start_space, {"space": Int(min=0, max=NUM_SPACES - 1)},
           phases=frozenset({"choose_start"}), schema_name="ChooseStartSpaceSchema"),
    Action("borrow", _borrow, phases=_AUCTION, schema_name="BorrowSchema"),
    Action("bid", _bid, {"amount": Int(min=1)}, phases=_AUCTION, schema_name="BidSchema"),
    Action("pass", _pass, phases=_AUCTION, schema_name="PassSchema"),
    Action("place", _place, {"colour": Choice(COLOURS), "district": Choice(BOARD.names)},
           phases=frozenset({"place"}), schema_name="PlaceSchema"),
], players=attrgetter("players"), to_act=to_act, is_over=is_over, phase=attrgetter("phase"),
   evolve=evolve, legal=_legal, automatic=_automatic_step)

decide = ACTIONS.decide
ACTION_SCHEMAS = ACTIONS.schemas
legal_actions = ACTIONS.legal_actions


# ---------------------------------------------------------------------------------------
# View, redact, result, transfers

def view(state: State, seat: Optional[int]) -> dict:
    colour_seat = {c: s for s, c in enumerate(state.colours)}
    districts = []
    for d in range(NUM_DISTRICTS):
        closed = state.district_closed[d]
        colour = state.district_colour[d]
        districts.append({
            "name": BOARD.names[d], "value": BOARD.values[d], "kind": BOARD.kinds[d],
            "parks": [BOARD.names[p] for p in BOARD.parks_of[d]],
            "neighbours": [BOARD.names[x] for x in BOARD.neighbours[d]],
            "cubes": _counts_dict(state.district_counts[d]),
            "total": sum(state.district_counts[d]),
            "sold": closed, "colour": colour if closed else None,
            "owner": colour_seat.get(colour) if closed else None,
        })
    seats = []
    for s in range(state.players):
        seat_view = {"seat": s, "colour": state.colours[s] if state.colours else None,
                     "cash": state.cash[s], "loans": state.loans[s],
                     "next_loan": loan_amount(state, s),
                     "districts": [x["name"] for x in districts if x["owner"] == s]}
        if state.rules_version >= 2:
            # the next loan's value only when the seat may borrow in this auction
            reason = no_loan_reason(state, s)
            seat_view["next_loan"] = None if reason else loan_amount(state, s)
            seat_view["no_loan"] = reason
        seats.append(seat_view)
    auction = None
    if state.phase == "auction":
        auction = {"space": state.space, "lot": list(state.spaces[state.space]),
                   "high_bid": state.high_bid,
                   "high_bidder": None if state.high_bidder < 0 else state.high_bidder,
                   "bidder": None if state.bidder < 0 else state.bidder,
                   "passed": list(state.passed), "borrowed": list(state.borrowed)}
    placing = None
    if state.phase == "place":
        placing = {"seat": state.placer, "cubes": list(state.lot)}
    result_ = result(state) if state.phase == "over" else None
    return {
        "game": NAME, "seat": seat, "players": state.players, "phase": state.phase,
        "to_act": to_act(state), "active": None if state.active < 0 else state.active,
        "start_player": None if state.start_player < 0 else state.start_player,
        "auction_number": state.auctions, "auctions_total": NUM_SPACES,
        "promoter": None if state.promoter < 0 else state.promoter,
        "last_roll": state.last_roll or None,
        "spaces": [list(s) for s in state.spaces],
        "seats": seats,
        "dummy_colours": [c for c in COLOURS if state.colours and c not in state.colours],
        "loan_cards_left": LOAN_CARDS - sum(state.loans),
        "districts": districts,
        "auction": auction, "placing": placing,
        "removed": _counts_dict(state.removed),
        "board_reconstructed": BOARD.reconstructed,
        "result": result_,
    }


def redact(state: State, event: dict, seat: Optional[int]) -> dict:
    return event            # everything is public (only future die rolls are secret)


def result(state: State) -> dict:
    if not is_over(state):
        raise ValueError("the game is not over")
    return {"winners": list(state.winners), "ranks": list(state.ranks),
            "scores": list(state.scores), "districts": list(state.owned)}


def _district_account(name: str) -> str:
    return f"district:{name}"


def _cube_transfers(frm: str, to: str, counts: dict, price: Optional[int] = None) -> list:
    return [Transfer(frm, to, f"cube:{c}", counts[c], price) for c in COLOURS if counts.get(c)]


def _tr_cubes_shuffled(state, e):
    out = []
    for i, space in enumerate(e["spaces"]):
        out += _cube_transfers(SUPPLY, f"space:{i}", Counter(space))
    return out


def _tr_capital_dealt(state, e):
    return [Transfer(BANK, seat_account(s), MONEY, e["amount"]) for s in range(state.players)]


def _tr_borrowed(state, e):
    acct = seat_account(e["seat"])
    return [Transfer(BANK, acct, MONEY, e["amount"]), Transfer(BANK, acct, LOAN, 1)]


def _tr_lot_sold(state, e):
    acct = seat_account(e["seat"])
    out = [Transfer(acct, BANK, MONEY, e["price"], e["price"])] if e["price"] else []
    return out + _cube_transfers(f"space:{e['space']}", acct, Counter(e["cubes"]), e["price"])


def _tr_cube_placed(state, e):
    return [Transfer(seat_account(e["seat"]), _district_account(e["district"]),
                     f"cube:{e['colour']}", 1)]


def _tr_district_closed(state, e):
    counts = dict(e["counts"])
    if e["colour"] is not None:
        counts[e["colour"]] -= 1          # the marker cube stays on the district
    return _cube_transfers(_district_account(e["district"]), REMOVED, counts)


def _tr_loans_repaid(state, e):
    acct = seat_account(e["seat"])
    return [Transfer(acct, BANK, MONEY, e["amount"]), Transfer(acct, BANK, LOAN, e["loans"])]


transfers = ledger({
    "cubes_shuffled": _tr_cubes_shuffled,
    "capital_dealt": _tr_capital_dealt,
    "borrowed": _tr_borrowed,
    "lot_sold": _tr_lot_sold,
    "cube_placed": _tr_cube_placed,
    "district_sold": _tr_district_closed,
    "district_resolved": _tr_district_closed,
    "loans_repaid": _tr_loans_repaid,
})


# --- the game, declared once (projections/game_type.py): every layer finds its parts here ------

from projections.game_type import GameType  # noqa: E402  (the declaration closes the module)

GAME_TYPE = GameType(
    name=NAME, title="Big Shot — district auctions", rules="projections.big_shot",
    docs="docs/games/big-shot.md", drawer="big-shot.js", payloads="payloads.json",
    render="service.render.big_shot", bots="workers.bots.big_shot", search="workers.bots.search.big_shot")
