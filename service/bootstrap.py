"""The one bootstrap: from configuration, the Redis clients (backend), the event store, the
index, the follow-up jobs and the core. The app factory (service/app.py), the worker command
and the CLI (service/cli.py) all build through here; the worker command binds RQ's job
functions (workers/tasks.py) to the core it built, which they never build themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import fakeredis
import secrets
import time

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from events.index import GameIndex
from events.store import RedisEventStore
from workers.queue import RQJobs

from . import config as config_module
from .audit.keys import service_keys
from .audit.receipts import DEFAULT_INCLUDE_WITHIN_MS
from .core.bots import SearchLimits
from .core.game_service import GameService
from .core.jobs import Jobs
from .games import check_games
from .observability import CoreMetrics, current_request_id


@dataclass
class Backend:
    """The Redis clients the app and the workers share."""

    store_client: Any
    rq_client: Any
    embedded: bool
    fake_server: Optional[Any] = field(default=None, repr=False)
    probe_client: Optional[Any] = None   # readiness: its own client, a short timeout, no retry


def settings(overrides: Optional[dict] = None) -> dict:
    """The environment's configuration with `overrides` on top."""
    out = config_module.from_env()
    out.update(overrides or {})
    return out


class _CheckedConnection(redis.Connection):
    """A connection whose health check starts counting when it is made: a brand-new one need
    not PING before its first command. (redis-py checks a new connection at once, and with a
    frozen server the PING's timeout, retried, doubled the wait before the 503: 6.3 s on a
    fresh worker against 3.1 s on a warm one.)"""

    def connect(self, *args, **kwargs):
        self.next_health_check = time.monotonic() + self.health_check_interval
        super().connect(*args, **kwargs)


class ConfigurationError(RuntimeError):
    """Settings that cannot work together: the process stops at start with this message."""


def store_configured(config: dict) -> bool:
    """Whether the game store is a real Redis (REDIS_URL) or a cluster (REDIS_CLUSTER_NODES),
    not the in-process fakeredis."""
    return bool(config.get("REDIS_URL") or config.get("REDIS_CLUSTER_NODES"))


def _bounded(config: dict) -> dict:
    """Bounded waits on Redis: a frozen or absent server fails a command within seconds (the
    API answers 503 with Retry-After), and a dropped connection is retried once with backoff."""
    return dict(socket_timeout=float(config.get("REDIS_SOCKET_TIMEOUT") or 1.5), socket_connect_timeout=1.0,
                connection_class=_CheckedConnection, retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 1),
                retry_on_error=[redis.exceptions.ConnectionError], health_check_interval=30)


def cluster_client(seed_nodes: str, config: Optional[dict] = None, **overrides):
    """A RedisCluster on the seed nodes "host:port,host:port", with the plain client's bounds:
    per node a bounded pool of REDIS_MAX_CONNECTIONS, the socket timeout, and a retry (with
    backoff, the topology read again) that rides out a failover's few seconds no longer than
    a request can wait."""
    from redis.cluster import ClusterNode, RedisCluster

    config = config or {}
    bounded = _bounded(config)
    bounded.pop("retry_on_error")       # the cluster client retries connection errors itself
    bounded.pop("health_check_interval")
    bounded.pop("connection_class")     # each node's client is a redis.Redis of the default kind
    bounded["retry"] = Retry(ExponentialBackoff(cap=0.5, base=0.05), 2)
    bounded.update(overrides)
    seeds = [ClusterNode(host, int(port)) for host, _, port in
             (item.strip().rpartition(":") for item in seed_nodes.split(",") if item.strip())]
    return RedisCluster(startup_nodes=seeds, connection_pool_class=redis.BlockingConnectionPool,
                        max_connections=int(config.get("REDIS_MAX_CONNECTIONS") or 64), **bounded)


def is_cluster(client) -> bool:
    from redis.cluster import RedisCluster

    return isinstance(client, RedisCluster)


def build_backend(config: dict) -> Backend:
    acks, wait_ms = int(config.get("REDIS_ACK_REPLICAS") or 0), int(config.get("REDIS_ACK_TIMEOUT_MS") or 1000)
    if acks and wait_ms / 1000 >= float(config.get("REDIS_SOCKET_TIMEOUT") or 1.5):
        raise ConfigurationError("REDIS_ACK_TIMEOUT_MS must be below REDIS_SOCKET_TIMEOUT: the replicas' wait "
                                 "is a command on the append's connection")
    nodes = config.get("REDIS_CLUSTER_NODES")
    url = config.get("REDIS_URL")
    if nodes:
        return _cluster_backend(config, nodes)
    if not url:
        server = fakeredis.FakeServer()
        client = fakeredis.FakeRedis(server=server)
        return Backend(client, fakeredis.FakeRedis(server=server), True, server)
    # A bounded pool: under gevent thousands of requests may want Redis at once; each new
    # connection costs milliseconds of CPU (and a Redis client slot), a wait for a free one less.
    bounded = _bounded(config)
    pool = redis.BlockingConnectionPool.from_url(url, max_connections=int(config.get("REDIS_MAX_CONNECTIONS") or 64),
                                                 timeout=2, **bounded)
    client = redis.Redis(connection_pool=pool)
    rq_client = redis.Redis.from_url(config.get("RQ_REDIS_URL") or url, **bounded)
    probe = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
    return Backend(client, rq_client, False, probe_client=probe)


