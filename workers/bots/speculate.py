"""Bots for `speculate`, deciding from the seat's view only.

`heuristic` works toward its own hidden objective:
- trading: sells every share type its objective does not name (at most four types may be
  held, and the cash buys what it lacks), then buys what each target type lacks (one share
  of margin), keeping a cash reserve for the next turn's fee; raises a late fee by selling.
  It asks the table for a type at most once a turn: a buy is announced again only while the
  bank still holds shares of that type (the bank fills what the players decline), so it never
  repeats an announcement that can fill nothing;
- event cards: plays the card that best improves its money + share value plus a weighted
  progress toward its targets (a large bonus when the objective would be met at once, on
  the turn's second card, where the check follows), less RIVAL_WEIGHT x the best rival's
  gain from the same card (holdings are public: raising a type a rival holds more of helps
  the rival more); `heuristic(..., rival_weight=...)` sets that weight, and
  `rival_measure="leader"` measures instead how the card moves the best rival score, up or
  down (the search seat plays its own moves at weight 1.0 against the leader,
  workers/bots/search SETTINGS; the heuristic level keeps 0.5 and the best gain);
- answering announcements: sells types it does not need (or its surplus) to buyers, buys
  the target types it lacks from sellers at market price;
- paying a reward in shares: gives as many non-target shares and as few target shares as
  the allowed counts let it.
"""

from __future__ import annotations

import random
from typing import Optional

from projections.templates import fill_template

PROGRESS_WEIGHT = 60      # money-equivalent of going from no progress to full progress
MET_BONUS = 250           # roughly 25 from each other player + 125 from the bank
MARGIN = 1                # extra shares bought above the exact need
RESERVE = 60              # cash kept for the next turn's fee
RIVAL_WEIGHT = 0.5        # weight of the best rival's gain from an event card


def _card(card: str) -> tuple[str, Optional[int]]:
    share, rest = card.split(":")
    return share, None if rest == "dividend" else int(rest)


def _targets(view: dict) -> dict:
    objective = view["you"]["objective"]
    return objective["targets"] if objective else {}


