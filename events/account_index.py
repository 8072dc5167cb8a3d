"""The accounts' indexes on Redis: each account's games, the sign-in guards, the list of
accounts. Projections beside the streams, never the truth: each account's games are rebuilt
from the games' logs (the reconciler's repair, `speculation accounts rebuild`), and nothing
that must hold at once is decided here (a username is decided by its own aggregate, a
revocation by the account's).

Every key of one account shares the account's hash tag, and every key of one username's
sign-in guard the username's: one slot each in a Redis Cluster, no operation across slots.
"""

from __future__ import annotations

import time
from .keys import stream_prefix

ACCOUNTS = "accounts:opened"      # sorted set: account id -> when it was opened (ms)
FINISHED = ("ended", "scored", "expired", "abandoned")   # an expired invitation is over too, an abandoned game too


def _games_key(account_id: str, which: str) -> str:
    return f"{stream_prefix('account/' + account_id)}:games:{which}"


def _guard_key(username_key: str, which: str) -> str:
    return f"{stream_prefix('username/' + username_key)}:signin:{which}"


# One more password check for a name, counted before the check (so checks in flight at once
# cannot pass the bound): refused while the lock holds; past the bound within the window the
# lock is set, once (NX: never extended while it holds). A right password clears the count.
# Returns {1, 0} (check it) or {0, the lock's ttl} (refused).
_ATTEMPT = """
if redis.call('EXISTS', KEYS[2]) == 1 then return {0, redis.call('TTL', KEYS[2])} end
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
if n > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[3])
  redis.call('DEL', KEYS[1])
  return {0, redis.call('TTL', KEYS[2])}
end
return {1, 0}
"""


class AccountIndex:
    def __init__(self, client):
        self.redis = client
        self._attempt = client.register_script(_ATTEMPT)

    # --- the account's games -----------------------------------------------------------
    def record_game(self, account_id: str, game_id: str, status: str, last_move_at: int) -> None:
        """The game under the account, newest move first, in the list of its status."""
        finished = status in FINISHED
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(_games_key(account_id, "all"), {game_id: last_move_at})
        pipe.zadd(_games_key(account_id, "finished" if finished else "active"), {game_id: last_move_at})
        pipe.zrem(_games_key(account_id, "active" if finished else "finished"), game_id)
        pipe.execute()

    def games(self, account_id: str, which: str = "all", offset: int = 0,
              limit: int = 20) -> tuple[list[str], int]:
        key = _games_key(account_id, which)
        pipe = self.redis.pipeline(transaction=False)
        pipe.zrevrange(key, offset, offset + limit - 1)
        pipe.zcard(key)
        ids, total = pipe.execute()
        return [g.decode() for g in ids], total

    def forget_games(self, account_id: str) -> None:
        self.redis.delete(*(_games_key(account_id, w) for w in ("all", "active", "finished")))

    # --- accounts ----------------------------------------------------------------------
    def record_account(self, account_id: str, opened_at: int) -> None:
        self.redis.zadd(ACCOUNTS, {account_id: opened_at})

    def accounts(self, offset: int = 0, limit: int = 1000) -> list[str]:
        return [a.decode() for a in self.redis.zrange(ACCOUNTS, offset, offset + limit - 1)]

    # --- sign-in guards ------------------------------------------------------------------
    def lock_ttl(self, username_key: str) -> int:
        """Seconds left of the name's sign-in lock (0: not locked)."""
        return max(0, int(self.redis.ttl(_guard_key(username_key, "lock"))))

    def attempt_sign_in(self, username_key: str, window: int, lock_after: int, lock_seconds: int) -> int:
        """Count one password check before it is made: 0 when it may be made, else the
        seconds the name's sign-in stays locked."""
        allowed, ttl = self._attempt(keys=[_guard_key(username_key, "fails"), _guard_key(username_key, "lock")],
                                     args=[window, lock_after, lock_seconds])
        return 0 if int(allowed) else max(1, int(ttl))

    def signed_in(self, username_key: str) -> None:
        self.redis.delete(_guard_key(username_key, "fails"))

    def now_ms(self) -> int:
        return int(time.time() * 1000)

