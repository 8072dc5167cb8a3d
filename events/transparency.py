"""The transparency log (docs/audit.md, "Transparency log"): one append-only Merkle tree of
game checkpoints, a signed tree head per batch, and the sequencer pass that fills it.

A leaf is the canonical JSON `{"game", "head", "version"}`: the game's hash chain ended in
`head` at `version`. The sequencer (`sequence`, run by workers/sequencer.py) adds a leaf for
every game that moved since it last logged it, in batches; each batch is committed at once
with its signed tree head, and only onto the tree size it was built on, so two sequencers
can never fork the tree (the one that lost the race finds the size moved and commits nothing).

On Redis every key carries the hash tag {tlog}, so the batch's multi-key script runs on a
Redis Cluster too (one slot; the number of keys is fixed, whatever the number of games):

    {tlog}:hashes        list: the leaf hashes (32 bytes each), index order
    {tlog}:leaves        list: each leaf's entry, JSON {"leaf", "sequenced_at", "tree_size"}
                         (`tree_size`: the size of the head that first held it)
    {tlog}:heads         list: the signed tree heads (JSON), one per batch, oldest first
    {tlog}:head-at       hash: tree size -> the signed tree head published at that size
    {tlog}:checkpointed  hash: game -> the last version logged
    {tlog}:game-leaves   hash: game -> JSON list of its leaves' indexes, ascending
    {tlog}:lease         the sequencer's lease (SET NX PX, renewed by its holder; its owner is
                         checked again inside the commit's script: a lapsed holder commits nothing)
    {tlog}:watermark     how far (a time, s) the sequencer has read the touched games

`MemoryTransparencyLog` keeps the same contract in process memory (tests, tools).

Proofs come from a `MerkleTree` each log object keeps in memory (events/merkle.py): read
once, then only the new leaf hashes are read, and each extension is checked against the
head published at its size (a log replaced underneath is read again from the start).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from . import merkle
from .signing import canonical_bytes

log = logging.getLogger(__name__)

STH_FORMAT = "speculation-sth/1"
TAG = "{tlog}"
KEYS = {name: f"{TAG}:{name}" for name in
        ("hashes", "leaves", "heads", "head-at", "checkpointed", "game-leaves", "lease", "watermark")}

LOOKBACK = 30.0        # seconds before the watermark each pass reads again (as the reconciler)
BATCH = 5000           # touched games read per pass at most (the rest on the next pass)
LEASE_MS = 5000        # a sequencer that stops renewing loses the lease this long after


# --- leaves and tree heads --------------------------------------------------------------

@dataclass(frozen=True)
class Checkpoint:
    """One leaf: the game's chain ended in `head` at `version`."""

    game: str
    head: str
    version: int

    def as_dict(self) -> dict:
        return {"game": self.game, "head": self.head, "version": self.version}

    def leaf_bytes(self) -> bytes:
        return canonical_bytes(self.as_dict())

    def leaf_hash(self) -> bytes:
        return merkle.leaf_hash(self.leaf_bytes())

    @classmethod
    def of(cls, leaf: dict) -> "Checkpoint":
        return cls(leaf["game"], leaf["head"], int(leaf["version"]))


def tree_head_payload(tree_size: int, root_hash: bytes, timestamp: int) -> dict:
    """The tree head before its signature."""
    return {"format": STH_FORMAT, "tree_size": tree_size, "root_hash": root_hash.hex(), "timestamp": timestamp}


@dataclass(frozen=True)
class Batch:
    """Checkpoints to append onto a tree of `base_size` leaves, with the signed head of the
    tree they make."""

    base_size: int
    checkpoints: tuple[Checkpoint, ...]
    head: dict

    @property
    def tree_size(self) -> int:
        return self.base_size + len(self.checkpoints)

    def entries(self) -> list[str]:
        """What {tlog}:leaves holds for each leaf."""
        at = self.head["timestamp"]
        return [json.dumps({"leaf": c.as_dict(), "sequenced_at": at, "tree_size": self.tree_size},
                           sort_keys=True, separators=(",", ":")) for c in self.checkpoints]


def _dump(obj: dict) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


# --- the contract ------------------------------------------------------------------------

