"""Big Shot for the search bot: determinize a view into a State, evaluate a State.

What is hidden: nothing that is fixed. Big Shot is a perfect-information game apart from
the future die rolls (drawn by `decide` from the search's rng): the cubes on every auction
space, the colours dealt (and so the dummy colours), the start player, cash, loans, the
cubes on every district, the lot up for auction or being placed, and the auction's bids,
passes and loans are all in every seat's view. So `determinize` samples nothing: it
rebuilds the State from the view, and `rng` is not used.

What the view does not carry, and why it cannot matter (each is documented where it is set):
  - `shuffles` (how many shuffles the set-up needed: public in the `cubes_shuffled` event,
    never read by the rules after set-up): set to 1, its most likely value (~80%).
  - `rules_version`: read off the view's shape (version 2 adds `no_loan` to every seat).
  - `space` outside an auction: always the promoter's space (a die roll sets both).
  - the last auction's `high_bid`, `high_bidder`, `passed` and `borrowed` while its lot is
    placed or after the game: stale, never read by the rules or the view outside an auction,
    and reset by the next die roll: set to their reset values.

`evaluate` estimates each seat's final score: net cash (cash minus the loans' repayment
at the end) plus the expected worth of the districts its colour owns or leads, a lead counted
by the measured chance that it holds (HOLD_BY_MARGIN_TOTAL: by margin, the district's cube
total and the cubes still to be placed) and doubled, by the same chance, next to a park its
colour holds; the placer's cubes in hand add a little. A softmax over those scores, whose
temperature grows with the cubes still to come, times the chance of owning the two districts
that winning needs (each cube to come may gain a colour one district), gives the win chances.
It reads the State directly (no view is built): about 25 microseconds a call.
"""

from __future__ import annotations

import math
import random

from projections.big_shot import (BOARD, COLOURS, CUBES_PER_SPACE, LOAN_REPAY, NUM_DISTRICTS, NUM_SPACES,
                                  State, majority)

# The search's settings for this game (workers/bots/search/__init__.py: what each means).
SETTINGS = {"iterations": 40, "rollout_moves": 16, "confidence": 2.0}

_COLOUR_INDEX = {c: i for i, c in enumerate(COLOURS)}
_ZERO_COUNTS = (0,) * len(COLOURS)
_SETUP_SHUFFLES = 1        # the set-up's shuffle count is not in the view (see the docstring)


# ---------------------------------------------------------------------------------------
# determinize

def determinize(view: dict, seat: int, rng: random.Random) -> State:
    """The State whose view is `view` (nothing fixed is hidden in Big Shot: rng is unused)."""
    n = view["players"]
    phase = view["phase"]
    seats = view["seats"]
    counts, closed, colour_of = _districts(view["districts"])
    auction = _auction_fields(view, n)
    placing = view["placing"]
    result = view["result"]
    return State(
        players=n,
        phase=phase,
        colours=tuple(s["colour"] for s in seats) if seats and seats[0]["colour"] else (),
        spaces=tuple(tuple(space) for space in view["spaces"]),
        shuffles=_SETUP_SHUFFLES if view["spaces"] else 0,
        start_player=_seat_or_minus(view["start_player"]),
        promoter=_seat_or_minus(view["promoter"]),
        active=_seat_or_minus(view["active"]),
        auctions=view["auction_number"],
        last_roll=view["last_roll"] or 0,
        cash=tuple(s["cash"] for s in seats),
        loans=tuple(s["loans"] for s in seats),
        district_counts=counts,
        district_closed=closed,
        district_colour=colour_of,
        removed=tuple(view["removed"].get(c, 0) for c in COLOURS),
        lot=tuple(placing["cubes"]) if placing else (),
        placer=placing["seat"] if placing else -1,
        scores=tuple(result["scores"]) if result else (),
        ranks=tuple(result["ranks"]) if result else (),
        winners=tuple(result["winners"]) if result else (),
        owned=tuple(result["districts"]) if result else (),
        rules_version=2 if seats and "no_loan" in seats[0] else 1,
        **auction,
    )


def _seat_or_minus(value) -> int:
    """The view writes None where the State holds -1 (not yet set)."""
    return -1 if value is None else value


def _districts(districts: list[dict]) -> tuple[tuple, tuple, tuple]:
    """(cube counts, sold flags, winning colours) per district, in board order (the view's)."""
    counts = tuple(tuple(d["cubes"].get(c, 0) for c in COLOURS) if d["cubes"] else _ZERO_COUNTS
                   for d in districts)
    closed = tuple(d["sold"] for d in districts)
    # a district's colour is set only when it closes, so an open one's is None in the State too
    colour_of = tuple(d["colour"] for d in districts)
    return counts, closed, colour_of


