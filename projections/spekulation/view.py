"""What each seat of a Spekulation game sees: the view of the state, the redaction of events."""

from __future__ import annotations

from typing import Any, Optional

from .board import ACTION_TILES, COMPANIES, DECK_SIZE, MOVE_TILES, START, prices, ranks
from .rules import NAME, State, dice_rolled_together, result, to_act


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
        "number": _number(state),
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


def _number(state: State) -> Optional[int]:
    """The movement number, once public: version 2's dice edition rolls it with the symbol die
    at the start of the turn; otherwise it is known from step 2 on."""
    if dice_rolled_together(state):
        return state.number or None
    return state.number if state.phase in ("commit", "resolve") else None


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
