"""Benchmark 12: what the audit costs an action (docs/audit.md): POST /v1/games/{id}/actions
with signed receipts and the transparency log's sequencer running, vs the same service with
neither, in one run.

Subject: the service as shipped (`service.app:create_app()`), every action's answer carrying a
receipt signed with Ed25519, and a sequencer (workers/sequencer.py, a pass every 0.5 s as in
a worker process) checkpointing every game that moved and signing a tree head per batch, on
the same Redis database. Baseline: the same service with the receipt left unsigned
(ops/bench/unsigned_app.py) and no sequencer, on another database of the same server, so the
sequencer never sees its games. Same gunicorn settings and load generator as benchmark 2,
subject and baseline measured in alternating rounds (ops/bench/common.py `alternate`).

The goal is the issue's: the action p99 with signing and sequencing at most 1.2 x without.
Reported beside it: throughput, the p50s, the CPU per request of each API process, the
sequencer's batches and checkpoints, and the log's bytes per game (its Redis keys' memory
over the games it holds).
"""

from __future__ import annotations

import multiprocessing as mp
import time

from .common import Env, Row, Scale, alternate, percentile
from .http import CONNECTIONS, Gunicorn, game_type, prepare_games, server_settings
from .loadgen import Source, run_load

GOAL = 1.2           # subject p99 / baseline p99 at most
SUBJECT_DB, BASELINE_DB = 0, 1


def _sequencer(url: str, stop, every: float, counts) -> None:
    """A worker process's sequencer loop on the subject's database, until `stop` is set."""
    import redis

    from service.bootstrap import Backend, build_core
    from workers.memory_jobs import MemoryJobs
    from workers.sequencer import sequencer_pass

    client = redis.Redis.from_url(url)
    core = build_core({"ALLOW_SEED": True}, Backend(client, client, False), MemoryJobs())
    run_pass = sequencer_pass(core)
    while not stop.is_set():
        started = time.monotonic()
        done = run_pass()
        if done.logged:
            counts[0] += 1
            counts[1] += done.logged
        stop.wait(max(0.0, every - (time.monotonic() - started)))


def _log_bytes(client) -> int:
    """The memory of the transparency log's keys (`{tlog}:*`), as Redis counts it."""
    return sum(client.memory_usage(key) or 0 for key in client.scan_iter(match="{tlog}:*", count=1000))


def run(env: Env, scale: Scale) -> list[Row]:
    import redis

    base_url = env.redis().url
    subject_url, baseline_url = f"{base_url}/{SUBJECT_DB}", f"{base_url}/{BASELINE_DB}"
    subject_client, baseline_client = redis.Redis.from_url(subject_url), redis.Redis.from_url(baseline_url)
    for client in (subject_client, baseline_client):
        client.flushdb()   # our private server only
    name = game_type()
    settings = server_settings(scale)
    seconds = scale.seconds / 2
    rounds = scale.rounds if scale.smoke else 4 * scale.rounds
    budget = 40 if scale.smoke else int(2500 * seconds * (rounds + 1))
    count = CONNECTIONS + budget // 150
    subject_games = prepare_games(subject_client, name, count)
    baseline_games = prepare_games(baseline_client, name, count)
    common = {**settings, "SPECULATION_ALLOW_SEED": "1"}
    subject = Gunicorn("service.app:create_app()", {**common, "REDIS_URL": subject_url, "RQ_REDIS_URL": subject_url})
    baseline = Gunicorn("ops.bench.unsigned_app:app", {**common, "REDIS_URL": baseline_url,
                                                       "RQ_REDIS_URL": baseline_url})
    ctx = mp.get_context("spawn")
    stop, counts = ctx.Event(), ctx.Array("l", 2)
    sequencer = ctx.Process(target=_sequencer, args=(subject_url, stop, 0.5, counts), daemon=True)
    sequencer.start()
    results = {"subject": [], "baseline": []}
    cpu = {"subject": 0.0, "baseline": 0.0}
    sources = {"subject": Source(subject_games), "baseline": Source(baseline_games)}
    servers = {"subject": subject, "baseline": baseline}
    try:
        def one_round(side: str, record: bool = True) -> float:
            before = servers[side].cpu_seconds()
            result = run_load("127.0.0.1", servers[side].port, sources[side], CONNECTIONS, seconds)
            if record:
                results[side].append(result)
                cpu[side] += servers[side].cpu_seconds() - before
            # a p99 a round, inverted so that `alternate`'s ratio is subject p99 / baseline p99
            return percentile(result.latencies, 99) if result.latencies else float("nan")

        one_round("subject", False), one_round("baseline", False)   # warm-up
        subject_p99, baseline_p99, ratio = alternate(lambda: one_round("subject"), lambda: one_round("baseline"),
                                                     rounds)
        time.sleep(1.0)   # the last batch
    finally:
        stop.set()
        sequencer.join(10)
        subject.stop()
        baseline.stop()
    lat = {side: [x for r in rs for x in r.latencies] for side, rs in results.items()}
    served = {side: sum(r.requests for r in rs) for side, rs in results.items()}
    errors = {side: sum(r.errors for r in rs) for side, rs in results.items()}
    games_logged = int(subject_client.hlen("{tlog}:checkpointed"))
    log_bytes = _log_bytes(subject_client)
    extra = {"game": name, "connections": CONNECTIONS, **settings,
             "subject_p50_ms": round(percentile(lat["subject"], 50) * 1000, 3),
             "subject_p99_ms": round(percentile(lat["subject"], 99) * 1000, 3),
             "baseline_p50_ms": round(percentile(lat["baseline"], 50) * 1000, 3),
             "baseline_p99_ms": round(percentile(lat["baseline"], 99) * 1000, 3),
             "subject_rps": round(served["subject"] / max(1e-9, seconds * len(results["subject"])), 1),
             "baseline_rps": round(served["baseline"] / max(1e-9, seconds * len(results["baseline"])), 1),
             "errors": errors, "sequencer_batches": counts[0], "checkpoints": counts[1],
             "games_logged": games_logged, "log_bytes": log_bytes,
             "log_bytes_per_game": round(log_bytes / games_logged) if games_logged else None}
    if cpu["subject"] and cpu["baseline"] and served["subject"] and served["baseline"]:
        extra.update(subject_cpu_ms_per_request=round(cpu["subject"] / served["subject"] * 1000, 3),
                     baseline_cpu_ms_per_request=round(cpu["baseline"] / served["baseline"] * 1000, 3))
    subject_client.close()
    baseline_client.close()
    return [Row("12 audit", f"POST action p99, signed receipts + sequencer, {CONNECTIONS} connections",
                round(subject_p99 * 1000, 3), "ms", round(baseline_p99 * 1000, 3), "ms unsigned, no sequencer",
                round(ratio, 3), f"ratio <= {GOAL}", ratio <= GOAL and not errors["subject"] and counts[1] > 0, extra)]
