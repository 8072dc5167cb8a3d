"""Build a GameService on a Redis client with an in-memory job queue the test drains by hand."""

from __future__ import annotations

from events.index import GameIndex
from events.store import RedisEventStore
from service.core.game_service import GameService
from workers.memory_jobs import MemoryJobs


def make_service(client, jobs=None, rated: bool = False, **kw):
    """(service, jobs): a service allowed to choose seeds, its follow-up jobs kept in `jobs`;
    `rated`: with the accounts and the ratings attached, as the bootstrap attaches them."""
    jobs = jobs if jobs is not None else MemoryJobs()
    service = GameService(RedisEventStore(client), GameIndex(client), jobs, allow_seed=True, **kw)
    if rated:
        from service.bootstrap import Backend, attach_accounts, attach_ratings

        backend = Backend(client, client, False)
        attach_accounts(service, {"ARGON2_TIME_COST": 1, "ARGON2_MEMORY_KIB": 1024}, backend)
        attach_ratings(service, backend)
    return service, jobs


def rated_game(service, game_type, seats, seed, options=None):
    """A rated game (a clock of a minute), as created through the API."""
    return service.create_game(game_type, options or {}, seats, seed=seed, turn_timeout=60, rated=True).session


def rated_rows(service, game_type) -> dict:
    """The ratings leaderboard of a type, by name."""
    return {row["name"]: row for row in service.ratings.leaderboard(game_type, 0, 200)["rows"]}
