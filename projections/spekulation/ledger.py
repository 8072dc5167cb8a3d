"""The ledger of a Spekulation game: the transfers each event causes (state before it)."""

from __future__ import annotations

from projections.game import BANK, Transfer, seat_account
from projections.kernel import ledger

from .board import BOX, CARDS, COMPANIES, SUPPLY


def _money(frm: str, to: str, amount: int) -> list[Transfer]:
    if amount > 0:
        return [Transfer(frm, to, "money", amount)]
    if amount < 0:
        return [Transfer(to, frm, "money", -amount)]
    return []


def _supply_filled(state, event) -> list[Transfer]:
    return [Transfer(BANK, SUPPLY, f"share:{name}", event["count"]) for name in COMPANIES]


def _money_dealt(state, event) -> list[Transfer]:
    return [Transfer(BANK, seat_account(s), "money", event["amount"]) for s in range(state.players)]


def _shares_drawn(state, event) -> list[Transfer]:
    return [Transfer(SUPPLY, seat_account(s), f"share:{name}", 1) for s, name in enumerate(event["shares"])]


def _share_chosen(state, event) -> list[Transfer]:
    return [Transfer(SUPPLY, seat_account(event["seat"]), f"share:{event['company']}", 1)]


def _share_bought(state, event) -> list[Transfer]:
    acct, p = seat_account(event["seat"]), event["price"]
    return [Transfer(SUPPLY, acct, f"share:{event['company']}", 1, price=p)] + _money(acct, BANK, p)


def _share_sold(state, event) -> list[Transfer]:
    acct, p = seat_account(event["seat"]), event["price"]
    return [Transfer(acct, SUPPLY, f"share:{event['company']}", 1, price=p)] + _money(BANK, acct, p)


def _deck_shuffled(state, event) -> list[Transfer]:
    seat = event["seat"]
    source = BOX if not state.decks[seat] else f"discard:{seat}"
    return [Transfer(source, f"deck:{seat}", f"card:{card}", 1) for card in CARDS]


def _cards_drawn(state, event) -> list[Transfer]:
    seat = event["seat"]
    return [Transfer(f"deck:{seat}", seat_account(seat), f"card:{card}", 1, visible_to=(seat,),
                     redacted_asset="card") for card in event["cards"]]


def _cards_revealed(state, event) -> list[Transfer]:
    return [Transfer(seat_account(s), f"discard:{s}", f"card:{card}", 1)
            for s, card in enumerate(event["cards"])]


transfers = ledger({
    "supply_filled": _supply_filled,
    "money_dealt": _money_dealt,
    "shares_drawn": _shares_drawn,
    "share_chosen": _share_chosen,
    "share_bought": _share_bought,
    "share_sold": _share_sold,
    "deck_shuffled": _deck_shuffled,
    "cards_drawn": _cards_drawn,
    "cards_revealed": _cards_revealed,
})
