"""The `heuristic` level for Speculation (the card game), from the seat's view only.

Nobody sees a face-down card, so every seat reads the same odds off the table; what differs
between seats is what a chip is worth to each. The bot therefore prices every sale by the one
thing that wins a session, its chance to finish with the most chips:

- The deal's odds are exact, not sampled: with no further sale, who ends up holding the best
  trump depends only on where the unseen higher trumps lie, and each card still to be turned
  is, by symmetry, a uniform draw from the cards nobody has seen. `_deal_odds` walks the
  rotation (the holder skipped, empty piles skipped, a higher trump making its revealer the
  holder and freezing that pile) and returns every seat's chance to take the pot.
- A sale changes who holds the card and moves chips. For the buyer it is worth what it adds
  to its own chance to take the pot *less the chance it had anyway* from its own pile (which
  freezes while it holds): the old bot valued the card at its survival chance alone and so
  overpaid for every card it bought. For the seller it is the reverse (its pile is turned
  again after the sale).
- A chip is not worth the same to a leader and to a trailer: the session is winner-take-all.
  `_session_chance` turns chip counts at the end of this deal into the chance of finishing
  first, with the pots still to come going to a uniformly chosen seat. A leader sells a
  risky card for a sure price; a trailer buys the chance it needs. A trade at its chip value
  only lowers a seat's variance, and against players who bid up to a card's value that loses
  sessions (a seat that sold at the chip value won 22.0% of 1,000 sessions against three
  `bid-max-value` players, one that never traded 24.8%).

Decisions: reveal whenever it may; as holder, offer (offering costs nothing) and accept a bid
that raises its chance to win the session; as bidder, bid up to the highest price at which
buying still raises its chance, opening at the lowest price the holder's own chance says it
should accept (a lone bidder who opened at 1 was always declined) and otherwise raising by 1.
It keeps the chips for its next ante. Blind cards (variant): sold for any price above their
small expected value, bought only at half of it.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from functools import lru_cache
from itertools import combinations_with_replacement

from projections.templates import fill_template

RANKS = "23456789TJQKA"

EXACT_FUTURES = 600      # above this many ways to share the remaining pots, sample them
SAMPLED_FUTURES = 400
SPREAD = 2.0             # chips x sqrt(deals left + 1): how far trades blur a chip count
FUTURES_SEED = 18        # the samples are fixed: the same view always gives the same choice


def _rank(code: str) -> int:
    return RANKS.index(code[0])


def _higher_and_unseen(view: dict) -> tuple[int, int]:
    """(trumps above the best trump that nobody has seen, cards nobody has seen): the turn-up
    and the revealed cards are public."""
    trump = view["trump"]
    seen = {view["turn_up"]} | {r["card"] for r in view["revealed"]}
    higher = sum(1 for r in RANKS[_rank(view["best_trump"]) + 1:] if r + trump not in seen)
    return higher, 52 - len(seen)


# ----------------------------------------------------------------------------- the deal's odds

@lru_cache(maxsize=50_000)
def _rotation_odds(dead: int, cursor: int, sizes: tuple, holder: int, higher: int,
                   unseen: int) -> tuple:
    """Chance that each rotation index ends holding the best trump, if nobody sells again.

    Rotation index 0 is left of the dealer; `dead` is the dead hand's index (or -1), which
    holds without being skipped. `sizes` are the face-down piles by index, `higher` the unseen
    trumps above the best one, `unseen` every card nobody has seen. The next card turned is a
    uniform draw from the unseen cards: each higher trump with chance 1/unseen, and the j-th
    lowest of them leaves `higher - j` above it.
    """
    length = len(sizes)
    skip = -1 if holder == dead else holder
    nxt = -1
    for step in range(1, length + 1):
        idx = (cursor + step) % length
        if idx != skip and sizes[idx]:
            nxt = idx
            break
    if nxt < 0:
        return tuple(1.0 if i == holder else 0.0 for i in range(length))
    after = sizes[:nxt] + (sizes[nxt] - 1,) + sizes[nxt + 1:]
    odds = [0.0] * length
    if unseen > higher:
        miss = (unseen - higher) / unseen
        for i, p in enumerate(_rotation_odds(dead, nxt, after, holder, higher, unseen - 1)):
            odds[i] += miss * p
    for j in range(1, higher + 1):
        for i, p in enumerate(_rotation_odds(dead, nxt, after, nxt, higher - j, unseen - 1)):
            odds[i] += p / unseen
    return tuple(odds)


# Above this many face-down cards the exact walk has too many sub-problems for its cache (a
# bid at 7 players with 5-card piles took 1.4 s, one at 8 with a dead hand 21 s): the odds
# are then estimated from ROTATION_SAMPLES walks, the same for the same table.
EXACT_CARDS = 24
ROTATION_SAMPLES = 400


@lru_cache(maxsize=5_000)
def _sampled_rotation_odds(dead: int, cursor: int, sizes: tuple, holder: int, higher: int,
                           unseen: int) -> tuple:
    """`_rotation_odds` estimated by walking the rotation ROTATION_SAMPLES times, each card
    turned a higher trump with chance higher / unseen (and then uniform among them)."""
    rng = random.Random(hash((dead, cursor, sizes, holder, higher, unseen)))
    length = len(sizes)
    counts = [0] * length
    for _ in range(ROTATION_SAMPLES):
        left, at, holds, above, hidden = list(sizes), cursor, holder, higher, unseen
        while True:
            skip = -1 if holds == dead else holds
            nxt = next((i for i in ((at + step) % length for step in range(1, length + 1))
                        if i != skip and left[i]), -1)
            if nxt < 0:
                break
            left[nxt] -= 1
            if rng.randrange(hidden) < above:
                above -= 1 + rng.randrange(above)    # the j-th lowest higher trump: higher - j above it
                holds = nxt
            hidden -= 1
            at = nxt
        counts[holds] += 1
    return tuple(c / ROTATION_SAMPLES for c in counts)


def _deal_odds(view: dict, holder: int) -> list[float]:
    """Each seat's chance to take this deal's pot if `holder` holds the best trump now and
    nobody sells again; the last entry is the dead hand's (the pot carries over)."""
    n, dealer = view["players"], view["dealer"]
    has_dead = view.get("dead_hand") is not None
    length = n + 1 if has_dead else n

    def index(seat):
        return n if seat is None else (seat - dealer - 1) % n

    cursor = index(view["revealed"][-1]["by"]) if view["revealed"] else length - 1
    sizes = [0] * length
    for seat, count in enumerate(view["piles"]):
        sizes[index(seat)] = count
    if has_dead:
        sizes[n] = view["dead_hand"]
    higher, unseen = _higher_and_unseen(view)
    walk = _rotation_odds if sum(sizes) <= EXACT_CARDS else _sampled_rotation_odds
    odds = walk(n if has_dead else -1, cursor, tuple(sizes), index(holder), higher, unseen)
    by_seat = [0.0] * (n + 1)
    for i, p in enumerate(odds):
        by_seat[n if i == n else (dealer + 1 + i) % n] += p
    return by_seat


