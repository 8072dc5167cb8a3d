"""Hashing burst drill: a burst of sign-ins (real Argon2id: 64 MiB, t=3, p=4) does not stall
the API's event loop, and past the password pool's queue the API answers 429 `busy` at once
instead of queueing without bound (service/accounts/passwords.py).

The API under gunicorn (the shipped configuration: gevent worker, one process, the password
pool as shipped: PASSWORD_THREADS=2, so at most 64 hashes queued or running; gevent's monitor
thread on, reporting every time one greenlet holds the loop for more than 0.1 s) on a private
redis-server. `--streams` SSE streams follow a speculate game being played, parked in the
broadcaster; a probe, on the drill's event loop, plays a planned move every 100 ms and times
its answer and its delivery to every parked stream (from the move's send to each stream's
read of its `id:`), and asks `GET /v1/game-types` every 50 ms on a fresh connection. Rounds:
quiet (the probe alone), a control burst, quiet, an Argon2id burst, quiet, ...: a burst is
`--size` sign-ins with the right password for as many accounts, sent at once from a process
of its own (started once; threads released by a barrier). The control burst's accounts have a
cheap stored hash (t=1, 1 MiB: a verify follows the stored hash's parameters), so it is the
same requests with next to no hashing. The probe's samples are split by when they were sent:
quiet, control burst, Argon2id burst, and the Argon2id burst from ARRIVAL_S after it began
(its requests all in: the hashing alone).

It holds when every burst answer is 201 or 429 `busy` (with Retry-After), the 429s come at once
(under BUSY_MAX_S, where the queue takes ~10 s to hash), not every sign-in was admitted, the
monitor's reports of blocks over 0.1 s are far fewer than the verifies (one each were they on
the loop; a few may come from a loaded machine preempting the process), and the probes' p99
during the Argon2id bursts stays under PROBE_MAX_MS (their slowest under PROBE_WORST_MS): 64
verifies queued on the event loop would hold every probe for seconds. The ratios to the quiet
rounds are reported.

    python -m ops.drills.hashing_burst --size 100 --streams 100 --rounds 2
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import time

from events.store import RedisEventStore
from ops.bench.common import percentile
from ops.bench.games import open_game, plan, service_on
from ops.bench.waiting import Load, Player, raise_nofile, read_head

from . import _kit
from ._accounts import PASSWORD, Api, core_on

GAME = "speculate"
MOVE_EVERY_S = 0.1
TYPES_EVERY_S = 0.05
# Were the verifies run on the event loop, each would hold it ~0.15 s (a block the monitor
# reports), and a probe would wait behind every sign-in ready before it: seconds.
PROBE_MAX_MS = 1000.0    # the probes' p99 during the Argon2id bursts
PROBE_WORST_MS = 2000.0  # and their slowest
BLOCKS_PER_VERIFY = 0.1  # monitor reports allowed per verify run (a loaded machine's preemptions)
BUSY_MAX_S = 1.0         # a 429 busy never waits for the queue's hashing (~10 s)
ARRIVAL_S = 1.0     # a burst's first second: its requests arrive and are parsed (the control's whole length)


def _plan(seed: str):
    return seed, plan(GAME, 4, seed)


def make_accounts(url: str, count: int, prefix: str, cheap: bool = False) -> list[str]:
    """`count` accounts sharing one password hash made once (a verify costs what the stored
    hash's parameters say, and the set-up need not pay `count` hashes): the defaults (64 MiB,
    t=3, p=4), or with `cheap` t=1, 1 MiB (the control: the same sign-ins, nearly no hashing)."""
    from argon2 import PasswordHasher, Type

    core = core_on(url)
    stored = (PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1, type=Type.ID).hash(PASSWORD) if cheap
              else core.accounts.hashing.hash(PASSWORD))
    core.accounts.hashing.hash = lambda password: stored
    names = []
    for n in range(count):
        account, _ = core.accounts.sign_up(f"{prefix}{n:04d}", PASSWORD)
        names.append(account.username)
    core.accounts.hashing.close()
    return names


def burster(port: int, jobs, out) -> None:
    """A process of its own, started once (so that no interpreter starts during a quiet
    round): for each list of usernames from `jobs`, every sign-in at once (threads released
    together by a barrier); their (started, ended, status, code, Retry-After) to `out`."""
    import threading

    from ._accounts import call

    while True:
        usernames = jobs.get()
        if usernames is None:
            return
        barrier = threading.Barrier(len(usernames))
        got = [None] * len(usernames)

        def client(i: int) -> None:
            barrier.wait()
            started = time.perf_counter()
            answer = call(port, "POST", "/v1/sessions", body={"username": usernames[i], "password": PASSWORD},
                          timeout=120)
            got[i] = (started, time.perf_counter(), answer.status, answer.code, answer.headers.get("retry-after"))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(len(usernames))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        out.put(got)


async def game_types(port: int, stop: asyncio.Event, samples: list) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)
            writer.write(b"GET /v1/game-types HTTP/1.1\r\nHost: drill\r\nConnection: close\r\n\r\n")
            status = await asyncio.wait_for(read_head(reader), 30)
            writer.close()
            samples.append((started, time.perf_counter() - started if status == 200 else float("inf")))
        except (OSError, asyncio.TimeoutError):
            samples.append((started, float("inf")))
        await asyncio.sleep(TYPES_EVERY_S)


async def moves(player: Player, game_id: str, followers, stop: asyncio.Event, samples: list) -> None:
    """A move every MOVE_EVERY_S: (sent, answer s, [delivery s per follower])."""
    while not stop.is_set():
        sent, elapsed, receipt = await player.act(game_id)
        first = receipt["first_version"]
        deadline = time.perf_counter() + 10
        while time.perf_counter() < deadline and not all(f.highest() >= first for f in followers):
            await asyncio.sleep(0.001)
        delivered = [next((t for v, t in f.seen if v >= first), None) for f in followers]
        samples.append((sent, elapsed, [None if t is None else t - sent for t in delivered]))
        await asyncio.sleep(max(0.0, MOVE_EVERY_S - (time.perf_counter() - sent)))


async def _measure(api: Api, game_id: str, tokens, moves_planned, usernames: dict, streams: int, rounds: int,
                   size: int, quiet_s: float, jobs, out) -> dict:
    load = Load(api.port)
    player = Player(api.port, [(game_id, tokens, moves_planned)])
    for _ in range(3):   # warm-up
        await player.act(game_id)
    followers = await load.open_many([(game_id, "text/event-stream", True, player.version[game_id])] * streams)
    await asyncio.sleep(1.0)
    stop = asyncio.Event()
    types_samples, move_samples = [], []
    probes = [asyncio.ensure_future(game_types(api.port, stop, types_samples)),
              asyncio.ensure_future(moves(player, game_id, followers, stop, move_samples))]
    windows = {"cheap": [], "real": []}
    bursts = {"cheap": [], "real": []}
    loop = asyncio.get_running_loop()
    try:
        await asyncio.sleep(quiet_s)
        for r in range(rounds):
            for kind in ("cheap", "real"):   # the control (no hashing to speak of), then real Argon2id
                jobs.put(usernames[kind][r * size:(r + 1) * size])
                got = await loop.run_in_executor(None, out.get, True, 300)
                windows[kind].append((min(g[0] for g in got), max(g[1] for g in got)))
                bursts[kind].append(got)
                await asyncio.sleep(quiet_s)
    finally:
        stop.set()
        await asyncio.gather(*probes, return_exceptions=True)
        for f in followers:
            f.close()
        player.close()
    return {"types": types_samples, "moves": move_samples, "windows": windows, "bursts": bursts,
            "followers": len(followers), "stream_errors": load.errors}


def _during(at: float, windows) -> bool:
    return any(start <= at <= end for start, end in windows)


def _ms(values, q) -> float | None:
    return round(percentile(values, q) * 1000, 2) if values else None


def run(size: int = 100, streams: int = 100, rounds: int = 2, quiet_s: float = 5.0, seed: int = 1,
        threads: int = 0, monitor: bool = True) -> dict:
    raise_nofile(streams * 2 + 2048)
    with _kit.private_redis() as server:
        client = _kit.redis_client(server.url)
        setup = service_on(RedisEventStore(client))
        seeds = [f"{seed:056x}{n:08x}" for n in range(4)]
        with mp.get_context("fork").Pool(2) as pool:
            plans = dict(pool.map(_plan, seeds))
        chosen = max(seeds, key=lambda s: len(plans[s]))
        game_id, tokens = open_game(setup, GAME, 4, chosen)
        usernames = {"real": make_accounts(server.url, size * rounds, f"burst{seed}x"),
                     "cheap": make_accounts(server.url, size * rounds, f"control{seed}x", cheap=True)}
        settings = {"SPECULATION_SIGNIN_LIMIT": "100000/60", "SPECULATION_ALLOW_SEED": "1"}
        if threads:
            settings["SPECULATION_PASSWORD_THREADS"] = str(threads)
        if monitor:   # gevent's monitor thread: a report each time the loop runs one greenlet for > 0.1 s
            settings.update(GEVENT_MONITOR_THREAD_ENABLE="true", GEVENT_MAX_BLOCKING_TIME="0.1")
        api = Api(server.url, 1, **settings)
        context = mp.get_context("spawn")
        jobs, out = context.Queue(), context.Queue()
        child = context.Process(target=burster, args=(api.port, jobs, out), daemon=True)
        child.start()
        try:
            cpu0 = api.cpu_seconds()
            result = asyncio.run(asyncio.wait_for(
                _measure(api, game_id, tokens, plans[chosen], usernames, streams, rounds, size, quiet_s, jobs, out),
                900))
            result["cpu"] = api.cpu_seconds() - cpu0
            result["blocked_reports"] = api.server.log_tail(10_000_000).count("appears to be blocked") if monitor \
                else None
        finally:
            jobs.put(None)
            child.join(10)
            api.stop()
            client.close()
    return _figures(result, size, streams, rounds, threads or 2)


def _answers(bursts: list) -> tuple[dict, list, list, list, bool]:
    answers: dict = {}
    busy_s, ok_s, admitted = [], [], []
    retry_ok = True
    for got in bursts:
        admitted.append(sum(1 for g in got if g[2] == 201))
        for started, ended, status, code, retry_after in got:
            key = f"{status} {code or ''}".strip()
            answers[key] = answers.get(key, 0) + 1
            if code == "busy":
                busy_s.append(ended - started)
                retry_ok = retry_ok and bool(retry_after) and retry_after.isdigit()
            elif status == 201:
                ok_s.append(ended - started)
    return answers, busy_s, ok_s, admitted, retry_ok


def _figures(r: dict, size: int, streams: int, rounds: int, threads: int) -> dict:
    windows = r["windows"]
    bound = 32 * threads
    answers, busy_s, ok_s, admitted, retry_ok = _answers(r["bursts"]["real"])
    control, _, control_ok_s, _, _ = _answers(r["bursts"]["cheap"])

    def sides_of(at: float) -> list[str]:
        kind = next((kind for kind, spans in windows.items() if _during(at, spans)), "quiet")
        # the hashing alone: a real burst from ARRIVAL_S after it began (its requests are all in)
        tail = kind == "real" and any(start + ARRIVAL_S <= at <= end for start, end in windows["real"])
        return [kind, "hashing"] if tail else [kind]

    split = {side: {"types": [], "delivery": [], "move": []} for side in ("quiet", "cheap", "real", "hashing")}
    for at, took in r["types"]:
        for side in sides_of(at):
            split[side]["types"].append(took)
    lost = 0
    for sent, elapsed, delivered in r["moves"]:
        for name in sides_of(sent):
            split[name]["move"].append(elapsed)
            split[name]["delivery"] += [d for d in delivered if d is not None]
        lost += sum(d is None for d in delivered)
    fig = {"size": size, "streams": streams, "followers_open": r["followers"], "rounds": rounds,
           "password_threads": threads, "pool_bound": bound, "answers": answers, "admitted_per_burst": admitted,
           "control_answers": control, "control_signed_in_max_s": round(max(control_ok_s), 3) if control_ok_s else None,
           "busy_max_s": round(max(busy_s), 4) if busy_s else None,
           "busy_median_s": round(sorted(busy_s)[len(busy_s) // 2], 4) if busy_s else None,
           "signed_in_max_s": round(max(ok_s), 3) if ok_s else None,
           "burst_seconds": [round(e - s, 2) for s, e in windows["real"]],
           "control_burst_seconds": [round(e - s, 2) for s, e in windows["cheap"]],
           "deliveries_lost": lost, "api_cpu_s": round(r["cpu"], 1), "loop_blocked_reports": r["blocked_reports"]}
    for side, got in split.items():
        for what, values in got.items():
            fig[f"{what}_{side}_p50_ms"] = _ms(values, 50)
            fig[f"{what}_{side}_p99_ms"] = _ms(values, 99)
            fig[f"{what}_{side}_max_ms"] = _ms(values, 100)
            fig[f"{what}_{side}_samples"] = len(values)
    for what in ("types", "delivery", "move"):
        q, c, b, h = (fig[f"{what}_{side}_p99_ms"] for side in ("quiet", "cheap", "real", "hashing"))
        fig[f"{what}_p99_ratio"] = round(b / q, 2) if q and b else None            # real bursts / quiet
        fig[f"{what}_p99_ratio_to_control"] = round(b / c, 2) if c and b else None  # real / cheap bursts
        fig[f"{what}_hashing_p99_ratio"] = round(h / q, 2) if q and h else None    # hashing alone / quiet
    monitor_ok = r["blocked_reports"] is None or r["blocked_reports"] <= BLOCKS_PER_VERIFY * sum(admitted)
    fig["ok"] = (set(answers) <= {"201", "429 busy"} and set(control) <= {"201", "429 busy"} and retry_ok
                 and r["stream_errors"] == 0 and lost == 0 and monitor_ok
                 and (size <= bound or (answers.get("429 busy", 0) > 0 and all(a < size for a in admitted)))
                 and (fig["busy_max_s"] or 0) <= BUSY_MAX_S
                 and fig["types_real_samples"] > 0 and fig["delivery_real_samples"] > 0
                 and all(fig[f"{what}_real_p99_ms"] <= PROBE_MAX_MS and fig[f"{what}_real_max_ms"] <= PROBE_WORST_MS
                         for what in ("types", "delivery", "move")))
    return fig


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 100, "sign-ins per burst")
    p.add_argument("--streams", type=int, default=100, help="parked streams following the game played")
    p.add_argument("--rounds", type=int, default=2, help="bursts of each kind (control, real), between quiet rounds")
    p.add_argument("--quiet", type=float, default=5.0, help="seconds of each quiet round")
    p.add_argument("--threads", type=int, default=0, help="PASSWORD_THREADS (default: as shipped, 2)")
    p.add_argument("--no-monitor", dest="monitor", action="store_false",
                   help="without gevent's monitor thread (it counts the loop's blocks over 0.1 s)")
    args = p.parse_args(argv)
    _kit.conclude("hashing_burst", args, lambda: run(args.size, args.streams, args.rounds, args.quiet, args.seed,
                                                     args.threads, args.monitor), summary)


def summary(fig: dict) -> str:
    def probe(what: str, label: str) -> str:
        return (f"{label} p99 {fig[f'{what}_quiet_p99_ms']} ms quiet, {fig[f'{what}_cheap_p99_ms']} ms during the "
                f"control bursts, {fig[f'{what}_real_p99_ms']} ms during the Argon2id bursts "
                f"({fig[f'{what}_p99_ratio']}x quiet, {fig[f'{what}_p99_ratio_to_control']}x control; max "
                f"{fig[f'{what}_real_max_ms']} ms), {fig[f'{what}_hashing_p99_ms']} ms once their requests were in "
                f"({fig[f'{what}_hashing_p99_ratio']}x quiet)")

    followers = f"delivery to {fig['followers_open']} parked streams"
    return (f"{fig['rounds']} bursts of {fig['size']} sign-ins (Argon2id 64 MiB, t=3; pool of "
            f"{fig['password_threads']} threads, bound {fig['pool_bound']}): {fig['answers']}, admitted per burst "
            f"{fig['admitted_per_burst']}, 429 busy in <= {fig['busy_max_s']} s, the last 201 after "
            f"{fig['signed_in_max_s']} s (control bursts: {fig['control_answers']}, the last after "
            f"{fig['control_signed_in_max_s']} s); {probe('delivery', followers)}; "
            f"{probe('types', '/v1/game-types')}; {probe('move', 'a move')}"
            + (f"; loop blocked > 0.1 s: {fig['loop_blocked_reports']} reports" if fig["loop_blocked_reports"] is not None
               else "") + f" ({fig['seconds']} s)")


if __name__ == "__main__":
    main()
