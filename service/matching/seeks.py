"""Quick pairing: an account asks for a game of a type for N players (rated or not, a rating
range, bots after T seconds if nobody comes); the matchmaker forms tables from the waiting
seeks and tells every account on its stream.

A seek is an aggregate, `seek/<id>`: `seek.opened`, then `seek.matched` (its table: the game's
id, every seek of the table, the seats) or `seek.cancelled`; `seek.released` undoes a match
whose table could not be completed. The pool of a (type, players, rated) is a sorted set of
open seek ids by age (a projection; the seek's own stream decides).

Matching (`match`), under a lease per pool (one matchmaker at a time for a pool, whichever
process asks; the lease outlives a crashed holder by a few seconds only):
- the live seeks, oldest first: a seek lives while its account's stream is open, or for
  `PRESENCE_GRACE` seconds after it closed or after the seek was made (a reconnect keeps it);
  a seek past that is cancelled ("gone");
- first come within the rating range: each seek, in age order, joins the first forming table
  that holds no seek of its account and where every member's rating lies within the range
  of every other (a seek without a range takes any rating); a table complete at N players is
  formed at once;
- a table whose oldest seek has waited `bots_after` seconds is completed with bots
  (`heuristic`) and formed;
- forming is a chain of single-aggregate appends, each idempotent, its table written into
  the first: (1) every seek of the table marked `seek.matched` with the whole table (if one
  of them is no longer open, the ones marked are released and nothing else happens);
  (2) the game created with seats reserved for the accounts (its id derived from the
  table's seeks); (3) each account's seat claimed for it; (4) each account is told
  (`seek.matched`), then the seeks leave the pool. A pass that finds a matched seek still in
  the pool runs (1)-(4) again from the table it holds (a crash between two marks left some
  seeks open: they are marked now, or, if one is no longer open, the table is released): a
  crash at any step finishes at the next pass (on the next seek, or the reconciler's pass)
  or is undone, never half, and no account is in two tables. A table whose game expired
  first (its chain stalled past TABLE_EXPIRY_MS) is undone: its seeks are cancelled.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Optional

from redis.exceptions import LockError

from events.envelope import GENESIS, NewEvent
from events.keys import stream_prefix
from events.store import EventStore
from projections.registry import UnknownGame, get_game

from ..accounts.credentials import Principal
from ..core.errors import Conflict, Invalid, NotFound
from ..core.tokens import keyed_game_id
from ..core.unit_of_work import Answer, Command, Decision, Idempotency, UnitOfWork

log = logging.getLogger(__name__)

PRESENCE_GRACE = 30.0        # seconds a seek outlives its account's last open stream
LEASE_MS = 5000
MAX_OPEN_PER_ACCOUNT = 5
POOL_SCAN = 500
FILL_LEVEL = "heuristic"
TABLE_EXPIRY_MS = 120_000    # a formed table whose seats were not all taken in this time expires


def _now_ms() -> int:
    return int(time.time() * 1000)


# Every pool that ever had a seek, by name: a set bounded by game types x table sizes x
# rated, read by the periodic pass instead of a SCAN of the keyspace (every node's, on a cluster).
POOLS = "pools:known"


def pool_name(game_type: str, players: int, rated: bool) -> str:
    return f"{game_type}.{players}.{int(rated)}"


def pool_key(game_type: str, players: int, rated: bool) -> str:
    return f"{stream_prefix('pool/' + pool_name(game_type, players, rated))}:seeks"


def presence_key(account_id: str) -> str:
    return f"{stream_prefix('account/' + account_id)}:present"


@dataclass(frozen=True)
class Seek:
    stream_id: str
    version: int = 0
    head: str = GENESIS
    id: str = ""
    account: str = ""
    game_type: str = ""
    players: int = 0
    rated: bool = False
    rating: float = 0.0
    rating_range: Optional[tuple] = None
    bots_after: Optional[float] = None
    turn_timeout: Optional[float] = None
    opened_at: int = 0
    status: str = "open"                 # open, matched, cancelled
    table: Optional[dict] = field(default=None, hash=False)

    def fits(self, rating: float) -> bool:
        if self.rating_range is None:
            return True
        low, high = self.rating_range
        return (low is None or rating >= low) and (high is None or rating <= high)

    def public(self) -> dict:
        out = {"seek_id": self.id, "status": self.status, "type": self.game_type, "players": self.players,
               "rated": self.rated, "rating": self.rating, "opened_at": self.opened_at,
               "bots_after": self.bots_after, "rating_range": list(self.rating_range) if self.rating_range else None}
        if self.table:
            out["game_id"] = self.table["game_id"]
        return out


def _fold(events, seek: Seek) -> Seek:
    for event in events:
        data = event.data
        if event.type == "seek.opened":
            seek = replace(seek, id=data["seek_id"], account=data["account"], game_type=data["game_type"],
                           players=data["players"], rated=data["rated"], rating=data["rating"],
                           rating_range=tuple(data["rating_range"]) if data.get("rating_range") else None,
                           bots_after=data.get("bots_after"), turn_timeout=data.get("turn_timeout"),
                           opened_at=event.at)
        elif event.type == "seek.matched":
            seek = replace(seek, status="matched", table=data)
        elif event.type == "seek.released":
            seek = replace(seek, status="open", table=None)
        elif event.type == "seek.cancelled":
            seek = replace(seek, status="cancelled")
        seek = replace(seek, version=event.version, head=event.hash)
    return seek


class SeekRepository:
    def __init__(self, store: EventStore):
        self.store = store

    def peek(self, stream_id, idem_key):
        return self.store.peek(stream_id, idem_key)

    def head(self, stream_id):
        return self.store.head(stream_id)

    def load(self, stream_id, at=None) -> Seek:
        at = at or self.store.head(stream_id)
        return _fold(self.store.read(stream_id, 0, at[0]), Seek(stream_id))

    def empty(self, stream_id) -> Seek:
        return Seek(stream_id)

    def append(self, seek: Seek, decision: Decision, idem):
        receipt = self.store.append(seek.stream_id, decision.events, base_version=seek.version, base_head=seek.head,
                                    expected_version=decision.expected_version,
                                    idempotency_key=idem.key if idem else "", body_digest=idem.digest if idem else "")
        if not receipt.sealed:
            return receipt, seek, []
        return receipt, self.load(seek.stream_id, (receipt.version, receipt.head)), []

    def follow_up(self, after) -> None:
        pass


class Presence:
    """This process's open account streams, told to the matchmaker at the cost of a few
    commands per stream and one heartbeat per process (not one write per stream per period):

    - the first stream of an account here adds this process to the account's set of
      processes holding a stream (`...:present`); the last one leaving takes it out and, if
      no process is left, marks the account as gone since now (`...:left`, PRESENCE_GRACE s);
    - each process beats (`presence:process:<id>`, PRESENCE_GRACE s) every REFRESH seconds
      while it holds any stream, so a process that dies stops vouching for its accounts.
    An account is present while one of its processes beats, or for PRESENCE_GRACE seconds
    after its last stream closed (`present`)."""

    REFRESH = 10.0

    def __init__(self, client):
        self.redis = client
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}
        self._thread: Optional[threading.Thread] = None
        self._ident: Optional[tuple[int, str]] = None

    @property
    def process(self) -> str:
        """This process's id (made after a fork, so two workers never share one)."""
        import os

        if self._ident is None or self._ident[0] != os.getpid():
            self._ident = (os.getpid(), secrets.token_hex(6))
        return self._ident[1]

    def hold(self, account_id: str):
        with self._lock:
            first = self._held.get(account_id, 0) == 0
            self._held[account_id] = self._held.get(account_id, 0) + 1
            start = self._thread is None
            if start:
                self._thread = threading.Thread(target=self._beat, daemon=True, name="presence")
        if first:
            pipe = self.redis.pipeline(transaction=False)
            pipe.set(process_key(self.process), "1", ex=int(PRESENCE_GRACE))
            pipe.sadd(presence_key(account_id), self.process)
            pipe.execute()
        if start:
            self._thread.start()
        released = False

        def release() -> None:
            nonlocal released
            with self._lock:
                if released:
                    return
                released = True
                left = self._held.get(account_id, 0) - 1
                if left > 0:
                    self._held[account_id] = left
                    return
                self._held.pop(account_id, None)
            try:
                pipe = self.redis.pipeline(transaction=False)
                pipe.srem(presence_key(account_id), self.process)
                pipe.set(left_key(account_id), "1", ex=int(PRESENCE_GRACE))
                pipe.execute()
            except Exception:   # the heartbeat lapses on its own: the account is gone in 30 s
                log.warning("marking %s's stream closed failed", account_id)

        return release

    def _beat(self) -> None:
        while True:
            time.sleep(self.REFRESH)
            with self._lock:
                if not self._held:
                    self._thread = None
                    return
            try:
                self.redis.set(process_key(self.process), "1", ex=int(PRESENCE_GRACE))
            except Exception:   # a Redis outage: the next beat tries again
                pass


