"""Benchmark 10: an account's stream shows its turn within 1 s of the move that made it
(p99), with 5,000 other account streams parked on the same API process.

On the production configuration (gunicorn with ops/gunicorn.conf.py: gevent worker, one API
process) and a private redis-server, in one run:

- PARKED accounts, each with a personal token (made straight through the core that
  service.bootstrap builds on the same Redis: Argon2id made cheap for the set-up,
  ARGON2_TIME_COST=1, ARGON2_MEMORY_KIB=1024), each holding one NDJSON stream
  (`GET /v1/account/events`, `Accept: application/x-ndjson`, its own token) parked on the
  loaded API process, spread over several 127.0.0.x source addresses;
- two more accounts, A and B, play 2-player big-shot games (seats claimed with their account
  tokens, planned legal moves, each move sent with the mover's account token on one
  keep-alive connection); after each move the benchmark waits for the `turn` notice of that
  move (the notice whose `version` is the move's receipt's) on the stream of the account to
  act next — B's after A handed over the turn, A's own when A moves again (big-shot: four
  cubes placed one by one) — and times it from the moment the move was *sent* to the moment
  the notice's line was read (so it includes the move's own processing and the notice's
  append);
- the baseline, in the same run: accounts C and D doing the same on a second, identical API
  process (same Redis, same settings) with no other stream parked on it, in alternating
  rounds (ABBA: a burst of load from elsewhere hits both sides), and the loaded process's
  own figure before the PARKED streams were opened.

The figure is the loaded side's p99 against the goal (1 s); the ratio to the quiet side is
reported as the other benchmarks report theirs. The stream caps, the stream's longest life
and the sign-up/sign-in limits are raised for the run.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import signal
import time
from dataclasses import dataclass, field

from projections import big_shot

from .common import Env, Row, Scale, percentile
from .games import plan
from .http import Gunicorn
from .waiting import RAISED, Player, api_rss_kb, commands, ms, raise_nofile, read_head, worker_pid

GAME = big_shot.NAME
SOURCES = [f"127.0.0.{n}" for n in range(2, 10)]
GOAL_P99_MS = 1000.0
PASSWORD = "parked stream password"
CHEAP = {"SPECULATION_ARGON2_TIME_COST": "1", "SPECULATION_ARGON2_MEMORY_KIB": "1024"}
SETTINGS = {**RAISED, **CHEAP, "SPECULATION_SIGNUP_LIMIT": "1000000/60", "SPECULATION_SIGNIN_LIMIT": "1000000/60",
            "SPECULATION_CREATE_LIMIT": "100000/60", "SPECULATION_STREAM_MAX_SECONDS": "7200",
            "SPECULATION_LOG_LEVEL": "WARNING", "GUNICORN_WORKERS": "1", "GUNICORN_WORKER_CLASS": "gevent"}


@dataclass(frozen=True)
class Shape:
    parked: int        # other accounts' streams parked on the loaded process
    rounds: int        # alternating rounds per side
    moves: int         # moves per round
    before: int        # moves on the loaded process before the streams are parked
    gap: float         # seconds between a move's notice and the next move
    idle: float        # seconds the parked streams are watched idle (API CPU, Redis commands)


# the full shape's rounds and idle phase span keep-alive periods (15 s) of the parked streams
FULL = Shape(5000, 10, 24, 40, 0.1, 20.0)
QUICK = Shape(5000, 6, 20, 20, 0.05, 10.0)
SMOKE = Shape(300, 4, 10, 10, 0.01, 0.5)


def shape_for(scale: Scale) -> Shape:
    return SMOKE if scale.smoke else QUICK if scale.name == "quick" else FULL


# --- the set-up, through the core on the same Redis ------------------------------------------
def core_on(url: str):
    from service import bootstrap

    config = bootstrap.settings({"REDIS_URL": url, "RQ_REDIS_URL": url, "ARGON2_TIME_COST": 1,
                                 "ARGON2_MEMORY_KIB": 1024})
    return bootstrap.build_core(config, bootstrap.build_backend(config))


def make_accounts(args) -> list[tuple[str, str]]:
    """(account id, personal token with play and read) of `count` new accounts `prefix`NNNNN."""
    url, prefix, start, count = args
    core = core_on(url)
    out = []
    for n in range(start, start + count):
        account, _ = core.accounts.sign_up(f"{prefix}{n:05d}", PASSWORD)
        token, _ = core.accounts._grant(account, "personal", "bench", ("play", "read"), None)
        out.append((account.id, token))
    core.accounts.hashing.close()
    return out


def accounts(url: str, prefix: str, count: int, processes: int = 2) -> list[tuple[str, str]]:
    if count < 200:
        return make_accounts((url, prefix, 0, count))
    share = -(-count // processes)
    parts = [(url, prefix, i * share, min(share, count - i * share)) for i in range(processes)]
    with mp.get_context("fork").Pool(processes) as pool:
        return [a for part in pool.map(make_accounts, parts) for a in part]


def _plan(seed: str):
    return seed, plan(GAME, 2, seed)


def planned_games(needed: int) -> list[tuple[str, list]]:
    """(seed, moves) of enough 2-player big-shot games for `needed` moves (a few to spare)."""
    out, total, n = [], 0, 0
    with mp.get_context("fork").Pool(2) as pool:
        while total < needed + 20:
            seeds = [f"{n + k + 60_000:064x}" for k in range(4)]
            n += 4
            for seed, moves in pool.map(_plan, seeds):
                out.append((seed, moves))
                total += len(moves)
    return out


# --- the client side -------------------------------------------------------------------------
def request_bytes(method: str, path: str, token: str | None = None, body: dict | None = None,
                  accept: str | None = None) -> bytes:
    data = json.dumps(body).encode() if body is not None else b""
    head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\n"
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    if accept:
        head += f"Accept: {accept}\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    return (head + "\r\n").encode() + data


async def call(port: int, method: str, path: str, token: str | None = None, body: dict | None = None):
    """One request on a fresh connection: (status, JSON answer)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request_bytes(method, path, token, body))
        status_line = await asyncio.wait_for(reader.readline(), 30)
        status = int(status_line.split()[1])
        length = 0
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b""):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        payload = await reader.readexactly(length) if length else b""
        return status, (json.loads(payload) if payload else None)
    finally:
        writer.close()


