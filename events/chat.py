"""A game's table chat: one append-only Redis stream per game, beside its event stream and
outside its hash chain (no game knowledge here: the entries are opaque JSON bodies).

Keys, under the game's hash tag (events/keys.py), so the chat lives in the game's Redis
Cluster slot and every append is one single-slot script:
  game:{g:ID}:chat       the stream; entry id "<n>-0" (n = 1, 2, ...), fields e (the body,
                         JSON), v (the game's version when it was appended), at (ms), and,
                         for an entry that sets or clears a flag, f (the flag) and o ("1"/"0")
  game:{g:ID}:chatflags  hash: the flags the entries set (field -> "1"), a projection of the
                         stream's f/o fields kept by the same script (read in one HGETALL)
  game:{g:ID}:chatrate   hash: author -> the times (ms) of its entries in the rate window
  game:{g:ID}:chatidem   hash: "<author> <idempotency key>" -> "<n>,<body digest>"

The append script checks, before its first write and in this order: the game exists (its
meta; a game that left for the archive takes no more entries), the idempotency key (same
digest: the original entry, nothing written; another: a conflict), the cap on entries, the
author's rate. A refused append changes nothing. When a game moves to the archive its
chat goes with it (GameRecord.chat, events/store.py) and the four keys are dropped.

`MemoryChat` keeps the same contract in process memory (MemoryEventStore's twin).
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Optional

from redis.exceptions import NoScriptError

from .keys import stream_prefix


class ChatRefused(Exception):
    """An append the chat log refuses; `reason` is one of REASONS."""

    REASONS = ("missing", "archived", "full", "rate", "idempotency")

    def __init__(self, reason: str, retry_after_ms: int = 0, count: int = 0):
        super().__init__(f"chat append refused: {reason}")
        self.reason = reason
        self.retry_after_ms = retry_after_ms   # "rate": when the author's oldest entry leaves the window
        self.count = count                     # "full": the entries the chat holds


@dataclass(frozen=True)
class ChatEntry:
    id: int                        # 1, 2, ... in the order appended
    body: str                      # the entry's JSON, as given
    version: int                   # the game's version when it was appended
    at: int                        # ms since the epoch, the server's clock
    flag: Optional[str] = None     # the flag this entry sets or clears
    on: Optional[bool] = None

    def record(self) -> dict:
        """The entry as an archive record keeps it (its id is its place in the list)."""
        out = {"e": self.body, "v": self.version, "at": self.at}
        if self.flag is not None:
            out.update(f=self.flag, o=bool(self.on))
        return out

    @classmethod
    def from_record(cls, n: int, record: dict) -> "ChatEntry":
        flag = record.get("f")
        return cls(n, record["e"], int(record["v"]), int(record["at"]), flag,
                   bool(record.get("o")) if flag is not None else None)


@dataclass(frozen=True)
class ChatPage:
    entries: list            # [ChatEntry] after the asked id, at most the asked number
    flags: dict              # every flag set now: {flag: True}
    last: int                # the id of the chat's last entry (0: none)
    appended: Optional[ChatEntry] = None


@dataclass(frozen=True)
class Rate:
    """At most `count` entries per author within `window_ms`."""

    count: int
    window_ms: int


def chat_keys(game_id: str) -> dict[str, str]:
    prefix = stream_prefix(game_id)
    return {name: f"{prefix}:{name}" for name in ("chat", "chatflags", "chatrate", "chatidem")}


def body_digest(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()


def flags_of(entries) -> dict:
    """The flags a run of entries leaves set (an archived chat's, read from its record)."""
    flags: dict = {}
    for entry in entries:
        if entry.flag is not None:
            if entry.on:
                flags[entry.flag] = True
            else:
                flags.pop(entry.flag, None)
    return flags


# KEYS: chat, chatflags, chatrate, chatidem, the game's meta, its archive pointer.
# ARGV: body, author ("" = none: no rate), now (ms), rate count (0 = none), rate window (ms),
#       cap (0 = none), idempotency field ("" = none), body digest, flag ("" = none), on ("1"/"0").
APPEND_CHAT_LUA = """
if redis.call('EXISTS', KEYS[5]) == 0 then
  if redis.call('EXISTS', KEYS[6]) == 1 then return {'archived'} end
  return {'missing'}
end
local author, now = ARGV[2], tonumber(ARGV[3])
local rate_count, window, cap = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local idem, digest, flag = ARGV[7], ARGV[8], ARGV[9]
if idem ~= '' then
  local seen = redis.call('HGET', KEYS[4], idem)
  if seen then
    local n, stored = string.match(seen, '^(%d+),(.*)$')
    if stored == digest then return {'dup', n} end
    return {'idem', n}
  end
end
local count = redis.call('XLEN', KEYS[1])
if cap > 0 and count >= cap then return {'full', tostring(count)} end
if author ~= '' and rate_count > 0 then
  local kept, oldest = {}, nil
  local times = redis.call('HGET', KEYS[3], author)
  if times then
    for t in string.gmatch(times, '%d+') do
      local at = tonumber(t)
      if at > now - window then
        table.insert(kept, t)
        if oldest == nil or at < oldest then oldest = at end
      end
    end
  end
  if #kept >= rate_count then return {'rate', tostring(oldest + window - now)} end
  table.insert(kept, ARGV[3])
  redis.call('HSET', KEYS[3], author, table.concat(kept, ','))
end
local version = redis.call('HGET', KEYS[5], 'version') or '0'
local n = tostring(count + 1)
if flag ~= '' then
  redis.call('XADD', KEYS[1], n .. '-0', 'e', ARGV[1], 'v', version, 'at', ARGV[3], 'f', flag, 'o', ARGV[10])
  if ARGV[10] == '1' then redis.call('HSET', KEYS[2], flag, '1') else redis.call('HDEL', KEYS[2], flag) end
else
  redis.call('XADD', KEYS[1], n .. '-0', 'e', ARGV[1], 'v', version, 'at', ARGV[3])
end
if idem ~= '' then redis.call('HSET', KEYS[4], idem, n .. ',' .. digest) end
return {'ok', n}
"""


def _entry(entry_id: bytes, fields: dict) -> ChatEntry:
    flag = fields.get(b"f")
    return ChatEntry(int(entry_id.split(b"-", 1)[0]), fields[b"e"].decode(), int(fields[b"v"]), int(fields[b"at"]),
                     flag.decode() if flag is not None else None,
                     fields.get(b"o") == b"1" if flag is not None else None)


def _idem_field(author: Optional[str], key: Optional[str]) -> str:
    return f"{author or ''} {key}" if key else ""


def _refusal(reply) -> ChatRefused:
    status = reply[0].decode() if isinstance(reply[0], bytes) else reply[0]
    if status == "rate":
        return ChatRefused("rate", retry_after_ms=max(1, int(reply[1])))
    if status == "full":
        return ChatRefused("full", count=int(reply[1]))
    if status == "idem":
        return ChatRefused("idempotency")
    return ChatRefused(status)


class RedisChat:
    """The chat half of RedisEventStore (it needs `self.redis`, a client that does not decode)."""

    redis = None

    def _chat_script(self):
        script = self.__dict__.get("_append_chat")
        if script is None:
            script = self.__dict__.setdefault("_append_chat", self.redis.register_script(APPEND_CHAT_LUA))
        return script

    def append_chat(self, game_id: str, body: str, *, at: int, author: Optional[str] = None,
                    rate: Optional[Rate] = None, cap: int = 0, idempotency_key: Optional[str] = None,
                    flag: Optional[str] = None, on: bool = True) -> tuple[ChatEntry, bool]:
        """Append one entry: (the entry, whether it is the original of a retry). Raises
        ChatRefused (nothing written) when the game is missing or archived, the key was used
        with another body, the chat holds `cap` entries, or `author` is past `rate`."""
        k = chat_keys(game_id)
        prefix = stream_prefix(game_id)
        script_keys = [k["chat"], k["chatflags"], k["chatrate"], k["chatidem"], f"{prefix}:meta", f"{prefix}:arch"]
        args = [body, author or "", at, rate.count if rate else 0, rate.window_ms if rate else 0, cap,
                _idem_field(author, idempotency_key), body_digest(body), flag or "", "1" if on else "0"]
        script = self._chat_script()
        try:
            reply = self.redis.evalsha(script.sha, len(script_keys), *script_keys, *args)
        except NoScriptError:
            reply = script(keys=script_keys, args=args)
        status = reply[0]
        if status in (b"ok", b"dup"):
            n = int(reply[1])
            found = self.redis.xrange(k["chat"], f"{n}-0", f"{n}-0")
            return _entry(*found[0]), status == b"dup"
        raise _refusal(reply)

    def chat_page(self, game_id: str, after: int = 0, limit: int = 200) -> ChatPage:
        """The entries after id `after` (at most `limit`), the flags set now, the last id."""
        k = chat_keys(game_id)
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.xrange(k["chat"], f"{after + 1}-0", "+", count=limit)
            pipe.hgetall(k["chatflags"])
            pipe.xlen(k["chat"])
            entries, flags, last = pipe.execute()
        return ChatPage([_entry(i, f) for i, f in entries], {f.decode(): True for f in flags}, int(last))

    def _dump_chat(self, game_id: str, client=None) -> tuple:
        client = client or self.redis
        return tuple(_entry(i, f).record() for i, f in client.xrange(chat_keys(game_id)["chat"], "-", "+"))

    def _restore_chat(self, pipe, game_id: str, records) -> None:
        k = chat_keys(game_id)
        for n, record in enumerate(records, start=1):
            entry = ChatEntry.from_record(n, record)
            fields = {"e": entry.body, "v": entry.version, "at": entry.at}
            if entry.flag is not None:
                fields.update(f=entry.flag, o="1" if entry.on else "0")
            pipe.xadd(k["chat"], fields, id=f"{n}-0")
        flags = flags_of(ChatEntry.from_record(n, r) for n, r in enumerate(records, start=1))
        if flags:
            pipe.hset(k["chatflags"], mapping={f: "1" for f in flags})


class MemoryChat:
    """The chat half of MemoryEventStore: the same contract in process memory. The store
    keeps `_meta` and `_arch` (which games exist, which left for the archive) and `_lock`."""

    _lock: threading.Lock

    def _chats(self) -> dict:
        return self.__dict__.setdefault("_chat", {})

    def append_chat(self, game_id, body, *, at, author=None, rate=None, cap=0, idempotency_key=None,
                    flag=None, on=True):
        with self._lock:
            if game_id not in self._meta:          # type: ignore[attr-defined]
                raise ChatRefused("archived" if game_id in self._arch else "missing")   # type: ignore[attr-defined]
            chat = self._chats().setdefault(game_id, {"entries": [], "rate": {}, "idem": {}})
            entries = chat["entries"]
            idem = _idem_field(author, idempotency_key)
            digest = body_digest(body)
            if idem and idem in chat["idem"]:
                n, stored = chat["idem"][idem]
                if stored == digest:
                    return entries[n - 1], True
                raise ChatRefused("idempotency")
            if cap and len(entries) >= cap:
                raise ChatRefused("full", count=len(entries))
            if author and rate and rate.count:
                kept = [t for t in chat["rate"].get(author, []) if t > at - rate.window_ms]
                if len(kept) >= rate.count:
                    raise ChatRefused("rate", retry_after_ms=max(1, min(kept) + rate.window_ms - at))
                chat["rate"][author] = kept + [at]
            version = int(self._meta[game_id].get("version", 0))   # type: ignore[attr-defined]
            entry = ChatEntry(len(entries) + 1, body, version, at, flag, on if flag is not None else None)
            entries.append(entry)
            if idem:
                chat["idem"][idem] = (entry.id, digest)
            return entry, False

    def chat_page(self, game_id, after=0, limit=200):
        with self._lock:
            entries = list(self._chats().get(game_id, {}).get("entries", []))
        return ChatPage(entries[after:after + limit], flags_of(entries), len(entries))

    def _dump_chat(self, game_id) -> tuple:
        return tuple(e.record() for e in self._chats().get(game_id, {}).get("entries", []))

    def _restore_chat(self, game_id, records) -> None:
        entries = [ChatEntry.from_record(n, r) for n, r in enumerate(records, start=1)]
        if entries:
            self._chats()[game_id] = {"entries": entries, "rate": {}, "idem": {}}
        else:
            self._chats().pop(game_id, None)

    def _drop_chat(self, game_id) -> None:
        self._chats().pop(game_id, None)