def process_key(process: str) -> str:
    return f"presence:process:{process}"


def left_key(account_id: str) -> str:
    return f"{stream_prefix('account/' + account_id)}:left"


def present(client, account_id: str) -> bool:
    """Whether the account has an event stream open (in a process that still beats), or
    closed its last one less than PRESENCE_GRACE seconds ago."""
    if client.exists(left_key(account_id)):
        return True
    processes = client.smembers(presence_key(account_id))
    return any(client.exists(process_key(p.decode())) for p in processes)


class Seeks:
    def __init__(self, core, accounts, ratings, client):
        self.core = core
        self.accounts = accounts
        self.ratings = ratings
        self.redis = client
        self.work = UnitOfWork(SeekRepository(core.store))

    # --- an account's seeks -------------------------------------------------------------
    def open(self, principal: Principal, game_type: str, players: int, rated: bool,
             rating_range: Optional[dict], bots_after: Optional[float], turn_timeout: Optional[float]) -> Seek:
        try:
            game = get_game(game_type)
        except UnknownGame:
            raise Invalid(f"type: unknown game type {game_type!r}", {"field": "type"}, code="unknown_game_type")
        if not game.MIN_PLAYERS <= players <= game.MAX_PLAYERS:
            raise Invalid(f"players: {game_type} takes {game.MIN_PLAYERS} to {game.MAX_PLAYERS} players",
                          {"field": "players"})
        if rated and not turn_timeout:
            raise Invalid("turn_timeout: a rated game needs a turn clock", {"field": "turn_timeout"},
                          code="rated_needs_clock")
        mine = [s for s in self.mine(principal) if s.status == "open"]
        if len(mine) >= MAX_OPEN_PER_ACCOUNT:
            raise Conflict(f"seeks: at most {MAX_OPEN_PER_ACCOUNT} open seeks per account; cancel one",
                           {"field": "seeks"}, code="too_many_seeks")
        rating = self._rating(principal.account_id, game_type)
        bounds = None
        if rating_range:
            bounds = [rating_range.get("min"), rating_range.get("max")]
        seek_id = secrets.token_hex(8)
        opened = NewEvent("seek.opened", {"seek_id": seek_id, "account": principal.account_id,
                                          "game_type": game_type, "players": players, "rated": rated,
                                          "rating": rating, "rating_range": bounds, "bots_after": bots_after,
                                          "turn_timeout": turn_timeout})
        seek = self.work.run(Command(f"seek/{seek_id}", lambda s, c: Decision([opened], 0), lambda done: done.after,
                                     new=True, unseen=True))
        pipe = self.redis.pipeline(transaction=False)
        pipe.sadd(POOLS, pool_name(game_type, players, rated))   # before the seek: the pass finds its pool
        pipe.zadd(pool_key(game_type, players, rated), {seek_id: seek.opened_at})
        pipe.sadd(self._mine_key(principal.account_id), seek_id)
        pipe.execute()
        try:   # the seek is made: matching follows it, and a failure here is the next pass's to heal
            if bots_after is not None:
                self.core.jobs.match_seeks(game_type, players, rated, bots_after)
            self.match(game_type, players, rated)
        except Exception:
            log.exception("matching the pool of seek %s failed; the next pass forms its table", seek_id)
        return self.load(seek_id)

    def _rating(self, account_id: str, game_type: str) -> float:
        found = self.ratings.of_account(account_id).get(game_type)
        return round(found["ordinal"], 6) if found else 0.0

    def load(self, seek_id: str) -> Seek:
        seek = self.work.repository.load(f"seek/{seek_id}")
        if not seek.id:
            raise NotFound(f"seek_id: no seek {seek_id!r}", {"field": "seek_id"})
        return seek

    @staticmethod
    def _mine_key(account_id: str) -> str:
        return f"{stream_prefix('account/' + account_id)}:seeks"

    def mine(self, principal: Principal) -> list[Seek]:
        out = []
        for seek_id in sorted(m.decode() for m in self.redis.smembers(self._mine_key(principal.account_id))):
            seek = self.work.repository.load(f"seek/{seek_id}")
            if seek.status in ("open", "matched") and seek.id:
                out.append(seek)
            else:
                self.redis.srem(self._mine_key(principal.account_id), seek_id)
        return out

    def cancel(self, principal: Principal, seek_id: str, reason: str = "cancelled") -> Seek:
        seek = self.load(seek_id)
        if seek.account != principal.account_id:
            raise NotFound(f"seek_id: no seek {seek_id!r} of this account", {"field": "seek_id"})
        return self._cancel(seek_id, reason)

    def _cancel(self, seek_id: str, reason: str) -> Seek:
        def decide(seek: Seek, careful: bool):
            if seek.status != "open":
                return Answer(seek)
            return Decision([NewEvent("seek.cancelled", {"reason": reason})])

        seek = self.work.run(Command(f"seek/{seek_id}", decide, lambda done: done.after))
        if seek.status == "cancelled":
            self.redis.zrem(pool_key(seek.game_type, seek.players, seek.rated), seek_id)
        return seek

    # --- the matchmaker --------------------------------------------------------------------------
    def match(self, game_type: str, players: int, rated: bool) -> list[str]:
        """One pass over a pool (under its lease): the games formed."""
        pool = pool_key(game_type, players, rated)
        dirty = f"{pool}:dirty"
        # redis-py's lock: SET NX PX to take it; its release is one compare-and-delete script
        # (a GET then a DEL would delete the lease another pass took in between, once this
        # one's had lapsed). One key: the pool's slot.
        lease = self.redis.lock(f"{pool}:lease", timeout=LEASE_MS / 1000, blocking=False, thread_local=False)
        if not lease.acquire(token=secrets.token_hex(8)):
            # another pass holds the pool: it looks again before it lets go (a seek made while
            # it ran is never left waiting for the next periodic pass)
            self.redis.set(dirty, "1", px=LEASE_MS)
            return []
        formed: list[str] = []
        try:
            for _ in range(10):
                self.redis.delete(dirty)
                formed += self._match(pool, players)
                if not self.redis.exists(dirty):
                    return formed
            return formed
        finally:
            try:
                lease.release()
            except LockError:   # it lapsed (a pass longer than LEASE_MS): no longer ours to delete
                pass

    def _match(self, pool: str, players: int) -> list[str]:
        formed: list[str] = []
        now = _now_ms()
        waiting: list[Seek] = []
        resumed: set = set()
        for member in self.redis.zrange(pool, 0, POOL_SCAN - 1):
            seek = self.work.repository.load(f"seek/{member.decode()}")
            if seek.status == "matched":
                if seek.table["game_id"] not in resumed:     # a chain a crash left behind
                    resumed.add(seek.table["game_id"])
                    formed.append(self._resume(seek.table))
            elif seek.status != "open":
                self.redis.zrem(pool, member)
            elif not self._alive(seek, now):
                self._cancel(seek.id, "gone")
            else:
                waiting.append(seek)
        tables: list[list[Seek]] = []
        for seek in waiting:
            table = next((t for t in tables if self._joins(t, seek)), None)
            if table is None:
                tables.append([seek])
                table = tables[-1]
            else:
                table.append(seek)
            if len(table) == players:
                tables.remove(table)
                formed += self._form(table, players)
        for table in tables:
            oldest = table[0]
            if oldest.bots_after is not None and now - oldest.opened_at >= oldest.bots_after * 1000:
                formed += self._form(table, players)
        return [g for g in formed if g]

    def _alive(self, seek: Seek, now: int) -> bool:
        return now - seek.opened_at < PRESENCE_GRACE * 1000 or present(self.redis, seek.account)

    @staticmethod
    def _joins(table: list[Seek], seek: Seek) -> bool:
        return all(s.account != seek.account and s.fits(seek.rating) and seek.fits(s.rating) for s in table)

    def _form(self, table: list[Seek], players: int) -> list[str]:
        first = table[0]
        ids = sorted(s.id for s in table)
        label = hashlib.sha256(("seek-table\0" + "\0".join(ids)).encode()).hexdigest()[:16]
        game_id = keyed_game_id(self.core.idem_key, f"seek-table:{label}")   # what the create will make
        seats = [{"reserved": s.account, "seek_id": s.id} for s in table]
        seats += [{"bot": FILL_LEVEL}] * (players - len(table))
        spec = {"game_id": game_id, "table": label, "game_type": first.game_type, "players": players,
                "rated": first.rated, "turn_timeout": first.turn_timeout, "seats": seats, "seeks": ids}
        marked = []
        for seek in table:
            if not self._mark(seek.id, spec):
                for done in marked:     # one of the table is gone: undo, nothing else happens
                    self._release(done, game_id)
                return []
            marked.append(seek.id)
        return [self._complete(spec)]

    def _mark(self, seek_id: str, spec: dict) -> bool:
        def decide(seek: Seek, careful: bool):
            if seek.status == "matched" and seek.table and seek.table["game_id"] == spec["game_id"]:
                return Answer(True)
            if seek.status != "open":
                return Answer(False)
            return Decision([NewEvent("seek.matched", spec)])

        done = self.work.run(Command(f"seek/{seek_id}", decide, lambda d: True,
                                     idem=Idempotency(f"matched:{spec['game_id']}", spec["game_id"]),
                                     replay=lambda receipt: True))
        return bool(done)

    def _release(self, seek_id: str, game_id: str) -> None:
        def decide(seek: Seek, careful: bool):
            if seek.status != "matched" or seek.table["game_id"] != game_id:
                return Answer(seek)
            return Decision([NewEvent("seek.released", {"game_id": game_id})])

        self.work.run(Command(f"seek/{seek_id}", decide, lambda done: done.after))

    def _resume(self, spec: dict) -> str:
        """A table a pass finds half-formed (a matched seek still in the pool): step (1) again
        for every seek of the table (a seek marked already answers yes), then (2)-(4). A crash
        between two marks left the others open: if one of them is no longer open (cancelled,
        gone, or at another table), the table is undone (the marked ones are released), as
        `_form` does. "" when undone."""
        for seek_id in spec["seeks"]:
            if not self._mark(seek_id, spec):
                for marked in spec["seeks"]:
                    self._release(marked, spec["game_id"])
                return ""
        return self._complete(spec)

    def _complete(self, spec: dict) -> str:
        """Steps (2)-(4) of forming a table, from the table a matched seek holds (idempotent)."""
        game_id = spec["game_id"]
        seats = [{"reserved": s["reserved"]} if "reserved" in s else {"bot": s["bot"]} for s in spec["seats"]]
        session = self.core.create_game(
            spec["game_type"], {}, seats, turn_timeout=spec.get("turn_timeout"), rated=spec["rated"],
            idempotency_key=f"seek-table:{spec['table']}",
            platform_extra={"seek": True, "expires_at": _now_ms() + TABLE_EXPIRY_MS},
            creator=f"account:{spec['seats'][0]['reserved']}").session
        if session.game_id != game_id:
            raise RuntimeError(f"the table {spec['table']} was made as {session.game_id}, not {game_id}: "
                               "the service's idem_key changed")
        try:
            for seat, info in enumerate(spec["seats"]):
                if "reserved" in info and self.core.load(game_id).seats[seat].kind == "open":
                    self.core.claim_seat(game_id, seat, None, f"seek:{info['seek_id']}", account=info["reserved"])
        except Conflict as err:
            if getattr(err, "code", None) != "game_expired":
                raise
            return self._expired(spec)
        # told first, then out of the pool: a seek still in the pool is the next pass's to
        # finish (the notices are idempotent), one out of it is never looked at again
        for seat, info in enumerate(spec["seats"]):
            if "seek_id" in info:
                self.accounts_notice(info["reserved"], info["seek_id"], game_id, seat, spec)
        pipe = self.redis.pipeline(transaction=False)
        for info in spec["seats"]:
            if "seek_id" in info:
                pipe.zrem(pool_key(spec["game_type"], spec["players"], spec["rated"]), info["seek_id"])
        pipe.execute()
        return game_id

    def _expired(self, spec: dict) -> str:
        """The table's game expired with a seat still open (its chain stalled for longer than
        TABLE_EXPIRY_MS): it never starts, so the table is undone. Its seeks are cancelled
        (`expired`; released, the same seeks would form the same game again) and leave the
        pool, and the pass goes on with the rest of the pool."""
        game_id = spec["game_id"]

        def decide(seek: Seek, careful: bool):
            if seek.status != "matched" or seek.table["game_id"] != game_id:
                return Answer(seek)
            return Decision([NewEvent("seek.cancelled", {"reason": "expired", "game_id": game_id})])

        for seek_id in spec["seeks"]:
            self.work.run(Command(f"seek/{seek_id}", decide, lambda done: done.after))
        self.redis.zrem(pool_key(spec["game_type"], spec["players"], spec["rated"]), *spec["seeks"])
        return ""

    def accounts_notice(self, account: str, seek_id: str, game_id: str, seat: int, spec: dict) -> None:
        data = {"seek_id": seek_id, "game_id": game_id, "game_type": spec["game_type"], "seat": seat,
                "rated": spec["rated"]}
        self.accounts.work.run(Command(f"account/{account}",
                                       lambda a, c: Decision([NewEvent("notice.matched", data)]),
                                       lambda done: None, idem=Idempotency(f"matched:{seek_id}", seek_id),
                                       replay=lambda receipt: None))

    def pools(self) -> list[tuple[str, int, bool]]:
        """Every pool with seeks waiting (the periodic pass's work)."""
        names = sorted(n.decode() for n in self.redis.smembers(POOLS))
        pipe = self.redis.pipeline(transaction=False)   # one key each: any slot, on a cluster too
        for name in names:
            pipe.zcard(f"{stream_prefix('pool/' + name)}:seeks")
        out = []
        for name, waiting in zip(names, pipe.execute()):
            if waiting:
                game_type, players, rated = name.rsplit(".", 2)
                out.append((game_type, int(players), rated == "1"))
        return out

