"""What every route reads from its request and app: the core, and who the caller is."""

from __future__ import annotations

from typing import Optional

from flask import current_app, request

from ..core.errors import Unauthorized
from ..core.game_service import GameService


def games() -> GameService:
    """The core, injected by the app factory."""
    return current_app.extensions["games"]


def bearer_of(header: Optional[str]) -> Optional[str]:
    """The one reading of an Authorization header, for authentication and the rate limits
    alike (service/ratelimit.py): None without one; the token of `Bearer <token>`, the scheme
    in any case (RFC 9110: case-insensitive) and the spaces around the token dropped; "" for
    anything else (a 401 where a token is read)."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else ""


def bearer() -> Optional[str]:
    return bearer_of(request.headers.get("Authorization"))


def viewer(game_id: str) -> Optional[int]:
    """The caller's seat when a token is given (it must be valid), else None: a spectator."""
    token = bearer()
    if token is None:
        return None
    return games().authenticate(game_id, token)


def viewer_or_ticket(game_id: str, ticket: Optional[str]) -> Optional[int]:
    """The caller's seat where a browser may present a stream ticket instead of a header
    (GET /events, POST /web/api/words): the ticket's seat when one is given, else viewer()."""
    return games().stream_ticket_viewer(game_id, ticket) if ticket else viewer(game_id)


def seat_of(game_id: str) -> int:
    """The caller's seat: a token is required."""
    token = bearer()
    if token is None:
        raise Unauthorized("Authorization: a Bearer seat token is required")
    return games().authenticate(game_id, token)
