"""The event envelope, its canonical encoding and the hash chain.

A stored event is two strings: `body`, the canonical JSON of
{"v": version, "t": type, "s": schema version, "d": payload, "c": command (optional), "at": ms,
"n": nonce (optional)}, and `hash` = SHA-256(prev_hash || body) in hex. The nonce is secret until
the game's seed is revealed (it is derived from it): without it, a published hash over a
body with a secret in it (one card out of nine) could be brute-forced.
The first event chains from GENESIS.
Hashes are computed here in Python (Redis Lua has no SHA-256); the append script only
checks that the batch chains from the stored head.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Optional

GENESIS = "0" * 64


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical(obj: Any) -> str:
    """One byte-exact JSON form: sorted keys, no spaces, UTF-8, no NaN."""
    return _CANONICAL.encode(obj)


def chain_hash(prev_hash: str, body: str) -> str:
    return hashlib.sha256(prev_hash.encode("ascii") + body.encode("utf-8")).hexdigest()


def body_digest(obj: Any) -> str:
    """Fingerprint of a request body, for idempotency checks."""
    return hashlib.sha256(canonical(obj).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class NewEvent:
    """An event about to be appended: the store gives it its version, time and hash."""

    type: str
    data: dict
    schema: int = 1
    cmd: Optional[dict] = None


class StoredEvent(NamedTuple):
    """A stored event, decoded. A named tuple rather than a frozen dataclass: a rebuild makes
    one per event, and a frozen dataclass's __init__ cost more than decoding the JSON."""

    version: int
    type: str
    schema: int
    data: dict
    cmd: Optional[dict]
    at: int
    nonce: Optional[str]
    prev_hash: str
    hash: str
    body: str  # the exact stored bytes the hash covers

    @property
    def payload(self) -> dict:
        """The game-facing form: the data with its type, as deciders emit and evolve it."""
        return {"type": self.type, **self.data}

    def as_dict(self) -> dict:
        out = {"version": self.version, "type": self.type, "schema": self.schema,
               "data": self.data, "at": self.at, "prev_hash": self.prev_hash, "hash": self.hash}
        if self.cmd is not None:
            out["cmd"] = self.cmd
        return out


def encode_body(version: int, event: NewEvent, at: int, nonce: Optional[str] = None) -> str:
    body = {"v": version, "t": event.type, "s": event.schema, "d": event.data, "at": at}
    if event.cmd is not None:
        body["c"] = event.cmd
    if nonce is not None:
        body["n"] = nonce
    return canonical(body)


def decode_body(body: str, prev_hash: str, hash_: str) -> StoredEvent:
    raw = json.loads(body)
    return StoredEvent(raw["v"], raw["t"], raw["s"], raw["d"], raw.get("c"), raw["at"], raw.get("n"),
                       prev_hash, hash_, body)


def seal(events: list[NewEvent], base_version: int, base_head: str, at: int,
         nonce: Optional[Callable[[int], str]] = None) -> list[tuple[str, str]]:
    """Encode and chain a batch: [(body, hash)], the first chained from base_head."""
    sealed = []
    prev = base_head
    for offset, event in enumerate(events, start=1):
        version = base_version + offset
        body = encode_body(version, event, at, nonce(version) if nonce else None)
        prev = chain_hash(prev, body)
        sealed.append((body, prev))
    return sealed
