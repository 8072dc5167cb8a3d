"""The event store: one Redis stream per aggregate (a game today), appended by one Lua script.

Keys of a game share the hash tag {g:ID} so a game lives in one Redis Cluster slot (an
aggregate of another kind, "<kind>/<id>", has the same keys under "<kind>:{<kind>:<id>}":
events/keys.py):
  game:{g:ID}:events   the stream; entry id "<version>-0", fields e (body) and h (hash)
  game:{g:ID}:meta     hash: version, head, and side facts written atomically with a batch
                       (status and what the game waits on, token hashes, the secret seed, ...)
  game:{g:ID}:idem     hash: idempotency key -> body digest + receipt
  game:{g:ID}:snap     hash: a cached state labelled with version and head hash
  game:{g:ID}:chat...  the table chat, outside the hash chain (events/chat.py)

`MemoryEventStore` keeps the same contract in Python dicts (version and head recorded in the
game's meta with each batch, as the script does), for unit tests and tools.
"""

from __future__ import annotations

import logging
import threading
import zlib
import time
from abc import ABC, abstractmethod
import json
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError, WatchError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .chat import ChatPage, MemoryChat, RedisChat, chat_keys
from .envelope import GENESIS, NewEvent, StoredEvent, canonical, decode_body, seal
from .keys import stream_prefix
from .notify import LocalNotifier, Notifier, RedisNotifier, channel, sharded_pubsub
from .upcast import UPCASTERS, Upcasters


log = logging.getLogger(__name__)


class StoreError(Exception):
    pass


class VersionConflict(StoreError):
    """expected_version did not match, or the batch was built on a head that has moved."""

    def __init__(self, current_version: int, reason: str = "version"):
        super().__init__(f"{reason} conflict at version {current_version}")
        self.current_version = current_version
        self.reason = reason


class GameArchived(StoreError):
    """An append to a game that has left for the archive (events/archive.py): it takes no more
    events. Refused by the store's own atomic check, so no stray key is ever written for it."""


class NotReplicated(StoreError, RedisTimeoutError):
    """The batch is appended on the primary, but fewer replicas than asked confirmed it within
    the acknowledgement timeout (REDIS_ACK_REPLICAS, REDIS_ACK_TIMEOUT_MS): it is not
    acknowledged. A Redis timeout to every caller (the API answers 503 with Retry-After, a job
    is run again); a retry with the same idempotency key finds the batch and waits again."""

    def __init__(self, confirmed: int, wanted: int):
        super().__init__(f"{confirmed} of {wanted} replicas confirmed the append in time")
        self.confirmed, self.wanted = confirmed, wanted


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
    prefix = stream_prefix(game_id)
    return {name: f"{prefix}:{name}" for name in ("events", "meta", "idem", "snap", "arch")}


def ack_key(game_id: str) -> str:
    """A short-lived key in the game's slot: the write a retry makes before it waits for the
    replicas (WAIT counts a connection's own writes; a retry that appends nothing has none)."""
    return f"{stream_prefix(game_id)}:ack"


FORMAT = "speculation-archive/1"


@dataclass(frozen=True)
class GameRecord:
    """Everything the hot store holds of one game, in a form that survives a round trip."""

    game_id: str
    events: tuple                       # ((body, hash hex), ...) versions 1..n
    meta: dict = field(default_factory=dict)        # field -> text (the head as hex)
    idem: dict = field(default_factory=dict)        # key -> (body digest, last version, first version)
    chat: tuple = ()    # the table chat's entries in order ({"e", "v", "at"[, "f", "o"]}: events/chat.py)

    @property
    def version(self) -> int:
        return len(self.events)

    @property
    def head(self) -> str:
        return self.events[-1][1] if self.events else GENESIS

    def to_bytes(self) -> bytes:
        record = {"format": FORMAT, "game_id": self.game_id, "events": [list(e) for e in self.events],
                  "meta": self.meta, "idem": {k: list(v) for k, v in self.idem.items()}}
        if self.chat:       # a game without chat keeps the bytes it had before chats existed
            record["chat"] = [dict(c) for c in self.chat]
        return canonical(record).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> "GameRecord":
        obj = json.loads(data)
        if obj.get("format") != FORMAT:
            raise ValueError(f"not a game record of format {FORMAT}")
        return cls(obj["game_id"], tuple(tuple(e) for e in obj["events"]), dict(obj["meta"]),
                   {k: tuple(v) for k, v in obj["idem"].items()}, tuple(dict(c) for c in obj.get("chat", ())))

    def receipt(self, key: str) -> Optional[tuple[str, Receipt]]:
        seen = self.idem.get(key)
        if seen is None:
            return None
        digest, last, first = seen
        return digest, Receipt(int(last), self.events[int(last) - 1][1], int(first), True)


