"""The expensive reads (verify, export, replay), bounded per client address.

`AUDITS_PER_ADDRESS` (app config; 0: no bound) of them run at once per client address, per
API process. Under gunicorn's gevent worker the next few (up to `QUEUE_FACTOR` times the
bound) wait their turn, parked (no CPU), for at most `MAX_WAIT` seconds: a client looping on
verify then paces itself on the server's answers instead of spinning on refusals. Past that
queue, or after that wait, or at once under a thread-per-request worker (where a parked
request would hold a thread a player needs): 429 `too_many_audits` with Retry-After.

Process-local, as the stream caps (service/streaming.py): with N API processes an address
may run up to N x the bound.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator, Optional

from flask import current_app, request

from .errors import TooManyRequests

QUEUE_FACTOR = 16
MAX_WAIT = 10.0
RETRY_AFTER = 2


class TooManyAudits(TooManyRequests):
    code = "too_many_audits"

    def __init__(self, limit: int):
        super().__init__(f"too many verify, export and replay requests at once from this address: at most "
                         f"{limit} run at once; retry after the Retry-After seconds", RETRY_AFTER)
        self.details.update({"limit": limit, "per": "address"})


class AuditGate:
    """Counts the expensive reads running, and waiting, per address."""

    def __init__(self, per_address: int):
        self.per_address = per_address
        self._lock = threading.Lock()
        self._free = threading.Condition(self._lock)
        self._running: dict[str, int] = {}
        self._waiting: dict[str, int] = {}

    @contextmanager
    def slot(self, address: Optional[str], may_wait: bool) -> Iterator[None]:
        limit = self.per_address
        if not limit or not address:
            yield
            return
        with self._free:
            if self._running.get(address, 0) >= limit:
                if not may_wait or self._waiting.get(address, 0) >= limit * QUEUE_FACTOR:
                    raise TooManyAudits(limit)
                self._waiting[address] = self._waiting.get(address, 0) + 1
                try:
                    if not self._free.wait_for(lambda: self._running.get(address, 0) < limit, MAX_WAIT):
                        raise TooManyAudits(limit)
                finally:
                    left = self._waiting[address] - 1
                    if left:
                        self._waiting[address] = left
                    else:
                        del self._waiting[address]
            self._running[address] = self._running.get(address, 0) + 1
        try:
            yield
        finally:
            with self._free:
                left = self._running[address] - 1
                if left:
                    self._running[address] = left
                else:
                    del self._running[address]
                self._free.notify_all()

    def running(self) -> int:
        with self._lock:
            return sum(self._running.values())


def _cooperative() -> bool:
    """Whether a parked request costs only a greenlet (gunicorn's gevent worker), not a thread."""
    try:
        from gevent import monkey
    except ImportError:
        return False
    return monkey.is_module_patched("threading")


def gate() -> AuditGate:
    found = current_app.extensions.get("audit_gate")
    if found is None:
        found = current_app.extensions.setdefault(
            "audit_gate", AuditGate(int(current_app.config.get("AUDITS_PER_ADDRESS") or 0)))
    return found


def audit_slot():
    """The current request's slot among its address's expensive reads (a context manager)."""
    return gate().slot(request.remote_addr, _cooperative())