def _auction_fields(view: dict, n: int) -> dict:
    auction = view["auction"]
    if auction is not None:
        return {"space": auction["space"], "high_bid": auction["high_bid"],
                "high_bidder": _seat_or_minus(auction["high_bidder"]),
                "bidder": _seat_or_minus(auction["bidder"]),
                "passed": tuple(auction["passed"]), "borrowed": tuple(auction["borrowed"])}
    # Outside an auction: `space` is the promoter's (a die roll sets both; -1 before the first
    # roll), `bidder` is -1 (the sale or the game's end set it). The last auction's high bid,
    # high bidder, passes and loans are not in the view; the rules never read them outside
    # an auction and the next die roll resets them, so they get their reset values.
    return {"space": _seat_or_minus(view["promoter"]), "high_bid": 0, "high_bidder": -1,
            "bidder": -1, "passed": (False,) * n, "borrowed": (False,) * n}


# ---------------------------------------------------------------------------------------
# evaluate

# The chance that an open district's current majority is still its colour at the end, by
# the leader's margin over the next colour (-1: a larger count cancelled above it; 3: three
# or more), the district's cube total, and the cubes still to be placed in the game, in
# buckets of at most 1, 3, 4, 8, 16, 32 and more. Measured on 1,300 seeded 2/3/4-player games
# of the heuristic bot (79,000 positions it decided at, 238,000 leads), each cell shrunk
# towards its margin's row with 20 pseudo-counts. Unlike the heuristic's HOLD it knows the
# district's total: a 4-2 lead cannot be overturned by the seventh cube, a 2-0 lead can.
REMAINING_BOUNDS = (1, 3, 4, 8, 16, 32)
HOLD_BY_MARGIN_TOTAL = {
    (-1, 5): (0.98, 0.79, 0.29, 0.24, 0.21, 0.18, 0.11),
    (1, 1): (0.87, 0.72, 0.41, 0.44, 0.43, 0.37, 0.33),
    (1, 3): (0.97, 0.86, 0.68, 0.62, 0.57, 0.50, 0.54),
    (1, 4): (0.95, 0.81, 0.36, 0.42, 0.43, 0.41, 0.49),
    (1, 5): (0.91, 0.77, 0.50, 0.53, 0.53, 0.53, 0.48),
    (1, 6): (0.95, 0.94, 0.63, 0.54, 0.49, 0.46, 0.52),
    (2, 2): (1.00, 0.97, 0.95, 0.79, 0.66, 0.64, 0.53),
    (2, 4): (1.00, 0.99, 0.98, 0.89, 0.73, 0.67, 0.73),
    (2, 5): (1.00, 0.97, 0.99, 0.73, 0.52, 0.43, 0.52),
    (2, 6): (1.00, 1.00, 1.00, 1.00, 0.99, 1.00, 0.99),
    (3, 3): (1.00, 1.00, 1.00, 1.00, 0.89, 0.74, 0.75),
    (3, 4): (1.00, 1.00, 1.00, 1.00, 0.99, 0.99, 0.99),
    (3, 5): (1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00),
    (3, 6): (1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00),
}
HOLD_BY_MARGIN = {          # the same, whatever the total (for a pattern not in the table)
    -1: (0.98, 0.79, 0.29, 0.24, 0.21, 0.18, 0.11),
    1: (0.93, 0.81, 0.51, 0.51, 0.49, 0.43, 0.40),
    2: (1.00, 0.98, 0.98, 0.84, 0.70, 0.68, 0.63),
    3: (1.00, 1.00, 1.00, 1.00, 0.98, 0.96, 0.94),
}

# Fitted by coordinate descent (max likelihood of the actual winner) on 45,800 positions of
# 800 seeded 4-player games of the heuristic bot. On 9,600 positions of 400 other games the
# mean log-likelihood of the winner is -1.315 (uniform: -1.386; the favourite wins 34%), on
# 3-player games -1.003 (uniform -1.099), on 2-player games -0.610 (uniform -0.693): the last
# lots still swing a lot (a park doubles up to three districts), so the spread stays wide.
# The likelihood is flat in FUTURE_DISTRICT_PER_CUBE above 0.3 (heuristic players nearly all
# reach two districts): 0.3 is the least generous value that fits as well.
TEMPERATURE_BASE = 6.0        # score spread (millions) that leaves doubt with no cube to come
TEMPERATURE_PER_CUBE = 1.2    # added per cube still to be placed
FUTURE_DISTRICT_PER_CUBE = 0.3   # per cube to come: the chance it wins a colour one more district
PLACER_PER_CUBE = 4.0         # worth of each cube the placer still holds (placed to its gain)


