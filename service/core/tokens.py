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

from .errors import CREDENTIAL, Forbidden, NotFound, Unauthorized

TOKEN_CACHE_SIZE = 100_000


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

    def authenticate(self, game_id: str, token: Optional[str]) -> int:
        """The seat a bearer token holds in this game."""
        if not token:
            raise Unauthorized(f"{CREDENTIAL}: a seat token is required", {"field": CREDENTIAL})
        digest = token_hash(token)
        known = self._tokens.get((game_id, digest))
        if known is not None:
            return known
        seat = self.store.get_meta(game_id, f"token:{digest}")[f"token:{digest}"]
        if seat is not None:
            if len(self._tokens) >= TOKEN_CACHE_SIZE:
                self._tokens.clear()
            self._tokens[(game_id, digest)] = int(seat)  # a seat's token never changes hands
            return int(seat)
        if self.index.token_owner(digest) is not None:
            raise Forbidden(f"{CREDENTIAL}: this token holds a seat in another game", {"field": CREDENTIAL})
        if self.store.head(game_id)[0] == 0:
            raise NotFound(f"no game {game_id!r}", {"game_id": game_id})
        raise Unauthorized(f"{CREDENTIAL}: unknown token", {"field": CREDENTIAL})

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
        return None if seat == "-" else int(seat)
