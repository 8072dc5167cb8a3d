"""The ledger: the transfers each event causes, given the state before it.

Accounts: each seat, the bank, the supply (it issues everything, so every asset sums to 0),
the event deck and discard, the objective deck and the objectives met.
"""

from __future__ import annotations

from collections import Counter
from typing import Optional

from projections.game import BANK, Transfer, seat_account
from projections.kernel import ledger

from .data import NT, SHARES
from .state import State

SUPPLY = "supply"
EVENT_DECK = "event_deck"
EVENT_DISCARD = "event_discard"
OBJECTIVE_DECK = "objective_deck"
OBJECTIVES_MET = "objectives_met"
MONEY = "money"


def _card_asset(card: str) -> str:
    return f"event:{card}"


def _objective_asset(oid: str) -> str:
    return f"objective:{oid}"


def _share_asset(t: int) -> str:
    return f"share:{SHARES[t]}"


def _account(seat: Optional[int]) -> str:
    return BANK if seat is None else seat_account(seat)


def _tr_game_started(s: State, e: dict) -> list[Transfer]:
    setup = e["setup"]
    out = []
    for q in range(e["players"]):
        out.append(Transfer(SUPPLY, seat_account(q), MONEY, setup["player_money"]))
        out.extend(Transfer(SUPPLY, seat_account(q), _share_asset(t), setup["player_shares"]) for t in range(NT))
    out.append(Transfer(SUPPLY, BANK, MONEY, setup["bank_money"]))
    out.extend(Transfer(SUPPLY, BANK, _share_asset(t), setup["bank_shares"]) for t in range(NT))
    # In canonical order, never the deck order.
    out.extend(Transfer(SUPPLY, EVENT_DECK, _card_asset(c), k) for c, k in sorted(Counter(e["event_deck"]).items()))
    out.extend(Transfer(SUPPLY, OBJECTIVE_DECK, _objective_asset(o), 1, visible_to=(), redacted_asset="objective")
               for o in sorted(o for deck in e["objective_decks"] for o in deck))
    return out


def _tr_cards_dealt(s: State, e: dict) -> list[Transfer]:
    seat = e["seat"]
    return [Transfer(EVENT_DECK, seat_account(seat), _card_asset(c), k, visible_to=(seat,), redacted_asset="event_card")
            for c, k in sorted(Counter(e["cards"]).items())]


def _tr_card_drawn(s: State, e: dict) -> list[Transfer]:
    seat = e["seat"]
    return [Transfer(EVENT_DECK, seat_account(seat), _card_asset(e["card"]), 1, visible_to=(seat,),
                     redacted_asset="event_card")]


def _tr_objective_dealt(s: State, e: dict) -> list[Transfer]:
    seat = e["seat"]
    return [Transfer(OBJECTIVE_DECK, seat_account(seat), _objective_asset(e["objective"]), 1, visible_to=(seat,),
                     redacted_asset="objective")]


def _tr_fee(s: State, e: dict) -> list[Transfer]:
    return [Transfer(seat_account(e["seat"]), BANK, MONEY, e["amount"])]


def _tr_event_played(s: State, e: dict) -> list[Transfer]:
    return [Transfer(seat_account(e["seat"]), EVENT_DISCARD, _card_asset(e["card"]), 1)]


def _tr_dividends_paid(s: State, e: dict) -> list[Transfer]:
    return [Transfer(BANK, seat_account(p["seat"]), MONEY, p["amount"]) for p in e["payments"] if p["amount"]]


def _tr_deck_reshuffled(s: State, e: dict) -> list[Transfer]:
    return [Transfer(EVENT_DISCARD, EVENT_DECK, _card_asset(c), k) for c, k in sorted(Counter(e["order"]).items())]


def _tr_traded(s: State, e: dict) -> list[Transfer]:
    seller, buyer = _account(e["seller"]), _account(e["buyer"])
    total = e["count"] * e["unit_price"]
    out = [Transfer(seller, buyer, f"share:{e['share']}", e["count"], price=total)]
    if total:
        out.append(Transfer(buyer, seller, MONEY, total))
    return out


def _tr_bankrupt(s: State, e: dict) -> list[Transfer]:
    acct = seat_account(e["seat"])
    out = [Transfer(acct, BANK, MONEY, e["money"])] if e["money"] else []
    out.extend(Transfer(acct, BANK, f"share:{name}", c) for name, c in e["shares"].items())
    out.extend(Transfer(acct, EVENT_DISCARD, _card_asset(c), k) for c, k in sorted(Counter(e["cards"]).items()))
    return out


def _tr_objective_met(s: State, e: dict) -> list[Transfer]:
    return [Transfer(seat_account(e["seat"]), OBJECTIVES_MET, _objective_asset(e["objective"]), 1)]


def _tr_reward_paid(s: State, e: dict) -> list[Transfer]:
    payer, to = _account(e["payer"]), seat_account(e["to"])
    out = [Transfer(payer, to, MONEY, e["money"])] if e["money"] else []
    out.extend(Transfer(payer, to, f"share:{name}", c) for name, c in e["shares"].items())
    return out


transfers = ledger({
    "game_started": _tr_game_started,
    "cards_dealt": _tr_cards_dealt,
    "card_drawn": _tr_card_drawn,
    "objective_dealt": _tr_objective_dealt,
    "fee_paid": _tr_fee,
    "late_fee_paid": _tr_fee,
    "event_played": _tr_event_played,
    "dividends_paid": _tr_dividends_paid,
    "deck_reshuffled": _tr_deck_reshuffled,
    "traded": _tr_traded,
    "bankrupt": _tr_bankrupt,
    "objective_met": _tr_objective_met,
    "reward_paid": _tr_reward_paid,
})