class TransparencyLog(ABC):
    """What the sequencer, the routes and the dispute bundle use; storage primitives are
    abstract, proofs are built here on the cached tree."""

    def __init__(self) -> None:
        self._tree = merkle.MerkleTree()
        self._tree_lock = threading.Lock()

    # --- storage primitives ------------------------------------------------------------
    @abstractmethod
    def size(self) -> int:
        """Leaves in the log (the latest tree head's size: leaves and head are one commit)."""

    @abstractmethod
    def _read_hashes(self, start: int, end: int) -> list[bytes]: ...

    @abstractmethod
    def _read_entries(self, start: int, end: int) -> list[dict]: ...

    @abstractmethod
    def _entries_at(self, indexes: list[int]) -> list[dict]: ...

    @abstractmethod
    def _commit(self, batch: Batch, hashes: list[bytes], owner: str = "") -> bool: ...

    @abstractmethod
    def latest_head(self) -> Optional[dict]:
        """The latest signed tree head (None before the first batch)."""

    @abstractmethod
    def head_at(self, tree_size: int) -> Optional[dict]:
        """The signed tree head published at this size (None: none was)."""

    @abstractmethod
    def heads(self, start: int = 0, end: Optional[int] = None) -> list[dict]:
        """The signed tree heads start..end-1 in the order published (oldest first)."""

    @abstractmethod
    def logged_versions(self, games: list[str]) -> dict[str, int]:
        """The last version logged of each game that has a checkpoint."""

    @abstractmethod
    def leaf_indexes(self, game: str) -> list[int]:
        """The indexes of the game's leaves, ascending."""

    @abstractmethod
    def hold_lease(self, owner: str, ttl_ms: int = LEASE_MS) -> bool:
        """Take the sequencer's lease, or renew it when `owner` holds it; False: another does."""

    @abstractmethod
    def release_lease(self, owner: str) -> None: ...

    @abstractmethod
    def watermark(self) -> float: ...

    @abstractmethod
    def set_watermark(self, at: float) -> None: ...

    # --- committing --------------------------------------------------------------------
    def build(self, base_size: int, checkpoints: Iterable[Checkpoint], sign: Callable[[dict], dict],
              timestamp: int) -> Batch:
        """The batch of `checkpoints` onto the first `base_size` leaves, its head signed."""
        checkpoints = tuple(checkpoints)
        if not checkpoints:
            raise ValueError("a batch has at least one checkpoint")
        with self._tree_lock:
            current = self.size()
            tree = self._synced(base_size)
            if current != base_size or len(tree) != base_size:   # the log has moved on: no commit
                raise StaleBase(max(current, len(tree)))
            tree.extend(c.leaf_hash() for c in checkpoints)
            try:
                root = tree.root()
            finally:   # the cache holds committed leaves only: the new ones come back from storage
                tree.truncate(base_size)
        return Batch(base_size, checkpoints, sign(tree_head_payload(base_size + len(checkpoints), root, timestamp)))

    def commit(self, batch: Batch, owner: str = "") -> bool:
        """Append the batch and its head at once, only if the log still has `base_size`
        leaves and, given an `owner`, only while that owner holds the sequencer's lease:
        False (and nothing written) otherwise."""
        return self._commit(batch, [c.leaf_hash() for c in batch.checkpoints], owner)

    # --- reading -----------------------------------------------------------------------
    def _synced(self, size: int) -> merkle.MerkleTree:
        """The cached tree holding at least the first `size` committed leaves (the lock held).
        Each extension is checked against the head published at its new size: a mismatch
        (the log replaced underneath: a restored backup) reads the whole log again."""
        tree = self._tree
        if len(tree) >= size:
            return tree
        for attempt in range(2):
            # To the log's end, where a head was published: the extension is checked there.
            end = max(size, self.size())
            tree.extend(self._read_hashes(len(tree), end))
            if len(tree) < size:
                raise ValueError(f"tree size {size}: the log has {len(tree)} leaves")
            published = self.head_at(len(tree))
            if published is None or published["root_hash"] == tree.root().hex():
                return tree
            log.error("the transparency log differs from the tree read before (at size %d): reading it again",
                      len(tree))
            tree = self._tree = merkle.MerkleTree()
        raise ValueError(f"the transparency log's leaves do not match its tree head at size {size}")

    def root(self, tree_size: int) -> bytes:
        with self._tree_lock:
            return self._synced(tree_size).root(tree_size)

    def inclusion_proof(self, index: int, tree_size: int) -> list[str]:
        """PATH(index, D[tree_size]) as hex."""
        with self._tree_lock:
            return [h.hex() for h in self._synced(tree_size).inclusion_proof(index, tree_size)]

    def consistency_proof(self, first: int, second: int) -> list[str]:
        """PROOF(first, D[second]) as hex (1 <= first <= second <= size)."""
        with self._tree_lock:
            return [h.hex() for h in self._synced(second).consistency_proof(first, second)]

    def entries(self, start: int, end: int) -> list[dict]:
        """Leaves start..end-1: {"index", "leaf", "sequenced_at"}."""
        return [{"index": i, "leaf": e["leaf"], "sequenced_at": e["sequenced_at"]}
                for i, e in enumerate(self._read_entries(start, end), start=start)]

    def checkpoints(self, game: str, tree_size: int) -> list[dict]:
        """The game's checkpoints among the first `tree_size` leaves, each
        {"index", "leaf", "inclusion"} with its inclusion proof in that tree."""
        indexes = [i for i in self.leaf_indexes(game) if i < tree_size]
        found = self._entries_at(indexes)
        with self._tree_lock:
            tree = self._synced(tree_size)
            return [{"index": i, "leaf": e["leaf"], "inclusion": [h.hex() for h in tree.inclusion_proof(i, tree_size)]}
                    for i, e in zip(indexes, found)]

    def first_head_holding(self, index: int) -> Optional[dict]:
        """The first signed tree head that held leaf `index` (its batch's); None past the log."""
        if not 0 <= index < self.size():
            return None
        return self.head_at(self._entries_at([index])[0]["tree_size"])


