"""Benchmark 9: what archiving a finished game saves in Redis, and what a read of it costs.

For each game type a whole game is played with random legal actions on a private Redis and
scored (as benchmark 5 does), then moved to an archive in a temporary folder
(events/archive.py). Measured:
- Redis memory of the game's own keys while live (MEMORY USAGE, every element counted) and
  once archived (the pointer left behind); the archive file's size beside them. The lobby,
  leaderboard and token-directory entries are the same either way and are not counted.
- The export of the whole game (what `GET /v1/games/{id}/export` reads), from a fresh
  process cache, live against archived, in alternating rounds.
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time
import uuid

from events.archive import Archive, ArchivingStore
from events.store import RedisEventStore

from .common import Env, Row, Scale, alternate
from .games import hosted_games, open_game, play, seats_for, seed_for, service_on
from .memory import game_memory


def game_bytes(client, game_id: str) -> int:
    return sum(game_memory(client, game_id).values())


def _played(service, name, game, n, scale) -> str:
    game_id, _ = open_game(service, name, seats_for(game), seed_for(n))
    rng = random.Random(n)
    play(service, game_id, rng, max_actions=40 if scale.smoke else 100_000,
         key=lambda _: str(uuid.UUID(int=rng.getrandbits(128), version=4)))
    service.score(game_id)
    return game_id


def _export_seconds(store, game_id: str, repeat: int):
    def measure() -> float:
        started = time.perf_counter()
        for _ in range(repeat):
            service_on(store).export(game_id, None)    # a fresh core: nothing cached
        return (time.perf_counter() - started) / repeat
    return measure


def run(env: Env, scale: Scale) -> list[Row]:
    client = env.fresh_client()
    folder = tempfile.mkdtemp(prefix="bench-archive-")
    rows = []
    try:
        store = ArchivingStore(RedisEventStore(client), Archive(folder), cache_size=0)
        for n, (name, game) in enumerate(hosted_games().items()):
            service = service_on(store)
            live_id, archived_id = (_played(service, name, game, n, scale) for _ in range(2))   # the same play twice
            live = game_bytes(client, archived_id)
            version = service.load(archived_id).version
            digest = store.swap_out(archived_id, store.archive.put)
            left = game_bytes(client, archived_id)
            file_bytes = store.archive.fs.size(store.archive.path(archived_id, digest))
            rows.append(Row("9 archive", f"{name}: Redis bytes a scored game keeps once archived", left, "bytes",
                            live, "bytes while live", round(left / live, 4), "", None,
                            {"events": version, "archive_file_bytes": file_bytes}))
            repeat = 2 if scale.smoke else 20
            archived_s, live_s, ratio = alternate(_export_seconds(store, archived_id, repeat),
                                                  _export_seconds(store, live_id, repeat), max(scale.rounds, 1))
            rows.append(Row("9 archive", f"{name}: export read cold, archived vs live", archived_s * 1000, "ms",
                            live_s * 1000, "ms live (the same game played again)", round(ratio, 3),
                            extra={"events_live": service.load(live_id).version, "events_archived": version}))
    finally:
        client.close()
        shutil.rmtree(folder, ignore_errors=True)
    return rows