def _now_ms() -> int:
    return int(time.time() * 1000)


class EventStore(ABC):
    """The contract every store keeps (tested once, run on each implementation)."""

    upcasters: Upcasters = UPCASTERS

    def append(self, game_id: str, events: list[NewEvent], *, base_version: int, base_head: str,
               expected_version: Optional[int] = None, idempotency_key: Optional[str] = None,
               body_digest: str = "", meta: Optional[dict[str, str]] = None,
               at: Optional[int] = None, nonce: Optional[Callable[[int], str]] = None,
               before: Optional[Callable[[object], None]] = None) -> Receipt:
        """Atomically append a batch built on (base_version, base_head).

        Checks, before any write and in this order: the idempotency key (same digest: the
        original receipt, marked duplicate; other digest: IdempotencyConflict), the expected
        version (VersionConflict), the chain head (VersionConflict, reason "head").
        `meta` fields are written with the batch (a callable: given the sealed batch, it
        returns them); `nonce(version)` salts each body. `before(pipeline)` adds commands that
        must reach the server ahead of the append (the index's touch): on Redis they go in the
        same round trip, ahead of the script; elsewhere it is called with None first.
        """
        if not events:
            raise ValueError("an append needs at least one event")
        sealed = seal(events, base_version, base_head, at if at is not None else _now_ms(), nonce)
        receipt = Receipt(base_version + len(sealed), sealed[-1][1], base_version + 1,
                          sealed=tuple(sealed))
        if callable(meta):   # fields that depend on the sealed batch (what the game is after it)
            meta = meta(sealed)
        if before is not None and not self._pipelines_before():
            before(None)
            before = None
        return self._append(game_id, sealed, receipt, base_version, base_head, expected_version,
                            idempotency_key or "", body_digest, meta or {}, before)

    def _pipelines_before(self) -> bool:
        """Whether `_append` sends `before`'s commands in its own round trip (Redis)."""
        return False

    @abstractmethod
    def _append(self, game_id, sealed, receipt, base_version, base_head, expected_version,
                idem_key, body_digest, meta, before=None) -> Receipt: ...

    @abstractmethod
    def get_idempotent(self, game_id: str, idem_key: str) -> Optional[tuple[str, Receipt]]:
        """(body digest, original receipt) stored under an idempotency key, if any."""

    @abstractmethod
    def read_raw(self, game_id: str, after: int = 0, until: Optional[int] = None) -> list[tuple[str, str]]:
        """[(body, hash)] of versions after+1 .. until, as stored."""

    def peek(self, game_id: str, idem_key: str) -> tuple[Optional[tuple[str, Receipt]], int, str]:
        """What a command checks first, in one round trip where the store can:
        (get_idempotent(idem_key), version, head hash)."""
        return (self.get_idempotent(game_id, idem_key), *self.head(game_id))

    @abstractmethod
    def head(self, game_id: str) -> tuple[int, str]:
        """(version, head hash); (0, GENESIS) for a game with no events."""

    def heads(self, game_ids: Iterable[str]) -> dict[str, tuple[int, str]]:
        """`head` of each game, by game id, in one round trip (a cluster: one a node) where the
        store can: what reads many games at once (the transparency log's sequencer) calls."""
        return {game_id: self.head(game_id) for game_id in game_ids}

    @abstractmethod
    def get_meta(self, game_id: str, *fields: str) -> dict[str, Optional[str]]:
        """Fields of the game's meta (None where absent): the side facts written with a batch
        or by set_meta, and `version` and `head` (hex), recorded with each batch."""

    @abstractmethod
    def set_meta(self, game_id: str, mapping: dict[str, str]) -> None:
        """Side facts that need no atomicity with a batch (caches, job bookkeeping)."""

    @abstractmethod
    def get_meta_prefixed(self, game_id: str, prefix: str) -> dict[str, str]:
        """Every meta field whose name starts with `prefix` (the token hashes: `token:`)."""

    @abstractmethod
    def save_snapshot(self, game_id: str, version: int, head: str, blob: bytes) -> None: ...

    @abstractmethod
    def load_snapshot(self, game_id: str) -> Optional[tuple[int, str, bytes]]: ...

    # --- a finished game leaving the hot store for the archive (events/archive.py) and back ---
    @abstractmethod
    def archived_digest(self, game_id: str) -> Optional[str]:
        """The digest of the archive file the game went to (None: it never left, or it came back)."""

    @abstractmethod
    def swap_out(self, game_id: str, write: Callable[[GameRecord], str]) -> Optional[str]:
        """Move the game out: `write(record)` stores its whole record elsewhere and returns the
        record's digest; then, atomically and only if nothing of the game changed meanwhile,
        its keys are dropped and the digest kept as its pointer. The digest, or None (absent,
        already out, or changed: nothing was dropped). A `write` that raises changes nothing."""

    @abstractmethod
    def swap_in(self, game_id: str, record: GameRecord, digest: str) -> bool:
        """Bring an archived game back: atomically, if its pointer is `digest` and it is not in
        the hot store, write its record back and forget the pointer. False: nothing to do."""

    # --- the table chat, outside the hash chain (events/chat.py: RedisChat, MemoryChat) -----
    def append_chat(self, game_id: str, body: str, *, at: int, **kwargs):
        """Append one chat entry (events/chat.py `RedisChat.append_chat`)."""
        raise NotImplementedError

    def chat_page(self, game_id: str, after: int = 0, limit: int = 200) -> ChatPage:
        """The chat entries after `after`, the flags set, the last id (events/chat.py)."""
        raise NotImplementedError

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

    @property
    def notifier(self) -> Notifier:
        """This store's append notifications (one per store object, made on first use):
        `store.notifier.wait(game_id, after_version, timeout)`."""
        notifier = self.__dict__.get("_notifier")
        if notifier is None:
            notifier = self.__dict__.setdefault("_notifier", self._make_notifier())
        return notifier

    def _make_notifier(self) -> Notifier:
        return LocalNotifier(self.head)


