"""What acknowledging after replication costs an append (REDIS_ACK_REPLICAS, issue 45), on a
loopback valkey cluster of 3 primaries with a replica each (ops/drills/redis_cluster.py).

Subject: `RedisEventStore.append` of one realistic event with an idempotency key, the store
built with ack_replicas=1: the append script and WAIT 1 (with `--durable`, every node running
AOF with appendfsync always, WAITAOF 0 1: the store's `ack_aof`) in one round trip on the game primary's
connection. Baseline: the same store with ack_replicas=0, on the same cluster, in the same run.
Each side is a loop of appends by one client (latency: microseconds per append); rounds
alternate (ops/bench/common.alternate), each figure the median round, the ratio the median of
the side-by-side rounds' ratios (subject's latency / baseline's).

    python -m ops.bench.replica_ack --seconds 2 --rounds 5 [--durable]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid

from events.envelope import GENESIS, NewEvent
from events.randomness import event_nonce

from .common import alternate

SEED = "ab" * 32
EVENT = NewEvent("bid", {"seat": 2, "amount": 13},
                 cmd={"seat": 2, "action": {"type": "bid", "amount": 13}, "by": "player"})


def _latencies(store, seconds: float) -> list[float]:
    """Seconds per append, one per append, for `seconds`, on a fresh game."""
    game_id = uuid.uuid4().hex[:16]
    version, head = 0, GENESIS
    nonce = lambda v: event_nonce(SEED, v)  # noqa: E731
    out = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        receipt = store.append(game_id, [EVENT], base_version=version, base_head=head, expected_version=version,
                               idempotency_key=f"0:k{version}", body_digest="d" * 64, nonce=nonce)
        out.append(time.perf_counter() - started)
        version, head = receipt.version, receipt.head
    return out


def measure(client, seconds: float, rounds: int, timeout_ms: int = 1000, aof: bool = False) -> dict:
    from events.store import RedisEventStore

    plain = RedisEventStore(client)
    acked = RedisEventStore(client, ack_replicas=1, ack_timeout_ms=timeout_ms, ack_aof=aof)
    p99 = {"plain": [], "acked": []}

    def side(store, name):
        def run() -> float:
            found = _latencies(store, seconds)
            p99[name].append(sorted(found)[int(len(found) * 0.99)] * 1e6)
            return statistics.median(found) * 1e6
        return run

    _latencies(acked, 0.2)    # warm: scripts loaded, the wait command chosen, connections made
    _latencies(plain, 0.2)
    acked_us, plain_us, ratio = alternate(side(acked, "acked"), side(plain, "plain"), rounds)
    return {"acked_median_us": round(acked_us, 1), "plain_median_us": round(plain_us, 1),
            "ratio": round(ratio, 3), "acked_p99_us": round(statistics.median(p99["acked"]), 1),
            "plain_p99_us": round(statistics.median(p99["plain"]), 1), "wait_command": acked._ack_command}


def main(argv=None) -> None:
    from ops.drills.redis_cluster import LoopbackCluster
    from service.bootstrap import cluster_client

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--timeout-ms", type=int, default=1000)
    parser.add_argument("--durable", action="store_true", help="AOF appendfsync always on every node: WAITAOF")
    args = parser.parse_args(argv)
    with LoopbackCluster(primaries=3, replicas=1, durable=args.durable) as cluster:
        client = cluster_client(cluster.seed_nodes)
        result = measure(client, args.seconds, args.rounds, args.timeout_ms, args.durable)
    print(json.dumps({"durable": args.durable, **result}))


if __name__ == "__main__":
    main()
