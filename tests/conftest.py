import fcntl
import os
import shutil
import tempfile

import pytest

import fakeredis

from events.index import GameIndex, MemoryGameIndex
from events.store import MemoryEventStore, RedisEventStore
from ops.drills.redis_server import RedisProcess, redis_server_path


# --- tests that judge a latency or a wall-clock bound -------------------------------------------
# Under pytest-xdist, where the run may change scheduling policies (root, as CI and `make test`
# here run), every test runs under SCHED_IDLE (inherited by every server, worker and browser it
# starts; a nice value cannot do it: Chromium as root sets its own to -8) and a `timing` test
# under the normal policy, one timing test at a time: the kernel gives a timing test the CPU it
# asks for while the other workers go on in what it leaves, so the timing tests are spread
# through the run instead of stopping every worker in turn.
# Without that right, the older way: every test holds a shared lock while it runs and a timing
# test holds it exclusively, with a turnstile in front so that a waiting timing test is not
# starved; the timing tests then run last, one after another.

LOCKS = "SPECULATION_TEST_LOCKS"


def _can_raise_priority() -> bool:
    return hasattr(os, "SCHED_IDLE") and os.geteuid() == 0


def _schedule(policy) -> None:
    """The calling thread's policy (Linux keeps it a thread; the tests run on the main one),
    inherited by the threads and processes it starts from here on."""
    os.sched_setscheduler(0, policy, os.sched_param(0))


def pytest_configure(config):
    """The controller of a parallel run makes the lock folder; its workers inherit the path
    and, where they may, lower their own priority."""
    if getattr(config.option, "numprocesses", None) and LOCKS not in os.environ:
        os.environ[LOCKS] = tempfile.mkdtemp(prefix="speculation-test-locks-")
        config._speculation_locks = os.environ[LOCKS]
    if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get(LOCKS) and _can_raise_priority():
        _schedule(os.SCHED_IDLE)


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
    worker is left with one at the end. The timing tests: spread evenly through the first
    two thirds of the run where priorities do the work (one at a time, each beside the other
    workers' tests, ending well before the run does), else last, one after another."""
    timing = [item for item in items if item.get_closest_marker("timing")]
    others = [item for item in items if not item.get_closest_marker("timing")]
    others.sort(key=lambda item: 0 if item.get_closest_marker("slow") else 1)
    if not (_can_raise_priority() and timing):
        items[:] = others + timing
        return
    spread, every = [], max(1, (2 * len(others)) // (3 * len(timing)))
    for n, item in enumerate(others):
        if n % every == 0 and timing:
            spread.append(timing.pop(0))
        spread.append(item)
    items[:] = spread + timing


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    folder = os.environ.get(LOCKS) if os.environ.get("PYTEST_XDIST_WORKER") else None
    if folder is None:
        yield
        return
    alone = item.get_closest_marker("timing") is not None
    if _can_raise_priority():
        if not alone:
            yield
            return
        with open(os.path.join(folder, "timing"), "a") as one_at_a_time:
            fcntl.flock(one_at_a_time, fcntl.LOCK_EX)
            _schedule(os.SCHED_OTHER)
            try:
                yield
            finally:
                _schedule(os.SCHED_IDLE)
                fcntl.flock(one_at_a_time, fcntl.LOCK_UN)
        return
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
