"""The work RQ runs: a bot's turn, a timed-out turn, end-of-game scoring, the reconciler.

Every job is idempotent: a bot turn is keyed by (game, seat, version) and submits with that
version as expected_version and an idempotency key derived from it, so running it twice,
or after the game moved on, changes nothing.
"""

from __future__ import annotations

import hashlib
import random

from projections import disclosure
from service.errors import ApiError

from .bots import policy


def bot_rng(game_id: str, seat: int, version: int) -> random.Random:
    """A bot's randomness: from (game, seat, version), never from the game's seed."""
    digest = hashlib.sha256(f"bot/{game_id}/{seat}/{version}".encode()).digest()
    return random.Random(int.from_bytes(digest, "big"))


def _play(service, game_id: str, seat: int, version: int, level: str, by: str) -> str:
    session = service.load(game_id)
    if session.version != version or seat not in session.to_act():
        return "stale"
    view = disclosure.view_for(session, seat)  # the seat's view only, never the full state
    choose = policy(session.game_type, level)
    action = choose(view["state"], view["legal_actions"], seat, bot_rng(game_id, seat, version))
    try:
        receipt, _, _ = service.act(game_id, seat, action, expected_version=version,
                                 idempotency_key=f"{by}:{version}", by=by)
    except ApiError as err:
        if err.status == 409:
            return "stale"
        raise
    return "duplicate" if receipt.duplicate else "played"


def bot_turn(service, game_id: str, seat: int, version: int) -> str:
    session = service.load(game_id)
    info = session.seats[seat]
    if info.kind != "bot":
        return "not a bot"
    return _play(service, game_id, seat, version, info.level, f"bot:{info.level}")


def turn_timeout(service, game_id: str, seat: int, version: int) -> str:
    """The seat did not act in time: the random bot plays its move, recorded as a timeout."""
    return _play(service, game_id, seat, version, "random", "timeout")


def score(service, game_id: str) -> str:
    return service.score(game_id).status


def reconcile(service, limit: int = 1000) -> int:
    """Re-enqueue what waiting games need (a crash between append and enqueue)."""
    count = 0
    for status in ("active", "ended"):
        for game_id in service.index.games_waiting(status, limit):
            session = service.load(game_id)
            if session.status in ("active", "ended"):
                service.pending_jobs(session)
                count += 1
    return count
