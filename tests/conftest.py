import pytest

import fakeredis

from events.index import GameIndex, MemoryGameIndex
from events.store import MemoryEventStore, RedisEventStore
from ops.drills.redis_server import RedisProcess, redis_server_path


@pytest.fixture(scope="session")
def redis_server():
    """A private redis-server on a free port for the whole run (never the shared 6379)."""
    if redis_server_path() is None:
        pytest.skip("redis-server is not installed: real-Redis tests skipped")
    server = RedisProcess().start()
    yield server
    server.stop()


@pytest.fixture
def real_redis(redis_server):
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()  # our private server only
    yield client
    client.close()


@pytest.fixture
def fake_redis():
    return fakeredis.FakeRedis(server=fakeredis.FakeServer())


@pytest.fixture(params=["memory", "fakeredis", "redis"])
def store(request):
    """The event store contract runs on every implementation."""
    if request.param == "memory":
        return MemoryEventStore()
    if request.param == "fakeredis":
        return RedisEventStore(request.getfixturevalue("fake_redis"))
    return RedisEventStore(request.getfixturevalue("real_redis"))


@pytest.fixture(params=["memory", "fakeredis", "redis"])
def index(request):
    """The game index contract runs on every implementation."""
    if request.param == "memory":
        return MemoryGameIndex()
    if request.param == "fakeredis":
        return GameIndex(request.getfixturevalue("fake_redis"))
    return GameIndex(request.getfixturevalue("real_redis"))


@pytest.fixture(params=["fakeredis", "redis"])
def redis_client(request):
    """A Redis client, fake and real: for every feature that sits on Redis."""
    if request.param == "fakeredis":
        return request.getfixturevalue("fake_redis")
    return request.getfixturevalue("real_redis")


import toygame  # noqa: E402
from projections.registry import register  # noqa: E402

register(toygame)