def _cluster_backend(config: dict, nodes: str) -> Backend:
    """The store on a Redis Cluster; the job queue on its own plain Redis: RQ's queues, job
    hashes and registries are many keys written together (MULTI, Lua) that a cluster would
    scatter over slots, and RQ does not support a cluster."""
    if config.get("REDIS_URL"):
        raise ConfigurationError("REDIS_URL and REDIS_CLUSTER_NODES are both set: the game store is one "
                                 "or the other (unset REDIS_URL; the job queue's Redis is RQ_REDIS_URL)")
    rq_url = config.get("RQ_REDIS_URL")
    if not rq_url:
        raise ConfigurationError("REDIS_CLUSTER_NODES is set but RQ_REDIS_URL is not: RQ does not support "
                                 "Redis Cluster, so the job queue needs a plain Redis of its own "
                                 "(RQ_REDIS_URL=redis://host:port; docs/operations.md)")
    client = cluster_client(nodes, config)
    rq_client = redis.Redis.from_url(rq_url, **_bounded(config))
    probe = cluster_client(nodes, config, socket_timeout=1.0, retry=Retry(ExponentialBackoff(), 0))
    return Backend(client, rq_client, False, probe_client=probe)


def build_jobs(backend: Backend, config: Optional[dict] = None) -> RQJobs:
    """The RQ queue, storing the current request's id with each job it enqueues, and
    scheduling bot turns fairly across creators (BOT_TURNS_PER_CREATOR, BOT_MS_PER_CREATOR)."""
    config = config or {}
    return RQJobs(backend.rq_client, request_id=current_request_id,
                  per_creator=int(config.get("BOT_TURNS_PER_CREATOR", 2) or 0),
                  ms_per_minute=float(config.get("BOT_MS_PER_CREATOR", 10_000) or 0))


def job_counter(backend: Backend):
    """What /metrics reads of the job queue (queued, running, failed by kind), or None for an
    in-memory backend."""
    if backend.embedded:
        return None
    from .observability import rq_job_counts

    jobs = build_jobs(backend)

    def counts() -> dict:
        out: dict = {}
        for queue in jobs.queues:
            for key, n in rq_job_counts(queue).items():
                out[key] = out.get(key, 0) + n
        return out
    return counts


SECRETS_KEY = "service:secrets"
# bot_key: the bots' randomness (workers/jobs.py bot_rng); idem_key: the game ids and seat
# tokens of creates and claims made with an Idempotency-Key (service/core/tokens.py).
# account_key: the accounts' device and CSRF values (service/accounts/service.py).
SECRET_NAMES = ("bot_key", "idem_key", "account_key")


def service_secrets(client) -> dict[str, bytes]:
    """The service's own secrets, generated on first use and kept with the data (in the
    store's Redis, so they persist in its AOF and follow a backup): HSETNX never replaces one."""
    for name in SECRET_NAMES:
        client.hsetnx(SECRETS_KEY, name, secrets.token_hex(32))
    stored = client.hgetall(SECRETS_KEY)
    return {name: bytes.fromhex(stored[name.encode()].decode()) for name in SECRET_NAMES}


def search_limits(config: dict) -> SearchLimits:
    """The most a `search` seat's budget may ask (SEARCH_MAX_ITERATIONS, SEARCH_MAX_TIME_MS)."""
    defaults = SearchLimits()
    return SearchLimits(max_iterations=int(config.get("SEARCH_MAX_ITERATIONS") or defaults.max_iterations),
                        max_time_ms=float(config.get("SEARCH_MAX_TIME_MS") or defaults.max_time_ms))


def build_core(config: dict, backend: Backend, jobs: Optional[Jobs] = None) -> GameService:
    """The core on the backend's store and index; `jobs` defaults to RQ on its RQ client.
    Its secrets are read from Redis when first needed (an API process starts without Redis).
    Every entry point builds its core here, so a hosted game missing a part it declares stops
    the app and the worker at start-up (service/games.py)."""
    check_games()
    core = GameService(build_store(config, backend), GameIndex(backend.store_client),
                       jobs if jobs is not None else build_jobs(backend, config),
                       allow_seed=bool(config.get("ALLOW_SEED")),
                       snapshot_every=int(config.get("SNAPSHOT_EVERY") or 0),
                       stream_keepalive=float(config.get("STREAM_KEEPALIVE", 15.0)),
                       stream_max_seconds=float(config.get("STREAM_MAX_SECONDS", 300.0)),
                       ticket_ttl=int(config.get("TICKET_TTL", 60)),
                       secrets=lambda: service_secrets(backend.store_client),
                       search_limits=search_limits(config), metrics=CoreMetrics(),
                       keys=service_keys(config.get("AUDIT_KEY_FILE")),
                       include_within_ms=int(config.get("AUDIT_INCLUDE_WITHIN") or DEFAULT_INCLUDE_WITHIN_MS))
    attach_accounts(core, config, backend)
    attach_ratings(core, backend)
    attach_matching(core)
    attach_transparency(core, config, backend)
    core.bot_jobs_per_game = int(config.get("BOT_JOBS_PER_GAME", 1) or 0)
    core.lobby_expiry = float(config.get("LOBBY_EXPIRY") or 0)
    core.abandon_after = float(config.get("ABANDON_AFTER") or 0)
    core.live_within = float(config.get("LIVE_WITHIN") or 0)
    core.archive_after = float(config.get("ARCHIVE_AFTER") or 0)
    attach_chat(core, config)
    return core


