"""The event store: one Redis stream per game, appended by one Lua script.

Keys of a game share the hash tag {g:ID} so a game lives in one Redis Cluster slot:
  game:{g:ID}:events   the stream; entry id "<version>-0", fields e (body) and h (hash)
  game:{g:ID}:meta     hash: version, head, and side facts written atomically with a batch
                       (status, token hashes, the secret seed, ...)
  game:{g:ID}:idem     hash: idempotency key -> body digest + receipt
  game:{g:ID}:snap     hash: a cached state labelled with version and head hash

`MemoryEventStore` keeps the same contract in a Python dict, for unit tests.
"""

from __future__ import annotations

import json
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, Optional

from .envelope import GENESIS, NewEvent, StoredEvent, decode_body, seal
from .upcast import UPCASTERS, Upcasters


class StoreError(Exception):
    pass


class VersionConflict(StoreError):
    """expected_version did not match, or the batch was built on a head that has moved."""

    def __init__(self, current_version: int, reason: str = "version"):
        super().__init__(f"{reason} conflict at version {current_version}")
        self.current_version = current_version
        self.reason = reason


class IdempotencyConflict(StoreError):
    """The idempotency key was used before with another body."""

    def __init__(self, current_version: int):
        super().__init__("idempotency key reused with another body")
        self.current_version = current_version


@dataclass(frozen=True)
class Receipt:
    version: int          # the game's version after the batch
    head: str             # the head hash after the batch
    first_version: int    # the version of the batch's first event
    duplicate: bool = False  # True when an idempotent retry returned the original receipt
    sealed: tuple = ()       # the (body, hash) pairs this append wrote (empty for a duplicate)

    def as_dict(self) -> dict:
        return {"version": self.version, "head": self.head, "first_version": self.first_version}


def keys(game_id: str) -> dict[str, str]:
    tag = f"{{g:{game_id}}}"
    return {name: f"game:{tag}:{name}" for name in ("events", "meta", "idem", "snap")}


def _now_ms() -> int:
    return int(time.time() * 1000)


class EventStore(ABC):
    """The contract every store keeps (tested once, run on each implementation)."""

    upcasters: Upcasters = UPCASTERS

    def append(self, game_id: str, events: list[NewEvent], *, base_version: int, base_head: str,
               expected_version: Optional[int] = None, idempotency_key: Optional[str] = None,
               body_digest: str = "", meta: Optional[dict[str, str]] = None,
               at: Optional[int] = None, nonce: Optional[Callable[[int], str]] = None) -> Receipt:
        """Atomically append a batch built on (base_version, base_head).

        Checks, before any write and in this order: the idempotency key (same digest: the
        original receipt, marked duplicate; other digest: IdempotencyConflict), the expected
        version (VersionConflict), the chain head (VersionConflict, reason "head").
        `meta` fields are written with the batch; `nonce(version)` salts each body.
        """
        if not events:
            raise ValueError("an append needs at least one event")
        sealed = seal(events, base_version, base_head, at if at is not None else _now_ms(), nonce)
        receipt = Receipt(base_version + len(sealed), sealed[-1][1], base_version + 1,
                          sealed=tuple(sealed))
        return self._append(game_id, sealed, receipt, base_version, base_head, expected_version,
                            idempotency_key or "", body_digest, meta or {})

    @abstractmethod
    def _append(self, game_id, sealed, receipt, base_version, base_head, expected_version,
                idem_key, body_digest, meta) -> Receipt: ...

    @abstractmethod
    def get_idempotent(self, game_id: str, idem_key: str) -> Optional[tuple[str, Receipt]]:
        """(body digest, original receipt) stored under an idempotency key, if any."""

    @abstractmethod
    def read_raw(self, game_id: str, after: int = 0, until: Optional[int] = None) -> list[tuple[str, str]]:
        """[(body, hash)] of versions after+1 .. until, as stored."""

    @abstractmethod
    def head(self, game_id: str) -> tuple[int, str]:
        """(version, head hash); (0, GENESIS) for a game with no events."""

    @abstractmethod
    def get_meta(self, game_id: str, *fields: str) -> dict[str, Optional[str]]: ...

    @abstractmethod
    def set_meta(self, game_id: str, mapping: dict[str, str]) -> None:
        """Side facts that need no atomicity with a batch (caches, job bookkeeping)."""

    @abstractmethod
    def save_snapshot(self, game_id: str, version: int, head: str, blob: bytes) -> None: ...

    @abstractmethod
    def load_snapshot(self, game_id: str) -> Optional[tuple[int, str, bytes]]: ...

    def read(self, game_id: str, after: int = 0, until: Optional[int] = None) -> list[StoredEvent]:
        """Decoded, upcast events after+1 .. until, each with its prev_hash."""
        raw = self.read_raw(game_id, after, until)
        if not raw:
            return []
        prev = self._hash_at(game_id, after)
        out = []
        for body, hash_ in raw:
            out.append(self.upcasters.upcast(decode_body(body, prev, hash_)))
            prev = hash_
        return out

    def _hash_at(self, game_id: str, version: int) -> str:
        if version <= 0:
            return GENESIS
        raw = self.read_raw(game_id, version - 1, version)
        return raw[0][1] if raw else GENESIS

    def exists(self, game_id: str) -> bool:
        return self.head(game_id)[0] > 0


