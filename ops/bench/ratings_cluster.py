"""The ratings log on a Redis Cluster, with its single-writer lease, against today's path on
one Redis (issue 45).

Subject: `Ratings.record(session)` of a scored rated game (what the scoring job's observer
does), by `--scorers` processes at once, each with its own core and connections, on a
loopback valkey cluster of 3 primaries (ops/drills/redis_cluster.py): the lease
(`ratings:{ratings:<type>}:lease`, a redis-py lock in the log's slot) taken before the
decision, then the append, the histories and the leaderboard. Baselines, on a private
single Redis in the same run: the same code (the lease included), and the path before the
lease (the lock replaced by a no-op in the scorer processes: scorers race on the log's head,
a loser decides again). Rounds alternate (ops/bench/common.alternate); each figure is a
median of rounds, each ratio the median of the side-by-side rounds' ratios.

    python -m ops.bench --only 13                # 1 and 4 scorers, the registry's scale
    python -m ops.bench.ratings_cluster --scorers 4 --seconds 3 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import time
import uuid
from dataclasses import replace

from .common import Env, Row, Scale, alternate
from .ratings_log import CONFIG, scored_rated_game


class _NoLease:
    """The path before the lease: nothing taken, nothing released."""

    def acquire(self):
        return True

    def release(self):
        pass


def _core(where: dict):
    from service.bootstrap import Backend, build_core, cluster_client
    from workers.memory_jobs import MemoryJobs

    if where.get("nodes"):
        client = cluster_client(where["nodes"])
    else:
        import redis

        client = redis.Redis.from_url(where["url"])
    core = build_core(dict(CONFIG), Backend(client, client, False), MemoryJobs())
    if where.get("no_lease"):
        core.ratings.redis = _Unleased(client)
    return core


class _Unleased:
    """The ratings' client with its lock() a no-op (every other command passed through)."""

    def __init__(self, client):
        self._client = client

    def lock(self, *args, **kwargs):
        return _NoLease()

    def __getattr__(self, name):
        return getattr(self._client, name)


def _scorer(where: dict, template, seconds: float, barrier, out) -> None:
    try:
        from service.core.errors import Conflict

        core = _core(where)
        core.ratings.record(replace(template, game_id=uuid.uuid4().hex[:16]))   # warm: connections, bot accounts
        barrier.wait(timeout=120)
        count = busy = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            session = replace(template, game_id=uuid.uuid4().hex[:16])
            while True:
                try:
                    core.ratings.record(session)
                    break
                except Conflict:   # "too busy" (20 heads moved under it): asked again, as the job's retry
                    busy += 1
            count += 1
        out.put((count, busy))
    except BaseException:
        import traceback

        out.put(("error", traceback.format_exc()))


def ratings_per_second(where: dict, template, scorers: int, seconds: float) -> float:
    ctx = mp.get_context("fork")
    barrier, out = ctx.Barrier(scorers), ctx.Queue()
    procs = [ctx.Process(target=_scorer, args=(where, template, seconds, barrier, out)) for _ in range(scorers)]
    for p in procs:
        p.start()
    results = [out.get(timeout=seconds + 180) for _ in procs]   # a failed scorer breaks the barrier: all answer
    for p in procs:
        p.join(10)
    failed = [r[1] for r in results if r[0] == "error"]
    if failed:
        raise RuntimeError(f"a scorer failed:\n{failed[0]}")
    return sum(r[0] for r in results) / seconds


def measure(env: Env, scorers: int, seconds: float, rounds: int) -> dict:
    """The run's cluster and single Redis (env), both flushed first: one figure each way."""
    env.fresh_cluster_client().close()
    env.fresh_client()
    single, cluster = env.redis(), env.cluster()
    template = scored_rated_game(single.url)
    on_cluster = {"nodes": cluster.seed_nodes}
    leased_single = {"url": single.url}
    today = {"url": single.url, "no_lease": True}
    cluster_rate, today_rate, vs_today = alternate(
        lambda: ratings_per_second(on_cluster, template, scorers, seconds),
        lambda: ratings_per_second(today, template, scorers, seconds), rounds)
    leased_rate, today_rate_2, lease_vs_today = alternate(
        lambda: ratings_per_second(leased_single, template, scorers, seconds),
        lambda: ratings_per_second(today, template, scorers, seconds), rounds)
    return {"scorers": scorers, "seconds": seconds, "rounds": rounds,
            "cluster_leased_ratings_per_s": round(cluster_rate, 1),
            "single_leased_ratings_per_s": round(leased_rate, 1),
            "single_today_ratings_per_s": [round(today_rate, 1), round(today_rate_2, 1)],   # each pairing's
            "ratio_cluster_leased_vs_today": round(vs_today, 3),
            "ratio_single_leased_vs_today": round(lease_vs_today, 3)}


def run(env: Env, scale: Scale) -> list[Row]:
    """`python -m ops.bench --only 13`: 1 and 4 scorers (the tiny form: 1 and 2), a row each."""
    rows = []
    for scorers in (1, 2 if scale.smoke else 4):
        found = measure(env, scorers, scale.seconds, scale.rounds)
        case = f"{scorers} scorer{'s (processes)' if scorers > 1 else ''}, leased log, 3-primary cluster"
        rows.append(Row("13 ratings cluster", case, found["cluster_leased_ratings_per_s"], "ratings/s",
                        found["single_today_ratings_per_s"][0], "one Redis, no lease",
                        found["ratio_cluster_leased_vs_today"], extra=found))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scorers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from ops.drills import redis_server
    from ops.drills.redis_cluster import valkey_binary

    if redis_server.redis_server_path() is None:   # the single Redis from the valkey binary too
        redis_server.redis_server_path = valkey_binary
    env = Env(Scale.full())
    try:
        for scorers in sorted({1, args.scorers}):
            print(json.dumps(measure(env, scorers, args.seconds, args.rounds)), flush=True)
    finally:
        env.close()


if __name__ == "__main__":
    main()
