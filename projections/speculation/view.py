"""What each seat sees of a Speculation game, and how each event reads to it.

Nothing on the table is secret to one seat and not another: nobody sees a face-down card,
not even its owner, so the view is the same for every seat and the spectator. The only
secret in the log is the shuffled deck of a deal.
"""

from __future__ import annotations

from typing import Optional

from .rules import (BIDDING, BLIND, CLOSE, CODES, DECK_SIZE, KIND_TRUMP, NAME, OVER, SUITS, State, max_bid,
                    result, to_act)


def _seat_or_none(state: State, who: int) -> Optional[int]:
    return None if who < 0 or who == state.cfg.n else who


def view(state: State, seat: Optional[int]) -> dict:
    """Everything on the table; identical for every seat (nobody sees a face-down card)."""
    cfg = state.cfg
    n = cfg.n
    in_deal = bool(state.table)
    piles = state.piles
    auction = None
    if state.phase in (BIDDING, CLOSE):
        auction = {"kind": state.kind, "seller": state.seller,
                   "card": CODES[state.best] if state.kind == KIND_TRUMP else None,
                   "high_bid": state.high,
                   "high_bidder": state.high_bidder if state.high_bidder >= 0 else None,
                   "bidders": list(state.active)}
    dealt = cfg.rotation_len * cfg.hand_size if piles else 0
    out = {
        "game": NAME,
        "seat": seat,
        "players": n,
        "phase": state.phase,
        "to_act": to_act(state),
        "deal": state.deal_no,
        "deals": cfg.deals,
        "dealer": state.dealer,
        "options": {"hand_size": cfg.hand_size, "ante": cfg.ante,
                    "dealer_ante": cfg.dealer_ante, "starting_chips": cfg.starting_chips,
                    "deals": cfg.deals, "jack_five_bonus": cfg.jack_five_bonus,
                    "dead_hand": cfg.dead_hand, "blind_exchanges": cfg.blind_exchanges,
                    "price_cap": cfg.price_cap},
        "chips": list(state.chips),
        "pot": state.pot,
        "house": state.house,
        "trump": SUITS[state.trump] if in_deal else None,
        "turn_up": CODES[state.table[0][0]] if in_deal else None,
        "best_trump": CODES[state.best] if in_deal else None,
        "holder": _seat_or_none(state, state.holder) if in_deal else None,
        "best_in_dead_hand": in_deal and state.holder == n,
        "revealed": [{"card": CODES[c], "by": _seat_or_none(state, by),
                      "owner": _seat_or_none(state, owner)}
                     for c, by, owner in state.table[1:]],
        "piles": [len(piles[s]) for s in range(n)] if piles else [0] * n,
        "dead_hand": (len(piles[n]) if piles else 0) if cfg.dead_hand else None,
        "stock": DECK_SIZE - dealt - (1 if dealt else 0),
        "auction": auction,
        "blind_offerer": state.actor if state.phase == BLIND else None,
        "max_bid": max_bid(state, state.actor) if state.phase == BIDDING else None,
        "history": [{"deal": d, "dealer": dl, "winner": None if w < 0 else w, "amount": a}
                    for d, dl, w, a in state.history],
        "end_reason": state.end_reason or None,
        "result": result(state) if state.phase == OVER else None,
    }
    return out


def redact(state: State, event: dict, seat: Optional[int]) -> dict:
    """Only the deal carries a secret (the shuffled deck): while live, only counts remain."""
    if event.get("type") == "deal":
        return {k: v for k, v in event.items() if k != "deck"}
    return event
