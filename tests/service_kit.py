"""Build a GameService on a Redis client with an in-memory job queue the test drains by hand."""

from __future__ import annotations

from events.index import GameIndex
from events.store import RedisEventStore
from service.core.game_service import GameService
from workers.memory_jobs import MemoryJobs


def make_service(client, jobs=None, **kw):
    """(service, jobs): a service allowed to choose seeds, its follow-up jobs kept in `jobs`."""
    jobs = jobs if jobs is not None else MemoryJobs()
    service = GameService(RedisEventStore(client), GameIndex(client), jobs, allow_seed=True, **kw)
    return service, jobs
