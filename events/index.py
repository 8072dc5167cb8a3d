"""Cross-game indexes: the lobby, the token directory, stream tickets, and
what the reconciler reads (games touched, games waiting on a job, its watermark).

These are projections kept beside the streams (on Redis each key on its own, so they work on
Redis Cluster); they can be rebuilt from the streams, and are never part of the audit.
`GameIndex` keeps them on Redis; `MemoryGameIndex` keeps the same contract in process memory.

On a Redis Cluster no sorted set of the index is one key: each is split into `CLUSTER_SHARDS`
keys ("<name>#<n>", a game in shard crc32(id) mod n), spread over the cluster's slots, so no
single node takes every create, move and touch; a read asks every shard in one pipelined round
trip (one per node) and merges, in the order one key would have given. The token directory is
a key per token. On one Redis (or fakeredis) every set stays the single key it always was.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections import defaultdict
from typing import Callable, Optional


LOBBY_ALL = "lobby:all"
TOUCHED = "games:touched"          # sorted set: game -> when a command last began to write it
WAITING = "games:waiting-jobs"     # sorted set: game -> since when it waits on a worker's job
WATERMARK = "reconciler:watermark"  # how far (a time) the reconciler has looked at TOUCHED
ARCHIVE_QUEUE = "games:to-archive"  # sorted set: scored game -> when it was first seen scored
STATUSES = ("open", "active", "ended", "scored", "abandoned")
# Active games by when they last moved (ms, the events' clock), all and per type: the lobby's
# live list. Written with the touch before each append (one round trip with it) and set to
# the game's own last move by `record` (each status change, each repair).
MOVED = "lobby:moved"
# Active games without a clock by when they last moved (ms): what the abandon pass reads
# (games idle past ABANDON_AFTER), so it never looks at a game that moved or has a clock.
IDLE = "games:unclocked-moved"
# How far (a creation time, ms) the one walk over the active games made before MOVED existed has
# gone, listing each by its last move ("done" once over): games that never move again get there too.
BACKFILL = "lobby:moved-backfill"


def _moved_key(game_type: Optional[str]) -> str:
    return f"lobby:type:{game_type}:moved" if game_type else MOVED


def _lobby_key(game_type: Optional[str], status: Optional[str]) -> str:
    if game_type and status:
        return f"lobby:type:{game_type}:status:{status}"
    if game_type:
        return f"lobby:type:{game_type}"
    if status:
        return f"lobby:status:{status}"
    return LOBBY_ALL


CLUSTER_SHARDS = 16    # keys each sorted set of the index is split into on a cluster


def _redis_range(items: list, start: int, stop: int) -> list:
    """items[start..stop] as Redis reads a range: both ends inclusive, negative from the end."""
    n = len(items)
    start, stop = (start + n if start < 0 else start), (stop + n if stop < 0 else stop)
    start = max(start, 0)
    return items[start:stop + 1] if start <= stop else []


class GameIndex:
    """The indexes on Redis: each sorted set one key on a single server, `shards` keys on a
    cluster (CLUSTER_SHARDS unless told)."""

    def __init__(self, client, shards: Optional[int] = None):
        from redis.cluster import RedisCluster

        self.redis = client
        self.shards = shards or (CLUSTER_SHARDS if isinstance(client, RedisCluster) else 1)

    # --- the keys: one, or one per shard ---------------------------------------------
    def _k(self, key: str, game_id: str) -> str:
        """The key that holds `game_id`'s entry of the sorted set `key`."""
        if self.shards == 1:
            return key
        return f"{key}#{zlib.crc32(game_id.encode()) % self.shards}"

    def _all(self, key: str) -> list[str]:
        return [key] if self.shards == 1 else [f"{key}#{n}" for n in range(self.shards)]

    def _merged(self, key: str, read: Callable, limit: int, newest_first: bool = False) -> list[tuple[bytes, float]]:
        """`read(pipe, shard_key)` (rows with scores) on every shard, merged in the order of one
        sorted set (score, then member) and cut at `limit`."""
        pipe = self.redis.pipeline()
        for shard in self._all(key):
            read(pipe, shard)
        rows = [row for part in pipe.execute() for row in part]
        rows.sort(key=lambda row: (row[1], row[0]), reverse=newest_first)
        return rows[:limit]

    def _count(self, key: str, count: Callable) -> int:
        pipe = self.redis.pipeline()
        for shard in self._all(key):
            count(pipe, shard)
        return sum(pipe.execute())

    # --- lobby -----------------------------------------------------------------------
    def record(self, game_id: str, game_type: str, status: str, created_at: int,
               moved_at: Optional[int] = None, clocked: bool = False) -> None:
        """Put the game under its current status (idempotent; safe to repeat). An expired game
        (an invitation that never started) leaves every list. An active game with `moved_at`
        (its last move, ms) is listed by it among the live ones (and, without a clock, among
        the abandon pass's candidates); a game in any other status leaves those lists."""
        if status not in STATUSES:
            self.expire(game_id, game_type)
            return
        k = self._k
        pipe = self.redis.pipeline()
        for old in STATUSES:
            if old != status:
                pipe.zrem(k(_lobby_key(None, old), game_id), game_id)
                pipe.zrem(k(_lobby_key(game_type, old), game_id), game_id)
        for key in (_lobby_key(None, None), _lobby_key(game_type, None),
                    _lobby_key(None, status), _lobby_key(game_type, status)):
            pipe.zadd(k(key, game_id), {game_id: created_at})
        if status == "scored":     # the archive's queue: a scored game moves out later
            pipe.zadd(k(ARCHIVE_QUEUE, game_id), {game_id: time.time()}, nx=True)
        if status != "active":
            for key in (MOVED, _moved_key(game_type), IDLE):
                pipe.zrem(k(key, game_id), game_id)
        elif moved_at is not None:
            self._moved(pipe, game_id, game_type, moved_at, clocked)
        pipe.execute()

    def _moved(self, pipe, game_id: str, game_type: str, at: int, clocked: bool) -> None:
        pipe.zadd(self._k(MOVED, game_id), {game_id: at})
        pipe.zadd(self._k(_moved_key(game_type), game_id), {game_id: at})
        if clocked:
            pipe.zrem(self._k(IDLE, game_id), game_id)
        else:
            pipe.zadd(self._k(IDLE, game_id), {game_id: at})

    def live(self, game_type: Optional[str], since: int, offset: int = 0,
             limit: int = 20) -> tuple[list[str], int]:
        """Active games that moved at or after `since` (ms), latest move first: (page, total)."""
        key = _moved_key(game_type)
        if self.shards == 1:
            pipe = self.redis.pipeline()
            pipe.zrevrangebyscore(key, "+inf", since, start=offset, num=limit)
            pipe.zcount(key, since, "+inf")
            ids, total = pipe.execute()
            return [i.decode() for i in ids], total
        rows = self._merged(key, lambda p, k: p.zrevrangebyscore(k, "+inf", since, start=0, num=offset + limit,
                                                                 withscores=True), offset + limit, newest_first=True)
        return [g.decode() for g, _ in rows[offset:]], self._count(key, lambda p, k: p.zcount(k, since, "+inf"))

    def idle_before(self, before: int, limit: int = 100) -> list[str]:
        """Active games without a clock whose last move was before `before` (ms), longest idle first."""
        if self.shards == 1:
            return [g.decode() for g in self.redis.zrangebyscore(IDLE, "-inf", f"({before}", start=0, num=limit)]
        rows = self._merged(IDLE, lambda p, k: p.zrangebyscore(k, "-inf", f"({before}", start=0, num=limit,
                                                               withscores=True), limit)
        return [g.decode() for g, _ in rows]

    def idle_checked(self, game_id: str, at: Optional[int]) -> None:
        """The abandon pass looked at an idle game it leaves as it is: looked at again as if it
        had moved at `at` (ms); None: it is no game, out of the list."""
        if at is None:
            self.redis.zrem(self._k(IDLE, game_id), game_id)
        else:
            self.redis.zadd(self._k(IDLE, game_id), {game_id: at}, xx=True)

    def backfill_cursor(self) -> Optional[int]:
        """Where the walk over the active games stands (a creation time, ms); None once done."""
        value = self.redis.get(BACKFILL)
        return 0 if value is None else None if value == b"done" else int(value)

    def set_backfill_cursor(self, at: Optional[int]) -> None:
        self.redis.set(BACKFILL, "done" if at is None else str(at))

    def active_from(self, created_at: int, limit: int) -> list[tuple[str, int]]:
        """Active games created at or after `created_at`, oldest first: (id, created_at)."""
        rows = self._merged(_lobby_key(None, "active"),
                            lambda p, k: p.zrangebyscore(k, created_at, "+inf", start=0, num=limit, withscores=True),
                            limit)
        return [(g.decode(), int(score)) for g, score in rows]

    def archive_queue_due(self, before: float, limit: int = 100) -> list[str]:
        """Scored games first seen scored before `before`, oldest first."""
        if self.shards == 1:
            return [g.decode() for g in self.redis.zrangebyscore(ARCHIVE_QUEUE, "-inf", before, start=0, num=limit)]
        rows = self._merged(ARCHIVE_QUEUE, lambda p, k: p.zrangebyscore(k, "-inf", before, start=0, num=limit,
                                                                        withscores=True), limit)
        return [g.decode() for g, _ in rows]

    def archive_queue_done(self, game_id: str) -> None:
        self.redis.zrem(self._k(ARCHIVE_QUEUE, game_id), game_id)

    def list(self, game_type: Optional[str] = None, status: Optional[str] = None,
             offset: int = 0, limit: int = 20) -> tuple[list[str], int]:
        """Newest first: (game ids of the page, total matching)."""
        key = _lobby_key(game_type, status)
        if self.shards == 1:
            pipe = self.redis.pipeline()
            pipe.zrevrange(key, offset, offset + limit - 1)
            pipe.zcard(key)
            ids, total = pipe.execute()
            return [i.decode() for i in ids], total
        if limit <= 0:
            return [], self._count(key, lambda p, k: p.zcard(k))
        rows = self._merged(key, lambda p, k: p.zrevrange(k, 0, offset + limit - 1, withscores=True),
                            offset + limit, newest_first=True)
        return [g.decode() for g, _ in rows[offset:]], self._count(key, lambda p, k: p.zcard(k))

    def games_waiting(self, status: str, limit: int = 1000) -> list[str]:
        key = _lobby_key(None, status)
        if self.shards == 1:
            return [i.decode() for i in self.redis.zrange(key, 0, limit - 1)]
        return [g.decode() for g, _ in self._merged(key, lambda p, k: p.zrange(k, 0, limit - 1, withscores=True),
                                                    limit)]

    # --- what the reconciler reads (workers/reconciler.py) ----------------------------
    def touch(self, game_id: str, at: Optional[float] = None, pipe=None) -> None:
        """Mark the game as being written now (before its append: an intent, so that what
        follows the append, if lost, is found again). `pipe`: a pipeline of this same Redis
        that carries it, in one round trip with the append."""
        (pipe if pipe is not None else self.redis).zadd(self._k(TOUCHED, game_id),
                                                        {game_id: time.time() if at is None else at})

    def touch_with_append(self, game_id: str, store, moved: Optional[tuple[str, bool]] = None) -> Optional[Callable]:
        """The touch as a step of `store`'s next append (its `before`) when the store writes
        to this same Redis: one round trip for both (on a cluster, where the index's keys are
        in other slots, the store runs it first, in a round trip of its own: the touch still
        reaches Redis before the append). Otherwise it is done now. `moved`: (game type, has a
        clock) of an active game, listed as moving now among the live ones."""
        def steps(pipe) -> None:   # None: not in the append's round trip, a round trip of its own
            own = pipe is None
            pipe = self.redis.pipeline() if own else pipe
            self.touch(game_id, pipe=pipe)
            if moved is not None:
                self._moved(pipe, game_id, moved[0], int(time.time() * 1000), moved[1])
            if own:
                pipe.execute()

        if getattr(store, "redis", None) is self.redis:
            return steps
        steps(None)
        return None

    def touched(self, since: float, until: float, limit: int) -> list[tuple[str, float]]:
        """Games last touched in [since, until], oldest first, at most `limit`."""
        rows = self._merged(TOUCHED, lambda p, k: p.zrangebyscore(k, since, until, start=0, num=limit,
                                                                  withscores=True), limit)
        return [(g.decode(), score) for g, score in rows]

    def forget_touched(self, before: float) -> None:
        pipe = self.redis.pipeline()
        for key in self._all(TOUCHED):
            pipe.zremrangebyscore(key, "-inf", f"({before}")
        pipe.execute()

    def watermark(self) -> float:
        value = self.redis.get(WATERMARK)
        return float(value) if value is not None else 0.0

    def set_watermark(self, at: float) -> None:
        self.redis.set(WATERMARK, repr(at))

    def mark_waiting(self, game_id: str, since: float) -> None:
        self.redis.zadd(self._k(WAITING, game_id), {game_id: since}, nx=True)

    def clear_waiting(self, game_id: str) -> None:
        self.redis.zrem(self._k(WAITING, game_id), game_id)

    def waiting_on_jobs(self, limit: int = 100_000) -> list[tuple[str, float]]:
        """Games that wait on a worker's job (a bot's turn, scoring, a turn timeout), oldest first."""
        rows = self._merged(WAITING, lambda p, k: p.zrange(k, 0, limit - 1, withscores=True), limit)
        return [(g.decode(), score) for g, score in rows]

    def open_before(self, created_before: int, limit: int = 1000) -> list[str]:
        """Open games created before `created_before` (the events' clock, ms), oldest first."""
        key = _lobby_key(None, "open")
        if self.shards == 1:
            return [i.decode() for i in self.redis.zrangebyscore(key, "-inf", f"({created_before}", 0, limit)]
        rows = self._merged(key, lambda p, k: p.zrangebyscore(k, "-inf", f"({created_before}", 0, limit,
                                                              withscores=True), limit)
        return [g.decode() for g, _ in rows]

    def expire(self, game_id: str, game_type: str) -> None:
        """Take an open game out of every lobby list (its log is kept and it answers by id;
        `record` puts it back should it be joined after all)."""
        pipe = self.redis.pipeline()
        for key in (_lobby_key(None, None), _lobby_key(game_type, None),
                    _lobby_key(None, "open"), _lobby_key(game_type, "open")):
            pipe.zrem(self._k(key, game_id), game_id)
        pipe.execute()

    # --- tokens ----------------------------------------------------------------------
    # One hash on a single Redis; on a cluster a key per token (every claim would write one
    # hot key otherwise).
    def record_token(self, token_hash: str, game_id: str, seat: int) -> None:
        if self.shards == 1:
            self.redis.hset("tokens", token_hash, f"{game_id}:{seat}")
        else:
            self.redis.set(f"token:{token_hash}", f"{game_id}:{seat}")

    def token_owner(self, token_hash: str) -> Optional[tuple[str, int]]:
        value = (self.redis.hget("tokens", token_hash) if self.shards == 1
                 else self.redis.get(f"token:{token_hash}"))
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