class StaleBase(ValueError):
    """A batch asked for a base size the log no longer has."""

    def __init__(self, size: int):
        super().__init__(f"the log has {size} leaves")
        self.size = size


# --- Redis -------------------------------------------------------------------------------

# KEYS: hashes, leaves, heads, head-at, checkpointed, game-leaves, lease.
# ARGV: base size, the head (JSON), its tree size, n, then n times (entry, hash, game, version),
# then the committing sequencer's lease owner ('' for a commit made without the lease).
# The checks come before the first write: a batch built on a size that moved, or committed by
# a sequencer whose lease lapsed (the owner is the lease's fencing token, checked here, in the
# write itself), changes nothing.
COMMIT_LUA = """
local size = redis.call('LLEN', KEYS[1])
local owner = ARGV[#ARGV]
if owner ~= '' and redis.call('GET', KEYS[7]) ~= owner then
  return {'lease', size}
end
if size ~= tonumber(ARGV[1]) then
  return {'stale', size}
end
local n = tonumber(ARGV[4])
local i = 5
for k = 0, n - 1 do
  redis.call('RPUSH', KEYS[2], ARGV[i])
  redis.call('RPUSH', KEYS[1], ARGV[i + 1])
  redis.call('HSET', KEYS[5], ARGV[i + 2], ARGV[i + 3])
  local listed = redis.call('HGET', KEYS[6], ARGV[i + 2])
  if listed then
    listed = string.sub(listed, 1, -2) .. ',' .. tostring(size + k) .. ']'
  else
    listed = '[' .. tostring(size + k) .. ']'
  end
  redis.call('HSET', KEYS[6], ARGV[i + 2], listed)
  i = i + 4
end
redis.call('RPUSH', KEYS[3], ARGV[2])
redis.call('HSET', KEYS[4], ARGV[3], ARGV[2])
return {'ok', size + n}
"""

# KEYS: the lease. ARGV: owner, ttl (ms). 1: held by owner now (taken or renewed).
LEASE_LUA = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""