# --- Redis -------------------------------------------------------------------------------

# Hashes are kept in binary in Redis (32 bytes, not 64 hex characters: a sixth of a stored
# event) and turned back into hex on read; a 64-hex body digest likewise. The idempotency
# record is "<version>,<first_version>,<digest>": the receipt's head is the hash stored at
# <version>, so it is not stored twice.
#
# KEYS: events, meta, idem, the game's notification channel (events/notify.py: not a key,
#       but it carries the game's hash tag, so a cluster routes it with the game), and the
#       game's archive pointer (a game that left for the archive takes no more events).
# ARGV: expected_version ("" = none), idem_key ("" = none), body_digest, base_version,
#       base_head, n_events, n_meta, then n_events (body, hash) pairs, then n_meta
#       (field, value) pairs.
# Every check happens before the first write, so a refused batch changes nothing.
APPEND_LUA = """
local expected = ARGV[1]
local idem_key = ARGV[2]
local digest = ARGV[3]
local base_version = tonumber(ARGV[4])
local base_head = ARGV[5]
local n_events = tonumber(ARGV[6])
local n_meta = tonumber(ARGV[7])

local meta = redis.call('HMGET', KEYS[2], 'version', 'head')
local version = tonumber(meta[1] or '0')
if version == 0 and redis.call('EXISTS', KEYS[5]) == 1 then
  return {'archived', '0'}
end
if idem_key ~= '' then
  local seen = redis.call('HGET', KEYS[3], idem_key)
  if seen then
    local last, first, stored = string.match(seen, '^(%d+),(%d+),(.*)$')
    if stored == digest then
      local entry = redis.call('XRANGE', KEYS[1], last .. '-0', last .. '-0')
      return {'dup', last, first, entry[1][2][4]}
    end
    return {'idem', tostring(version)}
  end
end
if expected ~= '' and tonumber(expected) ~= version then
  return {'version', tostring(version)}
end
local head = meta[2] or string.rep('\\0', 32)
if base_version ~= version or base_head ~= head then
  return {'head', tostring(version)}
end

local i = 8
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
  redis.call('HSET', KEYS[3], idem_key, tostring(version + n_events) .. ',' .. tostring(version + 1) .. ',' .. digest)
end
redis.call('__PUBLISH__', KEYS[4], tostring(version + n_events))
return {'ok'}
"""