class MemoryGameIndex:
    """The same contract in process memory (unit tests, tools): lobby lists ordered as Redis
    orders a sorted set (by creation time, then by id), one lock for every operation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lobby: dict[str, dict[str, int]] = defaultdict(dict)   # lobby key -> {game: created_at}
        self._tokens: dict[str, str] = {}
        self._tickets: dict[str, tuple[str, float]] = {}             # hash -> (value, expiry)
        self._touched: dict[str, float] = {}
        self._waiting: dict[str, float] = {}
        self._to_archive: dict[str, float] = {}
        self._watermark = 0.0
        self._backfill: Optional[int] = 0

    def record(self, game_id: str, game_type: str, status: str, created_at: int,
               moved_at: Optional[int] = None, clocked: bool = False) -> None:
        if status not in STATUSES:
            self.expire(game_id, game_type)
            return
        with self._lock:
            for old in STATUSES:
                if old != status:
                    self._lobby[_lobby_key(None, old)].pop(game_id, None)
                    self._lobby[_lobby_key(game_type, old)].pop(game_id, None)
            for key in (_lobby_key(None, None), _lobby_key(game_type, None),
                        _lobby_key(None, status), _lobby_key(game_type, status)):
                self._lobby[key][game_id] = created_at
            if status == "scored":
                self._to_archive.setdefault(game_id, time.time())
            if status != "active":
                for key in (MOVED, _moved_key(game_type), IDLE):
                    self._lobby[key].pop(game_id, None)
            elif moved_at is not None:
                self._moved(game_id, game_type, moved_at, clocked)

    def _moved(self, game_id: str, game_type: str, at: int, clocked: bool) -> None:
        self._lobby[MOVED][game_id] = at
        self._lobby[_moved_key(game_type)][game_id] = at
        if clocked:
            self._lobby[IDLE].pop(game_id, None)
        else:
            self._lobby[IDLE][game_id] = at

    def live(self, game_type: Optional[str], since: int, offset: int = 0,
             limit: int = 20) -> tuple[list[str], int]:
        with self._lock:
            entries = self._lobby.get(_moved_key(game_type), {})
            latest_first = [g for g in self._ordered(_moved_key(game_type)) if entries[g] >= since][::-1]
        return latest_first[offset:offset + limit], len(latest_first)

    def idle_before(self, before: int, limit: int = 100) -> list[str]:
        with self._lock:
            entries = self._lobby.get(IDLE, {})
            return [g for g in self._ordered(IDLE) if entries[g] < before][:limit]

    def idle_checked(self, game_id: str, at: Optional[int]) -> None:
        with self._lock:
            if at is None:
                self._lobby[IDLE].pop(game_id, None)
            elif game_id in self._lobby[IDLE]:
                self._lobby[IDLE][game_id] = at

    def backfill_cursor(self) -> Optional[int]:
        with self._lock:
            return self._backfill

    def set_backfill_cursor(self, at: Optional[int]) -> None:
        with self._lock:
            self._backfill = at

    def active_from(self, created_at: int, limit: int) -> list[tuple[str, int]]:
        with self._lock:
            entries = self._lobby.get(_lobby_key(None, "active"), {})
            return [(g, entries[g]) for g in self._ordered(_lobby_key(None, "active"))
                    if entries[g] >= created_at][:limit]

    def archive_queue_due(self, before: float, limit: int = 100) -> list[str]:
        with self._lock:
            due = sorted((at, g) for g, at in self._to_archive.items() if at <= before)
        return [g for _, g in due[:limit]]

    def archive_queue_done(self, game_id: str) -> None:
        with self._lock:
            self._to_archive.pop(game_id, None)

    def _ordered(self, key: str) -> list[str]:
        return [g for g, _ in sorted(self._lobby.get(key, {}).items(), key=lambda item: (item[1], item[0]))]

    def list(self, game_type: Optional[str] = None, status: Optional[str] = None,
             offset: int = 0, limit: int = 20) -> tuple[list[str], int]:
        with self._lock:
            newest_first = self._ordered(_lobby_key(game_type, status))[::-1]
        return _redis_range(newest_first, offset, offset + limit - 1), len(newest_first)

    def games_waiting(self, status: str, limit: int = 1000) -> list[str]:
        with self._lock:
            return _redis_range(self._ordered(_lobby_key(None, status)), 0, limit - 1)

    def touch(self, game_id: str, at: Optional[float] = None, pipe=None) -> None:
        with self._lock:
            self._touched[game_id] = time.time() if at is None else at

    def touch_with_append(self, game_id: str, store, moved: Optional[tuple[str, bool]] = None) -> Optional[Callable]:
        self.touch(game_id)
        if moved is not None:
            with self._lock:
                self._moved(game_id, moved[0], int(time.time() * 1000), moved[1])
        return None

    def touched(self, since: float, until: float, limit: int) -> list[tuple[str, float]]:
        with self._lock:
            rows = sorted(((at, g) for g, at in self._touched.items() if since <= at <= until))
        return [(g, at) for at, g in rows[:limit]]

    def forget_touched(self, before: float) -> None:
        with self._lock:
            self._touched = {g: at for g, at in self._touched.items() if at >= before}

    def watermark(self) -> float:
        with self._lock:
            return self._watermark

    def set_watermark(self, at: float) -> None:
        with self._lock:
            self._watermark = at

    def mark_waiting(self, game_id: str, since: float) -> None:
        with self._lock:
            self._waiting.setdefault(game_id, since)

    def clear_waiting(self, game_id: str) -> None:
        with self._lock:
            self._waiting.pop(game_id, None)

    def waiting_on_jobs(self, limit: int = 100_000) -> list[tuple[str, float]]:
        with self._lock:
            rows = sorted((since, g) for g, since in self._waiting.items())
        return [(g, since) for since, g in rows[:limit]]
    def open_before(self, created_before: int, limit: int = 1000) -> list[str]:
        with self._lock:
            entries = self._lobby.get(_lobby_key(None, "open"), {})
            return [g for g in self._ordered(_lobby_key(None, "open")) if entries[g] < created_before][:limit]

    def expire(self, game_id: str, game_type: str) -> None:
        with self._lock:
            for key in (_lobby_key(None, None), _lobby_key(game_type, None),
                        _lobby_key(None, "open"), _lobby_key(game_type, "open")):
                self._lobby[key].pop(game_id, None)

    def record_token(self, token_hash: str, game_id: str, seat: int) -> None:
        with self._lock:
            self._tokens[token_hash] = f"{game_id}:{seat}"

    def token_owner(self, token_hash: str) -> Optional[tuple[str, int]]:
        with self._lock:
            value = self._tokens.get(token_hash)
        if value is None:
            return None
        game_id, seat = value.rsplit(":", 1)
        return game_id, int(seat)

    def record_ticket(self, ticket_hash: str, value: str, ttl: int) -> None:
        with self._lock:
            now = time.monotonic()
            self._tickets = {k: v for k, v in self._tickets.items() if v[1] > now}  # expire as Redis does
            self._tickets[ticket_hash] = (value, now + ttl)

    def ticket(self, ticket_hash: str) -> Optional[str]:
        with self._lock:
            value, expiry = self._tickets.get(ticket_hash, (None, 0.0))
        return value if expiry > time.monotonic() else None


