"""Bot fairness drill: one client runs many all-bot games (its caps raised for the drill)
while a person plays a game with bots; each bot turn of the person's game must wait in the
queue (from enqueued, when the turn became due, to started by a worker) p95 under 1 s.

The real thing: a private redis-server, the real `speculation worker` process(es), the
all-bot games created over the API from one address (`BOT_GAMES_PER_ADDRESS` and
`CREATE_LIMIT` off), the person's game played through the core (random legal moves, the
next one as soon as its bots have played). The waits are read from RQ's own job records
(enqueued_at, started_at). The all-bot games' waits are reported too: they are the ones
that queue up.

    python -m ops.drills.bot_fairness --size 100 --turns 150     # the full drill
"""

from __future__ import annotations

import random
import time

from service.core.errors import Conflict

from . import _kit

BOT_GAME = {"type": "speculation", "options": {"deals": 200},
            "seats": [{"bot": "heuristic"}, {"bot": "heuristic"}, {"bot": "random"}, {"bot": "random"}]}


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, int(round(q * (len(ordered) - 1)))))
    return ordered[index]


def _waits(queue, job_ids: list[str]) -> list[float]:
    from rq.job import Job

    out = []
    for job in Job.fetch_many(job_ids, connection=queue.connection):
        if job is not None and job.enqueued_at and job.started_at:
            out.append((job.started_at - job.enqueued_at).total_seconds())
    return out


def run(size: int = 20, turns: int = 30, workers: int = 1, seed: int = 1, think: float = 0.1,
        timeout: float = 300.0) -> dict:
    from rq.registry import FinishedJobRegistry

    from service.app import create_app
    from service.bootstrap import Backend, build_jobs

    rng = random.Random(seed)
    with _kit.private_redis() as server:
        client = _kit.redis_client(server.url)
        backend = Backend(client, client, False)
        app = create_app({"REDIS_URL": server.url, "RATE_LIMIT": None, "CREATE_LIMIT": None,
                          "BOT_GAMES_PER_ADDRESS": 0}, backend=backend)   # the caps, raised
        service = app.extensions["games"]
        jobs = build_jobs(backend)
        children = [_kit.start_worker(server.url, reconcile_every=30, abandoned_after=60) for _ in range(workers)]
        try:
            http = app.test_client()
            started = time.monotonic()
            flood = [http.post("/v1/games", json=BOT_GAME, environ_base={"REMOTE_ADDR": "10.66.0.1"})
                     for _ in range(size)]
            if any(r.status_code != 201 for r in flood):
                raise AssertionError(f"creating the all-bot games: {[r.status_code for r in flood][:5]}")
            created_s = time.monotonic() - started
            flood_ids = [r.json["game_id"] for r in flood]
            if not _kit.wait_until(lambda: len(jobs.background.get_job_ids()) >= min(size, 10) or
                                   FinishedJobRegistry(queue=jobs.background).count > size, 30):
                raise AssertionError("the workers took no all-bot job: " + children[0].output()[-2000:])
            # The person's game: seat 0 a person, three bots.
            human_games, bot_turns, human_moves = 0, 0, 0
            deadline = time.monotonic() + timeout
            background_before = FinishedJobRegistry(queue=jobs.background).count
            while bot_turns < turns and time.monotonic() < deadline:
                session = service.create("speculation", {"deals": 3},
                                         [{}, {"bot": "heuristic"}, {"bot": "random"}, {"bot": "heuristic"}])
                game_id = session.game_id
                _, token = service.claim(game_id, 0, "person")
                human_games += 1
                while time.monotonic() < deadline:
                    current = service.load(game_id)
                    if current.status != "active":
                        break
                    if 0 in current.to_act():
                        view = service.view(game_id, 0)
                        from projections.templates import fill_template

                        action = fill_template(rng.choice(view["legal_actions"]), rng)
                        time.sleep(think)   # the person thinks: the workers play all-bot turns meanwhile
                        try:
                            service.act(game_id, 0, action, idempotency_key=f"m{current.version}",
                                        expected_version=current.version)
                            human_moves += 1
                        except Conflict:   # the bots moved first: read again
                            pass
                        continue
                    time.sleep(0.005)
                bot_turns = sum(1 for job_id in FinishedJobRegistry(queue=jobs.queue).get_job_ids()
                                if job_id.startswith("bot_"))
            human_ids = [j for j in FinishedJobRegistry(queue=jobs.queue).get_job_ids() if j.startswith("bot_")]
            human_waits = _waits(jobs.queue, human_ids)
            background_ids = FinishedJobRegistry(queue=jobs.background).get_job_ids()
            background_during = len(background_ids) - background_before
            background_waits = _waits(jobs.background, background_ids)
            still_running = sum(1 for g in flood_ids if service.load(g).status == "active")
            seconds = time.monotonic() - started
        finally:
            for child in children:
                child.stop()
    p95 = _percentile(human_waits, 0.95)
    figures = {
        "all_bot_games": size, "created_in_s": round(created_s, 2), "workers": workers,
        "all_bot_games_still_running_at_end": still_running, "human_games": human_games,
        "human_moves": human_moves, "human_game_bot_turns": len(human_waits),
        "human_wait_p50_s": round(_percentile(human_waits, 0.5), 4), "human_wait_p95_s": round(p95, 4),
        "human_wait_max_s": round(max(human_waits, default=float("nan")), 4),
        "all_bot_turns": len(background_waits), "all_bot_turns_while_measured": background_during,
        "think_s": think,
        "all_bot_wait_p50_s": round(_percentile(background_waits, 0.5), 3),
        "all_bot_wait_p95_s": round(_percentile(background_waits, 0.95), 3),
        "seconds": round(seconds, 1),
    }
    # Measured under load: the all-bot games were being played meanwhile, and are not all over.
    figures["ok"] = (len(human_waits) >= turns and p95 < 1.0 and still_running > 0 and background_during > 0)
    return figures


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 100, "all-bot games one client runs")
    p.add_argument("--turns", type=int, default=150, help="bot turns of the person's games to measure")
    p.add_argument("--workers", type=int, default=1, help="worker processes (the stack's default: 1)")
    p.add_argument("--think", type=float, default=0.1, help="seconds the person takes per move")
    args = p.parse_args(argv)
    _kit.conclude("bot_fairness", args, lambda: run(args.size, args.turns, args.workers, args.seed, args.think),
                  lambda fig: (
        f"{fig['all_bot_games']} all-bot games from one client, {fig['workers']} worker(s): "
        f"{fig['human_game_bot_turns']} bot turns of a person's game waited p50 {fig['human_wait_p50_s']} s, "
        f"p95 {fig['human_wait_p95_s']} s, max {fig['human_wait_max_s']} s (all-bot turns: p50 "
        f"{fig['all_bot_wait_p50_s']} s, p95 {fig['all_bot_wait_p95_s']} s, {fig['all_bot_turns_while_measured']} "
        f"played meanwhile; {fig['all_bot_games_still_running_at_end']} still running at the end; {fig['seconds']} s)"))

if __name__ == "__main__":
    main()
