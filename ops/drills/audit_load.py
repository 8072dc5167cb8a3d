"""Audit load drill: clients looping on `GET /verify` of a long scored game while a player acts.

The API under gunicorn's gevent worker (ops/gunicorn.conf.py, one worker) on a private
Redis. A long scored game (spekulation, played out at random: hundreds of events) is the
target; a player plays planned legal actions of another game, one every 20 ms, on its own
keep-alive connection. Rounds alternate idle (the player alone) and loaded (CLIENTS threads
looping on verify as fast as they are answered, Retry-After ignored), each side keeping its
median round: the figure is the player's median action latency loaded / idle, in the same
run (goal: at most 2x). Also: verify answers per second, and how many were 429.

    python -m ops.drills.audit_load                 # 16 clients, 3 rounds a side
    python -m ops.drills.audit_load --size 16 --rounds 3 --seconds 4
"""

from __future__ import annotations

import http.client
import json
import random
import statistics
import threading
import time

from . import _kit

GOAL = 2.0


def _long_scored_game(client, rng: random.Random) -> tuple[str, int]:
    service = _kit.make_service(client)
    game_id, _ = _kit.create_open_game(service, "spekulation", players=4, options={})
    _kit.play_out(service, service.jobs, game_id, rng)
    session = service.load(game_id)
    assert session.status == "scored", session.status
    return game_id, session.version


def _player_game(client, seed: str):
    from ops.bench.games import open_game, plan, service_on
    from events.store import RedisEventStore

    moves = plan("spekulation", 4, seed)
    game_id, tokens = open_game(service_on(RedisEventStore(client)), "spekulation", 4, seed)
    return game_id, tokens, moves


class Player:
    """Plays planned games one after another (the next when one is over)."""

    def __init__(self, port: int, games: list):
        self.port, self.games = port, list(games)
        self.game_id, self.tokens, self.moves = self.games.pop(0)
        self.n = 0
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def act(self) -> float:
        if self.n >= len(self.moves):
            self.game_id, self.tokens, self.moves = self.games.pop(0)
            self.n = 0
        seat, action = self.moves[self.n]
        body = json.dumps({"action": action})
        headers = {"Authorization": f"Bearer {self.tokens[seat]}", "Idempotency-Key": f"d{self.n}",
                   "Content-Type": "application/json"}
        start = time.perf_counter()
        try:
            self.conn.request("POST", f"/v1/games/{self.game_id}/actions", body, headers)
            response = self.conn.getresponse()
        except (http.client.HTTPException, OSError):       # an idle keep-alive closed: again, anew
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            start = time.perf_counter()
            self.conn.request("POST", f"/v1/games/{self.game_id}/actions", body, headers)
            response = self.conn.getresponse()
        response.read()
        elapsed = time.perf_counter() - start
        if response.status != 200:
            raise RuntimeError(f"action answered {response.status}")
        self.n += 1
        return elapsed

    def round(self, seconds: float) -> list[float]:
        out, deadline = [], time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            out.append(self.act())
            time.sleep(0.02)
        return out


class Loopers:
    """`count` threads looping on GET /verify, each on its own keep-alive connection."""

    def __init__(self, port: int, game_id: str, count: int):
        self.port, self.game_id, self.count = port, game_id, count
        self.stop = threading.Event()
        self.statuses: dict[int, int] = {}
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._loop, daemon=True) for _ in range(count)]

    def _loop(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        while not self.stop.is_set():
            try:
                conn.request("GET", f"/v1/games/{self.game_id}/verify")
                response = conn.getresponse()
                response.read()
                status = response.status
            except (http.client.HTTPException, OSError):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                status = 0
            with self.lock:
                self.statuses[status] = self.statuses.get(status, 0) + 1

    def __enter__(self):
        for t in self.threads:
            t.start()
        time.sleep(0.3)
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(60)


def run(clients: int = 16, rounds: int = 3, seconds: float = 4.0, seed: int = 1, workers: int = 1,
        audits: int | None = None) -> dict:
    import redis

    from ops.bench.http import Gunicorn

    with _kit.private_redis() as redis_process:
        client = redis.Redis.from_url(redis_process.url)
        target, length = _long_scored_game(client, random.Random(seed))
        games = [_player_game(client, f"{seed + 9_000 + n:064x}") for n in range(1 + int(rounds * seconds) // 3)]
        server = Gunicorn("service.wsgi:app", {"REDIS_URL": redis_process.url, "GUNICORN_WORKERS": str(workers),
                                               "SPECULATION_RATE_LIMIT": "",
                                               "SPECULATION_LOG_LEVEL": "WARNING",   # stderr is a pipe nobody reads
                                               **({"SPECULATION_AUDITS_PER_ADDRESS": str(audits)} if audits is not None else {})})
        try:
            deadline = time.time() + 60
            while True:
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
                    conn.request("GET", f"/v1/games/{target}/verify")
                    first = conn.getresponse()
                    report = json.loads(first.read())
                    conn.close()
                    break
                except OSError:
                    if time.time() > deadline:
                        raise
                    time.sleep(0.2)
            player = Player(server.port, games)
            player.round(0.5)                                       # warm
            idle, loaded, statuses, verifies = [], [], {}, 0
            for i in range(rounds):
                for side in (("idle", "loaded") if i % 2 == 0 else ("loaded", "idle")):
                    if side == "idle":
                        idle.append(statistics.median(player.round(seconds)))
                        continue
                    with Loopers(server.port, target, clients) as loop:
                        started = time.perf_counter()
                        loaded.append(statistics.median(player.round(seconds)))
                        took = time.perf_counter() - started
                    for status, count in loop.statuses.items():
                        statuses[status] = statuses.get(status, 0) + count
                    verifies += loop.statuses.get(200, 0) / took
        finally:
            server.stop()
    idle_ms, loaded_ms = statistics.median(idle) * 1000, statistics.median(loaded) * 1000
    ratio = loaded_ms / idle_ms
    return {"clients": clients, "events": length, "verify_ok": report.get("ok"),
            "idle_median_ms": round(idle_ms, 2), "loaded_median_ms": round(loaded_ms, 2),
            "ratio": round(ratio, 2), "idle_rounds_ms": [round(x * 1000, 2) for x in idle],
            "loaded_rounds_ms": [round(x * 1000, 2) for x in loaded],
            "verify_answers": statuses, "verify_per_second": round(verifies / rounds, 1),
            "ok": bool(report.get("ok")) and ratio <= GOAL and not statuses.get(500) and not statuses.get(0)}


def main() -> None:
    p = _kit.parser(__doc__, 16, "clients looping on verify")
    p.add_argument("--rounds", type=int, default=3, help="rounds per side")
    p.add_argument("--seconds", type=float, default=4.0, help="length of a round")
    args = p.parse_args()
    _kit.conclude("audit_load", args, lambda: run(args.size, args.rounds, args.seconds, args.seed),
                  lambda f: (f"{f['clients']} clients on verify of a {f['events']}-event scored game: the player's "
                             f"action median {f['loaded_median_ms']} ms vs {f['idle_median_ms']} ms idle, "
                             f"{f['ratio']}x (goal <= {GOAL}x); {f['verify_per_second']} verify/s, "
                             f"answers {f['verify_answers']}"))


if __name__ == "__main__":
    main()
