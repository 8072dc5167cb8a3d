"""Goal 3: the cost of one action must not grow with the game's length.

Two games of Speculation (200 deals, deep pockets: about 9,000 events when played out) on the
same private Redis: a short one at about 50 events and a long one at 5,000. Actions are then
timed alternately on the two (GameService.act: idempotency check, load, decide, append), so
both sides see the same machine at the same moments. The figure is the long game's median
time per action, the baseline the short game's; the ratio is long / short.

Two cases: `warm`, one service whose process cache holds the game (one worker serving the
game), and `cold`, a new service for every action (no process cache: the snapshot and the
tail since it, what a worker that has never seen the game does).
"""

from __future__ import annotations

import random
import statistics
import time

from events.store import RedisEventStore

from .common import Env, Row, Scale
from .games import open_game, play, random_move, service_on

GOAL = 1.25
GAME = "speculation"
OPTIONS = {"deals": 200, "starting_chips": 1_000_000}
SHORT, LONG = 50, 5000


def _timed_act(service, game_id: str, move, key: str) -> float:
    seat, action = move
    start = time.perf_counter()
    service.act(game_id, seat, action, idempotency_key=key)
    return time.perf_counter() - start


def run(env: Env, scale: Scale) -> list[Row]:
    client = env.fresh_client()
    long_at = 600 if scale.smoke else LONG
    block = 10 if scale.smoke else 100       # actions per fresh short game: it stays near 50
    blocks = 1 if scale.smoke else max(2, scale.rounds)
    setup = service_on(RedisEventStore(client))
    seeds = iter(f"{n:064x}" for n in range(10**6, 10**7))

    def new_game(at: int) -> str:
        seed = next(seeds)
        game_id, _ = open_game(setup, GAME, 4, seed, OPTIONS)
        play(setup, game_id, random.Random(seed), until_version=at)
        return game_id

    long_game = new_game(long_at)
    rows = []
    for case in ("warm", "cold"):
        warm = service_on(RedisEventStore(client))
        chooser = service_on(RedisEventStore(client))
        times = {"short": [], "long": []}
        rng = random.Random(7)
        short_versions = []
        for b in range(blocks):
            games = {"short": new_game(SHORT), "long": long_game}
            for i in range(block):
                for label in (("short", "long") if i % 2 == 0 else ("long", "short")):
                    game_id = games[label]
                    move = random_move(chooser, game_id, rng)
                    service = warm if case == "warm" else service_on(RedisEventStore(client))
                    times[label].append(_timed_act(service, game_id, move, f"{case}{b}.{i}"))
            short_versions.append(setup.load(games["short"]).version)
        short_ms = statistics.median(times["short"]) * 1000
        long_ms = statistics.median(times["long"]) * 1000
        ratio = long_ms / short_ms
        rows.append(Row("3 length", f"{case}: at {long_at} vs {SHORT} events", long_ms, "ms/action",
                        short_ms, f"ms/action at {SHORT} events", ratio, f"long/short <= {GOAL}",
                        ratio <= GOAL, {"actions_each": len(times["short"]),
                                        "short_versions_reached": max(short_versions),
                                        "long_version_reached": setup.load(long_game).version,
                                        "short_mean_ms": round(statistics.mean(times["short"]) * 1000, 4),
                                        "long_mean_ms": round(statistics.mean(times["long"]) * 1000, 4)}))
    client.close()
    return rows
