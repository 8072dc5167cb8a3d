"""Bots for `big-shot`, deciding from the seat's view only.

`heuristic`: estimates, for every player colour, the expected value of the districts it
currently leads (the cancelling-majority rule applied to the cubes already placed; a lead
counts by the measured chance that it holds, by its margin over the next colour and the lots
still to come (HOLD); sold districts are certain, and so is every lead once the last lot is
being placed, since the board is then final; a park doubles the neighbours of the same colour; a bonus for reaching the two
districts needed to win). Its utility is its own estimate minus a share of the rivals'
average. A lot is worth the utility gained by placing its cubes greedily; the bot bids 1
more than the high bid while that stays below a share of the lot's worth (tuned in
self-play: the greedy estimate is optimistic), borrows when a loan's cost
(1 + loans held) is smaller than the surplus it would unlock, and places each cube where it
gains the most (winning majorities, or cancelling a rival's lead).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Optional

from projections.big_shot import COLOURS, SALE_SIZE, majority
from projections.templates import fill_template, is_range



@dataclass(frozen=True)
class Tuning:
    """The heuristic's constants (ops/tournament/harden.py searches them against the league)."""
    rival_weight: float = 0.8          # how much a rival's gain counts against mine
    two_district_bonus: float = 10.0   # per expected district, up to two (the requirement to win)
    worth_factor: float = 0.3          # the greedy estimate is optimistic: bid up to this share of it
    bid_margin: float = 1              # keep at least this much surplus when bidding


DEFAULT = Tuning()
RIVAL_WEIGHT = DEFAULT.rival_weight
TWO_DISTRICT_BONUS = DEFAULT.two_district_bonus
WORTH_FACTOR = DEFAULT.worth_factor
BID_MARGIN = DEFAULT.bid_margin


# The chance that a lead holds to the end, by the leader's margin over the next colour
# (1, 2, 3 or more; 0 or less when equal counts above it cancel) and by the lots still to
# come after the current one. Measured in 150 four-player games of this heuristic (9,791
# leads at the start of an auction): a 1-cube lead holds about 27% of the time until the
# last few lots (about what any colour would get); a 2-cube lead becomes safe late.
HOLD = (             # lots after: >= 12, 6-11, 2-5, 1
    {-1: 0.28, 1: 0.27, 2: 0.30, 3: 0.30},
    {-1: 0.30, 1: 0.27, 2: 0.55, 3: 0.90},
    {-1: 0.25, 1: 0.37, 2: 0.80, 3: 1.00},
    {-1: 0.15, 1: 0.50, 2: 1.00, 3: 1.00},
)


def hold_chance(margin: int, lots_after: int) -> float:
    """P(a lead of `margin` cubes holds) with `lots_after` lots still to come (0: final)."""
    if lots_after <= 0:
        return 1.0
    row = HOLD[0 if lots_after >= 12 else 1 if lots_after >= 6 else 2 if lots_after >= 2 else 3]
    return row[-1 if margin <= 0 else min(margin, 3)]


class _Model:
    """The board as seen in a view, with a fast utility for one seat's colour."""

    def __init__(self, view: dict, seat: int, tuning: Tuning = DEFAULT):
        self.seat = seat
        self.tuning = tuning
        ds = view["districts"]
        self.names = [d["name"] for d in ds]
        self.index = {n: i for i, n in enumerate(self.names)}
        self.values = [d["value"] for d in ds]
        self.parks_of = [[self.index[p] for p in d["parks"]] for d in ds]
        self.neighbours = [[self.index[x] for x in d["neighbours"]] for d in ds]
        self.closed = [d["sold"] for d in ds]
        self.counts = [[d["cubes"].get(c, 0) for c in COLOURS] for d in ds]
        self.closed_colour = [COLOURS.index(d["colour"]) if d["sold"] and d["colour"] else None
                              for d in ds]
        colours = [s["colour"] for s in view["seats"]]
        self.me = COLOURS.index(colours[seat])
        self.rivals = [COLOURS.index(c) for i, c in enumerate(colours) if i != seat]
        total = view.get("auctions_total") or 18
        self.progress = min(1.0, (view.get("auction_number") or 0) / total)
        # lots still to come after the one being bid on or placed: 0 on the last lot, whose
        # placement makes the board final (every unsold district is decided as it stands)
        self.lots_after = max(0, total - (view.get("auction_number") or 0))

    def lead(self, d: int, counts=None) -> tuple[Optional[int], float]:
        """(leading colour, probability it keeps the district)."""
        if self.closed[d]:
            return self.closed_colour[d], 1.0
        counts = self.counts[d] if counts is None else counts
        total = sum(counts)
        w = majority(counts)
        if w is None:
            return None, 0.0
        if total >= SALE_SIZE or self.lots_after == 0:
            return w, 1.0
        margin = counts[w] - max(c for i, c in enumerate(counts) if i != w)
        return w, hold_chance(margin, self.lots_after)

    def values_for(self, leads) -> dict[int, float]:
        """Estimated district worth per player colour given each district's (colour, p).
        One pass over the districts (each colour's sums still in district order)."""
        colours = [self.me] + self.rivals
        worth = dict.fromkeys(colours, 0.0)
        expected = dict.fromkeys(colours, 0.0)
        parks_of, values = self.parks_of, self.values
        for d, (w, p) in enumerate(leads):
            if p <= 0 or w not in worth:
                continue
            expected[w] += p
            mult = 1.0
            for park in parks_of[d]:
                pw, pp = leads[park]
                if pw == w:
                    mult = max(mult, 1.0 + pp)
            worth[w] += values[d] * p * mult
        bonus = self.tuning.two_district_bonus
        return {c: worth[c] + bonus * min(2.0, expected[c]) for c in colours}

    def utility(self, leads) -> float:
        vals = self.values_for(leads)
        mine = vals[self.me]
        if not self.rivals:
            return mine
        return mine - self.tuning.rival_weight * sum(vals[r] for r in self.rivals) / len(self.rivals)

    def leads(self):
        return [self.lead(d) for d in range(len(self.names))]

    def best_placement(self, lot: list[str], rng: Optional[random.Random] = None):
        """(gain, colour, district index) of the best single cube placement."""
        base_leads = self.leads()
        base = self.utility(base_leads)
        best = None
        options = []
        for colour in sorted(set(lot), key=COLOURS.index):
            ci = COLOURS.index(colour)
            for d in range(len(self.names)):
                if self.closed[d]:
                    continue
                counts = list(self.counts[d])
                counts[ci] += 1
                trial = list(base_leads)
                trial[d] = self.lead(d, counts)
                gain = self.utility(trial) - base
                options.append((gain, colour, d))
                if best is None or gain > best:
                    best = gain
        top = [o for o in options if o[0] >= best - 1e-9]
        return rng.choice(top) if rng and len(top) > 1 else top[0]

    def apply(self, colour: str, d: int) -> None:
        self.counts[d][COLOURS.index(colour)] += 1
        if sum(self.counts[d]) >= SALE_SIZE:
            w = majority(self.counts[d])
            self.closed[d] = True
            self.closed_colour[d] = w
            self.counts[d] = [1 if i == w else 0 for i in range(len(COLOURS))]

    def lot_worth(self, lot: list[str]) -> float:
        """Utility gained by placing the whole lot greedily (the model is modified)."""
        start = self.utility(self.leads())
        cubes = list(lot)
        while cubes:
            _, colour, d = self.best_placement(cubes)
            self.apply(colour, d)
            cubes.remove(colour)
        return self.utility(self.leads()) - start


