"""What an account reads of its games: the list ("my games") and its one event stream.

The stream is the account's own aggregate stream, of which a client sees the notices only
(model.NOTICES; the credential events are never shown): each message carries its position
in the stream as `id`, so a client resumes after a cut with `after` or Last-Event-ID and
misses or repeats nothing. `AccountCursor` has what the HTTP layer's broadcaster and the
core's stream generator need of a cursor (the stream's id, the last position sent,
`advance`, `until`, `finished`), so account streams park with the game streams, on the same
notifier subscription per process and under the same caps. A stream ends as soon as its
own credential is revoked or the account closes: those events are in the same stream, so
the append that revokes wakes it.
"""

from __future__ import annotations

from typing import Optional

from events.account_index import AccountIndex
from events.store import EventStore
from projections.session import ACTIVE, ENDED, SCORED

from ..core.errors import Invalid, NotFound
from .credentials import Principal
from .model import NOTICES

MAX_ACTIVE_SCAN = 500     # active games looked at for `my_turn` (an account rarely has more)


def notice_body(event) -> dict:
    return {"id": event.version, "type": NOTICES[event.type], "at": event.at, **event.data}


def notices_after(store: EventStore, principal: Principal, after: int, limit: int = 500) -> tuple[list[dict], int]:
    """The account's notices after position `after` (at most `limit`), and its stream's head."""
    head = store.head(principal.stream_id)[0]
    if after > head:
        raise Invalid(f"after: the account's stream is at {head}", {"field": "after"})
    until = min(head, after + limit)
    events = store.read(principal.stream_id, after, until) if until > after else []
    return [notice_body(e) for e in events if e.type in NOTICES], until


class AccountCursor:
    """Where one account stream stands (see the module's docstring)."""

    __slots__ = ("store", "game_id", "principal", "last", "framing", "finished", "session", "known")

    def __init__(self, store: EventStore, principal: Principal, after: int, framing, known=None):
        self.store, self.principal, self.framing = store, principal, framing
        self.game_id = principal.stream_id   # the stream the broadcaster and the notifier watch
        self.last = after
        self.finished = False
        self.session = None   # what the broadcaster copies between cursors of one group
        self.known = known

    def batch_key(self, until: int) -> tuple:
        return (self.game_id, self.last, until, self.principal.token_id, self.framing)

    def until(self) -> int:
        until = self.known(self.game_id) if self.known is not None else 0
        return until if until > self.last else self.store.head(self.game_id)[0]

    def advance(self, until: Optional[int] = None) -> str:
        until = self.until() if until is None else until
        if until <= self.last or self.finished:
            return ""
        out = []
        for event in self.store.read(self.game_id, self.last, until):
            if self._ends_here(event):
                self.finished = True
                break
            if event.type in NOTICES:
                out.append(self.framing.message(notice_body(event)))
        self.last = until
        return "".join(out)

    def _ends_here(self, event) -> bool:
        return event.type == "account.closed" or (
            event.type == "token.revoked" and event.data.get("token_id") == self.principal.token_id)

    def keepalive(self) -> str:
        return self.framing.keepalive()


class AccountGames:
    """`GET /v1/account/games`: the account's games, newest move first."""

    def __init__(self, core, index: AccountIndex):
        self.core = core
        self.index = index

    def list(self, account_id: str, status: Optional[str], my_turn: bool, game_type: Optional[str],
             offset: int, limit: int) -> dict:
        which = {"active": "active", "finished": "finished"}.get(status or "", "all")
        if not my_turn and not game_type:
            ids, total = self.index.games(account_id, which, offset, limit)
            rows = [row for row in (self._row(account_id, g) for g in ids) if row is not None]
            return {"games": rows, "total": total, "offset": offset, "limit": limit}
        # filtered in the service: over the active games for my_turn, else over the list
        scan = "active" if my_turn else which
        ids, _ = self.index.games(account_id, scan, 0, MAX_ACTIVE_SCAN)
        rows = []
        for game_id in ids:
            row = self._row(account_id, game_id)
            if row is None or (my_turn and not row["my_turn"]) or (game_type and row["type"] != game_type):
                continue
            rows.append(row)
        return {"games": rows[offset:offset + limit], "total": len(rows), "offset": offset, "limit": limit}

    def _row(self, account_id: str, game_id: str) -> Optional[dict]:
        try:
            session = self.core.load(game_id)
        except NotFound:
            return None
        mine = [i for i, s in enumerate(session.seats) if s.account == account_id]
        left = [i for i in mine if session.seats[i].left]
        to_act = session.to_act()
        row = {"game_id": game_id, "type": session.game_type, "status": session.status,
               "version": session.version, "seats": self.core.shown_seats([s.as_dict() for s in session.seats]),
               "my_seats": mine, "left_seats": left, "to_act": to_act,
               "my_turn": session.status == ACTIVE and any(s in to_act and s not in left for s in mine),
               "created_at": session.created_at, "last_move_at": session.last_action_at or session.created_at,
               "rated": bool(session.platform.get("rated")), "turn_timeout": session.platform.get("turn_timeout")}
        if session.status in (ENDED, SCORED) and session.result is not None:
            row["result"] = session.result
        return row
