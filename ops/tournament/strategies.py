"""Simple outside strategies, written from the rules alone, to check that the heuristics hold
their fair share against players that are not built like them.

Each is a policy `(view, legal_actions, seat, rng) -> action` over the seat's view only, like
the product's bots; none is a product bot level (they live here, in ops, for measurement).
Where a strategy needs to place cubes or play a card it has no opinion on, it says what it
does; it never calls a product heuristic, so a flaw of the heuristic cannot hide in it.
"""

from __future__ import annotations

import math
import random
from typing import Callable, Optional

from projections import big_shot, speculate, speculation, spekulation
from projections.templates import fill_template

Policy = Callable[[dict, list, int, random.Random], dict]


def _first(legal: list[dict], kind: str) -> Optional[dict]:
    for action in legal:
        if action["type"] == kind:
            return action
    return None


# ----------------------------------------------------------------------------- speculation

RANKS = "23456789TJQKA"


def _equity(view: dict) -> float:
    """The holder's chance to keep the best trump times the pot, read crudely: the share of
    higher trumps not yet seen among the cards still unseen, raised to the cards still to turn."""
    best = view.get("best_trump")
    if not best:
        return 0.0
    seen = {view["turn_up"]} | {r["card"] for r in view["revealed"]}
    higher = sum(1 for r in RANKS[RANKS.index(best[0]) + 1:] if r + view["trump"] not in seen)
    unseen = max(1, 52 - len(seen))
    to_turn = sum(view["piles"]) + (view.get("dead_hand") or 0)
    return (1 - higher / unseen) ** to_turn * view["pot"]


def _trade_at_equity(view, legal, rng, jump: bool) -> dict:
    """A trader at the card's equity: as holder always offers and accepts any bid of at least
    the equity; as bidder bids up to the equity, 1 over the high bid (`jump`: all of it at
    once); reveals when it must."""
    kinds = {a["type"] for a in legal}
    if "reveal" in kinds:
        return {"type": "reveal"}
    if "offer" in kinds:
        return {"type": "offer"}
    if "accept" in kinds:
        return {"type": "accept"} if view["auction"]["high_bid"] >= _equity(view) else {"type": "decline"}
    if "bid" in kinds:
        bid = _first(legal, "bid")
        low, high = bid["amount"]["min"], bid["amount"]["max"]
        top = min(high, _equity(view))
        if low > top:
            return {"type": "pass"}
        return {"type": "bid", "amount": int(top) if jump else low}
    if "keep_blind" in kinds:
        return {"type": "keep_blind"}
    return fill_template(rng.choice(legal), rng)


def speculation_bid_max_value(view, legal, seat, rng):
    """Bids 1 over the high bid up to the card's full equity; sells at the equity."""
    return _trade_at_equity(view, legal, rng, jump=False)


def speculation_jump_bid(view, legal, seat, rng):
    """Bids the card's full equity at once; sells at the equity."""
    return _trade_at_equity(view, legal, rng, jump=True)


def speculation_always_sell(view, legal, seat, rng):
    """Offers the best trump whenever it holds it and takes the first bid; never bids."""
    kinds = {a["type"] for a in legal}
    for kind in ("reveal", "offer", "accept", "pass", "keep_blind"):
        if kind in kinds:
            return {"type": kind}
    return fill_template(rng.choice(legal), rng)


