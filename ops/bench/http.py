"""Goal 2: POST /v1/games/{id}/actions under gunicorn vs a bare Flask endpoint that does one
XADD (ops/bench/bare_app.py), same gunicorn settings (ops/gunicorn.conf.py), same Redis, same
load generator (ops/bench/loadgen.py): requests per second, p50 and p99 latency.

The service's requests are real games: each is planned in process first (random legal actions
on an in-memory store with the same seed, so the same actions are legal on the server), then
created on the benchmark's Redis with every seat claimed. Each connection plays one game after
another, an action at a time, as a client does. The baseline gets the same requests.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import socket
import subprocess
import tempfile
import sys
import time
from pathlib import Path

from events.store import RedisEventStore
from ops.drills.redis_server import free_port
from projections.registry import game_types

from .common import Env, Row, Scale, alternate, percentile
from .games import open_game, plan, service_on
from .loadgen import Request, Source, run_load

GOAL = 0.4
CONNECTIONS = 8
ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "ops" / "gunicorn.conf.py"


def game_type() -> str:
    """The benchmark's game: the first hosted game in the lobby's order (the declarations')."""
    return game_types()[0].name


def _plan(args):
    name, seed = args
    return seed, plan(name, 4, seed)


class Gunicorn:
    def __init__(self, app: str, env: dict):
        self.port = free_port()
        full = dict(os.environ, **env, GUNICORN_BIND=f"127.0.0.1:{self.port}")
        full.pop("GUNICORN_CMD_ARGS", None)
        conf = os.environ.get("BENCH_GUNICORN_CONF") or str(CONF)   # e.g. a profiling wrapper
        # Its log goes to a file, not a pipe: a pipe nobody reads fills up (the access log at
        # INFO level, after a few hundred requests) and freezes the worker writing to it.
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", conf, app],
                                     cwd=ROOT, env=full, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn {app} exited: {self.log_tail()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"gunicorn {app} did not start")

    def log_tail(self, size: int = 2000) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-size:]

    def cpu_seconds(self) -> float:
        """CPU time (user + system) used so far by the master and its workers (Linux /proc;
        0.0 elsewhere): a per-request cost that other load on the machine does not inflate."""
        pids = [self.proc.pid]
        try:
            with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as handle:
                pids += [int(p) for p in handle.read().split()]
            ticks = 0
            for pid in pids:
                with open(f"/proc/{pid}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                ticks += int(fields[11]) + int(fields[12])   # utime, stime
            return ticks / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError):
            return 0.0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def server_settings(scale: Scale) -> dict:
    """One gthread worker of 8 threads by default: on 2 cores the server gets one, Redis and
    the load generator the other. With 2 workers the kernel hands the 8 keep-alive
    connections to the workers unevenly, differently each round, and rounds come out at
    either ~1x or ~2x (per-round figures in the results show it) on both sides."""
    return {"GUNICORN_WORKERS": os.environ.get("BENCH_GUNICORN_WORKERS", "1"),
            "GUNICORN_THREADS": os.environ.get("BENCH_GUNICORN_THREADS", "8"),
            "GUNICORN_WORKER_CLASS": "gthread"}


def prepare_games(client, name: str, count: int) -> list[list[Request]]:
    """`count` planned games on the server, each a list of action requests."""
    seeds = [f"{n + 7_000:064x}" for n in range(count)]
    with mp.get_context("fork").Pool(2) as pool:
        plans = dict(pool.map(_plan, [(name, seed) for seed in seeds]))
    setup = service_on(RedisEventStore(client))
    games = []
    for seed in seeds:
        game_id, tokens = open_game(setup, name, 4, seed)
        games.append([Request("POST", f"/v1/games/{game_id}/actions",
                              {"Authorization": f"Bearer {tokens[seat]}", "Idempotency-Key": f"k{i}",
                               "Content-Type": "application/json"},
                              json.dumps({"action": action}).encode())
                      for i, (seat, action) in enumerate(plans[seed])])
    return games


def run(env: Env, scale: Scale) -> list[Row]:
    client = env.fresh_client()
    url = env.redis().url
    name = game_type()
    settings = server_settings(scale)
    # short rounds, many of them: the pairs' ratios then see the same load on both sides
    seconds = scale.seconds / 2
    rounds = scale.rounds if scale.smoke else 4 * scale.rounds
    # enough games for every round at a generous rate; a shortfall is reported
    budget = 40 if scale.smoke else int(2500 * seconds * (rounds + 1))
    games = prepare_games(client, name, CONNECTIONS + budget // 150)
    service = Gunicorn("service.app:create_app()", {**settings, "REDIS_URL": url, "RQ_REDIS_URL": url,
                                                  "SPECULATION_ALLOW_SEED": "1"})
    bare = Gunicorn("ops.bench.bare_app:app", {**settings, "BENCH_REDIS_URL": url})
    try:
        fresh = Source(games)
        cycle = Source(games, cycle=True)
        results = {"service": [], "bare": []}
        cpu = {"service": 0.0, "bare": 0.0}

        def one_round(side, server, source, record):
            before = server.cpu_seconds()
            result = run_load("127.0.0.1", server.port, source, CONNECTIONS, seconds)
            if record:
                results[side].append(result)
                cpu[side] += server.cpu_seconds() - before
            return result.rps

        def service_round(record=True):
            return one_round("service", service, fresh, record)

        def bare_round(record=True):
            return one_round("bare", bare, cycle, record)

        service_round(False), bare_round(False)   # warm-up: imports, connections, caches
        service_rps, bare_rps, ratio = alternate(service_round, bare_round, rounds)
    finally:
        service.stop()
        bare.stop()
        client.close()
    lat = {side: [x for r in rs for x in r.latencies] for side, rs in results.items()}
    errors = {side: sum(r.errors for r in rs) for side, rs in results.items()}
    extra = {"game": name, "connections": CONNECTIONS, **settings,
             "service_p50_ms": round(percentile(lat["service"], 50) * 1000, 3),
             "service_p99_ms": round(percentile(lat["service"], 99) * 1000, 3),
             "bare_p50_ms": round(percentile(lat["bare"], 50) * 1000, 3),
             "bare_p99_ms": round(percentile(lat["bare"], 99) * 1000, 3),
             "errors": errors, "games_left": fresh.left(),
             "service_rps_rounds": [round(r.rps) for r in results["service"]],
             "bare_rps_rounds": [round(r.rps) for r in results["bare"]]}
    served = {side: sum(r.requests for r in rs) for side, rs in results.items()}
    if cpu["service"] and cpu["bare"]:
        per_request = {side: cpu[side] / served[side] * 1000 for side in cpu}
        extra.update(service_cpu_ms_per_request=round(per_request["service"], 3),
                     bare_cpu_ms_per_request=round(per_request["bare"], 3),
                     cpu_ratio=round(per_request["bare"] / per_request["service"], 3))
    return [Row("2 http", f"POST action, {CONNECTIONS} connections", service_rps, "req/s", bare_rps,
                "bare Flask + XADD req/s", ratio, f"ratio >= {GOAL}",
                ratio >= GOAL and not errors["service"], extra)]