async def read_chunk(reader) -> bytes | None:
    """One HTTP/1.1 chunk's data (None at the end of the body)."""
    size_line = await reader.readline()
    if not size_line:
        return None
    size = int(size_line.split(b";")[0].strip() or b"0", 16)
    if size == 0:
        return None
    data = await reader.readexactly(size)
    await reader.readexactly(2)
    return data


@dataclass
class NoticeStream:
    """An account's NDJSON stream, recording when each `turn` notice was read."""

    reader: object
    writer: object
    turns: dict = field(default_factory=dict)   # (game_id, version) -> when read
    keepalives: int = 0
    closed_at: float | None = None
    task: object = None

    async def pump(self) -> None:
        buffer = b""
        try:
            while True:
                data = await read_chunk(self.reader)
                if data is None:
                    break
                now = time.perf_counter()
                buffer += data
                lines = buffer.split(b"\n")
                buffer = lines.pop()
                for line in lines:
                    if not line.strip():
                        continue
                    message = json.loads(line)
                    if message.get("keepalive"):
                        self.keepalives += 1
                    elif message.get("type") == "turn":
                        self.turns.setdefault((message["game_id"], message["version"]), now)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        self.closed_at = time.perf_counter()

    def close(self) -> None:
        if self.task:
            self.task.cancel()
        self.writer.close()


class Streams:
    """Opens account streams, spread over the source addresses."""

    def __init__(self, port: int):
        self.port = port
        self._source = 0
        self.errors = 0
        self.read = 0          # bytes the parked streams received (their keep-alives)

    async def open(self, token: str, after: int = 0, record: bool = False):
        self._source += 1
        reader, writer = await asyncio.wait_for(asyncio.open_connection(
            "127.0.0.1", self.port, local_addr=(SOURCES[self._source % len(SOURCES)], 0)), 10)
        writer.write(request_bytes("GET", f"/v1/account/events?after={after}", token, accept="application/x-ndjson"))
        status = await asyncio.wait_for(read_head(reader), 20)
        if status != 200:
            writer.close()
            raise RuntimeError(f"an account stream answered {status}")
        stream = NoticeStream(reader, writer)
        stream.task = asyncio.ensure_future(stream.pump() if record else self._drain(reader))
        return stream

    async def _drain(self, reader) -> None:
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    return
                self.read += len(data)
        except (ConnectionError, asyncio.CancelledError):
            pass

    async def open_many(self, tokens, batch: int = 250) -> list:
        out = []
        for i in range(0, len(tokens), batch):
            got = await asyncio.gather(*(self.open(t) for t in tokens[i:i + batch]), return_exceptions=True)
            for item in got:
                if isinstance(item, Exception):
                    self.errors += 1
                else:
                    out.append(item)
        return out


