"""Build a GameService on a Redis client with a job list the test drains by hand."""

from __future__ import annotations

from events.index import GameIndex
from events.store import RedisEventStore
from service.commands import GameService
from workers import jobs as job_functions


class ListJobs:
    def __init__(self):
        self.pending = []

    def bot_turn(self, game_id, seat, version):
        self.pending.append(("bot_turn", game_id, seat, version))

    def score(self, game_id):
        self.pending.append(("score", game_id))

    def turn_timeout(self, game_id, seat, version, seconds):
        self.pending.append(("turn_timeout", game_id, seat, version))

    def drain(self, service, limit=100_000):
        ran = 0
        while self.pending and ran < limit:
            name, *args = self.pending.pop(0)
            getattr(job_functions, name)(service, *args)
            ran += 1
        return ran


def make_service(client, **kw):
    jobs = ListJobs()
    service = GameService(RedisEventStore(client), GameIndex(client), jobs, allow_seed=True, **kw)
    return service, jobs
