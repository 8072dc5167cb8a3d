"""The service's signing keys as a running process holds them (events/signing.py Keyring).

With a key file (AUDIT_KEY_FILE; `speculation serve` uses DATA/audit-keys.json) every API
and worker process loads the same keys, and reads the file again when it changes (an
operator's `speculation keys rotate`), checking at most once a second. Without one, a key
drawn in memory for this process alone, shared by every app and core it builds (a test's
several "API processes" on one Redis sign alike): for tests only, since another process (or
this one restarted) signs with another key that GET /v1/keys of this process does not list.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Callable, Optional

from events.signing import Keyring, SigningKey

log = logging.getLogger(__name__)

RELOAD_CHECK_SECONDS = 1.0


def now_ms() -> int:
    return int(time.time() * 1000)


_process_keyring: Optional[Keyring] = None
_process_keyring_lock = threading.Lock()


def process_keyring() -> Keyring:
    """This process's in-memory key, drawn on first use (no key file configured)."""
    global _process_keyring
    with _process_keyring_lock:
        if _process_keyring is None:
            _process_keyring = Keyring.ephemeral(now_ms())
        return _process_keyring


def _stamp(path: str) -> Optional[tuple]:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_ino, st.st_size


class ServiceKeys:
    """The keyring a process signs with: `sign`, `public_keys` and `current` of the keyring
    as it is now (the key file's latest, when there is one)."""

    def __init__(self, keyring: Keyring, path: Optional[str] = None,
                 clock: Callable[[], float] = time.monotonic):
        self.path = path
        self._keyring = keyring
        self._clock = clock
        self._stamp = _stamp(path) if path else None
        self._checked = clock()

    @classmethod
    def ephemeral(cls) -> "ServiceKeys":
        """The process's in-memory key (process_keyring)."""
        return cls(process_keyring())

    @classmethod
    def from_file(cls, path: str, clock: Callable[[], float] = time.monotonic) -> "ServiceKeys":
        """The key file's keys; the file is created (mode 0600, one new key) when absent."""
        return cls(Keyring.load_or_create(path, now_ms()), path, clock)

    @property
    def keyring(self) -> Keyring:
        if self.path is not None and self._clock() - self._checked >= RELOAD_CHECK_SECONDS:
            self._checked = self._clock()
            self._reload_if_changed()
        return self._keyring

    def _reload_if_changed(self) -> None:
        stamp = _stamp(self.path)
        if stamp is None or stamp == self._stamp:
            return
        try:
            keyring = Keyring.load(self.path)
        except (OSError, ValueError, KeyError) as why:   # keep signing with the keys we have
            log.error("the key file %s cannot be read again (%s); still signing with key %s",
                      self.path, why, self._keyring.current.key_id)
            return
        self._stamp = stamp
        if keyring.current.key_id != self._keyring.current.key_id:
            log.info("signing key %s replaces %s (the key file changed)", keyring.current.key_id,
                     self._keyring.current.key_id)
        self._keyring = keyring

    @property
    def current(self) -> SigningKey:
        return self.keyring.current

    def sign(self, obj: dict) -> dict:
        return self.keyring.sign(obj)

    def public_keys(self) -> list[dict]:
        return self.keyring.public_keys()


def service_keys(key_file: Optional[str]) -> ServiceKeys:
    """The keys of a process from its AUDIT_KEY_FILE setting (empty: an ephemeral key)."""
    if key_file:
        return ServiceKeys.from_file(key_file)
    return ServiceKeys.ephemeral()


# A rotation takes effect this long after the operator runs it: every running process reads
# the changed key file within a second of its next signature, so none signs with the old key
# past its end (a signature made after its key's `valid_until` would not verify).
ROTATION_DELAY_MS = 5_000


def rotate_key_file(path: str, delay_ms: int = ROTATION_DELAY_MS) -> Keyring:
    """The operator's rotation: the key file's current key ends `delay_ms` from now, when a new
    one takes over; the file is replaced atomically and keeps every ended key (what they
    signed still verifies, and a receipt of their time is regenerated with them)."""
    keyring = Keyring.load(path).rotate(now_ms() + delay_ms)
    keyring.save(path)
    return keyring
