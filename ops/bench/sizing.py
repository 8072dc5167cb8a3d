"""Sizing figures for docs/deployment.md: what one game costs each part of the stack, measured
on the real processes, and the games-per-day model built from them.

The API under gunicorn (the shipped configuration, one process) and one `speculation worker`
on a private redis-server with AOF (appendfsync everysec, the stack's setting); client threads
play games over HTTP the way the drills' careful clients do (each game: seat 0 a person
playing random legal actions, long-polling its view while the bots act; two `heuristic` bots),
every hosted game type in turn, default options. Measured over the whole run, from /proc (CPU
time, so load from elsewhere on the machine does not inflate it):

- API CPU per HTTP request and per person action (the requests a person's action takes: its
  view, its long-polls, the action, the summary);
- worker CPU per bot turn and per scoring (RQ forks a work horse per job: the horses' CPU is
  counted through the worker's reaped children);
- Redis CPU per event appended, Redis memory per event (MEMORY USAGE of every key of a
  scored game), AOF bytes per event;
- events, person actions and bot turns per game, per game type.

Then `model()` turns them into the processes and shards for a number of games a day; every
input that is not measured here is an argument with its default named in the output.

    python -m ops.bench.sizing --games 12            # about two minutes on 2 cores
    python -m ops.bench.sizing --games 12 --json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import threading
import time
import uuid
from dataclasses import dataclass

from ops.drills import _kit
from ops.drills.outage import Client, hosted_games
from ops.drills.proxy import wait_listening
from ops.drills.redis_server import RedisProcess, free_port
from projections.templates import fill_template


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its descendants, live and reaped (utime, stime, cutime,
    cstime of each live one: a reaped child's time is in its parent's c-fields)."""
    from ops.bench.waiting import process_tree

    ticks = 0
    for p in process_tree(pid):
        try:
            with open(f"/proc/{p}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            ticks += sum(int(fields[i]) for i in (11, 12, 13, 14))
        except (OSError, ValueError, IndexError):
            pass
    return ticks / os.sysconf("SC_CLK_TCK")


class CountingClient(Client):
    """The drills' careful client, counting the requests it sends."""

    def call(self, *args, **kwargs):
        self._count("requests")
        return super().call(*args, **kwargs)


def play_game(client: CountingClient, game_type: str, rng: random.Random, tally: dict, lock) -> str:
    seats = [{}, {"bot": "heuristic"}, {"bot": "heuristic"}]
    _, game = client.until_answered("POST", "/v1/games", {"type": game_type, "seats": seats},
                                    {"Idempotency-Key": uuid.uuid4().hex})
    game_id = game["game_id"]
    _, claim = client.until_answered("POST", f"/v1/games/{game_id}/seats/0", {"name": "sizing"},
                                     {"Idempotency-Key": uuid.uuid4().hex})
    auth = {"Authorization": f"Bearer {claim['token']}"}
    while True:
        _, view = client.until_answered("GET", f"/v1/games/{game_id}/view", headers=auth)
        if view["status"] == "open":
            time.sleep(0.1)
            continue
        if view["status"] != "active":
            break
        if 0 not in view["to_act"] or not view["legal_actions"]:
            client.until_answered("GET", f"/v1/games/{game_id}/view?wait=5&after_version={view['version']}",
                                  headers=auth)
            continue
        body = {"action": fill_template(rng.choice(view["legal_actions"]), rng), "expected_version": view["version"]}
        status, _ = client.until_answered("POST", f"/v1/games/{game_id}/actions", body,
                                          {**auth, "Idempotency-Key": uuid.uuid4().hex})
        if status == 200:
            with lock:
                tally["person_actions"] = tally.get("person_actions", 0) + 1
    while client.until_answered("GET", f"/v1/games/{game_id}")[1].get("status") != "scored":
        time.sleep(0.2)
    return game_id


def measure(games: int = 12, clients: int = 3, seed: int = 1) -> dict:
    rng = random.Random(seed)
    redis_server = RedisProcess(durable=True).start()
    redis_server_pid = redis_server.proc.pid
    rq_server = RedisProcess().start()   # RQ on a Redis of its own, as on a cluster: the store's figures are the store's
    import redis as redis_py

    raw = redis_py.Redis.from_url(redis_server.url)
    raw.config_set("appendfsync", "everysec")
    port = free_port()
    env = {"REDIS_URL": redis_server.url, "RQ_REDIS_URL": rq_server.url, "GUNICORN_BIND": f"127.0.0.1:{port}", "GUNICORN_WORKERS": "1",
           "SPECULATION_CREATE_LIMIT": "100000/60", "SPECULATION_BOT_GAMES_PER_ADDRESS": "0",
           "SPECULATION_RATE_LIMIT": "1000000/60", "SPECULATION_LOG_LEVEL": "WARNING"}
    api = _kit.ChildProcess([sys.executable, "-m", "gunicorn", "-c", str(_kit.REPO / "ops" / "gunicorn.conf.py"),
                             "service.app:create_app()"], env, name="sizing-api")
    worker = _kit.start_worker(redis_server.url, reconcile_every=10, extra_env={"RQ_REDIS_URL": rq_server.url})
    stats, lock, tally, played = {}, threading.Lock(), {}, []
    try:
        if not wait_listening(port, 60):
            raise RuntimeError(api.output()[-2000:])
        base = f"http://127.0.0.1:{port}"
        play_game(CountingClient(base, {}, lock), "speculation", random.Random(0), {}, lock)   # warm both
        before = (tree_cpu(api.pid), tree_cpu(worker.pid), tree_cpu(redis_server_pid),
                  raw.info("stats")["total_commands_processed"], tree_cpu(rq_server.proc.pid))
        started = time.monotonic()
        types = hosted_games()
        queue = [types[n % len(types)] for n in range(games)]

        def loop(k: int) -> None:
            client, r = CountingClient(base, stats, lock), random.Random(rng.getrandbits(64) + k)
            while True:
                with lock:
                    if not queue:
                        return
                    game_type = queue.pop()
                game_id = play_game(client, game_type, r, tally, lock)
                with lock:
                    played.append((game_type, game_id))

        threads = [threading.Thread(target=loop, args=(k,)) for k in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - started
        after = (tree_cpu(api.pid), tree_cpu(worker.pid), tree_cpu(redis_server_pid),
                 raw.info("stats")["total_commands_processed"], tree_cpu(rq_server.proc.pid))
        per_type = _per_type(raw, played)
        aof_bytes = _dir_bytes(redis_server.dir)
    finally:
        worker.stop()
        api.stop()
        redis_server.stop()
        rq_server.stop()
    events = sum(t["events"] for t in per_type.values())
    bot_turns = sum(t["bot_turns"] for t in per_type.values())
    scorings = len(played)
    api_cpu, worker_cpu, redis_cpu = (after[i] - before[i] for i in range(3))
    return {
        "games": len(played), "wall_s": round(wall, 1), "requests": stats.get("requests", 0),
        "person_actions": tally.get("person_actions", 0), "events": events, "bot_turns": bot_turns,
        "api_cpu_s": round(api_cpu, 2), "worker_cpu_s": round(worker_cpu, 2), "redis_cpu_s": round(redis_cpu, 2),
        "api_cpu_ms_per_request": round(1000 * api_cpu / max(1, stats.get("requests", 0)), 3),
        "api_cpu_ms_per_person_action": round(1000 * api_cpu / max(1, tally.get("person_actions", 0)), 3),
        "worker_cpu_ms_per_job": round(1000 * worker_cpu / max(1, bot_turns + scorings), 3),
        "redis_cpu_us_per_event": round(1e6 * redis_cpu / max(1, events), 1),
        "redis_commands_per_event": round((after[3] - before[3]) / max(1, events), 2),
        "aof_bytes_per_event": round(aof_bytes / max(1, events), 1),
        "rq_redis_cpu_us_per_job": round(1e6 * (after[4] - before[4]) / max(1, bot_turns + scorings), 1),
        "per_type": per_type,
    }


def _per_type(raw, played) -> dict:
    from ops.bench.memory import game_memory

    out: dict = {}
    for game_type, game_id in played:
        entry = out.setdefault(game_type, {"games": 0, "events": 0, "person_actions": 0, "bot_turns": 0,
                                           "memory_bytes": 0})
        from events.store import RedisEventStore

        stored = [json.loads(body) for body, _ in RedisEventStore(raw).read_raw(game_id)]
        commands = [e["c"] for e in stored if e.get("c")]
        entry["games"] += 1
        entry["events"] += len(stored)
        entry["person_actions"] += sum(c.get("by") == "player" and "action" in c for c in commands)
        entry["bot_turns"] += sum(str(c.get("by", "")).startswith("bot") for c in commands)
        entry["memory_bytes"] += sum(game_memory(raw, game_id).values())
    for entry in out.values():
        entry["bytes_per_event"] = round(entry["memory_bytes"] / max(1, entry["events"]), 1)
        for name in ("events", "person_actions", "bot_turns"):
            entry[f"{name}_per_game"] = round(entry[name] / entry["games"], 1)
    return out


def _dir_bytes(folder: str) -> int:
    return sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(folder) for f in files)


@dataclass(frozen=True)
class Assumptions:
    """What the model takes that this script does not measure (each named in the output)."""

    games_per_day: int = 1_000_000
    peak_to_mean: float = 3.0          # the busiest hour against the day's mean
    game_minutes: float = 20.0         # a game with people in it, start to score (live in Redis meanwhile)
    core_busy: float = 0.6             # a core planned at 60 % busy at the peak
    redis_core_busy: float = 0.5       # a Redis primary (one thread) planned at 50 % busy at the peak
    redis_gb_per_shard: float = 8.0    # data per primary, leaving room for the fork of a rewrite
    waiters_per_game: float = 4.0      # open streams or long-polls per live game (players + spectators)
    waiter_kb: float = 61.0            # API memory per waiter: docs/performance.md, benchmark 8
    replicas: int = 1


def model(f: dict, a: Assumptions = Assumptions()) -> dict:
    """Processes and shards for `a.games_per_day` games of the measured mix."""
    per_game = {name: f[name] / f["games"] for name in ("requests", "events", "bot_turns")}
    peak_games_s = a.games_per_day / 86_400 * a.peak_to_mean
    api_cores = peak_games_s * per_game["requests"] * f["api_cpu_ms_per_request"] / 1000 / a.core_busy
    worker_cores = peak_games_s * (per_game["bot_turns"] + 1) * f["worker_cpu_ms_per_job"] / 1000 / a.core_busy
    redis_cpu = peak_games_s * per_game["events"] * f["redis_cpu_us_per_event"] / 1e6 / a.redis_core_busy
    jobs_s = peak_games_s * (per_game["bot_turns"] + 1)
    rq_cpu = jobs_s * f["rq_redis_cpu_us_per_job"] / 1e6 / a.redis_core_busy
    bytes_per_event = sum(t["memory_bytes"] for t in f["per_type"].values()) / f["events"]
    live_games = peak_games_s * a.game_minutes * 60
    live_gb = live_games * per_game["events"] * bytes_per_event / 1e9
    shards_cpu, shards_memory = math.ceil(redis_cpu), math.ceil(live_gb / a.redis_gb_per_shard)
    waiters = live_games * a.waiters_per_game
    return {
        "assumptions": a.__dict__, "peak_games_per_s": round(peak_games_s, 1),
        "peak_events_per_s": round(peak_games_s * per_game["events"]),
        "peak_requests_per_s": round(peak_games_s * per_game["requests"]),
        "api_cores": round(api_cores, 1), "worker_cores": round(worker_cores, 1),
        "redis_primary_cores": round(redis_cpu, 2), "live_games_at_peak": round(live_games),
        "peak_jobs_per_s": round(jobs_s), "rq_redis_cores": round(rq_cpu, 1),
        "live_gb_at_peak": round(live_gb, 2), "shards": max(3, shards_cpu, shards_memory),
        "shards_by_cpu": shards_cpu, "shards_by_memory": shards_memory,
        "redis_nodes": max(3, shards_cpu, shards_memory) * (1 + a.replicas),
        "aof_gb_per_day": round(a.games_per_day * per_game["events"] * f["aof_bytes_per_event"] / 1e9, 1),
        "waiters_at_peak": round(waiters), "waiter_gb": round(waiters * a.waiter_kb / 1e6, 1),
    }


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--games", type=int, default=12, help="games played (every hosted type in turn)")
    p.add_argument("--clients", type=int, default=3, help="client threads")
    p.add_argument("--games-per-day", type=int, default=1_000_000)
    p.add_argument("--json", action="store_true")
    p.add_argument("--measured", help="a file this script wrote with --json: the model again from its figures")
    args = p.parse_args(argv)
    if args.measured:
        with open(args.measured) as handle:
            figures = json.load(handle)["measured"]
    else:
        figures = measure(args.games, args.clients)
    sized = model(figures, Assumptions(games_per_day=args.games_per_day))
    if args.json:
        print(json.dumps({"measured": figures, "model": sized}, indent=2))
        return
    print(f"measured: {figures['games']} games, {figures['requests']} requests, {figures['person_actions']} person "
          f"actions, {figures['bot_turns']} bot turns, {figures['events']} events in {figures['wall_s']} s")
    for name in ("api_cpu_ms_per_request", "api_cpu_ms_per_person_action", "worker_cpu_ms_per_job",
                 "redis_cpu_us_per_event", "redis_commands_per_event", "aof_bytes_per_event",
                 "rq_redis_cpu_us_per_job"):
        print(f"  {name}: {figures[name]}")
    for game_type, t in sorted(figures["per_type"].items()):
        print(f"  {game_type}: {t['events_per_game']} events, {t['person_actions_per_game']} person actions, "
              f"{t['bot_turns_per_game']} bot turns a game; {t['bytes_per_event']} bytes/event in Redis")
    print("model:", json.dumps(sized, indent=2))


if __name__ == "__main__":
    main()
