"""Fair bot time drill (issue 38, item 1): an attacker creates games of its own seat and seven
`search` bots at the maximum budget, and answers its turns at once; meanwhile another person
plays a game with three heuristic bots. Judged: the person's bot hand-back (from its move
accepted to its seat to act again, or the game over) median at most 0.5 s, p95 at most 1.5 s.
Also measured: every search turn's wall time (the job's, loading included) against its cap,
read from RQ's job records (p99 overshoot at most 50 ms).

The real thing: a private redis-server, the real `speculation worker` process(es) (as
`make serve`: one), the games created through the core with the creators the API records
(the client address), the attacker's and the person's moves played through the core.
`--unfair` turns the fair scheduling off (BOT_TURNS_PER_CREATOR=0, BOT_MS_PER_CREATOR=0):
the figures before.

    python -m ops.drills.fair_bots --size 20 --hand-backs 40        # the full drill (as judged)
"""

from __future__ import annotations

import random
import threading
import time

from service.core.errors import CoreError

from . import _kit

ATTACKER = "addr:attacker"
PERSON = "addr:person"


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, int(round(q * (len(ordered) - 1)))))]


def _act(service, game_id: str, rng: random.Random) -> bool:
    """Seat 0 plays a random legal move if it is to act; True when it did."""
    from projections.templates import fill_template

    session = service.load(game_id)
    if session.status != "active" or 0 not in session.to_act():
        return False
    view = service.view_of(session, 0)
    try:
        service.act(game_id, 0, fill_template(rng.choice(view["legal_actions"]), rng),
                    idempotency_key=f"m{session.version}", expected_version=session.version)
    except CoreError:
        return False
    return True


def run(size: int = 20, hand_backs: int = 40, time_ms: float = 200, workers: int = 1, seed: int = 1,
        unfair: bool = False, timeout: float = 600.0) -> dict:
    from service.app import create_app
    from service.bootstrap import Backend

    config = {"RATE_LIMIT": None, "CREATE_LIMIT": None, "BOT_GAMES_PER_ADDRESS": 0,
              "SEARCH_MAX_TIME_MS": max(time_ms, 1)}
    env = {"SPECULATION_SEARCH_MAX_TIME_MS": str(max(time_ms, 1))}
    if unfair:
        config.update(BOT_TURNS_PER_CREATOR=0, BOT_MS_PER_CREATOR=0)
        env.update(SPECULATION_BOT_TURNS_PER_CREATOR="0", SPECULATION_BOT_MS_PER_CREATOR="0")
    rng = random.Random(seed)
    stop = threading.Event()
    with _kit.private_redis() as server:
        client = _kit.redis_client(server.url)
        app = create_app({"REDIS_URL": server.url, **config}, backend=Backend(client, client, False))
        service = app.extensions["games"]
        children = [_kit.start_worker(server.url, reconcile_every=2, abandoned_after=60, extra_env=env)
                    for _ in range(workers)]
        try:
            budget = {"iterations": 20_000, "time_ms": time_ms}
            attack = []
            for _ in range(size):
                created = service.create_game("speculation", {"deals": 200},
                                              [{}] + [{"bot": "search", "budget": budget}] * 7, creator=ATTACKER)
                service.claim(created.session.game_id, 0, "attacker")
                attack.append(created.session.game_id)

            def attacker() -> None:   # answers its turns at once, in every game
                arng = random.Random(seed + 1)
                while not stop.is_set():
                    if not any([_act(service, g, arng) for g in attack]):
                        time.sleep(0.002)

            thread = threading.Thread(target=attacker, daemon=True)
            thread.start()
            time.sleep(3.0)   # the attack under way: its backlog built up
            waits: list[float] = []
            deadline = time.monotonic() + timeout
            games = 0
            while len(waits) < hand_backs and time.monotonic() < deadline:
                game = service.create_game("speculation", {"deals": 3},
                                           [{}, {"bot": "heuristic"}, {"bot": "heuristic"}, {"bot": "heuristic"}],
                                           creator=PERSON).session.game_id
                service.claim(game, 0, "person")
                games += 1
                while len(waits) < hand_backs and time.monotonic() < deadline:
                    if not _act(service, game, rng):
                        session = service.load(game)
                        if session.status != "active":
                            break
                        time.sleep(0.002)
                        continue
                    moved = time.monotonic()
                    while time.monotonic() < deadline:
                        session = service.load(game)
                        if session.status != "active" or 0 in session.to_act():
                            break
                        time.sleep(0.002)
                    waits.append(time.monotonic() - moved)
                    time.sleep(0.05)   # the person reads the table
            stop.set()
            thread.join(10)
            overshoot = _search_overshoot(client, time_ms)
            attack_moves = sum(service.load(g).version for g in attack)
        finally:
            stop.set()
            for child in children:
                child.stop()
    p50, p95 = _percentile(waits, 0.5), _percentile(waits, 0.95)
    figures = {"attacker_games": size, "search_time_ms": time_ms, "workers": workers, "fair": not unfair,
               "hand_backs": len(waits), "person_games": games,
               "hand_back_p50_s": round(p50, 3), "hand_back_p95_s": round(p95, 3),
               "hand_back_max_s": round(max(waits, default=float("nan")), 3),
               "attacker_versions": attack_moves, **overshoot}
    figures["ok"] = (len(waits) >= hand_backs and p50 <= 0.5 and p95 <= 1.5
                     and overshoot["search_turns"] > 0 and overshoot["turn_overshoot_p99_ms"] <= 50)
    return figures