RELEASE_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class RedisTransparencyLog(TransparencyLog):
    """The log on Redis (or fakeredis); `client` must not decode responses."""

    def __init__(self, client):
        super().__init__()
        self.redis = client
        self._commit_script = client.register_script(COMMIT_LUA)
        self._lease_script = client.register_script(LEASE_LUA)
        self._release_script = client.register_script(RELEASE_LUA)

    def size(self) -> int:
        return int(self.redis.llen(KEYS["hashes"]))

    def _read_hashes(self, start, end):
        out: list[bytes] = []
        for at in range(start, end, 10_000):   # a long log in pieces: no one huge reply
            out += self.redis.lrange(KEYS["hashes"], at, min(at + 10_000, end) - 1)
        return out

    def _read_entries(self, start, end):
        if end <= start:
            return []
        return [json.loads(e) for e in self.redis.lrange(KEYS["leaves"], start, end - 1)]

    def _entries_at(self, indexes):
        if not indexes:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for i in indexes:
            pipe.lindex(KEYS["leaves"], i)
        found = pipe.execute()
        if any(e is None for e in found):
            raise ValueError(f"the log has no leaf {indexes[found.index(None)]}")
        return [json.loads(e) for e in found]

    def _commit(self, batch, hashes, owner=""):
        args: list = [batch.base_size, _dump(batch.head), batch.tree_size, len(hashes)]
        for entry, h, c in zip(batch.entries(), hashes, batch.checkpoints):
            args += [entry, h, c.game, c.version]
        keys = [KEYS[k] for k in ("hashes", "leaves", "heads", "head-at", "checkpointed", "game-leaves", "lease")]
        reply = self._commit_script(keys=keys, args=args + [owner])
        return reply[0] == b"ok"

    def latest_head(self):
        found = self.redis.lindex(KEYS["heads"], -1)
        return json.loads(found) if found is not None else None

    def head_at(self, tree_size):
        found = self.redis.hget(KEYS["head-at"], str(tree_size))
        return json.loads(found) if found is not None else None

    def heads(self, start=0, end=None):
        stop = -1 if end is None else end - 1
        if end is not None and end <= start:
            return []
        return [json.loads(h) for h in self.redis.lrange(KEYS["heads"], start, stop)]

    def logged_versions(self, games):
        if not games:
            return {}
        values = self.redis.hmget(KEYS["checkpointed"], games)
        return {g: int(v) for g, v in zip(games, values) if v is not None}

    def leaf_indexes(self, game):
        found = self.redis.hget(KEYS["game-leaves"], game)
        return json.loads(found) if found is not None else []

    def hold_lease(self, owner, ttl_ms=LEASE_MS):
        return bool(self._lease_script(keys=[KEYS["lease"]], args=[owner, int(ttl_ms)]))

    def release_lease(self, owner):
        self._release_script(keys=[KEYS["lease"]], args=[owner])

    def watermark(self):
        value = self.redis.get(KEYS["watermark"])
        return float(value) if value is not None else 0.0

    def set_watermark(self, at):
        self.redis.set(KEYS["watermark"], repr(float(at)))


# --- In memory -----------------------------------------------------------------------------

@dataclass
class _Stored:
    hashes: list = field(default_factory=list)
    entries: list = field(default_factory=list)
    heads: list = field(default_factory=list)
    head_at: dict = field(default_factory=dict)
    checkpointed: dict = field(default_factory=dict)
    game_leaves: dict = field(default_factory=dict)
    lease: Optional[tuple[str, float]] = None
    watermark: float = 0.0


