"""Challenges and rematches: games whose seats are reserved for named accounts.

Both are the same thing on the game's log: a game created with open seats each reserved for
one account (`{"kind": "open", "reserved": <account>}`), its asker's own seat reserved for the
asker, an `expires_at` in its platform options, and who asked (`challenger`, or
`rematch_of`). An invited account accepts by claiming its seat; the game starts when every
seat is taken, as any game does. A decline, a cancel or the expiry appends `game.expired`:
the game never starts and leaves the lobby (its log is kept).

Each is a chain of single-aggregate appends through the unit of work, every step idempotent:
1. create the game (a challenge's id is random; a rematch's is derived from the finished
   game's id, so two seats asking at once create one game and both land on it);
2. claim the asker's seat for the asker (idempotency key `invitation:<account>`).
A crash between them leaves a game whose asker's seat is still reserved for the asker: the
game's observer (notices.py, which also runs in the reconciler's repair) finishes step 2, and
the expiry job ends the game if nobody comes. Never half.
"""

from __future__ import annotations

import time
from typing import Optional

from projections.session import OPEN, SCORED, Session

from ..accounts.credentials import Principal
from ..core.errors import Conflict, Forbidden, Invalid, NotFound
from ..ratings.service import BOT_ACCOUNTS

DEFAULT_EXPIRY = 600          # seconds an invitation waits for its accounts
MAX_EXPIRY = 7 * 86400
ASKER_KEY = "invitation:{}"


def _now_ms() -> int:
    return int(time.time() * 1000)