def _search_overshoot(client, time_ms: float) -> dict:
    """Every finished search turn's wall time (RQ's started_at to ended_at: the whole job,
    loading the game included) less its cap."""
    from rq.job import Job
    from rq.registry import FinishedJobRegistry

    from workers.queue import worker_queues

    over = []
    for queue in worker_queues(client):
        ids = [i for i in FinishedJobRegistry(queue=queue).get_job_ids() if i.startswith("bot_")]
        for job in Job.fetch_many(ids, connection=client):
            if job is not None and job.started_at and job.ended_at and (job.meta or {}).get("creator") == ATTACKER:
                over.append((job.ended_at - job.started_at).total_seconds() * 1000 - time_ms)
    return {"search_turns": len(over), "turn_overshoot_p50_ms": round(_percentile(over, 0.5), 1),
            "turn_overshoot_p99_ms": round(_percentile(over, 0.99), 1),
            "turn_overshoot_max_ms": round(max(over, default=float("nan")), 1)}


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 20, "the attacker's games (a person seat and 7 search bots each)")
    p.add_argument("--hand-backs", type=int, default=40, help="the person's hand-backs to measure")
    p.add_argument("--time-ms", type=float, default=200, help="the search bots' budget.time_ms (the maximum)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (make serve: 1)")
    p.add_argument("--unfair", action="store_true", help="fair scheduling off: the figures before")
    args = p.parse_args(argv)
    _kit.conclude("fair_bots", args, lambda: run(args.size, args.hand_backs, args.time_ms, args.workers, args.seed,
                                                 args.unfair), lambda fig: (
        f"{fig['attacker_games']} attacker games (7 search bots at {fig['search_time_ms']:g} ms), "
        f"{fig['workers']} worker(s), fair {fig['fair']}: the person's bot hand-back p50 {fig['hand_back_p50_s']} s, "
        f"p95 {fig['hand_back_p95_s']} s, max {fig['hand_back_max_s']} s over {fig['hand_backs']}; "
        f"{fig['search_turns']} search turns over their cap p50 {fig['turn_overshoot_p50_ms']} ms, "
        f"p99 {fig['turn_overshoot_p99_ms']} ms, max {fig['turn_overshoot_max_ms']} ms"))


if __name__ == "__main__":
    main()
