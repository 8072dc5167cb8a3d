"""The append notifier contract (events/notify.py), run on the in-memory twin, on fakeredis, on
a real redis-server (sharded pub/sub, and plain PUBLISH as on a Redis older than 7) and on a
Redis Cluster (sharded pub/sub on the primary of each game's slot)."""

import threading
import time

import pytest

from events.envelope import NewEvent
from events.notify import RedisNotifier, channel
from events.store import MemoryEventStore, RedisEventStore
from ops.drills._kit import wait_until


def append(store, game, n=1):
    version, head = store.head(game)
    return store.append(game, [NewEvent("thing.happened", {"n": i}) for i in range(n)],
                        base_version=version, base_head=head)


@pytest.fixture(params=["memory", "fakeredis", "redis", "redis-unsharded", "cluster"])
def pair(request):
    """(store, notifier) for each implementation; linger 0, so subscriptions end at once."""
    if request.param == "memory":
        store = MemoryEventStore()
        yield store, store.notifier
        return
    client = request.getfixturevalue({"fakeredis": "fake_redis", "cluster": "cluster_redis"}.get(request.param, "real_redis"))
    store = RedisEventStore(client)
    if request.param == "redis-unsharded":
        store._sharded = False           # the script PUBLISHes, the notifier SUBSCRIBEs
    notifier = RedisNotifier(client, store.head, linger=0, sharded=False if request.param == "redis-unsharded" else None)
    yield store, notifier
    notifier.close()


def waiter(notifier, game, after, timeout, out):
    t0 = time.monotonic()
    out.append((notifier.wait(game, after, timeout), time.monotonic() - t0))


class TestNotifierContract:
    @pytest.mark.timing
    def test_a_version_already_passed_returns_at_once(self, pair):
        store, notifier = pair
        append(store, "g1", 3)
        t0 = time.monotonic()
        assert notifier.wait("g1", 2, 5) is True
        assert time.monotonic() - t0 < 1

    @pytest.mark.timing
    def test_nothing_appended_times_out(self, pair):
        store, notifier = pair
        append(store, "g1")
        t0 = time.monotonic()
        assert notifier.wait("g1", 1, 0.3) is False
        assert 0.25 <= time.monotonic() - t0 < 2

    @pytest.mark.timing
    def test_an_append_wakes_every_waiter_of_the_game(self, pair):
        store, notifier = pair
        append(store, "g1")
        out = []
        threads = [threading.Thread(target=waiter, args=(notifier, "g1", 1, 5, out)) for _ in range(30)]
        for t in threads:
            t.start()
        assert wait_until(lambda: notifier.waiting() == 30, 5), notifier.waiting()   # all 30 parked
        t0 = time.monotonic()
        append(store, "g1")
        for t in threads:
            t.join(6)
        assert len(out) == 30 and all(ok for ok, _ in out)
        assert time.monotonic() - t0 < 2
        assert notifier.waiting() == 0

    def test_another_games_append_wakes_nobody(self, pair):
        store, notifier = pair
        append(store, "g1")
        out = []
        t = threading.Thread(target=waiter, args=(notifier, "g1", 1, 0.6, out))
        t.start()
        assert wait_until(lambda: notifier.waiting() == 1, 5)   # g1's waiter parked
        append(store, "g2")
        t.join(3)
        assert out and out[0][0] is False and out[0][1] >= 0.55

    @pytest.mark.timing
    def test_no_append_is_missed_when_it_races_the_subscription(self, pair):
        store, notifier = pair
        append(store, "g1")
        for round_ in range(30):
            version = store.head("g1")[0]
            out = []
            t = threading.Thread(target=waiter, args=(notifier, "g1", version, 5, out))
            t.start()
            if round_ % 3:
                # not a wait: a jitter of 0-4 ms, so the append lands at every point of the
                # waiter's arrival and subscription (the race under test)
                time.sleep(0.001 * (round_ % 5))
            append(store, "g1")
            t.join(6)
            assert out and out[0][0] is True and out[0][1] < 3, (round_, out)
        assert notifier.subscribed_games() == 0   # linger 0: the last waiter unsubscribed

    def test_many_games_at_once(self, pair):
        store, notifier = pair
        games = [f"m{i}" for i in range(20)]
        for g in games:
            append(store, g)
        out = []
        threads = [threading.Thread(target=waiter, args=(notifier, g, 1, 5, out)) for g in games]
        for t in threads:
            t.start()
        assert wait_until(lambda: notifier.waiting() == 20, 5), notifier.waiting()   # all 20 parked
        for g in games:
            append(store, g)
        for t in threads:
            t.join(6)
        assert len(out) == 20 and all(ok for ok, _ in out)


def test_the_channel_carries_the_games_hash_tag():
    assert channel("abc") == "game:{g:abc}:appended"


def commands_processed(client) -> int:
    return int(client.info("stats")["total_commands_processed"])


@pytest.fixture
def own_redis():
    """A server of this test's own: the worker's shared one may still hear a command from an
    earlier test's thread winding down (seen once: 2 commands in the idle span, not 1)."""
    import redis

    from ops.drills.redis_server import RedisProcess, redis_server_path

    if redis_server_path() is None:
        pytest.skip("redis-server is not installed")
    server = RedisProcess().start()
    client = redis.Redis.from_url(server.url)
    yield client
    client.close()
    server.stop()


def test_an_idle_waiter_costs_no_redis_command(own_redis):
    real_redis = own_redis
    store = RedisEventStore(real_redis)
    append(store, "idle")
    notifier = RedisNotifier(real_redis, store.head)
    out = []
    threads = [threading.Thread(target=waiter, args=(notifier, "idle", 1, 3, out)) for _ in range(20)]
    for t in threads:
        t.start()
    # all 20 parked, subscribed, and the one head read done (it is what taught the notifier v1)
    assert wait_until(lambda: notifier.waiting() == 20 and notifier.known("idle") == 1, 5)
    before = commands_processed(real_redis)
    # a duration, not an event: the promise is that nothing is sent over a span of idle time
    time.sleep(1.5)
    after = commands_processed(real_redis)
    assert after - before <= 1   # the INFO of `before` only
    append(store, "idle")
    for t in threads:
        t.join(5)
    assert len(out) == 20 and all(ok for ok, _ in out)
    notifier.close()


@pytest.mark.timing
def test_a_dropped_subscription_reconnects_and_no_append_is_lost(real_redis):
    store = RedisEventStore(real_redis)
    append(store, "drop")
    notifier = RedisNotifier(real_redis, store.head)
    assert notifier.wait("drop", 0, 1) is True     # subscribed (and lingering)
    out = []
    t = threading.Thread(target=waiter, args=(notifier, "drop", 1, 8, out))
    t.start()
    assert wait_until(lambda: notifier.waiting() == 1, 5)   # parked on what it knows (v1)
    real_redis.client_kill_filter(_type="pubsub")   # Redis drops the subscriber
    append(store, "drop")                          # published while nobody listens
    t.join(9)
    assert out and out[0][0] is True and out[0][1] < 5, out
    notifier.close()


def test_linger_keeps_a_subscription_for_the_next_long_poll(real_redis):
    store = RedisEventStore(real_redis)
    append(store, "lp")
    notifier = RedisNotifier(real_redis, store.head, linger=30)
    assert notifier.wait("lp", 0, 1) is True
    assert notifier.subscribed_games() == 1
    before = commands_processed(real_redis)
    assert notifier.wait("lp", 0, 1) is True   # what it knows serves the next waiter: no command
    assert commands_processed(real_redis) - before <= 1
    notifier.close()
