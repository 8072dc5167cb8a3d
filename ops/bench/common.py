"""What every benchmark shares: the result row, the scale, timing helpers and a private Redis.

Every figure is a ratio against a baseline measured in the same run, on the same machine:
absolute times on a shared 2-core machine are noise. Subject and baseline are measured in
alternating rounds and each side keeps its median round, so a burst of load from elsewhere
hits both sides instead of one.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

from ops.drills.redis_server import RedisProcess


@dataclass
class Row:
    bench: str                     # "1 append", "2 http", ...
    case: str                      # what exactly was measured
    figure: float                  # the measured figure (the subject)
    unit: str
    baseline: Optional[float] = None
    baseline_label: str = ""       # what the baseline is
    ratio: Optional[float] = None  # figure / baseline (or baseline / figure for times: see `goal`)
    goal: str = ""                 # the goal, in words
    met: Optional[bool] = None     # None: reported only, no goal
    extra: dict = field(default_factory=dict)  # more figures (p50/p99, events/s, ...)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Scale:
    """How long each benchmark runs. `smoke` is the tiny form the test suite runs."""

    name: str = "full"
    seconds: float = 2.0       # the length of one measured round
    rounds: int = 5            # alternating rounds per side
    smoke: bool = False

    @classmethod
    def full(cls) -> "Scale":
        return cls()

    @classmethod
    def quick(cls) -> "Scale":
        return cls("quick", seconds=0.7, rounds=3)

    @classmethod
    def tiny(cls) -> "Scale":
        return cls("smoke", seconds=0.15, rounds=1, smoke=True)


def ops_per_second(step: Callable[[], None], seconds: float, batch: int = 20) -> float:
    """Run `step` for about `seconds`; operations per second."""
    count = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(batch):
            step()
        count += batch
        now = time.perf_counter()
        if now >= deadline:
            return count / (now - start)


def alternate(subject: Callable[[], float], baseline: Callable[[], float], rounds: int) -> tuple[float, float, float]:
    """Measure subject and baseline in alternating rounds (B S, S B, B S, ...).

    Returns each side's median round and the median of the ratios subject/baseline of the
    rounds taken side by side: load from elsewhere comes in bursts of seconds, which then hit
    both rounds of a pair, so the pairs' ratios scatter much less than the rounds do."""
    subs, bases = [], []
    for i in range(rounds):
        if i % 2 == 0:
            bases.append(baseline())
            subs.append(subject())
        else:
            subs.append(subject())
            bases.append(baseline())
    ratios = [s / b for s, b in zip(subs, bases)]
    return statistics.median(subs), statistics.median(bases), statistics.median(ratios)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), nearest rank."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, int(round(q / 100 * len(ordered) + 0.5)) - 1))
    return ordered[rank]


class Env:
    """Shared resources of one run: a private redis-server, started once, never the shared one;
    a loopback Redis Cluster for the benchmarks that need one, started once too."""

    def __init__(self, scale: Scale):
        self.scale = scale
        self._redis: Optional[RedisProcess] = None
        self._cluster = None

    def redis(self) -> RedisProcess:
        if self._redis is None:
            self._redis = RedisProcess(durable=os.environ.get("BENCH_DURABLE") == "1").start()
        return self._redis

    def client(self):
        import redis

        return redis.Redis.from_url(self.redis().url)

    def fresh_client(self):
        """A client on a flushed private server (ours alone: safe to flush)."""
        client = self.client()
        client.flushdb()
        return client

    def cluster(self):
        """A loopback valkey cluster of 3 primaries, no replicas (ops/drills/redis_cluster.py):
        the cost of a cluster's routing and of its slots, not of replication."""
        if self._cluster is None:
            from ops.drills.redis_cluster import LoopbackCluster

            self._cluster = LoopbackCluster(primaries=3, replicas=0).start()
        return self._cluster

    def fresh_cluster_client(self):
        """A RedisCluster client of the run's cluster, every primary flushed (ours alone)."""
        cluster = self.cluster()
        for node in cluster.nodes:
            cluster.node_client(node, socket_timeout=5).flushall()
        return cluster.client()

    def close(self) -> None:
        if self._redis is not None:
            self._redis.stop()
            self._redis = None
        if self._cluster is not None:
            self._cluster.stop()
            self._cluster = None
