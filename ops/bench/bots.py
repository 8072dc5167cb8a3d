"""Goal 6: bot decision time for each game and level, p50 and p95.

Positions come from random playouts through the service's own read side: at each position a
seat to act gets its view (`disclosure.view_for`, what a bot job builds), then every level
decides from it (the game's view of its seat, as the bot job passes it). The figure is the policy's time alone; building the view is reported
beside it (the bot job pays both).
"""

from __future__ import annotations

import random
import time

from projections import disclosure
from workers.bots import LEVELS, policy
from workers.jobs import bot_rng

from .common import Row, Scale, percentile
from .games import hosted_games, memory_service, open_game, random_move, seats_for, seed_for

HEURISTIC_P95_MS = 50.0


def positions(name: str, game, seed: str, limit: int, rng: random.Random):
    """(view, seat) pairs along one random game, view building time in ms beside each."""
    service = memory_service(snapshot_every=0)
    game_id, _ = open_game(service, name, seats_for(game), seed)
    out = []
    while len(out) < limit:
        move = random_move(service, game_id, rng)
        if move is None:
            break
        session = service.load(game_id)
        seat, action = move
        start = time.perf_counter()
        view = disclosure.view_for(session, seat)
        out.append((view, seat, (time.perf_counter() - start) * 1000))
        service.act(game_id, seat, action, idempotency_key=f"b{len(out)}")
    return out


def run(env, scale: Scale) -> list[Row]:
    rows = []
    per_game = 30 if scale.smoke else 600
    for n, (name, game) in enumerate(hosted_games().items()):
        rng = random.Random(n)
        views = []
        g = 0
        while len(views) < per_game:
            views += positions(name, game, seed_for(1000 + g), per_game - len(views), rng)
            g += 1
        view_ms = [ms for _, _, ms in views]
        for level in LEVELS:
            choose = policy(name, level)
            times = []
            for i, (view, seat, _) in enumerate(views):
                bot = bot_rng(f"bench{i}", seat, view["version"])
                start = time.perf_counter()
                choose(view["state"], view["legal_actions"], seat, bot)
                times.append((time.perf_counter() - start) * 1000)
            p95 = percentile(times, 95)
            goal = level == "heuristic"
            rows.append(Row("6 bots", f"{name} {level}", p95, "ms p95",
                            goal=f"p95 < {HEURISTIC_P95_MS:g} ms" if goal else "",
                            met=(p95 < HEURISTIC_P95_MS) if goal else None,
                            extra={"p50_ms": round(percentile(times, 50), 4),
                                   "max_ms": round(max(times), 4), "positions": len(times),
                                   "view_p95_ms": round(percentile(view_ms, 95), 4)}))
    return rows
