"""pyinstrument profiles of the hot paths (`python -m ops.bench --profile`), written as text to
ops/bench/results/profile-NAME.txt: what docs/performance.md quotes when it says where the
time goes. Profiling comes before optimising."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

from events.store import RedisEventStore

from .common import Env, Scale
from .games import hosted_games, open_game, play, plan, random_move, seats_for, seed_for, service_on


def _profile(name: str, fn, out: Path, echo) -> None:
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0005)
    profiler.start()
    fn()
    profiler.stop()
    text = profiler.output_text(unicode=False, color=False, show_all=False)
    (out / f"profile-{name}.txt").write_text(text)
    echo(f"  profile {name}: {out / f'profile-{name}.txt'}")


def run_all(env: Env, scale: Scale, out: Path, echo=print) -> None:
    out.mkdir(parents=True, exist_ok=True)
    client = env.fresh_client()
    seconds = 1.0 if scale.smoke else 4.0

    from . import append

    _profile("append", lambda: append._store_loop(env.redis().url, seconds, 0), out, echo)

    service = service_on(RedisEventStore(client))
    game_id, _ = open_game(service, "speculation", 4, "61" * 32, {"deals": 200, "starting_chips": 10**6})
    rng = random.Random(1)

    def act_loop():
        game = game_id
        deadline = time.perf_counter() + seconds
        n = 0
        while time.perf_counter() < deadline:
            move = random_move(service, game, rng)
            if move is None:  # over: the next game
                game, _ = open_game(service, "speculation", 4, f"{n:064x}", {"deals": 200})
                continue
            service.act(game, *move, idempotency_key=f"p{n}")
            n += 1
    if "speculation" in hosted_games():
        _profile("act", act_loop, out, echo)

        from service.app import create_app
        from service.bootstrap import Backend

        app = create_app({"ALLOW_SEED": True, "RATE_LIMIT": None}, backend=Backend(client, client, False),
                         jobs=service.jobs)
        http = app.test_client()
        web = app.extensions["games"]
        seeds = [f"{n + 9000:064x}" for n in range(4)]
        games = []
        for seed in seeds:
            gid, tokens = open_game(web, "speculation", 4, seed)
            games.append((gid, tokens, plan("speculation", 4, seed)))

        def http_loop():
            for gid, tokens, moves in games:
                for i, (seat, action) in enumerate(moves):
                    http.post(f"/v1/games/{gid}/actions", data=json.dumps({"action": action}),
                              headers={"Authorization": f"Bearer {tokens[seat]}", "Idempotency-Key": f"k{i}",
                                       "Content-Type": "application/json"})
        _profile("http-in-process", http_loop, out, echo)

    for n, (name, game) in enumerate(hosted_games().items()):
        played = service_on(RedisEventStore(client), snapshot_every=0)
        gid, _ = open_game(played, name, seats_for(game), seed_for(n))
        play(played, gid, random.Random(n))
        version = played.load(gid).version
        cold = service_on(RedisEventStore(client), snapshot_every=0)

        def rebuild_loop():
            deadline = time.perf_counter() + seconds / 2
            while time.perf_counter() < deadline:
                cold.sessions.fold_tail(gid, None, version)
        _profile(f"rebuild-{name}", rebuild_loop, out, echo)

        from .playouts import measure

        _profile(f"playout-{name}", lambda: measure(game, seconds / 2), out, echo)
    client.close()
