import fcntl
import os
import shutil
import signal
import tempfile

import pytest

import fakeredis

from events.index import GameIndex, MemoryGameIndex
from events.store import MemoryEventStore, RedisEventStore
from ops.drills.redis_server import RedisProcess, redis_server_path


# --- tests that judge a latency or a wall-clock bound run alone -------------------------------
# Under pytest-xdist every test holds a shared lock while it runs and a `timing` test holds it
# exclusively, so no other test runs beside one. A turnstile lock in front keeps the workers
# from starving a waiting timing test: once it queues, no new test starts until it has run.

LOCKS = "SPECULATION_TEST_LOCKS"


def pytest_configure(config):
    """The controller of a parallel run makes the lock folder; its workers inherit the path.

    Ctrl-C reaches the processes the tests start: a suite started in the background by a
    non-interactive shell (`make test &`) inherits SIGINT ignored, and a Python child started
    with SIGINT ignored never raises KeyboardInterrupt, so the tests that press Ctrl-C on the
    CLI (cancel a seek, stop `speculation serve`) would wait for nothing. An ignored signal is
    inherited across exec; a handler is not (the child starts with the default)."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if getattr(config.option, "numprocesses", None) and LOCKS not in os.environ:
        os.environ[LOCKS] = tempfile.mkdtemp(prefix="speculation-test-locks-")
        config._speculation_locks = os.environ[LOCKS]


def pytest_sessionstart(session):
    """The run's order, printed even under -q, so a failure that depends on it can be repeated."""
    seed = getattr(session.config.option, "randomly_seed", None)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if isinstance(seed, int) and reporter is not None and not os.environ.get("PYTEST_XDIST_WORKER"):
        reporter.write_line(f"test order: pytest-randomly seed {seed} (repeat it: make test "
                            f'TEST_ARGS="--randomly-seed={seed}")')


def pytest_unconfigure(config):
    folder = getattr(config, "_speculation_locks", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(LOCKS, None)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """After pytest-randomly's shuffle (kept within each part): the long drills first, so no
    worker is left with one at the end, and the timing tests last, so they run one after
    another at the end instead of each stopping every worker in the middle of the run."""
    def part(item):
        return 2 if item.get_closest_marker("timing") else 0 if item.get_closest_marker("slow") else 1
    items.sort(key=part)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    folder = os.environ.get(LOCKS) if os.environ.get("PYTEST_XDIST_WORKER") else None
    if folder is None:
        yield
        return
    alone = item.get_closest_marker("timing") is not None
    with open(os.path.join(folder, "turnstile"), "a") as turnstile, open(os.path.join(folder, "running"), "a") as running:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        fcntl.flock(running, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        if not alone:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(running, fcntl.LOCK_UN)
            fcntl.flock(turnstile, fcntl.LOCK_UN)


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


@pytest.fixture(scope="session")
def redis_cluster():
    """A loopback Redis Cluster (valkey, 3 primaries with a replica each) for the whole run: one
    per xdist worker, started once (about 7 s)."""
    from ops.drills.redis_cluster import LoopbackCluster, valkey_binary

    try:
        valkey_binary()
    except RuntimeError as err:
        pytest.skip(f"Redis Cluster tests skipped: {err}")
    cluster = LoopbackCluster(primaries=3, replicas=1).start()
    yield cluster
    cluster.stop()


def flush_cluster(cluster) -> None:
    """Empty every primary (the replicas follow)."""
    for port, role in cluster.roles().items():
        if role == "master":
            node = next(n for n in cluster.nodes if n.port == port)
            cluster.node_client(node, socket_timeout=5).flushall()


@pytest.fixture
def cluster_redis(redis_cluster):
    """A RedisCluster client of the run's cluster, emptied first."""
    flush_cluster(redis_cluster)
    client = redis_cluster.client()
    yield client
    client.close()


@pytest.fixture(scope="session")
def worker_chromium():
    """One headless Chromium for the whole run of this worker, started at its first browser test
    (the browser tests take it through `web_kit.module_chromium`)."""
    from ops.live_server import browser

    with browser() as b:
        yield b


@pytest.fixture
def fake_redis():
    return fakeredis.FakeRedis(server=fakeredis.FakeServer())


@pytest.fixture(params=["memory", "fakeredis", "redis", "cluster"])
def store(request):
    """The event store contract runs on every implementation."""
    if request.param == "memory":
        return MemoryEventStore()
    if request.param == "fakeredis":
        return RedisEventStore(request.getfixturevalue("fake_redis"))
    if request.param == "cluster":
        return RedisEventStore(request.getfixturevalue("cluster_redis"))
    return RedisEventStore(request.getfixturevalue("real_redis"))


@pytest.fixture(params=["memory", "fakeredis", "redis", "cluster"])
def index(request):
    """The game index contract runs on every implementation."""
    if request.param == "memory":
        return MemoryGameIndex()
    if request.param == "fakeredis":
        return GameIndex(request.getfixturevalue("fake_redis"))
    if request.param == "cluster":
        return GameIndex(request.getfixturevalue("cluster_redis"))
    return GameIndex(request.getfixturevalue("real_redis"))


@pytest.fixture(params=["fakeredis", "redis", "cluster"])
def redis_client(request):
    """A Redis client, fake, real and a cluster: for every feature that sits on Redis."""
    if request.param == "fakeredis":
        return request.getfixturevalue("fake_redis")
    if request.param == "cluster":
        return request.getfixturevalue("cluster_redis")
    return request.getfixturevalue("real_redis")


import toygame  # noqa: E402
from projections.registry import register  # noqa: E402

register(toygame)
