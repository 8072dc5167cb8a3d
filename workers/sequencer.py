"""The sequencer: the loop that fills the transparency log (events/transparency.py `sequence`).

Every worker process runs one beside its reconciler (workers/supervisor.py; the in-process
worker of `speculation serve` and the tests in workers/embedded.py), a pass every
AUDIT_SEQUENCE_EVERY seconds (0.5 by default). The log's lease makes exactly one of them
sequence at a time: the others' passes find it held and do nothing, and take it over within
LEASE_MS of its holder stopping (a crash, a kill -9). The loop survives any one failure
(Redis away, a pass that raised): it logs it and runs the next pass, which rebuilds whatever
the failed one did not commit.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable, Optional

from events.transparency import LEASE_MS, PROCESS_OWNER, BatchResult, sequence

log = logging.getLogger(__name__)

DEFAULT_EVERY = 0.5


def sequencer_pass(service, owner: str = PROCESS_OWNER, lease_ms: int = LEASE_MS) -> Callable[[], BatchResult]:
    """One pass over the core's log, store and index, its tree heads signed with the core's
    keys (the key valid at each head's timestamp)."""
    def run() -> BatchResult:
        done = sequence(service.transparency, service.store, service.index, service.keys.sign,
                        owner=owner, lease_ms=lease_ms)
        if done.logged:
            log.info("transparency log: %d checkpoint(s), tree size %d", done.logged, done.tree_size)
        return done
    return run


class SequencerThread:
    """A pass every `every` seconds in a daemon thread, until `stop()`."""

    def __init__(self, run_pass: Callable[[], object], every: float = DEFAULT_EVERY,
                 release: Optional[Callable[[], None]] = None):
        self._run_pass = run_pass
        self.every = every
        self._release = release
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.passes = 0

    def start(self) -> "SequencerThread":
        self._thread = threading.Thread(target=self._loop, name="sequencer", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self._release is not None:   # let another process take over at once, not after the lease
            try:
                self._release()
            except Exception as err:
                log.warning("sequencer: releasing the lease failed: %s", err)

    def _loop(self) -> None:
        while not self._stop.is_set():
            run_once(self._run_pass)
            self.passes += 1
            self._stop.wait(self.every)


def run_once(run_pass: Callable[[], object]) -> Optional[object]:
    """One pass; any failure logged, never raised (the next pass does the work again)."""
    try:
        return run_pass()
    except Exception as err:
        log.warning("sequencer: %s: %s", type(err).__name__, err)
        return None


def sequencer_for(service, every: Optional[float] = None) -> Optional[SequencerThread]:
    """The sequencer thread of a core that has a transparency log (None without one)."""
    if getattr(service, "transparency", None) is None:
        return None
    every = every if every is not None else getattr(service, "sequence_every", DEFAULT_EVERY)
    return SequencerThread(sequencer_pass(service), every,
                           release=lambda: service.transparency.release_lease(PROCESS_OWNER))