class MemoryTransparencyLog(TransparencyLog):
    """The same contract in process memory, one lock for every operation."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self._lock = threading.Lock()
        self._s = _Stored()
        self._clock = clock

    def size(self):
        with self._lock:
            return len(self._s.hashes)

    def _read_hashes(self, start, end):
        with self._lock:
            return list(self._s.hashes[start:end])

    def _read_entries(self, start, end):
        with self._lock:
            return [json.loads(e) for e in self._s.entries[start:max(start, end)]]

    def _entries_at(self, indexes):
        with self._lock:
            missing = [i for i in indexes if not 0 <= i < len(self._s.entries)]
            if missing:
                raise ValueError(f"the log has no leaf {missing[0]}")
            return [json.loads(self._s.entries[i]) for i in indexes]

    def _commit(self, batch, hashes, owner=""):
        with self._lock:
            s = self._s
            if owner and (s.lease is None or s.lease[0] != owner or s.lease[1] <= self._clock()):
                return False
            if len(s.hashes) != batch.base_size:
                return False
            for index, (entry, h, c) in enumerate(zip(batch.entries(), hashes, batch.checkpoints), start=batch.base_size):
                s.entries.append(entry)
                s.hashes.append(h)
                s.checkpointed[c.game] = c.version
                s.game_leaves.setdefault(c.game, []).append(index)
            head = _dump(batch.head)
            s.heads.append(head)
            s.head_at[batch.tree_size] = head
            return True

    def latest_head(self):
        with self._lock:
            return json.loads(self._s.heads[-1]) if self._s.heads else None

    def head_at(self, tree_size):
        with self._lock:
            found = self._s.head_at.get(tree_size)
        return json.loads(found) if found is not None else None

    def heads(self, start=0, end=None):
        with self._lock:
            return [json.loads(h) for h in self._s.heads[start:end]]

    def logged_versions(self, games):
        with self._lock:
            return {g: self._s.checkpointed[g] for g in games if g in self._s.checkpointed}

    def leaf_indexes(self, game):
        with self._lock:
            return list(self._s.game_leaves.get(game, []))

    def hold_lease(self, owner, ttl_ms=LEASE_MS):
        with self._lock:
            now = self._clock()
            held = self._s.lease
            if held is not None and held[0] != owner and held[1] > now:
                return False
            self._s.lease = (owner, now + ttl_ms / 1000)
            return True

    def release_lease(self, owner):
        with self._lock:
            if self._s.lease is not None and self._s.lease[0] == owner:
                self._s.lease = None

    def watermark(self):
        with self._lock:
            return self._s.watermark

    def set_watermark(self, at):
        with self._lock:
            self._s.watermark = float(at)


# --- the sequencer pass ----------------------------------------------------------------------

@dataclass(frozen=True)
class BatchResult:
    held: bool                      # this pass held the lease (else it did nothing)
    touched: int = 0                # games read from the index
    logged: int = 0                 # checkpoints committed
    tree_size: Optional[int] = None  # after the pass (None: not read)
    head: Optional[dict] = None     # the signed tree head published (None: none)
    stale: bool = False             # the batch was built on a size that moved: not committed

    def as_dict(self) -> dict:
        return {"held": self.held, "touched": self.touched, "logged": self.logged, "tree_size": self.tree_size,
                "stale": self.stale}


PROCESS_OWNER = f"sequencer-{uuid.uuid4().hex}"


def moved_checkpoints(log_: TransparencyLog, store, games: list[str]) -> list[Checkpoint]:
    """A checkpoint at the store's head of each game whose version is past the one logged."""
    logged = log_.logged_versions(games)
    heads = store.heads(games)      # one pipeline (a cluster: one a node), not a round trip a game
    out = []
    for game in games:
        version, head = heads[game]
        last = logged.get(game, 0)
        if version > last:
            out.append(Checkpoint(game, head, version))
        elif version and version < last:   # the store went back (a restored backup): say so, log nothing
            log.error("game %s is at version %d in the store but was logged at version %d", game, version, last)
    return out


def sequence(log_: TransparencyLog, store, index, sign: Callable[[dict], dict], now_ms: Optional[int] = None, *,
             owner: str = PROCESS_OWNER, lease_ms: int = LEASE_MS, batch: int = BATCH) -> BatchResult:
    """One pass: with the lease, a checkpoint for every game touched since the watermark
    (minus LOOKBACK) whose store head is past its last logged version, committed as one batch
    with its signed tree head; then the watermark moves. Without the lease: nothing.

    - The touch comes before each append (events/index.py), so a game read here before its
      append lands is read again by the next passes (LOOKBACK), at its new head.
    - The size is read before the logged versions: a batch committed by another sequencer in
      between makes this one stale (its commit refused), never a duplicate.
    - A pass that fails or dies before its commit has moved nothing: the next one builds the
      batch again from the same watermark. A pass with nothing moved publishes no head (the
      latest one stays the log's head) and moves the watermark.
    """
    now = time.time() if now_ms is None else now_ms / 1000   # the touches' clock: seconds, unrounded
    now_ms = int(now * 1000) if now_ms is None else now_ms
    if not log_.hold_lease(owner, lease_ms):
        return BatchResult(held=False)
    mark = log_.watermark()
    touched = index.touched(max(0.0, mark - LOOKBACK), now, batch)
    base_size = log_.size()
    checkpoints = moved_checkpoints(log_, store, list(dict.fromkeys(g for g, _ in touched)))
    head = None
    if checkpoints:
        try:
            built = log_.build(base_size, checkpoints, sign, now_ms)
        except StaleBase as stale:
            return BatchResult(True, len(touched), 0, stale.size, None, stale=True)
        if not log_.commit(built, owner):
            return BatchResult(True, len(touched), 0, log_.size(), None, stale=True)
        head = built.head
        base_size = built.tree_size
    # As the reconciler: from now, or from the last game read when the batch was full.
    log_.set_watermark(touched[-1][1] + LOOKBACK if len(touched) == batch else now)
    return BatchResult(True, len(touched), len(checkpoints), base_size, head)
