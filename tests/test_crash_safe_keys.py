"""Keys a crash or a race must not leave wrong (issue 45): a rate-limit counter is never left
without its expiry, whichever command the process dies after; a matchmaker pass lets go of
its pool's lease only while the lease is its own.

The crashes are modelled at the command: on a Redis Cluster a pipeline is no transaction
(its commands go to several nodes, each runs on its own), so the process may die between any
two commands it sends, pipelined or not."""

from __future__ import annotations

import functools
from types import SimpleNamespace

import fakeredis
import pytest
import redis
from flask import Flask

from service import ratelimit
from service.matching.seeks import pool_key


class CrashAfter:
    """A client whose first `sent` commands reach the server; then its process dies."""

    def __init__(self, client, sent: int):
        self._client, self._left = client, sent

    def _send(self, name, *args, **kwargs):
        if self._left == 0:
            raise redis.ConnectionError("the process died here")
        self._left -= 1
        return getattr(self._client, name)(*args, **kwargs)

    def pipeline(self, transaction=None):
        return _Pipelined(self)

    def __getattr__(self, name):
        return functools.partial(self._send, name)


class _Pipelined:
    """A pipeline's commands, queued, then sent one by one on execute."""

    def __init__(self, client: CrashAfter):
        self._client, self._queued = client, []

    def __getattr__(self, name):
        def queue(*args, **kwargs):
            self._queued.append((name, args, kwargs))
            return self
        return queue

    def execute(self):
        return [self._client._send(name, *args, **kwargs) for name, args, kwargs in self._queued]


def _counters_without_expiry(client) -> list:
    return [key for key in client.keys("rate:*") if client.ttl(key) < 0]


@pytest.mark.parametrize("sent", range(6))
def test_no_crash_leaves_a_window_counter_without_its_expiry(sent):
    server = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    try:
        ratelimit._window_counts(CrashAfter(server, sent), ["addr:10.0.0.1", "tok:abc"], 60, now=1_000_000)
    except redis.ConnectionError:
        pass
    assert _counters_without_expiry(server) == []


def test_the_counts_and_their_window_are_those_of_before(redis_client):
    """Two subjects, three hits: counted per subject, expiring a second after the window."""
    for _ in range(2):
        counts, retry_after = ratelimit._window_counts(redis_client, ["addr:a", "tok:b"], 60, now=1_000_030)
    counts, retry_after = ratelimit._window_counts(redis_client, ["addr:a"], 60, now=1_000_031)
    assert counts == [3] and retry_after == 60 - 1_000_031 % 60
    assert 0 < redis_client.ttl(ratelimit._window_key("addr:a", 1_000_031, 60)) <= 61
    assert int(redis_client.get(ratelimit._window_key("tok:b", 1_000_031, 60))) == 2


def test_a_count_given_back_after_its_window_expired_makes_no_counter(fake_redis):
    """A create that failed after its window's counter expired: nothing to give back (a DECR
    would make a counter at -1 that never expires)."""
    app = Flask(__name__)
    app.extensions["backend"] = SimpleNamespace(store_client=fake_redis)
    admission = ratelimit.Admission(self_playing=False)
    admission.window_key, admission.taken = ratelimit._window_key("create:10.0.0.1", 1_000_000, 60), True
    with app.app_context():
        ratelimit.give_back(admission)
    assert fake_redis.keys("*") == []


class _OtherPassTakesTheLapsedLease(fakeredis.FakeRedis):
    """Between this pass's commands on its lease after taking it, the lease lapses and another
    pass takes it (a pass longer than LEASE_MS, a pause of the process)."""

    lease = ""
    touched = 0

    def execute_command(self, *args, **options):
        answer = super().execute_command(*args, **options)
        if self.lease and any(a in (self.lease, self.lease.encode()) for a in args[1:]):
            self.touched += 1
            if self.touched == 2:   # the first: this pass's SET NX; then whatever lets go of it
                super().execute_command("SET", self.lease, "another-pass")
        return answer


def test_a_pass_never_lets_go_of_a_lease_another_pass_took(monkeypatch):
    from service.app import create_app
    from service.bootstrap import Backend
    from workers.memory_jobs import MemoryJobs

    client = _OtherPassTakesTheLapsedLease(server=fakeredis.FakeServer())
    app = create_app({"RATE_LIMIT": None}, backend=Backend(client, client, False), jobs=MemoryJobs())
    client.lease = pool_key("secret-duel", 2, False) + ":lease"
    assert app.extensions["seeks"].match("secret-duel", 2, False) == []
    assert client.touched >= 2 and client.get(client.lease) == b"another-pass"
