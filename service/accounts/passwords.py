"""Passwords: the policy a new password meets, and Argon2id hashing in a bounded pool of OS
threads, so that hashing neither blocks the event loop nor queues without end.

The policy follows NIST SP 800-63B: a length floor, a generous ceiling, no composition rules,
and a refusal of passwords found on a list of common ones (data/common-passwords.txt)."""

from __future__ import annotations

import functools
import os
import secrets
import sys
import threading
import unicodedata
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources

from argon2 import PasswordHasher, Type
from argon2.exceptions import Argon2Error, InvalidHashError

PASSWORD_MIN = 8
PASSWORD_MAX = 128          # characters
PASSWORD_MAX_BYTES = 512    # UTF-8: 128 four-byte characters, a bound on what is hashed
USERNAME_MIN = 3            # shorter usernames do not exist, so need not be looked for


@functools.lru_cache(maxsize=1)
def common_passwords() -> frozenset[str]:
    """The shipped list, casefolded; read once, on first use."""
    text = (resources.files(__package__) / "data" / "common-passwords.txt").read_text("utf-8")
    # split("\n"), not splitlines(): an entry may hold a character splitlines() breaks on
    return frozenset(line.casefold() for line in text.split("\n") if line and not line.startswith("#"))


def _bad_character(password: str) -> bool:
    """A control character (NUL among them) or a lone surrogate, which UTF-8 cannot encode."""
    return any(unicodedata.category(c) in ("Cc", "Cs") for c in password)


def password_problem(password, username: str = "") -> str | None:
    """None for an acceptable password, else why not ("password: ..."). It never quotes the
    password: the message goes back to the client and may reach logs."""
    if not isinstance(password, str):
        return "password: must be text"
    if len(password) < PASSWORD_MIN:
        return f"password: at least {PASSWORD_MIN} characters"
    if len(password) > PASSWORD_MAX:
        return f"password: at most {PASSWORD_MAX} characters"
    if _bad_character(password):
        return "password: control characters and lone surrogates are not allowed"
    if len(password.encode("utf-8")) > PASSWORD_MAX_BYTES:
        return f"password: at most {PASSWORD_MAX_BYTES} bytes in UTF-8"
    if len(set(password)) == 1:
        return "password: one character repeated is too easy to guess"
    if isinstance(username, str) and len(username) >= USERNAME_MIN \
            and username.casefold() in password.casefold():
        return "password: must not contain the username"
    if password.casefold() in common_passwords():
        return "password: this is one of the most common passwords; choose another"
    return None


class HashingBusy(Exception):
    """Too many hashes are queued or running: the caller answers 429 with Retry-After."""

    retry_after = 2

    def __init__(self, message: str = "password hashing: too many requests waiting"):
        super().__init__(message)


def _gevent_patched() -> bool:
    # Read from sys.modules: a process that never imported gevent is not patched, and
    # importing it here would cost every plain process gevent's start-up.
    monkey = sys.modules.get("gevent.monkey")
    return bool(monkey and monkey.is_module_patched("threading"))


class PasswordHashing:
    """Argon2id (argon2-cffi) off the event loop: each hash or verify runs on one of `threads`
    OS threads (argon2-cffi releases the GIL in its C call). Under gevent the calling greenlet
    parks while the loop serves others; otherwise the calling thread waits. At most
    `max_waiting` calls are queued or running at once: one more raises HashingBusy at once.

    The defaults are RFC 9106's second recommended option (argon2-cffi's own): t=3, 64 MiB, p=4."""

    def __init__(self, time_cost: int = 3, memory_kib: int = 65536, parallelism: int = 4,
                 threads: int = 2, max_waiting: int = 64):
        self._hasher = PasswordHasher(time_cost=time_cost, memory_cost=memory_kib,
                                      parallelism=parallelism, type=Type.ID)
        self.threads = threads
        self.max_waiting = max_waiting
        self._lock = threading.Lock()   # held only for a counter's update, never while waiting
        self._waiting = 0
        self._pool = None
        self._pool_pid = 0
        self._call: Callable | None = None
        self._dummy: str | None = None

    @property
    def _dummy_hash(self) -> str:
        """What an unknown username is checked against, so it costs what a known one does:
        made on first need (every process builds a hashing pool; few ever sign anyone in)."""
        if self._dummy is None:
            self._dummy = self._run(self._hasher.hash, secrets.token_urlsafe(32))
        return self._dummy

    @classmethod
    def for_tests(cls, **kwargs) -> PasswordHashing:
        """Cheap parameters: about a millisecond a hash."""
        return cls(**{"time_cost": 1, "memory_kib": 1024, "parallelism": 1, **kwargs})

    def hash(self, password: str) -> str:
        return self._run(self._hasher.hash, password)

    def verify(self, stored_hash: str, password: str) -> bool:
        """True for the right password; False for a wrong one or an unreadable stored hash.
        A value that is not text costs the same work (against the dummy) and is False."""
        both_text = isinstance(stored_hash, str) and isinstance(password, str)
        stored = stored_hash if isinstance(stored_hash, str) else self._dummy_hash
        given = password if isinstance(password, str) else ""
        try:
            ok = self._run(self._hasher.verify, stored, given)
        except (Argon2Error, InvalidHashError):
            return False
        return ok and both_text

    def verify_dummy(self, password: str) -> bool:
        """The work of a verify, for a username with no account; always False."""
        self.verify(self._dummy_hash, password)
        return False

    def needs_rehash(self, stored_hash: str) -> bool:
        """True when the hash was made with other parameters (or cannot be read)."""
        try:
            return self._hasher.check_needs_rehash(stored_hash)
        except (ValueError, AttributeError):     # not an Argon2 hash, or not text
            return True

    def close(self) -> None:
        """Stops the pool's threads (a later call makes a new pool)."""
        with self._lock:
            pool, self._pool, self._call = self._pool, None, None
        if isinstance(pool, ThreadPoolExecutor):
            pool.shutdown(wait=False)
        elif pool is not None:
            pool.kill()     # gevent's ThreadPool

    # --- the pool ------------------------------------------------------------------------
    def _run(self, fn: Callable, *args):
        with self._lock:
            if self._waiting >= self.max_waiting:
                raise HashingBusy()
            self._waiting += 1
        try:
            return self._submitter()(fn, *args)
        finally:
            with self._lock:
                self._waiting -= 1

    def _submitter(self) -> Callable:
        """The pool's submit-and-wait, made on first use in this process: a pool made before
        gunicorn forks would have no threads in the worker."""
        with self._lock:
            if self._call is None or self._pool_pid != os.getpid():
                self._pool, self._call = self._new_pool()
                self._pool_pid = os.getpid()
            return self._call

    def _new_pool(self):
        if _gevent_patched():
            from gevent.threadpool import ThreadPool
            pool = ThreadPool(self.threads)
            return pool, lambda fn, *args: pool.spawn(fn, *args).get()
        pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="argon2")
        return pool, lambda fn, *args: pool.submit(fn, *args).result()