# ----------------------------------------------------------------------------- the session's odds

@lru_cache(maxsize=None)
def _futures(players: int, deals: int) -> tuple:
    """The ways the pots of `deals` future deals can fall, as (pots won per seat, chance),
    each pot to a uniformly chosen seat: every way when they are few, else fixed samples."""
    if math.comb(deals + players - 1, players - 1) <= EXACT_FUTURES:
        out = []
        for combo in combinations_with_replacement(range(players), deals):
            counts = Counter(combo)
            ways = math.factorial(deals)
            for k in counts.values():
                ways //= math.factorial(k)
            out.append((tuple(counts.get(s, 0) for s in range(players)), ways / players ** deals))
        return tuple(out)
    rng = random.Random(FUTURES_SEED)
    drawn = Counter()
    for _ in range(SAMPLED_FUTURES):
        won = [0] * players
        for _ in range(deals):
            won[rng.randrange(players)] += 1
        drawn[tuple(won)] += 1
    return tuple((won, k / SAMPLED_FUTURES) for won, k in sorted(drawn.items()))


def after_antes(chips: tuple, deals_left: int, next_dealer: int, ante: int,
                dealer_ante: int) -> tuple[list, int, float]:
    """Each seat's chips once the antes of the deals to come are paid, each of those deals'
    pot, and the logistic scale of a chip margin at the session's end (SPREAD chips x
    sqrt(deals left + 1))."""
    n = len(chips)
    base = list(chips)
    for j in range(deals_left):
        dealer = (next_dealer + j) % n
        for s in range(n):
            base[s] -= dealer_ante if s == dealer else ante
    return base, dealer_ante + (n - 1) * ante, SPREAD * math.sqrt(deals_left + 1)


@lru_cache(maxsize=50_000)
def _session_chance(chips: tuple, deals_left: int, next_dealer: int, ante: int,
                    dealer_ante: int, seat: int) -> float:
    """`seat`'s chance to finish with the most chips (a tie shares the win) from `chips` at
    the end of this deal, with `deals_left` deals to come."""
    n = len(chips)
    base, pot, scale = after_antes(chips, deals_left, next_dealer, ante, dealer_ante)
    chance = 0.0
    for won, p in _futures(n, deals_left):
        mine = base[seat] + pot * won[seat]
        beats = 1.0
        for s in range(n):
            if s != seat:
                beats /= 1.0 + math.exp((base[s] + pot * won[s] - mine) / scale)
        chance += p * beats
    return chance


