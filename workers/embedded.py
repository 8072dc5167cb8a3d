"""The in-process worker of the embedded mode: RQ's SimpleWorker on the same fakeredis
server as the API (a forking worker cannot share an in-process fakeredis), in a thread.
It also moves due scheduled jobs (turn timeouts) to the queue and runs the reconciler, and
(when the core has a transparency log) the sequencer in a thread of its own, so a long job
never delays a checkpoint (workers/sequencer.py).
`request_scope`: as for `tasks.bind`, how a job makes its request id current."""

from __future__ import annotations

import logging
import threading
import time
from typing import Optional

from rq import SimpleWorker
from rq.scheduler import RQScheduler
from rq.timeouts import TimerDeathPenalty

from . import jobs, tasks
from .queue import worker_queues
from .sequencer import sequencer_for

log = logging.getLogger(__name__)


class ThreadWorker(SimpleWorker):
    """A SimpleWorker that can live in a non-main thread (no signals, timer timeouts)."""

    death_penalty_class = TimerDeathPenalty

    def _install_signal_handlers(self):
        pass


class EmbeddedWorker:
    def __init__(self, service, connection, reconcile_every: float = 30.0, idle_sleep: float = 0.02,
                 request_scope: Optional[tasks.RequestScope] = None):
        self.service = service
        self.request_scope = request_scope
        self.connection = connection
        self.reconcile_every = reconcile_every
        self.idle_sleep = idle_sleep
        self._stop = threading.Event()
        self._thread = None
        self.sequencer = sequencer_for(service)

    def start(self) -> "EmbeddedWorker":
        tasks.bind(self.service, self.request_scope)
        self._thread = threading.Thread(target=self._run, name="embedded-worker", daemon=True)
        self._thread.start()
        if self.sequencer is not None:
            self.sequencer.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self.sequencer is not None:
            self.sequencer.stop()
        if self._thread:
            self._thread.join(5)

    def _run(self) -> None:
        queues = worker_queues(self.connection)
        worker = ThreadWorker(queues, connection=self.connection)
        scheduler = RQScheduler(queues, connection=self.connection, logging_level="WARNING")
        next_reconcile = 0.0
        while not self._stop.is_set():
            try:
                scheduler.acquire_locks()
                scheduler.enqueue_scheduled_jobs()
                if time.monotonic() >= next_reconcile:
                    jobs.reconcile(self.service)
                    next_reconcile = time.monotonic() + self.reconcile_every
                if any(queue.count for queue in queues):
                    worker.work(burst=True, logging_level="WARNING")
                else:
                    time.sleep(self.idle_sleep)
            except Exception:  # the loop must outlive any one job's failure
                log.exception("embedded worker loop")
                time.sleep(0.5)
