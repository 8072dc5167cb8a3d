"""Cross-game indexes on Redis: the lobby, the token directory, stream
tickets and the leaderboards.

These are projections kept beside the streams (each key on its own, so they work on Redis
Cluster); they can be rebuilt from the streams, and are never part of the audit.
"""

from __future__ import annotations


from typing import Optional

from redis.exceptions import WatchError

LOBBY_ALL = "lobby:all"
STATUSES = ("open", "active", "ended", "scored")


def _lobby_key(game_type: Optional[str], status: Optional[str]) -> str:
    if game_type and status:
        return f"lobby:type:{game_type}:status:{status}"
    if game_type:
        return f"lobby:type:{game_type}"
    if status:
        return f"lobby:status:{status}"
    return LOBBY_ALL


class GameIndex:
    def __init__(self, client):
        self.redis = client

    # --- lobby -----------------------------------------------------------------------
    def record(self, game_id: str, game_type: str, status: str, created_at: int) -> None:
        """Put the game under its current status (idempotent; safe to repeat)."""
        pipe = self.redis.pipeline()
        for old in STATUSES:
            if old != status:
                pipe.zrem(_lobby_key(None, old), game_id)
                pipe.zrem(_lobby_key(game_type, old), game_id)
        for key in (_lobby_key(None, None), _lobby_key(game_type, None),
                    _lobby_key(None, status), _lobby_key(game_type, status)):
            pipe.zadd(key, {game_id: created_at})
        pipe.execute()

    def list(self, game_type: Optional[str] = None, status: Optional[str] = None,
             offset: int = 0, limit: int = 20) -> tuple[list[str], int]:
        """Newest first: (game ids of the page, total matching)."""
        key = _lobby_key(game_type, status)
        pipe = self.redis.pipeline()
        pipe.zrevrange(key, offset, offset + limit - 1)
        pipe.zcard(key)
        ids, total = pipe.execute()
        return [i.decode() for i in ids], total

    def games_waiting(self, status: str, limit: int = 1000) -> list[str]:
        return [i.decode() for i in self.redis.zrange(_lobby_key(None, status), 0, limit - 1)]

    # --- tokens ----------------------------------------------------------------------
    def record_token(self, token_hash: str, game_id: str, seat: int) -> None:
        self.redis.hset("tokens", token_hash, f"{game_id}:{seat}")

    def token_owner(self, token_hash: str) -> Optional[tuple[str, int]]:
        value = self.redis.hget("tokens", token_hash)
        if value is None:
            return None
        game_id, seat = value.decode().rsplit(":", 1)
        return game_id, int(seat)

    # --- stream tickets --------------------------------------------------------------
    def record_ticket(self, ticket_hash: str, value: str, ttl: int) -> None:
        self.redis.set(f"ticket:{ticket_hash}", value, ex=ttl)

    def ticket(self, ticket_hash: str) -> Optional[str]:
        value = self.redis.get(f"ticket:{ticket_hash}")
        return None if value is None else value.decode()

    # --- leaderboards ----------------------------------------------------------------
    def record_result(self, game_type: str, game_id: str, players: list[dict]) -> bool:
        """Add one scored game to its type's leaderboard, once. `players`: [{key, rank, won}].

        The game's membership and its counts are written in one transaction, so a crash
        between them cannot count a game twice or mark it counted without its counts."""
        games_key = f"board:{game_type}:games"
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(games_key)
                    if pipe.sismember(games_key, game_id):
                        return False
                    pipe.multi()
                    pipe.sadd(games_key, game_id)
                    for player in players:
                        key = f"board:{game_type}:{player['key']}"
                        pipe.hincrby(key, "games", 1)
                        pipe.hincrbyfloat(key, "wins", player["won"])
                        pipe.hincrby(key, "rank_sum", player["rank"])
                        pipe.sadd(f"board:{game_type}:players", player["key"])
                    pipe.execute()
                    return True
                except WatchError:
                    continue

    def leaderboard(self, game_type: str) -> list[dict]:
        names = sorted(n.decode() for n in self.redis.smembers(f"board:{game_type}:players"))
        pipe = self.redis.pipeline()
        for name in names:
            pipe.hgetall(f"board:{game_type}:{name}")
        rows = []
        for name, raw in zip(names, pipe.execute()):
            games = int(raw[b"games"])
            wins = float(raw[b"wins"])
            kind, _, who = name.partition(":")
            rows.append({"kind": kind, "name": who, "games": games, "wins": round(wins, 4),
                         "win_rate": round(wins / games, 4),
                         "average_rank": round(int(raw[b"rank_sum"]) / games, 4)})
        rows.sort(key=lambda r: (-r["win_rate"], r["average_rank"], r["name"]))
        return rows


