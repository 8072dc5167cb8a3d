"""Goal 5: Redis memory per stored event, over a finished game of each type.

A whole game is played with random legal actions through the service on a private Redis and
scored; then MEMORY USAGE (SAMPLES 0: every element counted) of each of the game's keys, the
stream, its meta hash, its idempotency hash and its snapshot, is summed and divided by the
game's number of events. Each action carries a UUID as its idempotency key, as a client's
would (the key is stored for the game's life).
"""

from __future__ import annotations

import random
import uuid

from events.store import RedisEventStore, keys

from .common import Env, Row, Scale
from .games import hosted_games, open_game, play, seats_for, seed_for, service_on

LIMIT = 300


def game_memory(client, game_id: str) -> dict[str, int]:
    return {name: int(client.memory_usage(key, samples=0) or 0) for name, key in keys(game_id).items()}


def run(env: Env, scale: Scale) -> list[Row]:
    client = env.fresh_client()
    rows = []
    for n, (name, game) in enumerate(hosted_games().items()):
        service = service_on(RedisEventStore(client))
        game_id, _ = open_game(service, name, seats_for(game), seed_for(n))
        rng = random.Random(n)
        play(service, game_id, rng, max_actions=40 if scale.smoke else 100_000,
             key=lambda _: str(uuid.UUID(int=rng.getrandbits(128), version=4)))  # what clients send
        service.score(game_id)
        version = service.load(game_id).version
        usage = game_memory(client, game_id)
        per_event = sum(usage.values()) / version
        rows.append(Row("5 memory", name, per_event, "bytes/event", goal=f"< {LIMIT} bytes/event",
                        met=per_event < LIMIT,
                        extra={"events": version, **{f"{k}_bytes": v for k, v in usage.items()}}))
    client.close()
    return rows
