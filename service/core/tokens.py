"""Credentials: seat tokens (stored only as hashes) and short-lived stream tickets (for
clients that cannot send headers, such as a browser's EventSource)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Optional

from events.index import GameIndex
from events.store import EventStore

from .errors import CREDENTIAL, Forbidden, Invalid, NotFound, Unauthorized

TOKEN_CACHE_SIZE = 100_000


def seat_left(session, seat: int) -> Forbidden:
    """The refusal of a credential whose seat its person left (a bot plays it now)."""
    return Forbidden(f"{CREDENTIAL}: the person holding seat {seat} of game {session.game_id} left it; a "
                     f"{session.seats[seat].level} bot plays it now, and who left cannot come back to it",
                     {"field": CREDENTIAL, "seat": seat}, code="seat_left")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


def keyed_token(secret: bytes, game_id: str, seat: int, idempotency_key: str) -> str:
    """The token of a claim made with an idempotency key: HMAC-SHA256 of the game, the seat
    and the key under a server-held secret, so a retry is given the same token although only
    its hash is stored. Same form as `new_token` (43 URL-safe characters, 256 bits)."""
    message = f"claim-token\0{game_id}\0{seat}\0{idempotency_key}".encode()
    digest = hmac.new(secret, message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def keyed_game_id(secret: bytes, idempotency_key: str) -> str:
    """The id of a game created with an idempotency key (same form as a random id: 16 hex):
    a retry lands on the same game, whether or not its first reply or lobby write was lost."""
    message = f"create-game\0{idempotency_key}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:16]


class TokenAuth:
    """The credentials half of the GameService (service/core/game_service.py builds it)."""

    store: EventStore
    index: GameIndex
    ticket_ttl: int

    def _init_tokens(self) -> None:
        self._tokens: dict[tuple[str, str], int] = {}

    def authenticate(self, game_id: str, token: Optional[str], allow_left: bool = False) -> int:
        """The seat a bearer token holds in this game. A seat whose person left is refused
        (403 `seat_left`) unless `allow_left` (the leave's own retry): read from the game as
        this process last loaded it when the token is cached (the command itself refuses a
        move on the game as it is), from the game as it is otherwise."""
        if not token:
            raise Unauthorized(f"{CREDENTIAL}: a seat token is required", {"field": CREDENTIAL})
        digest = token_hash(token)
        known = self._tokens.get((game_id, digest))
        if known is not None:
            session = self.sessions.cached(game_id)  # type: ignore[attr-defined]
            if not allow_left and session is not None and session.seats[known].left:
                raise seat_left(session, known)
            return known
        seat = self.store.get_meta(game_id, f"token:{digest}")[f"token:{digest}"]
        if seat is not None:
            session = self.load(game_id)  # type: ignore[attr-defined]
            if not allow_left and session.seats[int(seat)].left:
                raise seat_left(session, int(seat))
            if len(self._tokens) >= TOKEN_CACHE_SIZE:
                self._tokens.clear()
            self._tokens[(game_id, digest)] = int(seat)  # a seat's token never changes hands
            return int(seat)
        if self.index.token_owner(digest) is not None:
            raise Forbidden(f"{CREDENTIAL}: this token holds a seat in another game", {"field": CREDENTIAL})
        if self.store.head(game_id)[0] == 0:
            raise NotFound(f"no game {game_id!r}", {"game_id": game_id})
        raise Unauthorized(f"{CREDENTIAL}: unknown token", {"field": CREDENTIAL})

    def account_seat(self, game_id: str, account_id: str, seat: Optional[int] = None,
                     spectator: bool = False, allow_left: bool = False) -> Optional[int]:
        """The seat an account plays in this game: the one it holds, or `seat` among several.
        An account holding none: 403, or None (a spectator) when `spectator`. A seat the
        account left is no longer its own (403 `seat_left` when it left every seat it held,
        or names one it left; a spectator when `spectator`), unless `allow_left` (the leave's
        own retry)."""
        session = self.load(game_id)  # type: ignore[attr-defined]
        held = [i for i, s in enumerate(session.seats) if s.account == account_id]
        mine = held if allow_left else [i for i in held if not session.seats[i].left]
        if seat is not None:
            if seat in mine:
                return seat
            if seat in held and not spectator:
                raise seat_left(session, seat)
            if spectator and not mine:
                return None
            raise Forbidden(f"seat: this account does not hold seat {seat} of game {game_id} (it holds "
                            f"{mine or 'none'})", {"field": "seat"}, code="not_your_seat")
        if not mine:
            if spectator:
                return None
            if held:
                raise seat_left(session, held[0])
            raise Forbidden(f"{CREDENTIAL}: this account holds no seat of game {game_id}", {"field": CREDENTIAL},
                            code="not_your_game")
        if len(mine) > 1:
            raise Invalid(f"seat: this account holds seats {mine} of game {game_id}: name the one to play",
                          {"field": "seat", "seats": mine})
        return mine[0]

    # --- stream tickets -----------------------------------------------------------------
    def issue_stream_ticket(self, game_id: str, seat: Optional[int]) -> dict:
        """A ticket that stands for `seat` (None: a spectator) on this game's event stream
        for `ticket_ttl` seconds."""
        self.load(game_id)  # type: ignore[attr-defined]  # no ticket for a game that does not exist
        ticket = secrets.token_urlsafe(24)
        self.index.record_ticket(token_hash(ticket), f"{game_id}:{'-' if seat is None else seat}",
                                 self.ticket_ttl)
        return {"ticket": ticket, "expires_in": self.ticket_ttl}

    def stream_ticket_viewer(self, game_id: str, ticket: str) -> Optional[int]:
        """The seat a stream ticket stands for (None: a spectator)."""
        value = self.index.ticket(token_hash(ticket))
        if value is None:
            raise Unauthorized("ticket: unknown or expired stream ticket")
        owner_game, seat = value.rsplit(":", 1)
        if owner_game != game_id:
            raise Unauthorized("ticket: this ticket is for another game")
        if seat == "-":
            return None
        session = self.load(game_id)  # type: ignore[attr-defined]
        if session.seats[int(seat)].left:   # a ticket given before its seat's person left
            raise seat_left(session, int(seat))
        return int(seat)
