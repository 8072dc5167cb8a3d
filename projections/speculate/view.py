"""What each seat may see: the view, each event as that seat may see it, and the result."""

from __future__ import annotations

from typing import Optional

from .data import (BANK_MARKDOWN, BANK_MARKUP, DIVIDEND_DIVISOR, FEE, FIRST_TURN_TYPES, LATE_FEE, LEVELS,
                   MAX_ANNOUNCEMENTS, MAX_TYPES_HELD, NAME, PRICE_MAX, PRICE_MIN, REWARD_EACH,
                   REWARD_SHARES_VALUE, SHARES, economy, objective_json)
from .state import State, objective_met, to_act, value


def score(state: State, seat: int) -> int:
    return state.money[seat] + value(state, seat) if state.alive[seat] else 0


def result(state: State) -> dict:
    n = state.players
    scores = [score(state, q) for q in range(n)]
    alive = [q for q in range(n) if state.alive[q]]
    ranks = [0] * n
    for q in alive:
        ranks[q] = 1 + sum(1 for r in alive if scores[r] > scores[q])
    elim = state.eliminated
    for j, q in enumerate(elim):            # the first eliminated ranks last
        ranks[q] = len(alive) + len(elim) - j
    return {"winners": [q for q in alive if ranks[q] == 1], "ranks": ranks, "scores": scores}


def view(state: State, seat: Optional[int]) -> dict:
    n = state.players
    over = state.phase == "over"
    offer = state.offer
    out = {
        "game": NAME, "players": n, "phase": state.phase, "to_act": to_act(state),
        "round": state.round, "rounds": state.rounds, "start_player": state.start_player,
        "active": state.active,
        "prices": dict(zip(SHARES, state.prices)),
        "money": list(state.money),
        "shares": [dict(zip(SHARES, h)) for h in state.shares],
        "alive": list(state.alive), "eliminated": list(state.eliminated),
        "bank": {"money": state.bank_money, "shares": dict(zip(SHARES, state.bank_shares))},
        "hand_counts": [len(h) for h in state.hands],
        "objective_levels": [lv if lv <= LEVELS else None for lv in state.levels],
        "objectives_met": [[objective_json(o) for o in met] for met in state.met],
        "event_deck_count": len(state.event_deck), "discard": list(state.discard),
        "objective_deck_counts": [len(d) for d in state.objective_decks],
        "turn": {"seat": state.active, "first_turn": state.first_turn, "announcements": state.announcements,
                 "max_announcements": MAX_ANNOUNCEMENTS, "first_turn_types": FIRST_TURN_TYPES,
                 "types_announced": [SHARES[t] for t in state.traded_types], "late_fee_due": state.owes},
        "announcement": None if offer is None else {
            "seat": offer.announcer, "side": offer.side, "share": SHARES[offer.share], "count": offer.count,
            "remaining": offer.remaining, "responder": offer.responder,
            "market_price": state.prices[offer.share]},
        "reward": None if state.reward_to is None else {
            "to": state.reward_to, "payers_left": list(state.reward_queue),
            "share_value_due": REWARD_SHARES_VALUE,
            "decided": None if state.pay_prefix is None else
            {SHARES[t]: c for t, c in enumerate(state.pay_prefix)}},
        "rules": {"price_min": PRICE_MIN, "price_max": PRICE_MAX, "fee": FEE, "late_fee": LATE_FEE,
                  "bank_buy_markup": BANK_MARKUP, "bank_sell_markdown": BANK_MARKDOWN, "max_types_held": MAX_TYPES_HELD,
                  "reward_each": REWARD_EACH, "reward_bank": economy(n, state.rules_version).reward_from_bank,
                  "dividend_divisor": DIVIDEND_DIVISOR},
        "over": over,
    }
    if seat is not None and 0 <= seat < n and state.hands:   # not before the deal
        out["you"] = {"seat": seat, "hand": sorted(state.hands[seat]),
                      "objective": objective_json(state.objectives[seat]),
                      "objective_met_now": objective_met(state, seat)}
    if over:
        out["hands"] = [sorted(h) for h in state.hands]
        out["objectives"] = [objective_json(o) for o in state.objectives]
        out["end_reason"] = state.end_reason
        out["result"] = result(state)
    return out


def redact(state: State, event: dict, seat: Optional[int]) -> Optional[dict]:
    kind = event["type"]
    if kind == "game_started":
        out = {k: v for k, v in event.items() if k not in ("event_deck", "objective_decks")}
        out["event_deck_count"] = len(event["event_deck"])
        out["objective_deck_counts"] = [len(d) for d in event["objective_decks"]]
        return out
    if kind == "deck_reshuffled":
        return {"type": kind, "count": len(event["order"])}
    if kind not in ("cards_dealt", "card_drawn", "objective_dealt") or seat == event["seat"]:
        return event
    if kind == "cards_dealt":
        return {"type": kind, "seat": event["seat"], "count": len(event["cards"])}
    if kind == "card_drawn":
        return {"type": kind, "seat": event["seat"]}
    return {"type": kind, "seat": event["seat"], "level": event["level"]}      # objective_dealt