# KEYS: the hash to write, the game's meta, its archive pointer. ARGV: field, value pairs.
HSET_UNLESS_ARCHIVED_LUA = """
if redis.call('EXISTS', KEYS[2]) == 0 and redis.call('EXISTS', KEYS[3]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""

_HEX = frozenset("0123456789abcdef")

# Bodies are stored deflated with a preset dictionary (JSON keys and types repeat in every
# event: a stored event takes about half the bytes). The first byte says how a body is stored:
# "{" plain JSON, \\x01 raw deflate with ZDICT_1. A dictionary, once used, is never changed:
# a new one gets a new marker. Readers always get the canonical body the hash covers.
ZDICT_1 = (b'"count":"card":"share":"amount":"company":"side":"buyer":"colour":"district":"cards":'
           b'"seller":"unit_price":"price":"from":"to":"steps":"space":"loans":"step":"turn":"number":'
           b'"kind":"delta":"face":"deal":"respond","traded","sell","play","card_committed",'
           b'"cards_drawn","reveal","passed","announced","bid","buy","pass","offer","keep",'
           b'{"at":17,"c":{"action":{"type":"pass"},"by":"player","seat":0},"d":{"seat":1},"n":"",'
           b'"s":1,"t":"bid","v":1}')


# Copying a compressor primed with the dictionary is cheaper than priming one per body.
_PRIMED_PACKER = zlib.compressobj(9, zlib.DEFLATED, -10, 2, zlib.Z_DEFAULT_STRATEGY, ZDICT_1)


def _pack_body(body: str) -> bytes:
    packer = _PRIMED_PACKER.copy()
    return b"\x01" + packer.compress(body.encode()) + packer.flush()


def unpack_body(value: bytes) -> str:
    """A stored body as its canonical JSON text."""
    if value[:1] == b"\x01":
        unpacker = zlib.decompressobj(-15, ZDICT_1)
        return (unpacker.decompress(value[1:]) + unpacker.flush()).decode()
    return value.decode()


def _pack_hash(value: str):
    """A 64-hex hash as its 32 bytes (anything else as it is: it then never matches)."""
    if len(value) == 64:
        try:
            return bytes.fromhex(value)
        except ValueError:
            pass
    return value


def _unpack_hash(value: bytes) -> str:
    return value.hex() if len(value) == 32 else value.decode()


def _pack_digest(value: str):
    """A 64-hex digest as \\x01 + its 32 bytes; any other digest as it is."""
    if len(value) == 64 and _HEX.issuperset(value):
        return b"\x01" + bytes.fromhex(value)
    return value.encode()


def _unpack_digest(value: bytes) -> str:
    return value[1:].hex() if len(value) == 33 and value[:1] == b"\x01" else value.decode()


def _raise_refusal(status: str, version: int) -> None:
    if status == "idem":
        raise IdempotencyConflict(version)
    if status == "archived":
        raise GameArchived("the game is archived: it takes no more events")
    raise VersionConflict(version, status)


def _recorded_head(values) -> tuple[int, str]:
    """(version, head) from a game meta's HMGET of version and head."""
    version, head = values
    if version is None:
        return 0, GENESIS
    return int(version), _unpack_hash(head)


def _is_cluster(client) -> bool:
    from redis.cluster import RedisCluster

    return isinstance(client, RedisCluster)