def _win_chance(view: dict, seat: int, buyer: int | None = None, price: int = 0) -> float:
    """`seat`'s chance to win the session if the holder keeps the card (`buyer` None) or sells
    it to `buyer` for `price`."""
    n = view["players"]
    seller = view["auction"]["seller"]
    chips = list(view["chips"])
    if buyer is not None:
        chips[buyer] -= price
        chips[seller] += price
    opts = view["options"]
    deals_left = max(0, view["deals"] - view["deal"])
    next_dealer = (view["dealer"] + 1) % n
    pot = view["pot"]
    total = 0.0
    for winner, p in enumerate(_deal_odds(view, seller if buyer is None else buyer)):
        if p > 0.0:
            after = list(chips)
            if winner < n:
                after[winner] += pot
            total += p * _session_chance(tuple(after), deals_left, next_dealer, opts["ante"],
                                         opts["dealer_ante"], seat)
    return total


def _first_true(low: int, high: int, test) -> int | None:
    """The smallest price in [low, high] for which `test` holds, `test` being false below some
    price and true from it on (None: true nowhere)."""
    if low > high or not test(high):
        return None
    while low < high:
        mid = (low + high) // 2
        if test(mid):
            high = mid
        else:
            low = mid + 1
    return low


def _buyer_limit(view: dict, buyer: int, cap: int) -> int:
    """The highest price (at most `cap`) at which buying still raises the buyer's chance to
    win the session (0: none); the chance falls as the price rises."""
    if cap < 1:
        return 0
    without = _win_chance(view, buyer)
    too_dear = _first_true(1, cap, lambda price: _win_chance(view, buyer, buyer, price) <= without)
    return cap if too_dear is None else too_dear - 1


def _seller_ask(view: dict, buyer: int, limit: int) -> int | None:
    """The lowest price up to `limit` that raises the seller's own chance to win the session,
    were `buyer` to pay it (None: none does); the chance rises with the price."""
    seller = view["auction"]["seller"]
    keep = _win_chance(view, seller)
    return _first_true(1, limit, lambda price: _win_chance(view, seller, buyer, price) > keep)


# ----------------------------------------------------------------------------- blind cards (variant)

def _blind_card_value(view: dict) -> float:
    """A rough value of one unseen face-down card: the chance it is a higher trump, times a
    fair share of the pot (it still has to survive later reveals)."""
    if view["best_trump"] is None:
        return 0.0
    higher, unseen = _higher_and_unseen(view)
    return higher / max(1, unseen) * view["pot"] * 0.5


def _pick(legal: list[dict], kind: str) -> dict | None:
    for action in legal:
        if action["type"] == kind:
            return action
    return None


def _reserve(view: dict, seat: int) -> int:
    """Chips kept back for the next ante (the dealer's ante when this seat deals next)."""
    opts = view["options"]
    next_dealer = (view["dealer"] + 1) % view["players"]
    return opts["dealer_ante"] if seat == next_dealer else opts["ante"]


def bid_cap(view: dict, seat: int, high: int) -> int:
    """The most `seat` may bid on a card: at most `high`, its next ante kept back."""
    return min(high, view["chips"][seat] - _reserve(view, seat))


def bid_limit(view: dict, seat: int, low: int, high: int) -> int:
    """The most `seat` would pay for the best trump now, a bid between `low` and `high` with
    its next ante kept back (0: not even `low`)."""
    cap = bid_cap(view, seat, high)
    return _buyer_limit(view, seat, cap) if low <= cap else 0


def _blind(view: dict, legal: list[dict], seat: int, types: set) -> dict:
    auction = view["auction"]
    if "accept" in types:
        return {"type": "accept"} if auction["high_bid"] >= _blind_card_value(view) else {"type": "decline"}
    template = _pick(legal, "bid")
    low, high = template["amount"]["min"], template["amount"]["max"]
    limit = min(int(0.5 * _blind_card_value(view)), view["chips"][seat] - _reserve(view, seat), high)
    return {"type": "bid", "amount": low} if low <= limit else {"type": "pass"}


# ----------------------------------------------------------------------------- the policy

def heuristic(view: dict, legal_actions: list[dict], seat: int, rng: random.Random) -> dict:
    types = {a["type"] for a in legal_actions}

    if "reveal" in types:
        return {"type": "reveal"}
    if "offer" in types:          # the holder's sale decision: an offer commits to nothing
        return {"type": "offer"}

    auction = view.get("auction") or {}
    if auction.get("kind") == "blind" and types & {"accept", "bid"}:
        return _blind(view, legal_actions, seat, types)

    if "accept" in types:
        sell = _win_chance(view, seat, auction["high_bidder"], auction["high_bid"])
        return {"type": "accept"} if sell > _win_chance(view, seat) else {"type": "decline"}

    if "bid" in types:
        template = _pick(legal_actions, "bid")
        low, high = template["amount"]["min"], template["amount"]["max"]
        limit = bid_limit(view, seat, low, high)
        if low > limit:
            return {"type": "pass"}
        # open where the holder's own odds say it should accept (a lone bidder's bid is final),
        # else raise by one: the price rises only as far as a rival pushes it
        ask = _seller_ask(view, seat, limit)
        return {"type": "bid", "amount": max(low, ask if ask is not None else limit)}

    if "offer_blind" in types:
        return {"type": "offer_blind"}

    return fill_template(rng.choice(legal_actions), rng)
