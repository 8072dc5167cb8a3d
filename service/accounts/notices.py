"""What a game's accounts are told, and the account's list of games: a projection of the
games' logs onto the accounts' streams.

After each batch of a game (and each repair of it), for every seat an account holds:

- the game goes to the top of the account's games (events/account_index.py);
- the notices due now are appended to the account's stream, each under an idempotency key
  of its own (`joined:<game>:<seat>`, `started:<game>`, `turn:<game>:<seat>:<decision>`,
  `ended:<game>:<seat>`): a notice is appended once whatever retries, crashes and repairs
  happen, and a repair that finds one missing appends it. A turn that is over by the time a
  repair runs is not told any more (only the decision open now is).

Each append is one aggregate's: a game's batch is never held up by an account's stream, and
the notices follow the batch by a few milliseconds.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from events.account_index import AccountIndex
from events.envelope import NewEvent
from projections.session import ACTIVE, ENDED, EXPIRED, SCORED, Session

from ..core.errors import Conflict
from ..core.unit_of_work import Command, Decision, Idempotency, UnitOfWork

SENT_MEMORY = 50_000   # notices this process knows it appended (skips a peek for each again)


def _notices(session: Session, seat: int) -> list[tuple[str, str, dict]]:
    """(idempotency key, stored type, data) of the notices due for one seat now."""
    game_id, game_type = session.game_id, session.game_type
    base = {"game_id": game_id, "game_type": game_type, "seat": seat}
    out = [(f"joined:{game_id}:{seat}", "notice.joined", base)]
    if session.status in (ACTIVE, ENDED, SCORED):
        out.append((f"started:{game_id}", "notice.started", base))
    decision = session.decision(seat)
    if session.status == ACTIVE and decision:
        out.append((f"turn:{game_id}:{seat}:{decision}", "notice.turn",
                    {**base, "version": session.version, "decision": decision}))
    if session.status == SCORED and session.result is not None:
        result = session.result
        out.append((f"ended:{game_id}:{seat}", "notice.ended",
                    {**base, "rank": result["ranks"][seat], "winners": result["winners"],
                     "won": seat in result["winners"]}))
    return out


def _invitation_notices(session: Session) -> list[tuple[str, str, str, dict]]:
    """(account, key, stored type, data) of a challenge's or rematch's notices due now: the
    invitation to each invited account, each acceptance to the asker, the end to everyone."""
    platform = session.platform
    asker = platform.get("challenger") or platform.get("rematch_by")
    if not asker:
        return []
    game_id = session.game_id
    base = {"game_id": game_id, "game_type": session.game_type, "from": asker,
            "kind": "challenge" if platform.get("challenger") else "rematch",
            "rated": bool(platform.get("rated")), "expires_at": platform.get("expires_at")}
    out = []
    for seat, info in enumerate(session.seats):
        if info.reserved and info.reserved != asker:
            out.append((info.reserved, f"invited:{game_id}", "notice.invited", {**base, "seat": seat}))
            if info.kind == "player":
                out.append((asker, f"accepted:{game_id}:{seat}", "notice.accepted",
                            {**base, "seat": seat, "by": info.reserved}))
    if session.status == EXPIRED:
        why = session.expired or {}
        for account in {s.reserved for s in session.seats if s.reserved} | {s.account for s in session.seats if s.account}:
            out.append((account, f"expired:{game_id}", "notice.expired",
                        {**base, "reason": why.get("reason", "expired"),
                         **({"by": why["by"]} if why.get("by") else {})}))
    return out


class AccountNotices:
    def __init__(self, work: UnitOfWork, index: AccountIndex):
        self.work = work
        self.index = index
        self._lock = threading.Lock()
        self._sent: OrderedDict = OrderedDict()

    def game_moved(self, session: Session) -> None:
        seats = [(i, s.account) for i, s in enumerate(session.seats) if s.account]
        invited = [s.reserved for s in session.seats if s.reserved and s.kind == "open"]
        if not seats and not invited:
            return
        last_move = session.last_action_at or session.created_at
        for account in {a for _, a in seats} | set(invited):
            self.index.record_game(account, session.game_id, session.status, last_move)
        for account, key, kind, data in _invitation_notices(session):
            self._tell(account, key, kind, data)
        started_told: set = set()
        for seat, account in seats:
            if session.seats[seat].left:   # its person left: the bot's turns and the end are not theirs
                continue
            for key, kind, data in _notices(session, seat):
                if kind == "notice.started":
                    if account in started_told:
                        continue
                    started_told.add(account)
                self._tell(account, key, kind, data)

    def _tell(self, account: str, key: str, kind: str, data: dict) -> None:
        memo = (account, key)
        if memo in self._sent:
            return
        try:
            self.work.run(Command(f"account/{account}", lambda _a, _c: Decision([NewEvent(kind, data)]),
                                  lambda done: done.after, idem=Idempotency(key, key),
                                  replay=lambda receipt: None))
        except Conflict:
            pass   # the same key with another body: told already
        with self._lock:
            self._sent[memo] = True
            while len(self._sent) > SENT_MEMORY:
                self._sent.popitem(last=False)

