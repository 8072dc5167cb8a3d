"""The ledger of a Speculation game: the chips and cards each event moves.

Accounts: each seat's chips and revealed cards (`seat:<n>`), each face-down pile
(`pile:<n>`, `pile:dead`), the dead hand's revealed cards (`dead_hand`), the pot, the
house (what is left in the pot at the end) and the deck. Face-down cards move as hidden
assets: nobody may see which card went where while the game is live.
"""

from __future__ import annotations

from typing import Optional

from projections.game import BANK, Transfer
from projections.kernel import ledger

from .rules import CARD_OF, CODES, KIND_TRUMP, State, pile_at

POT = "pot"
HOUSE = "house"
DECK = "deck"
DEAD_PILE = "pile:dead"
DEAD_TABLE = "dead_hand"
CHIPS = "chips"
HIDDEN_CARD = "card"


def _pile_account(state: State, pile: int) -> str:
    return DEAD_PILE if pile == state.cfg.n else f"pile:{pile}"


def _owner_account(state: State, owner: int) -> str:
    return DEAD_TABLE if owner == state.cfg.n else f"seat:{owner}"


def _deal_order(state: State) -> list[int]:
    """Pile receiving each dealt card, in order (one at a time from the dealer's left)."""
    length = state.cfg.rotation_len
    return [pile_at(state, j % length) for j in range(length * state.cfg.hand_size)]


def _hidden(frm: str, to: str, card: int, price: Optional[int] = None) -> Transfer:
    return Transfer(frm, to, "card:" + CODES[card], 1, price=price, visible_to=(),
                    redacted_asset=HIDDEN_CARD)


def _public(frm: str, to: str, card: int, price: Optional[int] = None) -> Transfer:
    return Transfer(frm, to, "card:" + CODES[card], 1, price=price)


def _tr_session_started(state: State, e: dict) -> list[Transfer]:
    return [Transfer(BANK, f"seat:{s}", CHIPS, e["starting_chips"]) for s in range(state.cfg.n)
            if e["starting_chips"]]


def _tr_antes(state: State, e: dict) -> list[Transfer]:
    return [Transfer(f"seat:{s}", POT, CHIPS, a) for s, a in enumerate(e["amounts"]) if a]


def _tr_deal(state: State, e: dict) -> list[Transfer]:
    order = _deal_order(state)
    return [_hidden(DECK, _pile_account(state, pile), CARD_OF[code], None)
            for pile, code in zip(order, e["deck"])]


def _tr_turn_up(state: State, e: dict) -> list[Transfer]:
    return [_public(DECK, f"seat:{state.dealer}", CARD_OF[e["card"]])]


def _tr_reveal(state: State, e: dict) -> list[Transfer]:
    n = state.cfg.n
    pile = n if e["seat"] is None else e["seat"]
    out = [_public(_pile_account(state, pile), _owner_account(state, pile), CARD_OF[e["card"]])]
    if e.get("bonus"):
        out.append(Transfer(f"seat:{pile}", POT, CHIPS, e["bonus"]))
    return out


def _tr_sale(state: State, e: dict) -> list[Transfer]:
    seller, buyer, price = e["seat"], e["buyer"], e["price"]
    if state.kind == KIND_TRUMP:
        card = _public(f"seat:{seller}", f"seat:{buyer}", state.best, price)
    else:
        card = _hidden(f"pile:{seller}", f"pile:{buyer}", state.piles[seller][0], price)
    return [card, Transfer(f"seat:{buyer}", f"seat:{seller}", CHIPS, price)]


def _tr_deal_end(state: State, e: dict) -> list[Transfer]:
    out = []
    if e["winner"] is not None and e["amount"]:
        out.append(Transfer(POT, f"seat:{e['winner']}", CHIPS, e["amount"]))
    for card, _by, owner in state.table:
        out.append(_public(_owner_account(state, owner), DECK, card))
    for pile, cards in enumerate(state.piles):
        account = _pile_account(state, pile)
        for card in cards:
            out.append(_hidden(account, DECK, card))
    return out


def _tr_session_end(state: State, e: dict) -> list[Transfer]:
    return [Transfer(POT, HOUSE, CHIPS, e["house"])] if e["house"] else []


transfers = ledger({
    "session_started": _tr_session_started,
    "antes": _tr_antes,
    "deal": _tr_deal,
    "turn_up": _tr_turn_up,
    "reveal": _tr_reveal,
    "sale": _tr_sale,
    "deal_end": _tr_deal_end,
    "session_end": _tr_session_end,
})