class Side:
    """Two accounts playing planned games on one API process, one keep-alive connection for
    the moves, and each account's stream open on the same process."""

    def __init__(self, name: str, port: int, players: list[tuple[str, str]], games: list):
        self.name, self.port = name, port
        self.players = players            # [(account id, token)] by seat
        self.games = games                # [(game_id, moves)]
        self.player = Player(port, [(gid, [t for _, t in players], moves) for gid, moves in games])
        self.streams: list[NoticeStream] = []
        self.current = 0

    async def open_streams(self, heads: list[int]) -> None:
        opener = Streams(self.port)
        self.streams = [await opener.open(token, after, record=True) for (_, token), after in zip(self.players, heads)]

    def left(self) -> int:
        return sum(len(moves) - self.player.pos[gid] for gid, moves in self.games[self.current:])

    async def move(self) -> dict:
        """One move, and the wait for the turn notice it makes: {"action": s, "notice": s or
        None (the game's last move), "handed": whether another account is to act}."""
        gid, moves = self.games[self.current]
        n = self.player.pos[gid]
        mover = moves[n][0]
        start, elapsed, receipt = await self.player.act(gid)
        out = {"action": elapsed, "notice": None, "handed": False, "missed": False}
        if n + 1 >= len(moves):   # the game's last move: no turn for anyone
            self.current += 1
            return out
        to_act = moves[n + 1][0]
        out["handed"] = to_act != mover
        stream = self.streams[to_act]
        key = (gid, receipt["version"])
        deadline = time.perf_counter() + 10
        while key not in stream.turns and time.perf_counter() < deadline and stream.closed_at is None:
            await asyncio.sleep(0.0005)
        if key in stream.turns:
            out["notice"] = stream.turns[key] - start
        else:
            out["missed"] = True
        return out

    async def play(self, count: int, gap: float = 0.01) -> list[dict]:
        out = []
        for _ in range(count):
            out.append(await self.move())
            await asyncio.sleep(gap)
        return out

    def close(self) -> None:
        self.player.close()
        for s in self.streams:
            s.close()


async def open_games(port: int, players: list[tuple[str, str]], planned: list) -> list:
    """Create each planned game over HTTP (its seed) and claim its two seats with the
    accounts' tokens: [(game_id, moves)]."""
    out = []
    for seed, moves in planned:
        status, made = await call(port, "POST", "/v1/games", body={"type": GAME, "seats": [{}, {}], "seed": seed})
        if status != 201:
            raise RuntimeError(f"create answered {status}: {made}")
        for seat, (_, token) in enumerate(players):
            status, claimed = await call(port, "POST", f"/v1/games/{made['game_id']}/seats/{seat}", token, {})
            if status not in (200, 201):
                raise RuntimeError(f"claim answered {status}: {claimed}")
        out.append((made["game_id"], moves))
    return out


# --- the run ---------------------------------------------------------------------------------
def run(env: Env, scale: Scale) -> list[Row]:
    shape = shape_for(scale)
    nofile = raise_nofile(2 * shape.parked + 2048)
    client = env.fresh_client()
    url = env.redis().url
    t0 = time.perf_counter()
    parked = accounts(url, "parked", shape.parked)
    players = accounts(url, "player", 4)
    accounts_s = time.perf_counter() - t0
    per_side = shape.rounds * shape.moves + 4
    loaded_plan = planned_games(per_side + shape.before)
    quiet_plan = planned_games(per_side)
    settings = {"REDIS_URL": url, "RQ_REDIS_URL": url, **SETTINGS}
    server = Gunicorn("service.app:create_app()", settings)
    quiet = Gunicorn("service.app:create_app()", settings)
    try:
        result = asyncio.run(asyncio.wait_for(
            _measure(server, quiet, client, shape, parked, players, loaded_plan, quiet_plan), timeout=1800))
    finally:
        for api in (server, quiet):
            if api.proc.poll() is None:
                api.proc.send_signal(signal.SIGQUIT)   # a quick shutdown: its streams need no grace
            api.stop()
        client.close()
    result["accounts_s"] = accounts_s
    return _rows(result, shape, nofile)