class Invitations:
    def __init__(self, core, accounts):
        self.core = core
        self.accounts = accounts

    # --- challenges ----------------------------------------------------------------------------
    def challenge(self, principal: Principal, game_type: str, options: Optional[dict], seats: list[dict], *,
                  rated: bool, turn_timeout: Optional[float], expires_in: float = DEFAULT_EXPIRY,
                  creator: str = "") -> Session:
        """A game with seats reserved for the named accounts. `seats`: `{"me": true}` (the
        challenger's, exactly one), `{"account": username}`, `{"bot": level}` or `{}` (open)."""
        me = principal.account_id
        if sum(1 for s in seats if s.get("me")) != 1:
            raise Invalid("seats: exactly one seat is the challenger's ({\"me\": true})", {"field": "seats"})
        game_seats, invited = [], []
        for i, seat in enumerate(seats):
            if seat.get("me"):
                game_seats.append({"reserved": me})
            elif seat.get("account") is not None:
                account = self._invitable(i, seat["account"], me)
                if account in invited:
                    raise Invalid(f"seats.{i}.account: {seat['account']!r} is invited twice", {"field": f"seats.{i}.account"})
                invited.append(account)
                game_seats.append({"reserved": account})
            elif seat.get("bot"):
                game_seats.append({"bot": seat["bot"]})
            else:
                game_seats.append({})
        if not invited:
            raise Invalid("seats: a challenge names at least one account ({\"account\": username})",
                          {"field": "seats"})
        extra = {"challenger": me, "expires_at": _now_ms() + int(expires_in * 1000)}
        created = self.core.create_game(game_type, options, game_seats, turn_timeout=turn_timeout, rated=rated,
                                        platform_extra=extra, creator=creator)
        return self._seat_asker(created.session, me)

    def _invitable(self, i: int, username, me: str) -> str:
        field = f"seats.{i}.account"
        if not isinstance(username, str):
            raise Invalid(f"{field}: a username", {"field": field})
        try:
            account = self.accounts.by_username(username)
        except NotFound:
            raise NotFound(f"{field}: no account {username[:40]!r}", {"field": field}) from None
        if account.id == me:
            raise Invalid(f"{field}: that is you (your own seat is {{\"me\": true}})", {"field": field})
        if account.closed:
            raise Invalid(f"{field}: {account.username}'s account is closed", {"field": field})
        if account.id in BOT_ACCOUNTS:
            raise Invalid(f"{field}: a bot is a seat of its own ({{\"bot\": level}})", {"field": field})
        if account.challenges == "none":
            raise Forbidden(f"{field}: {account.username} does not take challenges", {"field": field},
                            code="challenges_refused")
        return account.id

    def _seat_asker(self, session: Session, asker: str) -> Session:
        seat = next((i for i, s in enumerate(session.seats) if s.reserved == asker), None)
        if seat is None or session.seats[seat].kind != "open":
            return session
        return self.core.claim_seat(session.game_id, seat, None, ASKER_KEY.format(asker), account=asker).session

    def accept(self, principal: Principal, game_id: str) -> Session:
        session = self.core.load(game_id)
        seat = next((i for i, s in enumerate(session.seats) if s.reserved == principal.account_id), None)
        if seat is None:
            raise Forbidden(f"game_id: game {game_id} holds no seat reserved for this account", {"field": "game_id"},
                            code="not_invited")
        if session.seats[seat].kind != "open":
            return session   # accepted already
        return self.core.claim_seat(game_id, seat, None, ASKER_KEY.format(principal.account_id),
                                    account=principal.account_id).session

    def decline(self, principal: Principal, game_id: str) -> Session:
        session = self._invitation(game_id)
        if not any(s.reserved == principal.account_id and s.kind == "open" for s in session.seats):
            raise Forbidden(f"game_id: this account has no open invitation to game {game_id}", {"field": "game_id"},
                            code="not_invited")
        return self.core.expire_game(game_id, "declined", principal.account_id)

    def cancel(self, principal: Principal, game_id: str) -> Session:
        session = self._invitation(game_id)
        asker = session.platform.get("challenger") or session.platform.get("rematch_by")
        if asker != principal.account_id:
            raise Forbidden(f"game_id: only the account that asked can cancel game {game_id}", {"field": "game_id"},
                            code="not_yours")
        return self.core.expire_game(game_id, "cancelled", principal.account_id)

    def _invitation(self, game_id: str) -> Session:
        session = self.core.load(game_id)
        if not session.platform.get("expires_at"):
            raise NotFound(f"game_id: game {game_id} is not a challenge or a rematch", {"field": "game_id"})
        if session.status != OPEN:
            raise Conflict(f"game_id: game {game_id} is {session.status}, no longer an open invitation",
                           {"field": "game_id", "version": session.version}, code="not_open")
        return session

    # --- rematch ---------------------------------------------------------------------------------
    def rematch(self, principal: Principal, game_id: str, expires_in: float = DEFAULT_EXPIRY) -> Session:
        """The same table again: the same accounts and bot levels, options, clock and rating,
        seats rotated by one. Its id is derived from the finished game's, so every seat that
        asks lands on the same new game; the asker's seat is claimed for it, the others are
        reserved for their accounts (a guest's seat is open)."""
        old = self.core.load(game_id)
        if old.status != SCORED:
            raise Conflict(f"game_id: game {game_id} is {old.status}; a rematch follows a finished game",
                           {"field": "game_id", "version": old.version}, code="not_finished")
        if not any(s.account == principal.account_id for s in old.seats):
            raise Forbidden(f"game_id: this account held no seat of game {game_id}", {"field": "game_id"},
                            code="not_your_game")
        n = len(old.seats)
        seats = []
        for i in range(n):
            before = old.seats[(i - 1) % n]      # rotated: the seat before takes this place
            if before.account:
                seats.append({"reserved": before.account})
            elif before.kind == "bot":
                seat = {"bot": before.level}
                if before.budget and not old.platform.get("rated"):
                    seat["budget"] = dict(before.budget)
                seats.append(seat)
            else:
                seats.append({})
        extra = {"rematch_of": game_id, "rematch_by": principal.account_id,
                 "expires_at": _now_ms() + int(expires_in * 1000)}
        created = self.core.create_game(old.game_type, old.options, seats,
                                        turn_timeout=old.platform.get("turn_timeout"),
                                        rated=bool(old.platform.get("rated")), platform_extra=extra,
                                        idempotency_key=f"rematch:{game_id}")
        return self._seat_asker(self.core.load(created.session.game_id), principal.account_id)

    # --- the chain's repair -------------------------------------------------------------------------
    def heal(self, session: Session) -> None:
        """Step 2 of a chain whose process died after step 1: the asker's seat."""
        asker = session.platform.get("challenger") or session.platform.get("rematch_by")
        if asker and session.status == OPEN:
            self._seat_asker(session, asker)

