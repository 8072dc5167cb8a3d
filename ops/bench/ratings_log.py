"""Benchmark 11: the ratings log's throughput, `rating.applied` appends per second to one log
under concurrent scorers, vs plain game appends per second on the same server.

Every rated game of a type is rated through one stream, `ratings/<type>` (service/ratings):
its head is the order in which games are rated, so concurrent scorers serialise on it (the
unit of work's head check: a scorer whose head moved decides again on the ratings the other
left). Subject: `Ratings.record(session)` of a scored rated game, what the scoring job's
observer does: peek the key and the head, read the table's kept ratings, rate (openskill),
append the event with the kept ratings, then the histories and the leaderboard (under WATCH
of the log's meta). Each scorer is a process (threads would share one GIL) with its own core
(`service.bootstrap.build_core`) and connection, started together; the game is one speculation
game of four bots (three levels: three rated players, all the same in every game, so every
rating contends with every other), played to the end once, and rated under a fresh game id
each time. Baseline: `RedisEventStore.append` of one game event, each process on its own
game (benchmark 1's subject), as many processes.

The goal is a ratio: a rated game is at least about 20 events (the shortest speculation), so
a ratings log that takes one rating for every 20 game appends keeps up with every game of its
type even if the whole service played only that type.
"""

from __future__ import annotations

import multiprocessing as mp
import time
import uuid
from dataclasses import replace

from .append import _run, _store_loop
from .common import Env, Row, Scale, alternate

GOAL = 0.05      # ratings per game append
GAME, OPTIONS = "speculation", {"deals": 1}
SEATS = [{"bot": "heuristic"}, {"bot": "baseline"}, {"bot": "random"}, {"bot": "random"}]
CONFIG = {"ALLOW_SEED": True}


def _core(url: str, jobs=None):
    import redis

    from service.bootstrap import Backend, build_core
    from workers.memory_jobs import MemoryJobs

    client = redis.Redis.from_url(url)
    return build_core(dict(CONFIG), Backend(client, client, False), jobs if jobs is not None else MemoryJobs())


def scored_rated_game(url: str):
    """One rated game of bots alone, played to the end and scored in process (and so rated
    once: the bot accounts are opened)."""
    from workers.memory_jobs import MemoryJobs

    jobs = MemoryJobs()
    core = _core(url, jobs)
    for attempt in range(20):
        created = core.create_game(GAME, OPTIONS, SEATS, rated=True, turn_timeout=60, seed=f"{attempt + 0xa0:02x}" * 32)
        jobs.drain(core)
        session = core.load(created.session.game_id)
        if session.status == "scored" and session.version > 10:
            return session
    raise RuntimeError("no rated game played to the end")


def _scorer(url: str, template, seconds: float, barrier, out) -> None:
    try:
        out.put(_score(url, template, seconds, barrier))
    except BaseException:
        import traceback

        out.put(("error", traceback.format_exc()))
        raise


def _score(url: str, template, seconds: float, barrier) -> tuple:
    from service.core.errors import Conflict
    from service.ratings import service as ratings_service

    core = _core(url)
    decided = [0]
    real = ratings_service.applied

    def counted(log, session):
        decided[0] += 1
        return real(log, session)

    ratings_service.applied = counted
    core.ratings.record(replace(template, game_id=uuid.uuid4().hex[:16]))   # warm: connections, bot accounts
    decided[0] = 0
    barrier.wait()
    count = most = busy = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        session = replace(template, game_id=uuid.uuid4().hex[:16])
        before = decided[0]
        while True:
            try:
                core.ratings.record(session)
                break
            except Conflict:   # "too busy": 20 heads moved under it; the scoring job is retried so
                busy += 1
        count += 1
        most = max(most, decided[0] - before)
    return count, decided[0], most, busy


def _ratings_per_second(url: str, template, scorers: int, seconds: float, tally: dict) -> float:
    ctx = mp.get_context("fork")
    barrier, out = ctx.Barrier(scorers), ctx.Queue()
    procs = [ctx.Process(target=_scorer, args=(url, template, seconds, barrier, out)) for _ in range(scorers)]
    for p in procs:
        p.start()
    results = [out.get(timeout=seconds + 120) for _ in procs]
    for p in procs:
        p.join(10)
    failed = [r[1] for r in results if r[0] == "error"]
    if failed:
        raise RuntimeError(f"a scorer failed:\n{failed[0]}")
    rated = sum(r[0] for r in results)
    tally["rated"] = tally.get("rated", 0) + rated
    tally["decided"] = tally.get("decided", 0) + sum(r[1] for r in results)
    tally["most"] = max([tally.get("most", 0)] + [r[2] for r in results])
    tally["busy"] = tally.get("busy", 0) + sum(r[3] for r in results)
    tally["warm"] = tally.get("warm", 0) + scorers      # one rating each before the start
    return rated / seconds


def run(env: Env, scale: Scale) -> list[Row]:
    from events.store import RedisEventStore
    from service.ratings.service import log_of

    url = env.redis().url
    client = env.fresh_client()
    template = scored_rated_game(url)
    store = RedisEventStore(client)
    rows = []
    for scorers in (1, 4):
        tally: dict = {}
        before = store.head(log_of(GAME))[0]
        subject, baseline, ratio = alternate(
            lambda n=scorers, t=tally: _ratings_per_second(url, template, n, scale.seconds, t),
            lambda n=scorers: _run(_store_loop, url, n, scale.seconds), scale.rounds)
        appended = store.head(log_of(GAME))[0] - before
        rows.append(Row("11 ratings log", f"{scorers} scorer{'s (processes)' if scorers > 1 else ''}, one log",
                        subject, "ratings/s", baseline, "game appends/s", ratio, f"ratio >= {GOAL}", ratio >= GOAL,
                        {"ms_per_rating": 1000 / subject * scorers, "us_per_game_append": 1e6 / baseline * scorers,
                         "decisions_per_rating": tally["decided"] / max(tally["rated"], 1),
                         "most_decisions": tally["most"],    # in one record() call: it gives up after 20
                         "too_busy": tally["busy"],          # record() calls that gave up (asked again)
                         "rated": tally["rated"] + tally["warm"], "log_grew": appended,
                         "each_rated_once": appended == tally["rated"] + tally["warm"]}))
    return rows