async def _measure(server, quiet, client, shape, parked, players, loaded_plan, quiet_plan) -> dict:
    from events.store import RedisEventStore

    store = RedisEventStore(client)
    worker_pid(server)
    worker_pid(quiet)
    loaded = Side("loaded", server.port, players[:2], await open_games(server.port, players[:2], loaded_plan))
    calm = Side("quiet", quiet.port, players[2:], await open_games(quiet.port, players[2:], quiet_plan))
    for side, accounts_ in ((loaded, players[:2]), (calm, players[2:])):
        await side.open_streams([store.head(f"account/{a}")[0] for a, _ in accounts_])
    out = {}
    # warm-up: imports, connections, caches, each side's subscriptions
    await loaded.play(2)
    await calm.play(2)
    out["before"] = await loaded.play(shape.before)   # the loaded process, nothing parked yet
    await asyncio.sleep(1)
    rss_before = api_rss_kb(server)
    opener = Streams(server.port)
    t0 = time.perf_counter()
    others = await opener.open_many([token for _, token in parked])
    out["open_s"] = time.perf_counter() - t0
    out["parked_open"] = len(others)
    out["errors"] = opener.errors
    await asyncio.sleep(2 if shape.parked > 1000 else 0.5)   # subscriptions settled
    out["rss_delta_kb"] = api_rss_kb(server) - rss_before
    # idle: every stream parked, nothing happening but their keep-alives
    before, cpu0, t0 = commands(client), server.cpu_seconds(), time.perf_counter()
    await asyncio.sleep(shape.idle)
    idle_s = time.perf_counter() - t0
    out["idle_cpu_share"] = (server.cpu_seconds() - cpu0) / idle_s
    out["idle_commands_per_s"] = max(0, commands(client) - before - 1) / idle_s
    results = {"loaded": [], "quiet": []}
    cpu = {"loaded": 0.0, "quiet": 0.0}
    read0, t0 = opener.read, time.perf_counter()
    for n in range(shape.rounds):
        for name in (("quiet", "loaded") if n % 2 == 0 else ("loaded", "quiet")):
            side, srv = (loaded, server) if name == "loaded" else (calm, quiet)
            c0 = srv.cpu_seconds()
            results[name] += await side.play(shape.moves, shape.gap)
            cpu[name] += srv.cpu_seconds() - c0
    out["rounds_s"] = time.perf_counter() - t0
    out["parked_bytes_per_s"] = (opener.read - read0) / out["rounds_s"]
    out.update(results)
    out["cpu_ms_per_move"] = {k: round(v / max(1, len(results[k])) * 1000, 3) for k, v in cpu.items()}
    out["still_open"] = sum(1 for s in others if s.task is not None and not s.task.done())
    out["player_streams_closed"] = sum(1 for s in loaded.streams + calm.streams if s.closed_at is not None)
    for s in others:
        s.close()
    loaded.close()
    calm.close()
    return out


def _notices(moves: list[dict], handed_only: bool = False) -> list[float]:
    return [m["notice"] for m in moves if m["notice"] is not None and (m["handed"] or not handed_only)]


def _rows(r: dict, shape: Shape, nofile: int) -> list[Row]:
    loaded, quiet, before = _notices(r["loaded"]), _notices(r["quiet"]), _notices(r["before"])
    p99, base = percentile(loaded, 99) * 1000, percentile(quiet, 99) * 1000
    missed = sum(m["missed"] for m in r["loaded"] + r["quiet"] + r["before"])
    handed_l, handed_q = _notices(r["loaded"], True), _notices(r["quiet"], True)
    extra = {"worker": "gevent", "api_processes": 1, "game": GAME, "parked_open": r["parked_open"],
             "errors": r["errors"], "missed": missed, "notices": len(loaded), "quiet_notices": len(quiet),
             "loaded_p50_ms": ms(loaded, 50), "quiet_p50_ms": ms(quiet, 50),
             "loaded_max_ms": ms(loaded, 100), "quiet_max_ms": ms(quiet, 100),
             "to_the_other_account": {"notices": len(handed_l), "loaded_p50_ms": ms(handed_l, 50),
                                      "loaded_p99_ms": ms(handed_l, 99), "quiet_p99_ms": ms(handed_q, 99)},
             "same_process_before_parking_p50_ms": ms(before, 50),
             "same_process_before_parking_p99_ms": ms(before, 99),
             "move_p50_ms": {"loaded": ms([m["action"] for m in r["loaded"]], 50),
                             "quiet": ms([m["action"] for m in r["quiet"]], 50)},
             "move_p99_ms": {"loaded": ms([m["action"] for m in r["loaded"]], 99),
                             "quiet": ms([m["action"] for m in r["quiet"]], 99)},
             "server_cpu_ms_per_move": r["cpu_ms_per_move"],
             "parked_still_open": r["still_open"], "player_streams_closed": r["player_streams_closed"],
             "open_seconds": round(r["open_s"], 1), "accounts_seconds": round(r["accounts_s"], 1),
             "rounds_seconds": round(r["rounds_s"], 1),
             "idle_api_cpu_share": round(r["idle_cpu_share"], 4),
             "idle_redis_commands_per_s": round(r["idle_commands_per_s"], 2),
             "parked_keepalive_bytes_per_s": round(r["parked_bytes_per_s"]),
             "api_bytes_per_parked_stream": round(r["rss_delta_kb"] * 1024 / max(1, r["parked_open"])),
             "rlimit_nofile": nofile}
    met = p99 < GOAL_P99_MS and missed == 0 and r["errors"] == 0 and r["parked_open"] == shape.parked
    return [Row("10 accounts", f"move to its turn notice on the account stream, {r['parked_open']} other "
                f"account streams parked", round(p99, 2), "ms p99", round(base, 2),
                "ms p99, nobody parked (alternating rounds)", round(p99 / base, 3) if base else None,
                f"p99 < {GOAL_P99_MS:.0f} ms", met, extra)]