class RedisEventStore(RedisChat, EventStore):
    """The store on Redis (or fakeredis). `client` must not decode responses."""

    def __init__(self, client, *, ack_replicas: int = 0, ack_timeout_ms: int = 1000, ack_aof: bool = False):
        self.redis = client
        # Acknowledge after replication (REDIS_ACK_REPLICAS): the append and its WAIT (or
        # WAITAOF) go on one connection to the game's primary, so the wait covers that write.
        # WAIT by default: WAITAOF on valkey 8 replicas took a second an append (a replica
        # reports its fsynced offset about once a second: ops/bench/replica_ack.py --durable,
        # docs/performance.md); `ack_aof` asks for it where the server has it and runs AOF.
        self.ack_replicas, self.ack_timeout_ms, self.ack_aof = ack_replicas, ack_timeout_ms, ack_aof
        self._ack_command: Optional[str] = None     # "WAITAOF" or "WAIT", asked once
        self.cluster = _is_cluster(client)
        # The script publishes the new version after a successful append: SPUBLISH where the
        # server has sharded pub/sub (asked once, on the first append), else PUBLISH.
        self._scripts = {True: client.register_script(APPEND_LUA.replace("__PUBLISH__", "SPUBLISH")),
                         False: client.register_script(APPEND_LUA.replace("__PUBLISH__", "PUBLISH"))}
        self._sharded: Optional[bool] = None

    @property
    def append_script(self):
        """The append script (a redis-py Script) this server runs: readiness checks it is loaded."""
        return self._append_script

    @property
    def _append_script(self):
        if self._sharded is None:
            self._sharded = sharded_pubsub(self.redis)
        return self._scripts[self._sharded]

    def _make_notifier(self) -> Notifier:
        return RedisNotifier(self.redis, self.head, sharded=self._sharded)

    def _pipelines_before(self) -> bool:
        # On a cluster the index's keys live in other slots than the game's: its touch is a
        # round trip of its own, ahead of the append (events/index.py `touch_with_append`).
        return not self.cluster

    def _append(self, game_id, sealed, receipt, base_version, base_head, expected_version,
                idem_key, body_digest, meta, before=None):
        k = keys(game_id)
        args = ["" if expected_version is None else expected_version, idem_key,
                _pack_digest(body_digest), base_version, _pack_hash(base_head), len(sealed), len(meta)]
        for body, hash_ in sealed:
            args += [_pack_body(body), bytes.fromhex(hash_)]
        for field, value in meta.items():
            args += [field, value]
        script = self._append_script
        script_keys = [k["events"], k["meta"], k["idem"], channel(game_id), k["arch"]]
        if self.ack_replicas:
            reply = self._append_replicated(game_id, script, script_keys, args, before)
        elif before is None:
            try:
                reply = self.redis.evalsha(script.sha, len(script_keys), *script_keys, *args)
            except NoScriptError:  # a restarted or flushed server: load the script, once
                reply = script(keys=script_keys, args=args)
        else:
            # One round trip: the commands that must come first (the index's touch), then the
            # script; the server runs them in order.
            with self.redis.pipeline(transaction=False) as pipe:
                before(pipe)
                pipe.evalsha(script.sha, len(script_keys), *script_keys, *args)
                *ahead, reply = pipe.execute(raise_on_error=False)
            for failed in (r for r in ahead if isinstance(r, Exception)):
                # The script ran all the same: the batch (the truth) stands; only the intent is
                # missing. The game's next command touches it again; until then the reconciler
                # sees it only if it already waits on a job (a double fault: logged, not raised).
                log.warning("a command ahead of the append of %s failed: %s", game_id, failed)
            if isinstance(reply, NoScriptError):
                reply = script(keys=script_keys, args=args)
            elif isinstance(reply, Exception):
                raise reply
        status = reply[0]
        if status == b"ok":
            return receipt
        if status == b"dup":
            if self.ack_replicas:   # the original may never have been confirmed: wait again
                self._confirm_replicated(game_id)
            return Receipt(int(reply[1]), _unpack_hash(reply[3]), int(reply[2]), True)
        _raise_refusal(status.decode(), int(reply[1]))

    # --- acknowledge after replication ---------------------------------------------------
    def _node_client(self, game_id: str):
        """A plain client of the server holding the game: the store's own client, or on a
        cluster the primary of the game's slot (so the WAIT follows the write on its connection)."""
        if not self.cluster:
            return self.redis
        return self.redis.get_redis_connection(self.redis.get_node_from_key(keys(game_id)["meta"]))

    def _wait_command(self, client) -> list:
        """WAIT N T; with `ack_aof`, WAITAOF 0 N T where the server has it and runs AOF (the
        replicas are taken to run as their primary does): asked of the first server, once."""
        if self._ack_command is None and not self.ack_aof:
            self._ack_command = "WAIT"
        if self._ack_command is None:
            known = client.execute_command("COMMAND", "INFO", "WAITAOF")   # redis-py: a dict by name
            has_waitaof = bool(known) and (any(known.values()) if isinstance(known, dict) else known[0] is not None)
            aof = int(client.info("persistence").get("aof_enabled", 0))
            self._ack_command = "WAITAOF" if has_waitaof and aof else "WAIT"
        if self._ack_command == "WAITAOF":
            return ["WAITAOF", 0, self.ack_replicas, self.ack_timeout_ms]
        return ["WAIT", self.ack_replicas, self.ack_timeout_ms]

    def _check_confirmed(self, answer) -> None:
        confirmed = int(answer[1] if isinstance(answer, list) else answer)
        if confirmed < self.ack_replicas:
            raise NotReplicated(confirmed, self.ack_replicas)

    def _on_game_node(self, game_id: str, commands: Callable) -> list:
        """Run `commands(pipe)` in one round trip on the connection of the game's primary. On a
        cluster, a slot that moved (MOVED, a failover's TRYAGAIN/CLUSTERDOWN) has the topology
        read again and the round trip sent again (none of it ran); a lost connection has the
        topology read again before the error goes up (503: the client retries)."""
        moved = None
        for attempt in range(3):
            node = self._node_client(game_id)
            try:
                with node.pipeline(transaction=False) as pipe:
                    commands(pipe)
                    replies = pipe.execute(raise_on_error=False)
            except (RedisConnectionError, RedisTimeoutError):
                if self.cluster:
                    self.redis.nodes_manager.initialize()
                raise
            moved = next((r for r in replies if isinstance(r, ResponseError)
                          and str(r).split(" ", 1)[0] in ("MOVED", "TRYAGAIN", "CLUSTERDOWN")), None)
            if moved is None or not self.cluster:
                return replies
            time.sleep(0.05 * (attempt + 1))
            self.redis.nodes_manager.initialize()
        raise moved

    def _append_replicated(self, game_id, script, script_keys, args, before) -> list:
        """The append and the wait for the replicas in one round trip on the game's primary."""
        for _ in range(2):
            wait = self._wait_command(self._node_client(game_id))

            def commands(pipe, before=before):
                if before is not None:
                    before(pipe)
                pipe.evalsha(script.sha, len(script_keys), *script_keys, *args)
                pipe.execute_command(*wait)
            *ahead, reply, answer = self._on_game_node(game_id, commands)
            for failed in (r for r in ahead if isinstance(r, Exception)):
                log.warning("a command ahead of the append of %s failed: %s", game_id, failed)
            if isinstance(reply, NoScriptError):   # a restarted or flushed server: load it, once
                self._node_client(game_id).script_load(script.script)
                before = None    # the commands ahead of it ran: they are not sent twice
                continue
            if isinstance(reply, Exception):
                raise reply
            if isinstance(answer, Exception):
                raise answer
            if reply[0] == b"ok":
                self._check_confirmed(answer)
            return reply
        raise NoScriptError("the append script could not be loaded")

    def _confirm_replicated(self, game_id: str) -> None:
        """Wait until the replicas hold what the game has now (an idempotent retry's original
        batch included): a write of this connection's own first (a short-lived key of the
        game's slot), since WAIT counts the writes of the connection it is sent on."""
        if not self.ack_replicas:
            return
        wait = self._wait_command(self._node_client(game_id))

        def commands(pipe):
            pipe.set(ack_key(game_id), b"1", px=5000)
            pipe.execute_command(*wait)
        _, answer = self._on_game_node(game_id, commands)
        if isinstance(answer, Exception):
            raise answer
        self._check_confirmed(answer)

    def read_raw(self, game_id, after=0, until=None):
        start = f"{after + 1}-0"
        end = f"{until}-0" if until is not None else "+"
        entries = self.redis.xrange(keys(game_id)["events"], start, end)
        return [(unpack_body(fields[b"e"]), _unpack_hash(fields[b"h"])) for _, fields in entries]

    def get_idempotent(self, game_id, idem_key):
        return self._idempotent(game_id, self.redis.hget(keys(game_id)["idem"], idem_key))

    def _idempotent(self, game_id, seen):
        if seen is None:
            return None
        last, first, digest = seen.split(b",", 2)
        stored = self.read_raw(game_id, int(last) - 1, int(last))
        # A retry is answered with the original receipt only once the replicas hold it (the
        # original's wait may have timed out: a 503 the client retries).
        self._confirm_replicated(game_id)
        return _unpack_digest(digest), Receipt(int(last), stored[0][1], int(first), True)

    def peek(self, game_id, idem_key):
        k = keys(game_id)
        pipe = self.redis.pipeline(transaction=False)
        pipe.hget(k["idem"], idem_key)
        pipe.hmget(k["meta"], "version", "head")
        seen, (version, head) = pipe.execute()
        if version is None:
            return None, 0, GENESIS
        return self._idempotent(game_id, seen), int(version), _unpack_hash(head)

    def head(self, game_id):
        return _recorded_head(self.redis.hmget(keys(game_id)["meta"], "version", "head"))

    def heads(self, game_ids):
        wanted = list(dict.fromkeys(game_ids))
        if not wanted:
            return {}
        # Not a transaction: redis-py's cluster client splits it by node and writes every
        # node's share before reading any, so a cluster costs about one round trip, not one a game.
        with self.redis.pipeline(transaction=False) as pipe:
            for game_id in wanted:
                pipe.hmget(keys(game_id)["meta"], "version", "head")
            answers = pipe.execute()
        return {game_id: _recorded_head(answer) for game_id, answer in zip(wanted, answers)}

    def get_meta(self, game_id, *fields):
        values = self.redis.hmget(keys(game_id)["meta"], *fields)
        return {f: (None if v is None else _unpack_hash(v) if f == "head" else v.decode())
                for f, v in zip(fields, values)}

    def set_meta(self, game_id, mapping):
        self._unless_archived(keys(game_id)["meta"], game_id, mapping)

    def get_meta_prefixed(self, game_id, prefix):
        return {k.decode(): v.decode() for k, v in self.redis.hscan_iter(keys(game_id)["meta"], match=f"{prefix}*")}

    def save_snapshot(self, game_id, version, head, blob):
        self._unless_archived(keys(game_id)["snap"], game_id, {"version": version, "head": head, "blob": blob})

    def _unless_archived(self, key, game_id, mapping) -> None:
        """HSET, but never on a game that has left for the archive (a late job's bookkeeping
        would leave a stray key behind it)."""
        if mapping:
            k = keys(game_id)
            args = [item for pair in mapping.items() for item in pair]
            self.redis.eval(HSET_UNLESS_ARCHIVED_LUA, 3, key, k["meta"], k["arch"], *args)

    def archived_digest(self, game_id):
        digest = self.redis.get(keys(game_id)["arch"])
        return digest.decode() if digest is not None else None

    def _dump(self, game_id, client=None) -> Optional[GameRecord]:
        client = client or self.redis
        k = keys(game_id)
        meta = client.hgetall(k["meta"])
        if not meta:
            return None
        entries = client.xrange(k["events"], "-", "+")
        idem = client.hgetall(k["idem"])
        seen = {}
        for key, value in idem.items():
            last, first, digest = value.split(b",", 2)
            seen[key.decode()] = (_unpack_digest(digest), int(last), int(first))
        return GameRecord(game_id, tuple((unpack_body(f[b"e"]), _unpack_hash(f[b"h"])) for _, f in entries),
                          {f.decode(): (_unpack_hash(v) if f == b"head" else v.decode()) for f, v in meta.items()},
                          seen, self._dump_chat(game_id, client))

    def swap_out(self, game_id, write):
        k = keys(game_id)
        chat = chat_keys(game_id)
        with self.redis.pipeline(transaction=True) as pipe:
            try:
                # WATCH: if any of the game's keys changes while its record is written out (its
                # chat included), the transaction below is not run and the game stays where it is.
                pipe.watch(k["events"], k["meta"], k["idem"], k["arch"], chat["chat"])
                if pipe.exists(k["arch"]):
                    return None
                record = self._dump(game_id, pipe)
                if record is None:
                    return None
                digest = write(record)
                pipe.multi()
                pipe.set(k["arch"], digest)
                pipe.delete(k["events"], k["meta"], k["idem"], k["snap"], *chat.values())
                pipe.execute()
                return digest
            except WatchError:
                return None

    def swap_in(self, game_id, record, digest):
        k = keys(game_id)
        with self.redis.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(k["arch"], k["meta"])
                current = pipe.get(k["arch"])
                if current is None or current.decode() != digest or pipe.exists(k["meta"]):
                    return False
                pipe.multi()
                for version, (body, hash_) in enumerate(record.events, start=1):
                    pipe.xadd(k["events"], {"e": _pack_body(body), "h": bytes.fromhex(hash_)}, id=f"{version}-0")
                pipe.hset(k["meta"], mapping={f: (_pack_hash(v) if f == "head" else v) for f, v in record.meta.items()})
                if record.idem:
                    pipe.hset(k["idem"], mapping={key: f"{last},{first},".encode() + _pack_digest(digest_)
                                                  for key, (digest_, last, first) in record.idem.items()})
                self._restore_chat(pipe, game_id, record.chat)
                pipe.delete(k["arch"])
                pipe.execute()
                return True
            except WatchError:
                return False

    def load_snapshot(self, game_id):
        version, head, blob = self.redis.hmget(keys(game_id)["snap"], "version", "head", "blob")
        if version is None:
            return None
        return int(version), head.decode(), blob


