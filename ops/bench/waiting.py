"""Goal 8: waiting at scale, on the production configuration (gunicorn with
ops/gunicorn.conf.py: gevent worker, one API process) and a private redis-server, in one run:

- a player's action latency (POST /actions, one connection, planned legal actions) with
  nobody waiting (the baseline, measured before and after the load, pooled) and with
  STREAMS SSE/NDJSON streams spread over GAMES games, LONG_POLLS long-polls and FOLLOWERS
  SSE streams following the game being played, all open;
- append-to-delivery for the FOLLOWERS: from the moment the action is sent to the moment
  each follower reads the event (so it includes the action's own processing);
- fan-out: the same, for 1, 100 and 1,000 watchers of one game (added on top of the load);
- Redis commands per second while every waiter is idle: INFO total_commands_processed
  over a few seconds, minus the benchmark's own INFO;
- memory per waiter: the API process's RSS growth while the waiters were opened / waiters.

Stack mode (`python -m ops.bench --only 8 --stack`, or BENCH_WAITING_MODES=one,stack): the
same figures, in the same run after the one-process mode's, against the stack `make serve`
starts (service/stack.build_stack: its embedded Redis with AOF fsync always, the API under
gunicorn with one process per core, its worker process(es)), the per-address caps raised. The
quiet side is a second API of the same stack configuration (gunicorn, one process per core) on
the same Redis and worker, with nobody waiting on it. CPU seconds per process of the stack
(API processes, worker and its work horses, Redis, the load generator) are reported for the
idle and the loaded phases.

The load generator is asyncio (as ops/bench/loadgen.py), loopback only, every step bounded
in time; it raises its RLIMIT_NOFILE (gunicorn inherits it) and spreads its waiters' sockets
over several 127.0.0.x source addresses. The caps on open streams are raised for the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import re
import resource
import socket
import tempfile
import time
from dataclasses import dataclass, field

from events.store import RedisEventStore
from ops.drills.redis_server import free_port
from projections import speculate

from .common import Env, Row, Scale, percentile
from .games import open_game, plan, service_on
from .http import Gunicorn

GAME = speculate.NAME         # the longest games: enough actions for every phase
SOURCES = [f"127.0.0.{n}" for n in range(2, 10)]
ID_LINE = re.compile(rb"^id: (\d+)$", re.M)
GOALS = {"action_ratio": 1.5, "delivery_p99_ms": 100.0, "fanout_p99_ms": 250.0, "idle_commands": 1.0}


@dataclass(frozen=True)
class Shape:
    streams: int
    games: int
    long_polls: int
    followers: int
    fanouts: tuple
    appends: int          # appends per fan-out size
    baseline_actions: int  # before the load and again after it
    loaded_actions: int
    idle_seconds: float


FULL = Shape(5000, 1000, 500, 100, (1, 100, 1000), 5, 120, 360, 5.0)
QUICK = Shape(5000, 1000, 500, 100, (1, 100, 1000), 3, 80, 160, 3.0)
SMOKE = Shape(40, 10, 6, 5, (1, 4, 10), 2, 8, 12, 0.5)


def shape_for(scale: Scale) -> Shape:
    return SMOKE if scale.smoke else QUICK if scale.name == "quick" else FULL


def raise_nofile(needed: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def _plan(args):
    seed = args
    return seed, plan(GAME, 4, seed)


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def worker_pid(server: Gunicorn) -> int:
    deadline = time.time() + 30
    while True:   # the master listens before its worker is forked
        with open(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children") as handle:
            pids = handle.read().split()
        if pids or time.time() > deadline:
            return int(pids[0])
        time.sleep(0.1)


def commands(client) -> int:
    return int(client.info("stats")["total_commands_processed"])


# --- the client side ------------------------------------------------------------------------
async def read_head(reader) -> int:
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionError("closed before the status line")
    status = int(status_line.split()[1])
    length = None
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    if length:
        await reader.readexactly(length)
    return status


@dataclass
class Stream:
    """One open event stream; `seen` records (version, when) of each SSE id when recording."""

    reader: object
    writer: object
    record: bool
    seen: list = field(default_factory=list)
    task: object = None
    buffer: bytes = b""

    async def pump(self) -> None:
        try:
            while True:
                chunk = await self.reader.read(65536)
                if not chunk:
                    return
                if self.record:
                    now = time.perf_counter()
                    self.buffer += chunk
                    head, _, self.buffer = self.buffer.rpartition(b"\n")
                    for match in ID_LINE.finditer(head):
                        self.seen.append((int(match.group(1)), now))
        except (ConnectionError, asyncio.CancelledError):
            return

    def highest(self) -> int:
        return self.seen[-1][0] if self.seen else 0

    def close(self) -> None:
        if self.task:
            self.task.cancel()
        self.writer.close()


class Load:
    def __init__(self, port: int):
        self.port = port
        self._source = 0
        self.errors = 0

    def _local(self):
        self._source += 1
        return (SOURCES[self._source % len(SOURCES)], 0)

    async def open_stream(self, game_id: str, accept: str = "text/event-stream", record: bool = False,
                          after: int = 0) -> Stream:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", self.port, local_addr=self._local()), 10)
        writer.write(f"GET /v1/games/{game_id}/events?after={after} HTTP/1.1\r\nHost: bench\r\n"
                     f"Accept: {accept}\r\n\r\n".encode())
        status = await asyncio.wait_for(read_head(reader), 20)
        if status != 200:
            writer.close()
            raise RuntimeError(f"stream answered {status}")
        stream = Stream(reader, writer, record)
        stream.task = asyncio.ensure_future(stream.pump())
        return stream

    async def open_many(self, specs, batch: int = 250) -> list[Stream]:
        out = []
        for i in range(0, len(specs), batch):
            got = await asyncio.gather(*(self.open_stream(*spec) for spec in specs[i:i + batch]),
                                       return_exceptions=True)
            for item in got:
                if isinstance(item, Exception):
                    self.errors += 1
                else:
                    out.append(item)
        return out

    async def long_poll(self, game_id: str, token: str, version: int, stop: asyncio.Event, sent: list) -> None:
        """Long-polls one after another (wait=60) until `stop`."""
        writer = None
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", self.port, local_addr=self._local()), 10)
            while not stop.is_set():
                writer.write(f"GET /v1/games/{game_id}/view?wait=60&after_version={version} HTTP/1.1\r\n"
                             f"Host: bench\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
                sent.append(1)
                reply = asyncio.ensure_future(read_head(reader))
                stopped = asyncio.ensure_future(stop.wait())
                done, _ = await asyncio.wait({reply, stopped}, timeout=75, return_when=asyncio.FIRST_COMPLETED)
                if reply not in done:
                    reply.cancel()
                    return
                stopped.cancel()
                if reply.result() != 200:
                    self.errors += 1
                    return
        except (ConnectionError, OSError, asyncio.TimeoutError):
            self.errors += 1
        finally:
            if writer:
                writer.close()


class Player:
    """Plays planned actions of games on one keep-alive connection, timing each."""

    def __init__(self, port: int, games):
        self.port = port
        self.games = list(games)   # [(game_id, tokens, moves)]
        self.pos = {g[0]: 0 for g in self.games}
        self.version = {}          # the last receipt's version, per game
        self.reader = self.writer = None

    async def act(self, game_id: str):
        tokens, moves = next((t, m) for g, t, m in self.games if g == game_id)
        n = self.pos[game_id]
        seat, action = moves[n]
        self.pos[game_id] = n + 1
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        body = json.dumps({"action": action}).encode()
        request = (f"POST /v1/games/{game_id}/actions HTTP/1.1\r\nHost: bench\r\n"
                   f"Authorization: Bearer {tokens[seat]}\r\nIdempotency-Key: b{n}\r\n"
                   f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
        start = time.perf_counter()
        self.writer.write(request)
        status_line = await asyncio.wait_for(self.reader.readline(), 30)
        if not status_line:   # the server closed the idle keep-alive connection: again, anew
            self.writer.close()
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
            start = time.perf_counter()
            self.writer.write(request)
            status_line = await asyncio.wait_for(self.reader.readline(), 30)
        status = int(status_line.split()[1])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        payload = json.loads(await self.reader.readexactly(length))
        elapsed = time.perf_counter() - start
        if status != 200:
            raise RuntimeError(f"action answered {status}: {payload}")
        self.version[game_id] = payload["receipt"]["version"]
        return start, elapsed, payload["receipt"]

    async def play(self, game_id: str, count: int, gap: float = 0.01) -> list:
        """[(sent at, latency, first_version)]"""
        out = []
        for _ in range(count):
            start, elapsed, receipt = await self.act(game_id)
            out.append((start, elapsed, receipt["first_version"]))
            await asyncio.sleep(gap)
        return out

    def close(self):
        if self.writer:
            self.writer.close()


def deliveries(actions, streams) -> list[float]:
    """Seconds from each action's send to each stream's first sight of its first version."""
    out = []
    for stream in streams:
        seen = stream.seen
        for sent, _, first in actions:
            when = next((t for v, t in seen if v >= first), None)
            if when is not None:
                out.append(when - sent)
    return out


async def wait_until(predicate, timeout: float) -> bool:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return predicate()


def ms(values, q) -> float:
    return round(percentile(values, q) * 1000, 2) if values else float("nan")


# --- the servers -----------------------------------------------------------------------------
RAISED = {"SPECULATION_ALLOW_SEED": "1", "SPECULATION_STREAMS_PER_TOKEN": "1000000",
          "SPECULATION_STREAMS_PER_ADDRESS": "1000000"}   # the caps, raised


def children_of(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(p) for p in handle.read().split()]
    except OSError:
        return []


def process_tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children_of(p)
    return out


def cpu_of(pids) -> float:
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])   # utime, stime
        except (OSError, ValueError, IndexError):
            pass
    return ticks / os.sysconf("SC_CLK_TCK")


def api_rss_kb(server) -> int:
    """RSS of the API's worker processes (gunicorn's children)."""
    return sum(rss_kb(pid) for pid in children_of(server.proc.pid))


@contextlib.contextmanager
def environ(values: dict, drop=()):
    saved = dict(os.environ)
    try:
        for name in drop:
            os.environ.pop(name, None)
        os.environ.update(values)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


class StackSide:
    """The stack as `make serve` starts it (service/stack.build_stack, its children started as
    the supervisor starts them), on free ports and a temporary data folder, the caps raised.
    With `redis_url` it joins that Redis instead of starting its own; `workers` worker
    processes (the stack's own setting, WORKERS, by default)."""

    def __init__(self, data_dir: str, *, workers: int, redis_url: str | None = None):
        from service.stack import build_stack

        self.port = free_port()
        processes = os.environ.get("BENCH_STACK_API_PROCESSES")   # a diagnosis: the stack's is one per core
        with environ({**RAISED, **({"GUNICORN_WORKERS": processes} if processes else {})},
                     drop=("GUNICORN_WORKERS", "GUNICORN_CMD_ARGS", "GUNICORN_BIND", "REDIS_URL", "RQ_REDIS_URL", "PROMETHEUS_MULTIPROC_DIR")):
            stack, _ = build_stack(host="127.0.0.1", port=self.port, data_dir=data_dir, redis_url=redis_url,
                                   redis_port=free_port(), workers=workers, say=lambda line: None)
        self.children = stack.children
        fsync = os.environ.get("BENCH_STACK_APPENDFSYNC")   # a diagnosis only: the stack's is "always"
        for child in self.children:
            if child.name == "redis" and fsync:
                child.argv[child.argv.index("--appendfsync") + 1] = fsync
        self.redis_url = self.children[-1].env["REDIS_URL"]
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in stop)
        try:
            for child in self.children:
                child.log = self.log
                child.start()
            self.proc = next(c for c in self.children if c.name == "api").proc
            deadline = time.time() + 60
            while True:
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                    break
                except OSError:
                    if time.time() > deadline or self.proc.poll() is not None:
                        raise RuntimeError(f"the stack's API did not start: {self.log_tail()}")
                    time.sleep(0.1)
            # every API process up (gunicorn forks them after it listens)
            want = int(processes or os.cpu_count())
            while len(children_of(self.proc.pid)) < want and time.time() < deadline:
                time.sleep(0.1)
        except BaseException:
            self.stop()
            raise

    def log_tail(self, size: int = 2000) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-size:]

    def api_processes(self) -> list[int]:
        return children_of(self.proc.pid)

    def cpu_seconds(self) -> float:
        return cpu_of(process_tree(self.proc.pid))

    def cpu_by_role(self) -> dict:
        """CPU seconds so far of each process of the stack: each API process, the gunicorn
        master, the worker(s) with their work horses, Redis."""
        out = {"api master": cpu_of([self.proc.pid])}
        for n, pid in enumerate(self.api_processes()):
            out[f"api {n + 1}"] = cpu_of([pid])
        for child in self.children:
            if child.name != "api" and child.proc is not None:
                out[child.name] = cpu_of(process_tree(child.proc.pid))
        return out

    def connections(self) -> list[int]:
        """Open sockets of each API process (its waiters, mostly)."""
        counts = []
        for pid in self.api_processes():
            try:
                counts.append(sum(1 for fd in os.listdir(f"/proc/{pid}/fd")
                                  if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")))
            except OSError:
                counts.append(-1)
        return counts

    def stop(self) -> None:
        for child in reversed(self.children):
            child.stop()
        self.log.close()


# --- the run --------------------------------------------------------------------------------
def modes() -> list[str]:
    """BENCH_WAITING_MODES: "one" (one API process, the default), "stack", or both."""
    got = [m.strip() for m in os.environ.get("BENCH_WAITING_MODES", "one").split(",") if m.strip()]
    unknown = set(got) - {"one", "stack"}
    if unknown:
        raise ValueError(f"BENCH_WAITING_MODES: unknown mode(s) {sorted(unknown)} (one, stack)")
    return got


def run(env: Env, scale: Scale) -> list[Row]:
    rows = []
    for mode in modes():
        rows += run_stack(env, scale) if mode == "stack" else run_one(env, scale)
    return rows


def prepare(client, shape: Shape) -> dict:
    """The watched games (4 seats claimed: tokens for the long-polls), then the played ones."""
    setup = service_on(RedisEventStore(client))
    watched = [open_game(setup, GAME, 4, f"{n + 90_000:064x}") for n in range(shape.games)]
    versions = {gid: setup.load(gid).version for gid, _ in watched}
    candidates = [f"{n + 80_000:064x}" for n in range(6 + len(shape.fanouts))]
    with mp.get_context("fork").Pool(2) as pool:
        plans = dict(pool.map(_plan, candidates))
    # the longest games for the baseline, loaded and quiet sides (game lengths vary with the seed)
    seeds = sorted(candidates, key=lambda seed: -len(plans[seed]))[:3 + len(shape.fanouts)]
    shortest = min(len(plans[seed]) for seed in seeds[:3])
    if shortest < max(2 * shape.baseline_actions, shape.loaded_actions) + 2:
        raise RuntimeError(f"the planned games are too short ({shortest} actions) for this shape")
    played = []
    for seed in seeds:
        gid, tokens = open_game(setup, GAME, 4, seed)
        played.append((gid, tokens, plans[seed]))
    baseline_game, loaded_game, quiet_game = (p[0] for p in played[:3])
    return {"watched": watched, "versions": versions, "played": played, "baseline_game": baseline_game,
            "loaded_game": loaded_game, "quiet_game": quiet_game, "fan_games": [p[0] for p in played[3:]]}


def run_one(env: Env, scale: Scale) -> list[Row]:
    shape = shape_for(scale)
    needed = shape.streams + shape.long_polls + shape.followers + max(shape.fanouts) + 500
    nofile = raise_nofile(2 * needed + 1024)
    client = env.fresh_client()
    url = env.redis().url
    games = prepare(client, shape)
    settings = {"GUNICORN_WORKERS": "1", "REDIS_URL": url, "RQ_REDIS_URL": url, **RAISED,
                "GUNICORN_WORKER_CLASS": "gevent"}
    server = Gunicorn("service.app:create_app()", settings)
    quiet = Gunicorn("service.app:create_app()", settings)   # the same, with nobody waiting on it
    try:
        result = asyncio.run(asyncio.wait_for(_measure(server, quiet, client, shape, **games), timeout=900))
    finally:
        server.stop()
        quiet.stop()
        client.close()
    return _rows(result, shape, nofile, {"api_processes": 1})


def run_stack(env: Env, scale: Scale) -> list[Row]:
    import redis

    from service.config import from_env

    shape = shape_for(scale)
    needed = shape.streams + shape.long_polls + shape.followers + max(shape.fanouts) + 500
    nofile = raise_nofile(2 * needed + 1024)
    workers = from_env()["WORKERS"]
    with tempfile.TemporaryDirectory() as loaded_dir, tempfile.TemporaryDirectory() as quiet_dir:
        server = StackSide(loaded_dir, workers=workers)
        quiet = client = None
        try:
            # the quiet side: the same API configuration on the same Redis and worker(s)
            quiet = StackSide(quiet_dir, workers=0, redis_url=server.redis_url)
            client = redis.Redis.from_url(server.redis_url)
            games = prepare(client, shape)
            result = asyncio.run(asyncio.wait_for(_measure(server, quiet, client, shape, **games), timeout=900))
        finally:
            server.stop()
            if quiet:
                quiet.stop()
            if client:
                client.close()
    return _rows(result, shape, nofile, {"api_processes": len(result["connections"]) or os.cpu_count(),
                                         "mode": "stack", "stack_workers": workers})


def roles(server, quiet) -> dict:
    """CPU seconds so far per process (stack mode only): the stack's, the quiet API's, ours."""
    if not hasattr(server, "cpu_by_role"):
        return {}
    return {**server.cpu_by_role(), "quiet api": quiet.cpu_seconds(), "load generator": time.process_time()}


def shares(before: dict, after: dict, seconds: float) -> dict:
    """Each process's share of one core over `seconds`."""
    return {name: round((after[name] - before.get(name, 0.0)) / seconds, 3) for name in after}


async def _measure(server, quiet, client, shape, watched, versions, played, baseline_game, loaded_game,
                   quiet_game, fan_games):
    load = Load(server.port)
    player = Player(server.port, played)
    quiet_player = Player(quiet.port, played)
    worker_pid(server)   # the API's worker process(es) forked
    out = {}
    # warm-up: imports, connections, the played games' caches
    for gid in (baseline_game, loaded_game, *fan_games):
        await player.act(gid)
    await quiet_player.act(quiet_game)
    half = shape.baseline_actions
    base1 = await player.play(baseline_game, half)
    await asyncio.sleep(1)
    rss_before = api_rss_kb(server)
    # the waiters: streams over the watched games, long-polls, followers of the played game
    specs = [(watched[n % len(watched)][0], "text/event-stream" if n % 2 else "application/x-ndjson")
             for n in range(shape.streams)]
    t0 = time.perf_counter()
    streams = await load.open_many(specs)
    stop = asyncio.Event()
    sent = []
    polls = [asyncio.ensure_future(load.long_poll(gid, tokens[0], versions[gid], stop, sent))
             for gid, tokens in watched[:shape.long_polls]]
    at = player.version[loaded_game]   # the followers' backlog: the game's events so far
    followers = await load.open_many([(loaded_game, "text/event-stream", True)] * shape.followers)
    await wait_until(lambda: len(sent) >= shape.long_polls, 30)
    out["open_seconds"] = time.perf_counter() - t0
    await asyncio.sleep(2 if shape.streams > 100 else 0.5)   # subscriptions settled, head reads done
    waiters = len(streams) + len(followers) + len(sent)
    out["rss_delta_kb"] = api_rss_kb(server) - rss_before
    out["waiters"] = waiters
    out["connections"] = server.connections() if hasattr(server, "connections") else []
    # idle: every waiter open, nothing happening
    before, cpu0, roles0 = commands(client), server.cpu_seconds(), roles(server, quiet)
    idle_t0 = time.perf_counter()
    await asyncio.sleep(shape.idle_seconds)
    idle_wall = time.perf_counter() - idle_t0
    out["idle_cpu_by_process"] = shares(roles0, roles(server, quiet), idle_wall)
    out["idle_commands_per_s"] = max(0, commands(client) - before - 1) / idle_wall
    out["idle_cpu_share"] = (server.cpu_seconds() - cpu0) / idle_wall
    # the loaded phase: the game played has followers; everything else stays open. Its rounds
    # alternate with rounds on the quiet server (the same config, nobody waiting), so a burst
    # of load from elsewhere on the machine hits both sides (common.alternate's reasoning).
    await wait_until(lambda: all(f.highest() >= at for f in followers), 20)
    loaded, quiet_rounds, cpu = [], [], {"loaded": 0.0, "quiet": 0.0}
    size = max(1, shape.loaded_actions // 10)

    async def round_on(side):
        srv, who, gid, into = ((server, player, loaded_game, loaded) if side == "loaded"
                               else (quiet, quiet_player, quiet_game, quiet_rounds))
        c0 = srv.cpu_seconds()
        into += await who.play(gid, size)
        cpu[side] += srv.cpu_seconds() - c0

    roles0, loaded_t0 = roles(server, quiet), time.perf_counter()
    for n in range(10):
        for side in (("quiet", "loaded") if n % 2 == 0 else ("loaded", "quiet")):
            await round_on(side)
    out["rounds_cpu_by_process"] = shares(roles0, roles(server, quiet), time.perf_counter() - loaded_t0)
    await wait_until(lambda: all(f.highest() >= loaded[-1][2] for f in followers), 10)
    out["loaded"] = [x[1] for x in loaded]
    out["quiet"] = [x[1] for x in quiet_rounds]
    out["rounds_p99_ms"] = {"loaded": [ms([x[1] for x in loaded[i:i + size]], 99) for i in range(0, len(loaded), size)],
                            "quiet": [ms([x[1] for x in quiet_rounds[i:i + size]], 99)
                                      for i in range(0, len(quiet_rounds), size)]}
    out["cpu_ms_per_action"] = {side: round(cpu[side] / size / 10 * 1000, 3) for side in cpu}
    out["delivery"] = deliveries(loaded, followers)
    out["delivery_expected"] = len(loaded) * len(followers)
    # fan-out to 1, 100, 1,000 watchers of one game, on top of the load
    out["fanout"] = {}
    for size, gid in zip(shape.fanouts, fan_games):
        watchers = await load.open_many([(gid, "text/event-stream", True)] * size)
        target = player.version[gid]   # the backlog each watcher reads first
        await wait_until(lambda: all(w.highest() >= target for w in watchers), 30)
        await asyncio.sleep(0.5)
        got = []
        for _ in range(shape.appends):
            action = await player.play(gid, 1, gap=0)
            await wait_until(lambda: all(w.highest() >= action[0][2] for w in watchers), 10)
            got += deliveries(action, watchers)
            await asyncio.sleep(0.3)
        out["fanout"][size] = (got, shape.appends * size, len(watchers))
        for w in watchers:
            w.close()
    # close the load; the baseline again, with nobody waiting
    stop.set()
    for s in streams + followers:
        s.close()
    await asyncio.gather(*polls, return_exceptions=True)
    await asyncio.sleep(1)
    base2 = await player.play(baseline_game, half)
    out["baseline"] = [x[1] for x in base1 + base2]
    out["baseline_halves_p99_ms"] = [ms([x[1] for x in base1], 99), ms([x[1] for x in base2], 99)]
    out["errors"] = load.errors
    out["streams_open"] = len(streams)
    out["long_polls_open"] = min(len(sent), shape.long_polls)
    player.close()
    quiet_player.close()
    return out


def _rows(r: dict, shape: Shape, nofile: int, mode: dict) -> list[Row]:
    base_p99, load_p99 = percentile(r["quiet"], 99), percentile(r["loaded"], 99)
    ratio = load_p99 / base_p99
    stack = mode.get("mode") == "stack"
    where = "`make serve` stack: " if stack else ""
    load_desc = (f"{r['streams_open']} streams over {shape.games} games + {r['long_polls_open']} long-polls"
                 f" + {shape.followers} followers")
    common = {**mode, "worker": "gevent", "rlimit_nofile": nofile, "errors": r["errors"],
              "open_seconds": round(r["open_seconds"], 1)}
    if stack:
        base = percentile(r["baseline"], 99)
        common.update(sockets_per_api_process=r["connections"],
                      ratio_to_same_stack_before_after=round(load_p99 / base, 3),
                      before_after_p99_ms=r["baseline_halves_p99_ms"], rounds_p99_ms=r["rounds_p99_ms"],
                      idle_cpu_by_process=r["idle_cpu_by_process"],
                      rounds_cpu_by_process=r["rounds_cpu_by_process"])
    rows = [Row("8 waiting", f"{where}action p99 with {load_desc}", round(load_p99 * 1000, 2), "ms",
                round(base_p99 * 1000, 2), "ms p99, nobody waiting (alternating rounds)", round(ratio, 3),
                f"<= {GOALS['action_ratio']} x nobody waiting", ratio <= GOALS["action_ratio"],
                {**common, "loaded_p50_ms": ms(r["loaded"], 50), "quiet_p50_ms": ms(r["quiet"], 50),
                 "loaded_p95_ms": ms(r["loaded"], 95), "quiet_p95_ms": ms(r["quiet"], 95),
                 "loaded_worst_ms": [round(x * 1000, 2) for x in sorted(r["loaded"])[-5:]],
                 "quiet_worst_ms": [round(x * 1000, 2) for x in sorted(r["quiet"])[-5:]],
                 "loaded_actions": len(r["loaded"]), "quiet_actions": len(r["quiet"]),
                 "same_process_before_after_p50_ms": ms(r["baseline"], 50),
                 "same_process_before_after_p99_ms": ms(r["baseline"], 99),
                 "server_cpu_ms_per_action": r["cpu_ms_per_action"],
                 "idle_server_cpu_share": round(r["idle_cpu_share"], 4)})]
    d = r["delivery"]
    d99 = percentile(d, 99) * 1000
    rows.append(Row("8 waiting", f"{where}append to delivery, {shape.followers} followers of the game played",
                    round(d99, 2), "ms p99", goal=f"p99 <= {GOALS['delivery_p99_ms']:.0f} ms",
                    met=d99 <= GOALS["delivery_p99_ms"] and len(d) == r["delivery_expected"],
                    extra={"p50_ms": ms(d, 50), "max_ms": ms(d, 100), "delivered": len(d),
                           "expected": r["delivery_expected"]}))
    for size, (got, expected, opened) in r["fanout"].items():
        p99 = percentile(got, 99) * 1000
        goal = size == max(shape.fanouts)
        rows.append(Row("8 waiting", f"{where}fan-out to {size} watchers of one game (under the load)", round(p99, 2),
                        "ms p99", goal=f"p99 <= {GOALS['fanout_p99_ms']:.0f} ms" if goal else "",
                        met=(p99 <= GOALS["fanout_p99_ms"] and len(got) == expected) if goal else None,
                        extra={"p50_ms": ms(got, 50), "max_ms": ms(got, 100), "delivered": len(got),
                               "expected": expected, "watchers_open": opened}))
    idle = r["idle_commands_per_s"]
    # in the stack, the worker's own periodic passes (reconciler, sweep, heartbeats) count too
    rows.append(Row("8 waiting", f"{where}Redis commands/s, {r['waiters']} waiters idle"
                    + (" (the worker's passes included)" if stack else ""), round(idle, 3) or 1e-9,
                    "commands/s", goal="" if stack else f"<= {GOALS['idle_commands']:.0f}/s",
                    met=None if stack else idle <= GOALS["idle_commands"], extra={"seconds": shape.idle_seconds}))
    per = r["rss_delta_kb"] * 1024 / max(1, r["waiters"])
    rows.append(Row("8 waiting", f"{where}API memory per waiter ({r['waiters']} waiters)", round(max(per, 1.0)), "bytes",
                    extra={"rss_delta_kb": r["rss_delta_kb"]}))
    return rows
