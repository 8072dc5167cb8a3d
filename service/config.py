"""Configuration and wiring: which Redis, which queue, which store.

With no REDIS_URL the store runs on an in-process fakeredis server (the embedded mode of
`make serve`): nothing to install. With REDIS_URL it runs on that Redis, and RQ on
RQ_REDIS_URL (default: the same), since RQ cannot run on Redis Cluster.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Optional

import fakeredis
import redis

from events.index import GameIndex
from events.store import RedisEventStore

from .commands import GameService

DEFAULTS = {
    "REDIS_URL": None,
    "RQ_REDIS_URL": None,
    "ALLOW_SEED": False,            # choosing a game's seed: test configuration only
    "MAX_CONTENT_LENGTH": 64 * 1024,
    "EMBEDDED_WORKER": None,        # None: on in embedded mode, off with a real Redis
    "SNAPSHOT_EVERY": 200,
    "STREAM_KEEPALIVE": 15.0,       # seconds between keep-alives on event streams
    "STREAM_MAX_SECONDS": 300.0,    # the longest event stream (a longer `follow` is cut to it)
    "STREAMS_PER_TOKEN": 8,         # open streams + long-polls per token or ticket, per process (0: no cap)
    "STREAMS_PER_ADDRESS": 256,     # open streams + long-polls per client address, per process (0: no cap)
    "TICKET_TTL": 60,
    "REDIS_MAX_CONNECTIONS": 64,    # the store client's pool, per process (requests wait for a free one)
    "RATE_LIMIT": None,             # e.g. "120/60": requests per seconds, per token and per address
}


@dataclass
class Backend:
    """The Redis clients the app and the workers share."""

    store_client: Any
    rq_client: Any
    embedded: bool
    fake_server: Optional[Any] = field(default=None, repr=False)


def from_env() -> dict:
    config = dict(DEFAULTS)
    for key in ("REDIS_URL", "RQ_REDIS_URL", "RATE_LIMIT"):
        if os.environ.get(key):
            config[key] = os.environ[key]
    for key in ("STREAM_KEEPALIVE", "STREAM_MAX_SECONDS"):
        if os.environ.get(key):
            config[key] = float(os.environ[key])
    for key in ("STREAMS_PER_TOKEN", "STREAMS_PER_ADDRESS", "REDIS_MAX_CONNECTIONS"):
        if os.environ.get(key):
            config[key] = int(os.environ[key])
    if os.environ.get("ALLOW_SEED") == "1":
        config["ALLOW_SEED"] = True
    return config


def build_backend(config: dict) -> Backend:
    url = config.get("REDIS_URL")
    if not url:
        server = fakeredis.FakeServer()
        client = fakeredis.FakeRedis(server=server)
        return Backend(client, fakeredis.FakeRedis(server=server), True, server)
    # A bounded pool: under gevent thousands of requests may want Redis at once; each new
    # connection costs milliseconds of CPU (and a Redis client slot), a wait for a free one less.
    pool = redis.BlockingConnectionPool.from_url(url, max_connections=int(config.get("REDIS_MAX_CONNECTIONS") or 64),
                                                 timeout=20, health_check_interval=30)
    client = redis.Redis(connection_pool=pool)
    rq_client = redis.Redis.from_url(config.get("RQ_REDIS_URL") or url)
    return Backend(client, rq_client, False)


def build_service(config: dict, backend: Backend, jobs=None) -> GameService:
    if jobs is None:
        from workers.queue import RQJobs

        jobs = RQJobs(backend.rq_client)
    return GameService(RedisEventStore(backend.store_client), GameIndex(backend.store_client), jobs,
                       allow_seed=bool(config.get("ALLOW_SEED")),
                       snapshot_every=int(config.get("SNAPSHOT_EVERY") or 0))


def build_service_from_env() -> GameService:
    config = from_env()
    if not config.get("REDIS_URL"):
        raise RuntimeError("a worker process needs REDIS_URL (the embedded mode runs its worker in process)")
    return build_service(config, build_backend(config))