# --- Redis -------------------------------------------------------------------------------

# KEYS: events, meta, idem.
# ARGV: expected_version ("" = none), idem_key ("" = none), body_digest, base_version,
#       base_head, receipt_json, n_events, n_meta, then n_events (body, hash) pairs,
#       then n_meta (field, value) pairs.
# Every check happens before the first write, so a refused batch changes nothing.
APPEND_LUA = """
local expected = ARGV[1]
local idem_key = ARGV[2]
local digest = ARGV[3]
local base_version = tonumber(ARGV[4])
local base_head = ARGV[5]
local receipt = ARGV[6]
local n_events = tonumber(ARGV[7])
local n_meta = tonumber(ARGV[8])

local version = tonumber(redis.call('HGET', KEYS[2], 'version') or '0')
if idem_key ~= '' then
  local seen = redis.call('HGET', KEYS[3], idem_key)
  if seen then
    local sep = string.find(seen, '\\n', 1, true)
    if string.sub(seen, 1, sep - 1) == digest then
      return {'dup', string.sub(seen, sep + 1)}
    end
    return {'idem', tostring(version)}
  end
end
if expected ~= '' and tonumber(expected) ~= version then
  return {'version', tostring(version)}
end
local head = redis.call('HGET', KEYS[2], 'head') or '0000000000000000000000000000000000000000000000000000000000000000'
if base_version ~= version or base_head ~= head then
  return {'head', tostring(version)}
end

local i = 9
local last = head
for n = 1, n_events do
  redis.call('XADD', KEYS[1], tostring(version + n) .. '-0', 'e', ARGV[i], 'h', ARGV[i + 1])
  last = ARGV[i + 1]
  i = i + 2
end
redis.call('HSET', KEYS[2], 'version', tostring(version + n_events), 'head', last)
for n = 1, n_meta do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
  i = i + 2
end
if idem_key ~= '' then
  redis.call('HSET', KEYS[3], idem_key, digest .. '\\n' .. receipt)
end
return {'ok', receipt}
"""


def _receipt_from_json(text: str, duplicate: bool) -> Receipt:
    raw = json.loads(text)
    return Receipt(raw["version"], raw["head"], raw["first_version"], duplicate)


def _raise_refusal(status: str, version: int) -> None:
    if status == "idem":
        raise IdempotencyConflict(version)
    raise VersionConflict(version, status)