def _lot_worth(view: dict, seat: int, lot: list[str], tuning: Tuning = DEFAULT) -> float:
    """A lot's worth to the seat. The board does not change while a lot is auctioned, only
    the bids do, so the worth is remembered by (board, seat, lot): every bid of an auction
    (and a search's many visits to one auction) reads it once."""
    key = (tuning, seat, tuple(s["colour"] for s in view["seats"]), view.get("auction_number"),
           view.get("auctions_total"), tuple(lot),
           tuple((d["name"], d["value"], tuple(d["parks"]), d["sold"], d["colour"], tuple(sorted(d["cubes"].items()))) for d in view["districts"]))
    worth = _WORTHS.get(key)
    if worth is None:
        if len(_WORTHS) >= _WORTHS_KEPT:
            _WORTHS.clear()
        worth = _WORTHS[key] = _Model(view, seat, tuning).lot_worth(lot)
    return worth


_WORTHS: dict = {}
_WORTHS_KEPT = 50_000


def _choose_start(view: dict, seat: int) -> int:
    mine = view["seats"][seat]["colour"]
    spaces = view["spaces"]
    n = len(spaces)
    scores = [sum(spaces[(s + k) % n].count(mine) for k in range(1, 7)) for s in range(n)]
    return max(range(n), key=lambda s: (scores[s], -s))


def _find(legal: list[dict], kind: str) -> Optional[dict]:
    for action in legal:
        if action["type"] == kind:
            return action
    return None


def heuristic(view: dict, legal_actions: list[dict], seat: int, rng: random.Random,
              tuning: Tuning = DEFAULT) -> dict:
    if not legal_actions:
        raise ValueError("no legal action")
    first = legal_actions[0]["type"]
    if first == "choose_start_space":
        template = legal_actions[0]
        space = _choose_start(view, seat)
        lo, hi = template["space"]["min"], template["space"]["max"]
        return {"type": "choose_start_space", "space": min(hi, max(lo, space))}
    if first == "place":
        model = _Model(view, seat, tuning)
        lot = view["placing"]["cubes"]
        _, colour, d = model.best_placement(lot, rng)
        action = {"type": "place", "colour": colour, "district": model.names[d]}
        return action if action in legal_actions else legal_actions[0]
    auction = view.get("auction")
    pass_action = _find(legal_actions, "pass") or fill_template(legal_actions[0], rng)
    if not auction:
        return pass_action
    high = auction["high_bid"]
    passed = auction["passed"]
    others_in = [s for s in range(len(passed)) if s != seat and not passed[s]]
    if high == 0 and not others_in and view.get("active") == seat:
        return pass_action                      # nobody bid: the lot is mine for free
    worth = _lot_worth(view, seat, auction["lot"], tuning)
    limit = int(worth * tuning.worth_factor) - tuning.bid_margin
    want = high + 1
    if want > limit:
        return pass_action
    bid = _find(legal_actions, "bid")
    if bid is not None and is_range(bid["amount"]) and bid["amount"]["max"] >= want:
        return {"type": "bid", "amount": max(bid["amount"]["min"], want)}
    borrow = _find(legal_actions, "borrow")
    if borrow is not None:
        me = view["seats"][seat]
        cost = 1 + me["loans"]                  # repay 10, receive 9 - loans held
        if me["cash"] + me["next_loan"] >= want and limit - want > cost:
            return {"type": "borrow"}
    return pass_action
