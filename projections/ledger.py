"""The double-entry transaction ledger of a game, folded from its events.

Every line moves `quantity` of `asset` from one account to another, at an event number,
with the running balance of both accounts after it. Every asset sums to zero over all
accounts after every event (the bank, or a supply account, starts everything).
While the game is live, a line whose asset is secret to the viewer shows the game's
redacted name for it, and balances are kept over the names the viewer sees.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Optional

from events.envelope import StoredEvent

from .game import Transfer
from .session import PLATFORM_EVENTS, Session, evolve


def _shown_asset(transfer: Transfer, viewer: Optional[int], disclose: bool) -> str:
    if disclose or transfer.visible_to is None or (viewer is not None and viewer in transfer.visible_to):
        return transfer.asset
    return transfer.redacted_asset


def ledger_for(events: Iterable[StoredEvent], viewer: Optional[int], disclose: bool,
               game_id: str = "") -> dict:
    """{"entries": [...], "balances": {account: {asset: n}}} as `viewer` may see them."""
    balances: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    entries = []
    session: Optional[Session] = None
    for event in events:
        if session is not None and event.type not in PLATFORM_EVENTS:
            for transfer in session.game.transfers(session.state, event.payload):
                asset = _shown_asset(transfer, viewer, disclose)
                balances[transfer.frm][asset] -= transfer.quantity
                balances[transfer.to][asset] += transfer.quantity
                entries.append({"event": event.version, "from": transfer.frm, "to": transfer.to,
                                "asset": asset, "quantity": transfer.quantity, "price": transfer.price,
                                "balance_from": balances[transfer.frm][asset],
                                "balance_to": balances[transfer.to][asset]})
        session = evolve(session, event, game_id)
    return {"entries": entries,
            "balances": {account: {a: n for a, n in assets.items() if n}
                         for account, assets in sorted(balances.items())}}


def asset_totals(ledger: dict) -> dict[str, int]:
    """Each asset summed over all accounts: zero everywhere when the ledger balances."""
    totals: dict[str, int] = defaultdict(int)
    for assets in ledger["balances"].values():
        for asset, quantity in assets.items():
            totals[asset] += quantity
    return dict(totals)
