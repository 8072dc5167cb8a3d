"""Streams of games opened with an account credential end within a second of its revocation.

An account's own stream ends by itself (the revoking event is in it: feed.AccountCursor). A
game's stream is woken by the game, not by the account, so each process watches, for every
account with such streams open, the account's stream on the same notifier (one waiter per
account, woken by the revoking append) and ends the streams whose credential is gone. A
waiter also looks every `RECHECK` seconds, in case a notification was lost.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from .credentials import Principal

log = logging.getLogger(__name__)

RECHECK = 1.0


class RevocationWatch:
    def __init__(self, still_valid: Callable[[Principal], bool], head: Callable[[str], int],
                 wait: Callable[[str, int, float], bool]):
        self._still_valid = still_valid
        self._head = head
        self._wait = wait
        self._lock = threading.Lock()
        self._watched: dict[str, dict[int, tuple[Principal, Callable[[], None]]]] = {}
        self._next = 0

    def watch(self, principal: Principal, stop: Callable[[], None]) -> Callable[[], None]:
        """Call `stop` once the principal's credential is revoked; returns the unwatch."""
        with self._lock:
            self._next += 1
            ticket = self._next
            entries = self._watched.get(principal.account_id)
            first = entries is None
            if first:
                entries = self._watched[principal.account_id] = {}
            entries[ticket] = (principal, stop)
        if first:
            threading.Thread(target=self._run, args=(principal.account_id,), daemon=True,
                             name=f"revocations-{principal.account_id}").start()

        def unwatch() -> None:
            with self._lock:
                found = self._watched.get(principal.account_id)
                if found is not None:
                    found.pop(ticket, None)

        if not first:   # revoked before it was watched (its process's cache still held it): at once
            self._check(principal.account_id, [(ticket, (principal, stop))])
        return unwatch

    def watching(self) -> int:
        with self._lock:
            return sum(len(e) for e in self._watched.values())

    def _run(self, account_id: str) -> None:
        stream = f"account/{account_id}"
        try:
            after = self._head(stream)
            while True:
                with self._lock:
                    entries = self._watched.get(account_id)
                    if not entries:
                        self._watched.pop(account_id, None)
                        return
                    current = list(entries.items())
                # checked before each wait, the first time too: a credential revoked before its
                # stream was watched (another process revoked it, this one's cache still held it)
                self._check(account_id, current)
                if self._wait(stream, after, RECHECK):
                    after = self._head(stream)
        except Exception:
            log.exception("watching %s for revocations failed; its streams end", account_id)
            with self._lock:
                entries = self._watched.pop(account_id, {})
            for _, stop in entries.values():
                stop()

    def _check(self, account_id: str, current) -> None:
        checked: dict[str, bool] = {}
        for ticket, (principal, stop) in current:
            valid = checked.get(principal.token_hash)
            if valid is None:
                valid = checked[principal.token_hash] = self._still_valid(principal)
            if not valid:
                stop()
                with self._lock:
                    self._watched.get(account_id, {}).pop(ticket, None)
