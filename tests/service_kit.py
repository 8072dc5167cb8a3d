"""Build a GameService on a Redis client with a job list the test drains by hand."""

from __future__ import annotations

from events.index import GameIndex
from events.store import RedisEventStore
from ops.drills._kit import ListJobs
from service.core.game_service import GameService

__all__ = ["ListJobs", "make_service"]


def make_service(client, **kw):
    jobs = ListJobs()
    service = GameService(RedisEventStore(client), GameIndex(client), jobs, allow_seed=True, **kw)
    return service, jobs
