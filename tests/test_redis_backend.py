"""The API's Redis clients (service/bootstrap.py) against a real server behind a proxy that can
freeze it: how long a command waits before it fails."""

from __future__ import annotations

import time

import pytest
import redis

from ops.drills.proxy import FaultyProxy
from service.bootstrap import build_backend


@pytest.mark.timing
def test_a_fresh_connection_to_a_frozen_redis_fails_after_one_retried_command(redis_server):
    proxy = FaultyProxy(redis_server.port)
    try:
        backend = build_backend({"REDIS_URL": proxy.url, "REDIS_SOCKET_TIMEOUT": "0.5"})
        proxy.freeze(10)
        started = time.monotonic()
        with pytest.raises(redis.exceptions.TimeoutError):
            backend.store_client.get("anything")
        took = time.monotonic() - started
    finally:
        proxy.close()
    # the command and its one retry: 2 x 0.5 s. redis-py health-checks a brand-new connection
    # with a PING first, and that PING's timeout, retried too, came before: 2.1 s
    assert 0.9 < took < 1.6, took
