"""The worker process keeps itself going: its RQ worker (with the scheduler), the reconciler and
the sweep for abandoned jobs, each restarted after whatever stopped it.

RQ's `Worker.work()` returns on the first Redis error it meets (a restart, a timeout) and its
teardown may raise on the same dead connection; left alone, the process exits and bots,
scoring, timeouts and the reconciler stop until a person restarts it. Here `work()` runs in a
loop: when it returns without being asked to stop, the supervisor waits for Redis to answer a
PING (every `PROBE_EVERY` seconds, so it is back within about a second of Redis returning) and
starts a fresh worker. A SIGTERM or SIGINT (RQ's warm shutdown) ends the loop.

Two threads beside it, each surviving any one failure:
- the abandoned-job sweep, every `recover_every` seconds: a started job whose heartbeat is
  older than `abandoned_after` lost its worker (kill -9, a crash); it is failed and its work
  enqueued again at once (every job is idempotent by game, seat and version);
- the reconciler, every `reconcile_every` seconds (workers/reconciler.py).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable, Optional

log = logging.getLogger(__name__)

PROBE_EVERY = 0.5


def _asked_to_stop(worker) -> bool:
    """Whether a signal asked the RQ worker to stop: RQ notes the time of the request (an idle
    worker then leaves `work()` normally, without the `_stop_requested` flag a busy one sets)."""
    return bool(getattr(worker, "_stop_requested", False) or getattr(worker, "_shutdown_requested_date", None))


class Supervisor:
    def __init__(self, make_worker: Callable[[], object], ping: Callable[[], object], *,
                 reconcile: Optional[Callable[[], object]] = None, reconcile_every: float = 10.0,
                 recover: Optional[Callable[[], object]] = None, recover_every: float = 1.0,
                 sleep: Callable[[float], None] = time.sleep):
        self._make_worker = make_worker
        self._ping = ping
        self._loops = [(name, fn, every) for name, fn, every in
                       (("reconciler", reconcile, reconcile_every), ("abandoned-job sweep", recover, recover_every))
                       if fn is not None]
        self._sleep = sleep
        self._stopping = threading.Event()
        self.restarts = 0

    def run(self) -> None:
        """Run until asked to stop (a signal to the RQ worker, or `stop()`)."""
        for name, fn, every in self._loops:
            threading.Thread(target=self._every, args=(name, fn, every), name=name, daemon=True).start()
        try:
            while not self._stopping.is_set():
                worker = None
                try:
                    worker = self._make_worker()
                    worker.work(with_scheduler=True)
                except Exception as err:   # RQ's teardown on a dead connection, a failed start
                    log.warning("the RQ worker stopped: %s", err)
                if worker is not None and _asked_to_stop(worker):
                    return   # a warm shutdown asked for by a signal
                if self._stopping.is_set():
                    return
                self.restarts += 1
                log.warning("the RQ worker quit; waiting for Redis, then starting a new one (restart %d)",
                            self.restarts)
                self._wait_for_redis()
        finally:
            self._stopping.set()

    def stop(self) -> None:
        self._stopping.set()

    def _wait_for_redis(self) -> None:
        while not self._stopping.is_set():
            try:
                self._ping()
                return
            except Exception:
                self._sleep(PROBE_EVERY)

    def _every(self, name: str, fn: Callable[[], object], every: float) -> None:
        while not self._stopping.is_set():
            try:
                fn()
            except Exception as err:   # Redis away: try again next period
                log.warning("%s: %s", name, err)
            self._stopping.wait(every)
