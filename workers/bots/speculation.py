"""The `heuristic` level for Speculation (the card game), from the seat's view only.

Strategy notes of the brief, made numeric:
- Count the trumps above the best trump that nobody has seen (the turn-up and the revealed
  cards are public), and how many face-down cards will still be turned (pile counts, the
  dead hand). The chance that the best trump survives is the chance that none of those
  higher trumps sits among the cards still to turn (the rest lie in the undealt stock):
  a hypergeometric "none drawn".
- The holder offers whenever the card is not nearly safe (offering costs nothing) and
  accepts a bid worth at least 0.9 x its equity (survival chance x pot): a sure price
  beats a risky wait.
- A bidder values the card at 0.95 x its survival chance (as the holder, its own pile no
  longer turned) times the pot, and keeps enough chips for its next ante. It opens at the
  price a holder like itself would accept (0.9 x the holder's equity, computed from the
  public view), capped by its own limit, rather than 1 over the high bid: a lone bidder
  bidding the minimum is always declined. The buyer's limit and the seller's price are
  thereby set to meet (the old limits, at most 0.7 x equity and half the pot against at
  least 0.85 x equity, made 10 sales in 12,577 offers). The source's rule of thumb "no more
  than half the pot, only when little remains to be turned" is carried by the survival
  chance itself: a card with much left to turn is worth little.
- Blind cards (variant): sold for any price above their small expected value, bought
  only very cheaply.
"""

from __future__ import annotations

import math
import random

RANKS = "23456789TJQKA"

SAFE_ENOUGH = 0.95       # the holder keeps without offering above this survival chance
SELL_FACTOR = 0.9        # the holder accepts a bid >= this x (survival chance x pot)
BUY_FACTOR = 0.95        # a bidder pays at most this x (its survival chance as holder x pot)


def _rank(code: str) -> int:
    return RANKS.index(code[0])


def _higher_and_unseen(view: dict) -> tuple[int, int]:
    """(trumps above the best trump that nobody has seen, cards nobody has seen): the turn-up
    and the revealed cards are public."""
    trump = view["trump"]
    seen = {view["turn_up"]} | {r["card"] for r in view["revealed"]}
    higher = sum(1 for r in RANKS[_rank(view["best_trump"]) + 1:] if r + trump not in seen)
    return higher, 52 - len(seen)


def _survival(view: dict, holder: int | None) -> float:
    """Chance that no higher trump is turned from now on if `holder` holds the best trump."""
    if view["best_trump"] is None:
        return 0.0
    higher, unseen = _higher_and_unseen(view)
    to_turn = sum(c for s, c in enumerate(view["piles"]) if s != holder)
    to_turn += view["dead_hand"] or 0
    return _none_drawn(unseen, to_turn, higher)


def _none_drawn(unseen: int, drawn: int, targets: int) -> float:
    """P(none of `targets` special cards among `drawn` cards taken from `unseen`)."""
    if targets == 0 or drawn <= 0:
        return 1.0
    if unseen - drawn < targets:
        return 0.0
    p = 1.0
    for i in range(targets):
        p *= (unseen - drawn - i) / (unseen - i)
    return p


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


def heuristic(view: dict, legal_actions: list[dict], seat: int, rng: random.Random) -> dict:
    types = {a["type"] for a in legal_actions}
    pot = view["pot"]

    if "reveal" in types:
        return {"type": "reveal"}

    if "offer" in types:  # the holder's sale decision
        if _survival(view, seat) >= SAFE_ENOUGH:
            return {"type": "keep"}
        return {"type": "offer"}

    auction = view.get("auction") or {}
    if "accept" in types:
        high = auction.get("high_bid", 0)
        if auction.get("kind") == "blind":
            worth = _blind_card_value(view)
        else:
            worth = SELL_FACTOR * _survival(view, seat) * pot
        return {"type": "accept"} if high >= worth else {"type": "decline"}

    if "bid" in types:
        template = _pick(legal_actions, "bid")
        low, high = template["amount"]["min"], template["amount"]["max"]
        if auction.get("kind") == "blind":
            limit, ask = 0.5 * _blind_card_value(view), 0.0
        else:
            limit = BUY_FACTOR * _survival(view, seat) * pot       # if this seat held the card
            # what the holder is likely to accept: its own equity in the card, as its
            # survival (its pile skipped) x pot, times the factor a heuristic holder uses
            ask = SELL_FACTOR * _survival(view, auction.get("seller")) * pot
        limit = min(int(limit), view["chips"][seat] - _reserve(view, seat), high)
        if low <= limit:
            # open at the holder's likely price (not 1 over the high bid: a lone bidder
            # bidding the minimum is always declined), never above its own limit
            return {"type": "bid", "amount": max(low, min(limit, math.ceil(ask)))}
        return {"type": "pass"}

    if "offer_blind" in types:
        return {"type": "offer_blind"}

    action = rng.choice(legal_actions)
    return {k: (rng.randint(v["min"], v["max"]) if isinstance(v, dict) else v)
            for k, v in action.items()}
