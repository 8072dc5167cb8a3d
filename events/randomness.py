"""Seeded, auditable randomness.

Every random outcome is HMAC-SHA256(seed, label || counter): reproducible from the revealed
seed, unpredictable from the published commitment. Labels name the draw; the command
handler scopes them by the game's version so two draws never share a label.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Sequence, TypeVar

T = TypeVar("T")


def new_seed() -> str:
    return secrets.token_hex(32)


def commitment(seed: str) -> str:
    """The public commitment to a seed: SHA-256 of its bytes, hex."""
    return hashlib.sha256(bytes.fromhex(seed)).hexdigest()


class _ByteStream:
    def __init__(self, key: bytes, label: str):
        self._key = key
        self._label = label.encode()
        self._counter = 0
        self._buffer = b""

    def take(self, n: int) -> bytes:
        while len(self._buffer) < n:
            block = hmac.new(self._key, self._label + b"\x00" + self._counter.to_bytes(8, "big"),
                             hashlib.sha256).digest()
            self._counter += 1
            self._buffer += block
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out


class Draws:
    """The random source handed to a game's `start` and `decide`.

    `scope` prefixes every label (the service uses the version the draw happens at).
    Integers are drawn by rejection sampling, so there is no modulo bias.
    """

    def __init__(self, seed: str, scope: str = ""):
        self._key = bytes.fromhex(seed)
        self._scope = scope
        self._streams: dict[str, _ByteStream] = {}

    def _stream(self, label: str) -> _ByteStream:
        full = f"{self._scope}/{label}" if self._scope else label
        stream = self._streams.get(full)
        if stream is None:
            stream = self._streams[full] = _ByteStream(self._key, full)
        return stream

    def below(self, label: str, n: int) -> int:
        """A uniform integer in [0, n)."""
        if n <= 0:
            raise ValueError("n must be positive")
        if n == 1:
            return 0
        stream = self._stream(label)
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            value = int.from_bytes(stream.take(8), "big")
            if value < limit:
                return value % n

    def randint(self, label: str, low: int, high: int) -> int:
        """A uniform integer in [low, high], both included."""
        return low + self.below(label, high - low + 1)

    def choice(self, label: str, items: Sequence[T]) -> T:
        return items[self.below(label, len(items))]

    def shuffle(self, label: str, items: Sequence[T]) -> list[T]:
        """A uniformly shuffled copy (Fisher-Yates, each swap drawn without bias)."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(label, i + 1)
            out[i], out[j] = out[j], out[i]
        return out


def event_nonce(seed: str, version: int) -> str:
    """The salt of event `version`'s body: secret while the seed is, checkable after."""
    return hmac.new(bytes.fromhex(seed), f"nonce/{version}".encode(), hashlib.sha256).hexdigest()[:32]
