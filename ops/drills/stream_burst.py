"""Stream-burst drill: thousands of event streams opening at once, each client within its
caps, and a new client's plain request sent into the middle of the burst.

The API runs as shipped (gunicorn with ops/gunicorn.conf.py: gevent workers, one per core) on
a private redis-server, with the stream caps as shipped. STREAMS SSE streams open at once from
ADDRESSES loopback addresses (127.0.0.2, ...), each address within STREAMS_PER_ADDRESS per
API process, spread over GAMES games played a while (so each stream has history to send).
While they open, a probe from 127.0.0.1 asks for one game's summary every 50 ms on a fresh
connection, as a new client would; the drill reports the probe's slowest answer and how many
streams opened. It holds when every probe is answered within MAX_PROBE_S.

    python -m ops.drills.stream_burst --size 4000      # streams (the issue's burst: 4,000 from 16)
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import random
import signal
import time

from ops.bench.games import open_game, play, service_on
from ops.bench.http import Gunicorn
from ops.bench.waiting import raise_nofile, read_head
from events.store import RedisEventStore
from projections import speculation

from . import _kit

ADDRESSES = 16
GAMES = 20
HISTORY = 400       # versions each game has when the burst comes: every stream is sent them first
MAX_PROBE_S = 1.0
PROBE_EVERY_S = 0.05


async def _open_stream(port: int, source: str, game_id: str, opened: list, failed: list, held: list) -> None:
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0)), 30)
        writer.write(f"GET /v1/games/{game_id}/events?after=0 HTTP/1.1\r\nHost: drill\r\n"
                     f"Accept: text/event-stream\r\n\r\n".encode())
        status = await asyncio.wait_for(read_head(reader), 30)
    except (OSError, ConnectionError, asyncio.TimeoutError):
        failed.append("no answer")
        return
    if status != 200:
        failed.append(status)
        writer.close()
        return
    opened.append(time.perf_counter())
    held.append(writer)
    try:
        while await reader.read(65536):
            pass
    except (ConnectionError, asyncio.CancelledError):
        pass


def _probe(port: int, game_id: str, stop, out) -> None:
    """A new client, in a process of its own (the burst's client side is busy reading thousands
    of streams: a probe sharing its event loop would time that loop, not the server): GET the
    game's summary on a fresh connection every PROBE_EVERY_S until `stop`; the latencies to `out`."""
    import http.client

    latencies = []
    while not stop.is_set():
        started = time.perf_counter()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", f"/v1/games/{game_id}")
            status = conn.getresponse().status
            conn.close()
            latencies.append((started, time.perf_counter() - started if status == 200 else float("inf")))
        except OSError:
            latencies.append((started, float("inf")))
        time.sleep(PROBE_EVERY_S)
    out.put(latencies)


async def _burst(port: int, games: list[str], streams: int, settle: float) -> dict:
    opened, failed, held = [], [], []
    context = mp.get_context("spawn")
    stop, out = context.Event(), context.Queue()
    probe = context.Process(target=_probe, args=(port, games[0], stop, out), daemon=True)
    probe.start()
    await asyncio.sleep(1.0)                       # the probe's idle answers first
    started = time.perf_counter()   # the same clock in both processes (CLOCK_MONOTONIC)
    tasks = [asyncio.ensure_future(_open_stream(port, f"127.0.0.{2 + i % ADDRESSES}", games[i % len(games)],
                                                opened, failed, held)) for i in range(streams)]
    deadline = started + 120
    while len(opened) + len(failed) < streams and time.perf_counter() < deadline:
        await asyncio.sleep(0.1)
    burst_s = time.perf_counter() - started
    await asyncio.sleep(settle)
    stop.set()
    probes = out.get(timeout=30)
    probe.join(10)
    for task in tasks:
        task.cancel()
    for writer in held:
        writer.close()
    idle = [took for at, took in probes if at < started]
    during = [took for at, took in probes if at >= started]
    return {"streams": streams, "opened": len(opened), "refused": len(failed), "burst_s": round(burst_s, 2),
            "probes": len(during), "probe_idle_max_s": round(max(idle, default=0), 3),
            "probe_max_s": round(max(during, default=0), 3),
            "probe_median_s": round(sorted(during)[len(during) // 2], 3) if during else None}


def run(size: int = 4000, seed: int = 1, settle: float = 2.0, workers: int = 0, games_played: int = GAMES,
        history: int = HISTORY) -> dict:
    raise_nofile(size * 2 + 2048)
    rng = random.Random(seed)
    with _kit.private_redis() as server:
        client = _kit.redis_client(server.url)
        setup = service_on(RedisEventStore(client))
        games = []
        for n in range(games_played):
            game_id, _ = open_game(setup, speculation.NAME, 4, f"{seed:062x}{n:02x}")
            play(setup, game_id, rng, until_version=history)
            games.append(game_id)
        settings = {"REDIS_URL": server.url, "RQ_REDIS_URL": server.url}
        if workers:
            settings["GUNICORN_WORKERS"] = str(workers)
        api = Gunicorn("service.app:create_app()", settings)
        try:
            cpu = api.cpu_seconds()
            figures = asyncio.run(_burst(api.port, games, size, settle))
            figures["api_cpu_ms_per_stream"] = round((api.cpu_seconds() - cpu) * 1000 / size, 3)
        finally:
            api.proc.send_signal(signal.SIGQUIT)   # a quick shutdown: its streams need no grace
            api.stop()
    figures["ok"] = figures["probe_max_s"] <= MAX_PROBE_S and figures["opened"] > 0
    return figures


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 4000, "streams opened at once")
    p.add_argument("--workers", type=int, default=0, help="API processes (default: the shipped one per core)")
    args = p.parse_args(argv)
    _kit.conclude("stream_burst", args, lambda: run(args.size, args.seed, workers=args.workers), lambda fig: (
        f"{fig['streams']} streams from {ADDRESSES} addresses at once: {fig['opened']} opened, {fig['refused']} "
        f"refused, in {fig['burst_s']} s; a new client's probe: slowest {fig['probe_max_s']} s, median "
        f"{fig['probe_median_s']} s (idle {fig['probe_idle_max_s']} s)"))


if __name__ == "__main__":
    main()