def attach_chat(core: GameService, config: dict) -> None:
    """The table chat's limits (CHAT_MAX_LENGTH, CHAT_RATE, CHAT_MAX_ENTRIES)."""
    from .core.chat import ChatPolicy

    defaults = ChatPolicy()
    count, _, seconds = (config.get("CHAT_RATE") or f"{defaults.rate_count}/{defaults.rate_seconds}").partition("/")
    core.chat.policy = ChatPolicy(max_length=int(config.get("CHAT_MAX_LENGTH") or defaults.max_length),
                                  rate_count=int(count), rate_seconds=int(seconds or 60),
                                  max_entries=int(config.get("CHAT_MAX_ENTRIES") or defaults.max_entries))


def attach_accounts(core: GameService, config: dict, backend: Backend) -> None:
    """The accounts' core on the same store, its notices observing every game's batches (in
    the API and in the workers alike), and the names seats are shown with."""
    from events.account_index import AccountIndex

    from .accounts.notices import AccountNotices
    from .accounts.passwords import PasswordHashing
    from .accounts.service import AccountPolicy, Accounts

    hashing = PasswordHashing(time_cost=int(config.get("ARGON2_TIME_COST") or 3),
                              memory_kib=int(config.get("ARGON2_MEMORY_KIB") or 65536),
                              parallelism=1 if int(config.get("ARGON2_MEMORY_KIB") or 65536) < 8192 else 4,
                              threads=int(config.get("PASSWORD_THREADS") or 2),
                              max_waiting=32 * int(config.get("PASSWORD_THREADS") or 2))
    policy = AccountPolicy(session_days=float(config.get("SESSION_DAYS") or 30),
                           tombstone_days=float(config.get("USERNAME_TOMBSTONE_DAYS") or 365),
                           lock_after=int(config.get("SIGNIN_LOCK_AFTER") or 10))
    index = AccountIndex(backend.store_client)
    accounts = Accounts(core.store, index, hashing, lambda: core._secret("account_key"), policy)
    core.accounts = accounts
    core.account_names = accounts.shown_name
    core.games.observers.append(AccountNotices(accounts.work, index).game_moved)


def attach_ratings(core: GameService, backend: Backend) -> None:
    """The ratings (service/ratings), told of every scored game, in every process."""
    from .ratings.service import Ratings

    core.ratings = Ratings(core.store, backend.store_client, core.load, core.accounts)
    core.result_observers.append(core.ratings.record)


def attach_matching(core: GameService) -> None:
    """Challenges and rematches (service/matching): their chains healed by an observer of every
    game's batches (and of the reconciler's repair)."""
    from .matching.invitations import Invitations

    from .matching.seeks import Seeks

    core.invitations = Invitations(core, core.accounts)
    core.games.observers.append(core.invitations.heal)
    core.seeks = Seeks(core, core.accounts, core.ratings, core.accounts.index.redis)


def attach_transparency(core: GameService, config: dict, backend: Backend) -> None:
    """The transparency log on the store's Redis (docs/audit.md): the routes read it, the
    workers' sequencer (workers/sequencer.py) fills it every AUDIT_SEQUENCE_EVERY seconds."""
    from events.transparency import RedisTransparencyLog

    core.transparency = RedisTransparencyLog(backend.store_client)
    core.sequence_every = float(config.get("AUDIT_SEQUENCE_EVERY") or 0.5)


def build_store(config: dict, backend: Backend):
    """The event store on the backend's Redis, with the archive behind it when one is set."""
    store = RedisEventStore(backend.store_client, ack_replicas=int(config.get("REDIS_ACK_REPLICAS") or 0),
                            ack_timeout_ms=int(config.get("REDIS_ACK_TIMEOUT_MS") or 1000))
    if config.get("ARCHIVE_URL"):
        from events.archive import Archive, ArchivingStore

        store = ArchivingStore(store, Archive(config["ARCHIVE_URL"]))
    return store


def build_worker_core() -> GameService:
    """The core of a worker process, from the environment (it needs a real Redis)."""
    config = settings()
    if not store_configured(config):
        raise RuntimeError("a worker process needs REDIS_URL or REDIS_CLUSTER_NODES (the embedded mode runs "
                           "its worker in process)")
    return build_core(config, build_backend(config))