# --- In memory ---------------------------------------------------------------------------

class MemoryEventStore(MemoryChat, EventStore):
    """The same contract in process memory (unit tests, tools). Like the Lua script, it records
    the version and head in the game's meta with each batch, and reads them from there: the
    recorded head, not the stream's last entry, is what `head` reports."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, list[tuple[str, str]]] = {}
        self._meta: dict[str, dict[str, str]] = {}
        self._idem: dict[str, dict[str, tuple[str, Receipt]]] = {}
        self._snaps: dict[str, tuple[int, str, bytes]] = {}
        self._arch: dict[str, str] = {}

    def _append(self, game_id, sealed, receipt, base_version, base_head, expected_version,
                idem_key, body_digest, meta, before=None):
        with self._lock:
            if game_id in self._arch:
                raise GameArchived("the game is archived: it takes no more events")
            stream = self._events.setdefault(game_id, [])
            recorded = self._meta.setdefault(game_id, {})
            version = int(recorded.get("version", 0))
            if idem_key:
                seen = self._idem.get(game_id, {}).get(idem_key)
                if seen is not None:
                    if seen[0] == body_digest:
                        return seen[1]
                    raise IdempotencyConflict(version)
            if expected_version is not None and expected_version != version:
                raise VersionConflict(version, "version")
            head = recorded.get("head", GENESIS)
            if base_version != version or base_head != head:
                raise VersionConflict(version, "head")
            stream.extend(sealed)
            recorded.update({"version": str(receipt.version), "head": receipt.head})
            recorded.update(meta)
            if idem_key:
                original = Receipt(receipt.version, receipt.head, receipt.first_version, True)
                self._idem.setdefault(game_id, {})[idem_key] = (body_digest, original)
        notifier = self.__dict__.get("_notifier")
        if notifier is not None:
            notifier.published(game_id, receipt.version)
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
            return self._recorded_head(game_id)

    def heads(self, game_ids):
        with self._lock:        # all of them at one moment, as a pipeline sees one server's
            return {game_id: self._recorded_head(game_id) for game_id in game_ids}

    def _recorded_head(self, game_id) -> tuple[int, str]:
        recorded = self._meta.get(game_id, {})
        if "version" not in recorded:
            return 0, GENESIS
        return int(recorded["version"]), recorded["head"]

    def get_meta(self, game_id, *fields):
        with self._lock:
            meta = self._meta.get(game_id, {})
            return {f: meta.get(f) for f in fields}

    def set_meta(self, game_id, mapping):
        with self._lock:
            if game_id in self._meta or game_id not in self._arch:
                self._meta.setdefault(game_id, {}).update({k: str(v) for k, v in mapping.items()})

    def get_meta_prefixed(self, game_id, prefix):
        with self._lock:
            return {k: v for k, v in self._meta.get(game_id, {}).items() if k.startswith(prefix)}

    def save_snapshot(self, game_id, version, head, blob):
        with self._lock:
            if game_id in self._meta or game_id not in self._arch:
                self._snaps[game_id] = (version, head, blob)

    def archived_digest(self, game_id):
        with self._lock:
            return self._arch.get(game_id)

    def _dump(self, game_id) -> Optional[GameRecord]:
        if game_id not in self._meta or game_id in self._arch:
            return None
        return GameRecord(game_id, tuple(self._events.get(game_id, [])), dict(self._meta[game_id]),
                          {key: (d, r.version, r.first_version) for key, (d, r) in self._idem.get(game_id, {}).items()},
                          self._dump_chat(game_id))

    def swap_out(self, game_id, write):
        with self._lock:
            record = self._dump(game_id)
        if record is None:
            return None
        digest = write(record)
        with self._lock:
            if self._dump(game_id) != record:     # it changed meanwhile: it stays
                return None
            self._arch[game_id] = digest
            for table in (self._events, self._meta, self._idem, self._snaps):
                table.pop(game_id, None)
            self._drop_chat(game_id)
        return digest

    def swap_in(self, game_id, record, digest):
        with self._lock:
            if self._arch.get(game_id) != digest or game_id in self._meta:
                return False
            self._events[game_id] = list(record.events)
            self._meta[game_id] = dict(record.meta)
            self._idem[game_id] = {key: (d, Receipt(last, record.events[last - 1][1], first, True))
                                   for key, (d, last, first) in record.idem.items()}
            self._restore_chat(game_id, record.chat)
            del self._arch[game_id]
        return True

    def load_snapshot(self, game_id):
        with self._lock:
            return self._snaps.get(game_id)