class RedisEventStore(EventStore):
    """The store on Redis (or fakeredis). `client` must not decode responses."""

    def __init__(self, client):
        self.redis = client
        self._append_script = client.register_script(APPEND_LUA)

    def _append(self, game_id, sealed, receipt, base_version, base_head, expected_version,
                idem_key, body_digest, meta):
        k = keys(game_id)
        args = ["" if expected_version is None else str(expected_version), idem_key, body_digest,
                str(base_version), base_head, json.dumps(receipt.as_dict()),
                str(len(sealed)), str(len(meta))]
        for body, hash_ in sealed:
            args += [body, hash_]
        for field, value in meta.items():
            args += [field, value]
        status, value = self._append_script(keys=[k["events"], k["meta"], k["idem"]], args=args)
        status = status.decode()
        if status == "ok":
            return receipt
        if status == "dup":
            return _receipt_from_json(value.decode(), duplicate=True)
        _raise_refusal(status, int(value))

    def read_raw(self, game_id, after=0, until=None):
        start = f"{after + 1}-0"
        end = f"{until}-0" if until is not None else "+"
        entries = self.redis.xrange(keys(game_id)["events"], start, end)
        return [(fields[b"e"].decode(), fields[b"h"].decode()) for _, fields in entries]

    def get_idempotent(self, game_id, idem_key):
        seen = self.redis.hget(keys(game_id)["idem"], idem_key)
        if seen is None:
            return None
        digest, receipt = seen.decode().split("\n", 1)
        return digest, _receipt_from_json(receipt, duplicate=True)

    def head(self, game_id):
        version, head = self.redis.hmget(keys(game_id)["meta"], "version", "head")
        if version is None:
            return 0, GENESIS
        return int(version), head.decode()

    def get_meta(self, game_id, *fields):
        values = self.redis.hmget(keys(game_id)["meta"], *fields)
        return {f: (v.decode() if v is not None else None) for f, v in zip(fields, values)}

    def set_meta(self, game_id, mapping):
        self.redis.hset(keys(game_id)["meta"], mapping=mapping)

    def save_snapshot(self, game_id, version, head, blob):
        self.redis.hset(keys(game_id)["snap"], mapping={"version": version, "head": head, "blob": blob})

    def load_snapshot(self, game_id):
        version, head, blob = self.redis.hmget(keys(game_id)["snap"], "version", "head", "blob")
        if version is None:
            return None
        return int(version), head.decode(), blob


# --- In memory ---------------------------------------------------------------------------

class MemoryEventStore(EventStore):
    """The same contract in process memory (unit tests, tools)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, list[tuple[str, str]]] = {}
        self._meta: dict[str, dict[str, str]] = {}
        self._idem: dict[str, dict[str, tuple[str, Receipt]]] = {}
        self._snaps: dict[str, tuple[int, str, bytes]] = {}

    def _append(self, game_id, sealed, receipt, base_version, base_head, expected_version,
                idem_key, body_digest, meta):
        with self._lock:
            stream = self._events.setdefault(game_id, [])
            version = len(stream)
            if idem_key:
                seen = self._idem.get(game_id, {}).get(idem_key)
                if seen is not None:
                    if seen[0] == body_digest:
                        return seen[1]
                    raise IdempotencyConflict(version)
            if expected_version is not None and expected_version != version:
                raise VersionConflict(version, "version")
            head = stream[-1][1] if stream else GENESIS
            if base_version != version or base_head != head:
                raise VersionConflict(version, "head")
            stream.extend(sealed)
            self._meta.setdefault(game_id, {}).update(meta)
            if idem_key:
                original = Receipt(receipt.version, receipt.head, receipt.first_version, True)
                self._idem.setdefault(game_id, {})[idem_key] = (body_digest, original)
            return receipt

    def get_idempotent(self, game_id, idem_key):
        with self._lock:
            return self._idem.get(game_id, {}).get(idem_key)

    def read_raw(self, game_id, after=0, until=None):
        with self._lock:
            stream = self._events.get(game_id, [])
            return list(stream[after:until])

    def head(self, game_id):
        with self._lock:
            stream = self._events.get(game_id)
            return (len(stream), stream[-1][1]) if stream else (0, GENESIS)

    def get_meta(self, game_id, *fields):
        with self._lock:
            meta = self._meta.get(game_id, {})
            return {f: meta.get(f) for f in fields}

    def set_meta(self, game_id, mapping):
        with self._lock:
            self._meta.setdefault(game_id, {}).update({k: str(v) for k, v in mapping.items()})

    def save_snapshot(self, game_id, version, head, blob):
        with self._lock:
            self._snaps[game_id] = (version, head, blob)

    def load_snapshot(self, game_id):
        with self._lock:
            return self._snaps.get(game_id)

    # Test hook: the raw stream, so tamper tests can rewrite history behind the store's back.
    def raw_stream(self, game_id: str) -> list[tuple[str, str]]:
        return self._events.setdefault(game_id, [])