def evaluate(state: State) -> list[float]:
    """Each seat's estimated chance to win (shares of the result once the game is over)."""
    n = state.players
    if state.phase == "over":
        return _result_shares(state.winners, n)
    if not state.colours:                       # still in set-up: nothing to tell seats apart
        return [1.0 / n] * n
    remaining = _cubes_to_place(state)
    worth, held = _expected_districts(state, _remaining_bucket(remaining))
    temperature = TEMPERATURE_BASE + TEMPERATURE_PER_CUBE * remaining
    none_later, one_later = _none_or_one_later(remaining)
    logits = []
    for s, colour in enumerate(state.colours):
        c = _COLOUR_INDEX[colour]
        score = state.cash[s] - LOAN_REPAY * state.loans[s] + worth[c]
        if s == state.placer:
            score += PLACER_PER_CUBE * len(state.lot)
        eligible = _at_least_two(held[c], none_later, one_later)
        logits.append(score / temperature + math.log(max(eligible, 1e-6)))
    return _softmax(logits)


def _result_shares(winners: tuple, n: int) -> list[float]:
    """1/k to each of k winners. If nobody owns two districts there is no winner: all 0
    (the only case where the values do not sum to 1, as the result says)."""
    if not winners:
        return [0.0] * n
    share = 1.0 / len(winners)
    return [share if s in winners else 0.0 for s in range(n)]


def _cubes_to_place(state: State) -> int:
    """Cubes still to land on the board: the lot being placed or auctioned, and the later lots."""
    later = CUBES_PER_SPACE * (NUM_SPACES - state.auctions)
    if state.phase == "place":
        return len(state.lot) + later
    if state.phase == "auction":
        return CUBES_PER_SPACE + later
    return CUBES_PER_SPACE * NUM_SPACES          # before the first roll


def _remaining_bucket(remaining: int) -> int:
    for i, bound in enumerate(REMAINING_BOUNDS):
        if remaining <= bound:
            return i
    return len(REMAINING_BOUNDS)


def _expected_districts(state: State, bucket: int) -> tuple[list[float], list[list[float]]]:
    """Per colour: expected district worth (parks doubling), and the hold chance of every
    district it leads (for the chance to own two)."""
    leads = [_lead(state, d, bucket) for d in range(NUM_DISTRICTS)]
    worth = [0.0] * len(COLOURS)
    held: list[list[float]] = [[] for _ in COLOURS]
    for d, (c, p) in enumerate(leads):
        if c is None:
            continue
        held[c].append(p)
        double = 0.0
        for park in BOARD.parks_of[d]:
            park_colour, park_p = leads[park]
            if park_colour == c and park_p > double:
                double = park_p
        worth[c] += BOARD.values[d] * p * (1.0 + double)
    return worth, held


def _lead(state: State, d: int, bucket: int) -> tuple:
    """(leading colour index or None, chance it keeps district d)."""
    if state.district_closed[d]:
        colour = state.district_colour[d]
        return (None, 0.0) if colour is None else (_COLOUR_INDEX[colour], 1.0)
    counts = state.district_counts[d]
    w = majority(counts)
    if w is None:
        return None, 0.0
    lead = counts[w]
    margin = lead - max(x for i, x in enumerate(counts) if i != w)
    margin = -1 if margin <= 0 else min(margin, 3)
    row = HOLD_BY_MARGIN_TOTAL.get((margin, sum(counts))) or HOLD_BY_MARGIN[margin]
    return w, row[bucket]


def _none_or_one_later(remaining: int) -> tuple[float, float]:
    """P(0) and P(1) of the districts a colour gains from the cubes to come, each cube a
    chance FUTURE_DISTRICT_PER_CUBE (one cube changes one district's majority at most, so
    a colour with no lead cannot reach two districts with one cube)."""
    q = FUTURE_DISTRICT_PER_CUBE
    none = (1.0 - q) ** remaining
    return none, (remaining * q * (1.0 - q) ** (remaining - 1) if remaining else 0.0)


def _at_least_two(chances: list[float], none: float, one: float) -> float:
    """P(at least two of these independent events happen), starting from P(0) = none and
    P(1) = one (the districts gained later)."""
    for p in chances:
        none, one = none * (1.0 - p), one * (1.0 - p) + none * p
    return max(0.0, 1.0 - none - one)


def _softmax(logits: list[float]) -> list[float]:
    top = max(logits)
    weights = [math.exp(x - top) for x in logits]
    total = sum(weights)
    return [w / total for w in weights]
