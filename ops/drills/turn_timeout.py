"""Turn-timeout drill: games with the platform option turn_timeout whose seats never act.
Every turn must be played by the random bot, recorded with by="timeout", about
turn_timeout seconds after the seat's turn began (the RQ scheduler's resolution is one
second), until the game ends; then it is scored and verifies.

It runs against the real `speculation worker` (RQ worker with its scheduler) on a private
Redis, with games created through the HTTP API (turn_timeout in the create body).

    python -m ops.drills.turn_timeout --size 2      # games per registered type
"""

from __future__ import annotations

import json
import random
import statistics

from workers.queue import RQJobs

from . import _kit


def timed_out_turns(raw: list) -> list[dict]:
    """Each stored command with the delay since the event before it (when its turn began)."""
    bodies = [json.loads(body) for body, _ in raw]
    out = []
    for before, body in zip(bodies, bodies[1:]):
        if body.get("c"):
            out.append({"version": body["v"], "seat": body["c"]["seat"], "by": body["c"].get("by"),
                        "delay": (body["at"] - before["at"]) / 1000})
    return out


def run(size: int = 1, seed: int = 1, timeout: float = 1.0, games=None, finish_timeout: float = 600.0,
        worker_args: dict | None = None, max_turns: int = 0) -> dict:
    """`max_turns` > 0: stop once every game has had that many turns (a short form)."""
    rng = random.Random(seed)
    with _kit.private_redis() as server:
        client = _kit.redis_client(server.url)
        app = _kit.make_app(client, jobs=RQJobs(client))
        service = app.extensions["games"]
        http = app.test_client()
        worker = _kit.start_worker(server.url, **(worker_args or {}))
        if not _kit.wait_until(lambda: client.exists("rq:scheduler-lock:games"), 30):
            worker.stop()
            raise AssertionError("the worker's scheduler did not start: " + worker.output()[-2000:])
        plan = []
        for name in games or _kit.service_games():
            for _ in range(size):
                for _attempt in range(50):
                    body = {"type": name, "options": _kit.short_options(name), "turn_timeout": timeout,
                            "seats": [{}] * _kit.get_game(name).MIN_PLAYERS, "seed": f"{rng.getrandbits(256):064x}"}
                    created = http.post("/v1/games", json=body).json
                    if created["platform_options"] != {"turn_timeout": timeout}:
                        raise AssertionError(f"turn_timeout not recorded: {created}")
                    for seat in range(len(body["seats"])):
                        http.post(f"/v1/games/{created['game_id']}/seats/{seat}", json={"name": f"idle{seat}"})
                    if service.load(created["game_id"]).to_act():
                        plan.append((name, created["game_id"]))
                        break
        try:
            def done(game_id):
                if service.load(game_id).status == "scored":
                    return True
                return max_turns and len(timed_out_turns(service.store.read_raw(game_id))) >= max_turns

            finished = _kit.wait_until(lambda: all(done(g) for _, g in plan), finish_timeout, every=0.25)
        finally:
            worker.stop()
        turns, delays, per_game = 0, [], []
        wrong = []
        for name, game_id in plan:
            mine = timed_out_turns(service.store.read_raw(game_id))
            turns += len(mine)
            delays += [t["delay"] for t in mine]
            wrong += [dict(t, game=game_id) for t in mine if t["by"] != "timeout"]
            per_game.append({"type": name, "turns": len(mine), "status": service.load(game_id).status,
                             "verified": service.verify(game_id)["ok"]})
    late = [d for d in delays if d > timeout + 2.0]
    scored = sum(g["status"] == "scored" for g in per_game)
    verified = sum(g["verified"] for g in per_game)
    ended_ok = scored == len(plan) or (max_turns and finished)
    return {"games": len(plan), "timeout_s": timeout, "turns_expected": turns, "played_by_timeout": turns - len(wrong),
            "not_by_timeout": wrong[:10], "late": len(late),
            "median_delay_s": round(statistics.median(delays), 2) if delays else None,
            "max_delay_s": round(max(delays), 2) if delays else None, "finished": scored, "verified": verified,
            "all_finished_in_time": finished, "per_game": per_game,
            "ok": bool(not wrong and not late and ended_ok and verified == len(plan) and turns > 0)}


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 1, "games per registered type")
    p.add_argument("--timeout", type=float, default=1.0, help="the games' turn_timeout, seconds")
    args = p.parse_args(argv)
    _kit.conclude("turn_timeout", args, lambda: run(args.size, args.seed, args.timeout), lambda fig: (
        f"{fig['games']} games nobody plays (turn_timeout {fig['timeout_s']} s): turns "
        f"expected {fig['turns_expected']}, played by the random bot as timeouts {fig['played_by_timeout']}, "
        f"median delay {fig['median_delay_s']} s, max {fig['max_delay_s']} s; finished {fig['finished']}/"
        f"{fig['games']}, verified {fig['verified']}/{fig['games']} ({fig['seconds']} s)"))


if __name__ == "__main__":
    main()