def speculation_overbid(view, legal, seat, rng):
    """Bids 1 over the high bid up to half the pot, whatever the card (the source's rule of
    thumb taken alone); keeps every card it holds."""
    kinds = {a["type"] for a in legal}
    if "reveal" in kinds:
        return {"type": "reveal"}
    if "keep" in kinds:
        return {"type": "keep"}
    if "decline" in kinds:
        return {"type": "decline"}
    if "bid" in kinds:
        bid = _first(legal, "bid")
        low, high = bid["amount"]["min"], bid["amount"]["max"]
        return {"type": "bid", "amount": low} if low <= min(high, view["pot"] // 2) else {"type": "pass"}
    if "keep_blind" in kinds:
        return {"type": "keep_blind"}
    return fill_template(rng.choice(legal), rng)


# ----------------------------------------------------------------------------- speculate

def _worth_change(view: dict, seat: int, card: str) -> int:
    share, move = card.split(":")
    held = view["shares"][seat][share]
    price = view["prices"][share]
    if move == "dividend":
        return held * (price // view["rules"]["dividend_divisor"])
    rules = view["rules"]
    return held * (min(rules["price_max"], max(rules["price_min"], price + int(move))) - price)


def speculate_hold_and_play(view, legal, seat, rng):
    """Never trades; plays the card that raises its own money + share value most."""
    kind = legal[0]["type"]
    if kind == "play_event":
        return max(legal, key=lambda a: (_worth_change(view, seat, a["card"]), a["card"]))
    if kind == "respond":
        return {"type": "respond", "count": 0}
    if _first(legal, "end_trading"):
        return {"type": "end_trading"}
    return fill_template(rng.choice(legal), rng)


def speculate_objective_rush(view, legal, seat, rng):
    """Chases its objective alone: buys the target types up to twice the target's value
    (bank price), sells everything else, answers nothing; plays its best card for itself."""
    kind = legal[0]["type"]
    if kind == "play_event":
        return speculate_hold_and_play(view, legal, seat, rng)
    if kind == "respond":
        return {"type": "respond", "count": 0}
    if kind == "give_shares":
        return rng.choice(legal)
    objective = (view.get("you") or {}).get("objective") or {}
    targets = objective.get("targets") or {}
    holding, prices = view["shares"][seat], view["prices"]
    for action in legal:
        if action["type"] == "sell" and action["share"] not in targets:
            return {**action, "count": action["count"]["max"]}
    for share, target in sorted(targets.items()):
        price = prices[share]
        if price <= 0:
            continue
        lack = math.ceil(2 * target / price) - holding[share]
        action = next((a for a in legal if a["type"] == "buy" and a["share"] == share), None)
        if lack > 0 and action and share not in view["turn"]["types_announced"]:
            return {**action, "count": min(lack, action["count"]["max"])}
    return {"type": "end_trading"}


# ----------------------------------------------------------------------------- spekulation

def spekulation_buy_leader(view, legal, seat, rng):
    """Buys the leading company it can afford, never sells; moves what it holds most of."""
    kinds = {a["type"] for a in legal}
    companies = view["companies"]
    mine = view["seats"][seat]["shares"]
    if "pass" in kinds:
        buys = [a for a in legal if a["type"] == "buy"]
        return min(buys, key=lambda a: companies[a["company"]]["rank"]) if buys else {"type": "pass"}
    if "play" in kinds:
        return max(legal, key=lambda a: (-1, "") if a["card"] == "holiday" else (mine[a["card"]], a["card"]))
    if "rank_move" in kinds:
        pick = max if view.get("action") == "+1" else min
        return pick(legal, key=lambda a: (mine[a["company"]], a["company"]))
    return fill_template(rng.choice(legal), rng)


def spekulation_buy_cheap(view, legal, seat, rng):
    """Buys the cheapest company at a positive price, sells nothing; moves what it holds."""
    kinds = {a["type"] for a in legal}
    companies = view["companies"]
    if "pass" in kinds:
        buys = [a for a in legal if a["type"] == "buy" and companies[a["company"]]["price"] > 0]
        return min(buys, key=lambda a: companies[a["company"]]["price"]) if buys else {"type": "pass"}
    return spekulation_buy_leader(view, legal, seat, rng)


# ----------------------------------------------------------------------------- big-shot

def _place_own_colour(view, legal, seat, rng):
    """Its own colour where it adds most to a lead of its own, other colours where they
    hurt the current leader least (the emptiest district)."""
    mine = view["seats"][seat]["colour"]
    cubes = {d["name"]: d["cubes"] for d in view["districts"]}

    def score(action):
        held = cubes[action["district"]]
        if action["colour"] == mine:
            return (1, held.get(mine, 0) - max([v for c, v in held.items() if c != mine] or [0]),
                    action["district"])
        return (0, -sum(held.values()), action["district"])
    return max(legal, key=score)


def _big_shot_board_move(view, legal, seat, rng):
    """The moves every big-shot strategy here makes alike: its own colour, a start space."""
    kind = legal[0]["type"]
    if kind == "place":
        return _place_own_colour(view, legal, seat, rng)
    if kind == "choose_start_space":
        return fill_template(legal[0], rng)
    return None


def big_shot_outbid(view, legal, seat, rng):
    """Bids 1 over the high bid while that is at most half its cash; never borrows."""
    move = _big_shot_board_move(view, legal, seat, rng)
    if move is not None:
        return move
    bid = _first(legal, "bid")
    if bid and bid["amount"]["min"] <= max(1, view["seats"][seat]["cash"] // 2):
        return {"type": "bid", "amount": bid["amount"]["min"]}
    return {"type": "pass"}


def big_shot_all_in(view, legal, seat, rng):
    """Outbids by 1 with all it has, borrows when it cannot, places its own colour."""
    move = _big_shot_board_move(view, legal, seat, rng)
    if move is not None:
        return move
    bid = _first(legal, "bid")
    if bid:
        return {"type": "bid", "amount": bid["amount"]["min"]}
    if _first(legal, "borrow"):
        return {"type": "borrow"}
    return {"type": "pass"}


def big_shot_free_lots(view, legal, seat, rng):
    """Never bids (takes lots only when nobody bids); places its own colour well."""
    return _big_shot_board_move(view, legal, seat, rng) or {"type": "pass"}


# game -> {name: policy}; a tournament level "outside:<name>". Keyed by each game module's
# own NAME: the games are named only in their declarations.
OUTSIDE: dict[str, dict[str, Policy]] = {
    speculation.NAME: {"bid-max-value": speculation_bid_max_value, "jump-bid": speculation_jump_bid,
                       "always-sell": speculation_always_sell, "overbid": speculation_overbid},
    speculate.NAME: {"hold-and-play": speculate_hold_and_play, "objective-rush": speculate_objective_rush},
    spekulation.NAME: {"buy-leader": spekulation_buy_leader, "buy-cheap": spekulation_buy_cheap},
    big_shot.NAME: {"outbid": big_shot_outbid, "all-in": big_shot_all_in, "free-lots": big_shot_free_lots},
}
