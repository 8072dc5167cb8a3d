"""Goal 4: rebuilding a game's state from its log (read, decode, upcast, fold; the hash chain
is verify's to check, and a load checks only that a tail chains from its cached base)
vs reading and JSON-decoding the same entries without folding, on a finished game of each type.

Subject: the service's cold rebuild, `GameService.sessions.fold_tail(game_id, None, version)`: what a
process with no cache and no snapshot does. Baseline: XRANGE of the same stream with the same
client and `json.loads` of every body (inflated first when the store keeps it deflated:
decoding a stored entry includes that).
"""

from __future__ import annotations

import json
import random
import time

from events.store import RedisEventStore, keys, unpack_body

from .common import Env, Row, Scale, alternate
from .games import hosted_games, open_game, play, seats_for, seed_for, service_on

GOAL = 0.5


def _rate(fn, events: int, seconds: float) -> float:
    """Events per second over repeated full passes."""
    passes = 0
    start = time.perf_counter()
    while True:
        fn()
        passes += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return passes * events / elapsed


def run(env: Env, scale: Scale) -> list[Row]:
    client = env.fresh_client()
    rows = []
    for n, (name, game) in enumerate(hosted_games().items()):
        service = service_on(RedisEventStore(client), snapshot_every=0)
        game_id, _ = open_game(service, name, seats_for(game), seed_for(n))
        play(service, game_id, random.Random(n), max_actions=40 if scale.smoke else 100_000)
        service.score(game_id)
        version = service.load(game_id).version
        stream = keys(game_id)["events"]
        cold = service_on(RedisEventStore(client), snapshot_every=0)
        assert cold.sessions.fold_tail(game_id, None, version).head == service.load(game_id).head

        def rebuild():
            cold.sessions.fold_tail(game_id, None, version)

        def decode_only():
            for _, fields in client.xrange(stream, "-", "+"):
                json.loads(unpack_body(fields[b"e"]))

        seconds = scale.seconds / 2
        subject, baseline, ratio = alternate(lambda: _rate(rebuild, version, seconds),
                                      lambda: _rate(decode_only, version, seconds), scale.rounds)
        rows.append(Row("4 rebuild", name, subject, "events/s", baseline, "read + JSON decode events/s",
                        ratio, f"ratio >= {GOAL}", ratio >= GOAL, {"events": version}))
    client.close()
    return rows
