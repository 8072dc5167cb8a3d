"""Goal 1: event append through the store (Lua script, hash chain, idempotency key) vs a raw
redis-py XADD loop on the same server, with one client and with 8 concurrent clients.

Subject: `RedisEventStore.append` of one realistic event (a command and a payload, salted with
its nonce), with expected_version and a fresh idempotency key, chained on the last receipt.
Baseline: `XADD stream * e BODY h HASH` of the same bytes, precomputed (no encoding, no hash).
Concurrent clients are processes (the GIL would serialise threads), each on its own game and
its own connection, started together.
"""

from __future__ import annotations

import multiprocessing as mp
import time
import uuid

from events.envelope import GENESIS, NewEvent, encode_body
from events.randomness import event_nonce

from .common import Env, Row, Scale, alternate

SEED = "ab" * 32
GOAL = 0.5
EVENT = NewEvent("bid", {"seat": 2, "amount": 13},
                 cmd={"seat": 2, "action": {"type": "bid", "amount": 13}, "by": "player"})


def _store_loop(url: str, seconds: float, start_at: float) -> int:
    import redis

    from events.store import RedisEventStore

    store = RedisEventStore(redis.Redis.from_url(url))
    game_id = uuid.uuid4().hex[:16]
    version, head = 0, GENESIS
    nonce = lambda v: event_nonce(SEED, v)  # noqa: E731
    while time.time() < start_at:
        time.sleep(0.001)
    deadline = time.perf_counter() + seconds
    count = 0
    while time.perf_counter() < deadline:
        for _ in range(10):
            receipt = store.append(game_id, [EVENT], base_version=version, base_head=head,
                                   expected_version=version, idempotency_key=f"0:k{version}",
                                   body_digest="d" * 64, nonce=nonce)
            version, head = receipt.version, receipt.head
        count += 10
    return count


def _raw_loop(url: str, seconds: float, start_at: float) -> int:
    import redis

    client = redis.Redis.from_url(url)
    key = f"raw:{{g:{uuid.uuid4().hex[:16]}}}:events"
    body = encode_body(1, EVENT, int(time.time() * 1000), event_nonce(SEED, 1))
    fields = {"e": body, "h": "f" * 64}
    while time.time() < start_at:
        time.sleep(0.001)
    deadline = time.perf_counter() + seconds
    count = 0
    while time.perf_counter() < deadline:
        for _ in range(10):
            client.xadd(key, fields)
        count += 10
    return count


def _run(loop, url: str, clients: int, seconds: float) -> float:
    """Appends per second, all clients together."""
    if clients == 1:
        return loop(url, seconds, 0) / seconds
    ctx = mp.get_context("fork")
    with ctx.Pool(clients) as pool:
        start_at = time.time() + 0.3
        counts = pool.starmap(loop, [(url, seconds, start_at)] * clients)
    return sum(counts) / seconds


def run(env: Env, scale: Scale) -> list[Row]:
    url = env.redis().url
    rows = []
    for clients in (1, 8):
        env.fresh_client().close()
        store_rate, raw_rate, ratio = alternate(lambda: _run(_store_loop, url, clients, scale.seconds),
                                         lambda: _run(_raw_loop, url, clients, scale.seconds),
                                         scale.rounds)
        rows.append(Row("1 append", f"{clients} client{'s' if clients > 1 else ''}", store_rate, "appends/s",
                        raw_rate, "raw XADD/s", ratio, f"ratio >= {GOAL}", ratio >= GOAL,
                        {"store_us_per_append": 1e6 / store_rate * clients,
                         "raw_us_per_xadd": 1e6 / raw_rate * clients}))
    return rows
