"""What every route reads from its request and app: the core, and who the caller is."""

from __future__ import annotations

from typing import Optional

from flask import current_app, request

from ..core.errors import Unauthorized
from ..core.game_service import GameService


def games() -> GameService:
    """The core, injected by the app factory."""
    return current_app.extensions["games"]


def bearer() -> Optional[str]:
    header = request.headers.get("Authorization", "")
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else ""


def viewer(game_id: str) -> Optional[int]:
    """The caller's seat when a token is given (it must be valid), else None: a spectator."""
    token = bearer()
    if token is None:
        return None
    return games().authenticate(game_id, token)


def seat_of(game_id: str) -> int:
    """The caller's seat: a token is required."""
    token = bearer()
    if token is None:
        raise Unauthorized("Authorization: a Bearer seat token is required")
    return games().authenticate(game_id, token)
