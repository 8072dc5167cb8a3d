"""Worker crash drill: kill -9 of an RQ worker (the real `speculation worker`, its work
horse with it) in the middle of a bot turn, on a private durable Redis.

Every registered game is played by bots alone. A worker whose turns are slow
(ops/drills/slow_worker.py: each bot turn waits before its append) is started; as soon
as a turn is running it is killed with its process group, `--size` times; then a normal
worker takes over. Each killed turn must be played exactly once (its job is found abandoned
from its stale heartbeat and run again, in seconds rather than RQ's ten minutes), and every
game must finish and verify.

    python -m ops.drills.worker_crash --size 5
"""

from __future__ import annotations

import json
import random
import time

from rq.job import Job, JobStatus
from rq.registry import StartedJobRegistry

from events.index import GameIndex
from events.store import RedisEventStore
from service.core.game_service import GameService
from workers.queue import RQJobs

from . import _kit


def _running_bot_job(jobs: RQJobs):
    """(job id, game, seat, version) of a bot or timeout turn running now, if any."""
    running = [job_id for queue in (jobs.queue, jobs.background)
               for job_id in StartedJobRegistry(queue=queue).get_job_ids(cleanup=False)]
    for job_id in running:
        if not job_id.startswith("bot_"):
            continue
        job = Job.fetch(job_id, connection=jobs.queue.connection)
        if job.get_status() == JobStatus.STARTED:
            game_id, seat, version = job.args
            return job_id, game_id, seat, version
    return None


def run(size: int = 3, seed: int = 1, slow: float = 3.0, abandoned_after: float = 3.0,
        games=None, finish_timeout: float = 180.0) -> dict:
    rng = random.Random(seed)
    kills = []
    with _kit.private_redis(durable=True) as server:
        client = _kit.redis_client(server.url)
        jobs = RQJobs(client)
        service = GameService(RedisEventStore(client), GameIndex(client), jobs, allow_seed=True)
        names = games or _kit.service_games()
        game_ids = {}
        for name in names:
            seats = [{"bot": "random"}] * _kit.get_game(name).MIN_PLAYERS
            session = service.create(name, _kit.short_options(name), seats, seed=f"{rng.getrandbits(256):064x}")
            game_ids[session.game_id] = name
        workers = []
        try:
            for _ in range(size):
                worker = _kit.start_worker(server.url, slow_turn=slow, abandoned_after=abandoned_after)
                workers.append(worker)
                found = {}

                def running():
                    job = _running_bot_job(jobs)
                    if job:
                        found["job"] = job
                    return bool(job)

                if not _kit.wait_until(running, 60):
                    raise AssertionError("no bot turn started: " + worker.output()[-2000:])
                time.sleep(min(0.5, slow / 3))     # well inside the slow turn
                job_id, game_id, seat, version = found["job"]
                at_kill = service.store.head(game_id)[0]
                worker.kill()
                kills.append({"job": job_id, "game": game_id, "type": game_ids.get(game_id), "seat": seat,
                              "version": version, "version_at_kill": at_kill, "killed_at": time.time()})
            final = _kit.start_worker(server.url, slow_turn=0, abandoned_after=abandoned_after)
            workers.append(final)

            def all_scored():
                return all(service.load(g).status == "scored" for g in game_ids)

            finished = _kit.wait_until(all_scored, finish_timeout, every=0.25)
        finally:
            for worker in workers:
                worker.stop()
        played_once = 0
        for kill in kills:
            raw = service.store.read_raw(kill["game"])
            commands = [json.loads(body) for body, _ in raw]
            turn = [c for c in commands if c["v"] == kill["version"] + 1]
            same = [c for c in commands if c.get("c") and c["c"]["seat"] == kill["seat"] and c["v"] == kill["version"] + 1]
            kill["played"] = len(same)
            kill["by"] = turn[0].get("c", {}).get("by") if turn else None
            kill["recovered_after_s"] = round(turn[0]["at"] / 1000 - kill["killed_at"], 1) if turn else None
            if kill["version_at_kill"] == kill["version"] and len(same) == 1 and kill["by"].startswith("bot:"):
                played_once += 1
        scored = sum(service.load(g).status == "scored" for g in game_ids)
        verified = sum(service.verify(g)["ok"] for g in game_ids)
        recovered = client.zcard("rq:failed:games")
    waits = [k["recovered_after_s"] for k in kills if k["recovered_after_s"] is not None]
    return {"kills": len(kills), "turns_in_flight": len(kills), "played_exactly_once": played_once,
            "slowest_recovery_s": max(waits, default=None),
            "games": len(game_ids), "finished": scored, "verified": verified, "all_finished_in_time": finished,
            "abandoned_jobs_failed": recovered, "details": kills,
            "ok": played_once == len(kills) == size and scored == verified == len(game_ids)}


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 5, "workers killed in the middle of a turn")
    p.add_argument("--slow", type=float, default=3.0, help="seconds each turn of a doomed worker waits")
    args = p.parse_args(argv)
    _kit.conclude("worker_crash", args, lambda: run(args.size, args.seed, args.slow), lambda fig: (
        f"{fig['kills']} workers killed mid-turn: turns expected {fig['turns_in_flight']}, "
        f"played exactly once {fig['played_exactly_once']}; games finished {fig['finished']}/{fig['games']}, "
        f"verified {fig['verified']}/{fig['games']}; a killed turn was played at most "
        f"{fig['slowest_recovery_s']} s after its worker died ({fig['seconds']} s)"))


if __name__ == "__main__":
    main()