def _need(target: int, price: int) -> Optional[int]:
    """Shares needed for a target at this price (None: impossible at price 0)."""
    if price <= 0:
        return None
    return -(-target // price)


def _score(view: dict, seat: int, prices: dict, money: Optional[int] = None) -> int:
    """Money + share value: the seat's final score if the game ended at these prices."""
    holding = view["shares"][seat]
    cash = view["money"][seat] if money is None else money
    return cash + sum(holding[t] * prices[t] for t in prices)


def _evaluate(view: dict, seat: int, prices: dict, money: int, second_card: bool) -> float:
    holding = view["shares"][seat]
    targets = _targets(view)
    worth = _score(view, seat, prices, money)
    if not targets:
        return worth
    progress = sum(min(holding[t] * prices[t], v) / v for t, v in targets.items()) / len(targets)
    value = worth + PROGRESS_WEIGHT * progress
    held_types = sum(1 for t in holding if holding[t])
    met = held_types <= view["rules"]["max_types_held"] and all(
        holding[t] * prices[t] >= v for t, v in targets.items())
    if met and second_card:
        value += MET_BONUS
    return value


def _rival_gains(view: dict, seat: int, share: str, prices: dict, move: Optional[int]) -> dict[int, int]:
    """What the card changes in each live rival's money + share value (a price card moves
    only the named type, a dividend pays per share held)."""
    if move is None:
        per_share = view["prices"][share] // view["rules"]["dividend_divisor"]
    else:
        per_share = prices[share] - view["prices"][share]
    return {q: holding[share] * per_share for q, holding in enumerate(view["shares"])
            if q != seat and view["alive"][q]}


def _rival_gain(view: dict, seat: int, share: str, prices: dict, move: Optional[int]) -> int:
    """The largest gain in money + share value any live rival gets from this card (a loss
    counts as none)."""
    return max(0, *_rival_gains(view, seat, share, prices, move).values())


def _leader_gain(view: dict, seat: int, share: str, prices: dict, move: Optional[int]) -> int:
    """How much the card moves the best score among the live rivals (money + share value),
    up or down: a card that hurts the rival in the lead counts for the seat, one that lifts
    a trailing rival past the leader counts only by the new lead."""
    gains = _rival_gains(view, seat, share, prices, move)
    if not gains:
        return 0
    before = {q: _score(view, q, view["prices"]) for q in gains}
    return max(before[q] + gains[q] for q in gains) - max(before.values())


# how a card's effect on the rivals is measured (`heuristic(..., rival_measure=...)`)
RIVAL_MEASURES = {"best_gain": _rival_gain, "leader": _leader_gain}


def _play_event(view: dict, legal: list[dict], seat: int, rival_weight: Optional[float] = None,
                rival_measure: str = "best_gain") -> dict:
    if rival_weight is None:          # read here, not bound as a default: ops/bot_bounds.py sets the constant
        rival_weight = RIVAL_WEIGHT
    rival_effect = RIVAL_MEASURES[rival_measure]
    prices0 = view["prices"]
    money0 = view["money"][seat]
    second = view["phase"] == "event2"
    bank = view["bank"]["money"]
    best, best_value = legal[0], None
    for action in legal:
        share, move = _card(action["card"])
        prices, money = dict(prices0), money0
        if move is None:
            money += min(bank, view["shares"][seat][share] * (prices[share] // view["rules"]["dividend_divisor"]))
        else:
            rules = view["rules"]
            prices[share] = min(rules["price_max"], max(rules["price_min"], prices[share] + move))
        value = _evaluate(view, seat, prices, money, second) - rival_weight * rival_effect(view, seat, share, prices, move)
        if best_value is None or value > best_value:
            best, best_value = action, value
    return best


def _find(legal: list[dict], kind: str, share: Optional[str] = None) -> Optional[dict]:
    for action in legal:
        if action["type"] == kind and (share is None or action.get("share") == share):
            return action
    return None


def _deficits(view: dict, seat: int) -> dict:
    holding, prices = view["shares"][seat], view["prices"]
    out = {}
    for t, v in _targets(view).items():
        need = _need(v, prices[t])
        if need is not None and need + MARGIN > holding[t]:
            out[t] = need + MARGIN - holding[t]
    return out


def _buy_may_fill(view: dict, share: str) -> bool:
    """Whether a buy announcement of `share` could fill anything: the bank holds some (it fills
    what the players decline), or the table has not been asked about the type this turn (the
    view keeps no record of who declined, so once asked, the players' answer is taken as no)."""
    return view["bank"]["shares"][share] > 0 or share not in view["turn"]["types_announced"]


def _trade(view: dict, legal: list[dict], seat: int) -> dict:
    holding, prices = view["shares"][seat], view["prices"]
    money = view["money"][seat]
    turn = view["turn"]
    due = turn["late_fee_due"]
    targets = _targets(view)
    if due and money < due:                     # raise the late fee: sell the most valuable spare type
        sells = [a for a in legal if a["type"] == "sell"]
        if sells:
            sells.sort(key=lambda a: (a["share"] in targets, -holding[a["share"]] * prices[a["share"]]))
            return {**sells[0], "count": sells[0]["count"]["max"]}
        return {"type": "end_trading"}
    if not targets:
        return {"type": "end_trading"}
    first_turn_room = turn["first_turn_types"] - len(turn["types_announced"]) if turn["first_turn"] else 99
    announced = set(turn["types_announced"])
    # 1. Sell the types the objective does not name (on a first turn: just one, the dearest).
    spare = sorted((t for t in holding if holding[t] and t not in targets), key=lambda t: -prices[t])
    if turn["first_turn"]:
        spare = [t for t in spare if t in announced] or ([spare[0]] if spare and first_turn_room > 1 else [])
    for t in spare:
        action = _find(legal, "sell", t)
        if action:
            return {**action, "count": action["count"]["max"]}
    # 2. Buy what the targets lack, keeping a reserve for the next fee.
    deficits = sorted(_deficits(view, seat).items(), key=lambda kv: -kv[1] * prices[kv[0]])
    for t, lack in deficits:
        action = _find(legal, "buy", t)
        if not action or not _buy_may_fill(view, t):
            continue
        affordable = max(0, money - RESERVE - due) // (prices[t] + view["rules"]["bank_buy_markup"])
        count = min(lack, action["count"]["max"], affordable)
        if count >= 1:
            return {**action, "count": count}
    return {"type": "end_trading"}


def _respond(view: dict, legal: list[dict], seat: int) -> dict:
    ann = view["announcement"]
    cap = legal[0]["count"]["max"]
    share = ann["share"]
    holding, prices = view["shares"][seat], view["prices"]
    targets = _targets(view)
    if ann["side"] == "buy":                    # they buy: sell what I do not need
        if share not in targets:
            count = cap
        else:
            need = _need(targets[share], prices[share])
            count = 0 if need is None else max(0, holding[share] - need - MARGIN)
    else:                                       # they sell: buy what I lack, at market price
        lack = _deficits(view, seat).get(share, 0)
        price = prices[share]
        affordable = cap if price == 0 else max(0, view["money"][seat] - RESERVE) // price
        count = min(lack, affordable)
    return {"type": "respond", "count": max(0, min(cap, count))}


def _give(view: dict, legal: list[dict], seat: int) -> dict:
    targets = _targets(view)
    share = legal[0]["share"]
    pick = min if share in targets else max
    return pick(legal, key=lambda a: a["count"])


def heuristic(view: dict, legal_actions: list[dict], seat: int, rng: random.Random,
              rival_weight: Optional[float] = None, rival_measure: str = "best_gain") -> dict:
    if not legal_actions:
        raise ValueError("no legal action")
    if "prices" not in view and isinstance(view.get("state"), dict):
        view = view["state"]            # the service's envelope (disclosure.view_for) around the game's view
    kind = legal_actions[0]["type"]
    if kind == "play_event":
        return _play_event(view, legal_actions, seat, rival_weight, rival_measure)
    if kind == "respond":
        return _respond(view, legal_actions, seat)
    if kind == "give_shares":
        return _give(view, legal_actions, seat)
    if view["phase"] == "trade":
        return _trade(view, legal_actions, seat)
    return fill_template(rng.choice(legal_actions), rng)
