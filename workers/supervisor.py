"""The worker process keeps itself going: its RQ worker (with the scheduler), the reconciler and
the sweep for abandoned jobs, each restarted after whatever stopped it.

RQ's `Worker.work()` returns on the first Redis error it meets (a restart, a timeout) and its
teardown may raise on the same dead connection; left alone, the process exits and bots,
scoring, timeouts and the reconciler stop until a person restarts it. Here `work()` runs in a
loop: when it returns without being asked to stop, the supervisor waits for Redis to answer a
PING (every `PROBE_EVERY` seconds, so it is back within about a second of Redis returning) and
starts a fresh worker. A SIGTERM or SIGINT (RQ's warm shutdown) ends the loop.

Threads beside it, each surviving any one failure:
- the abandoned-job sweep, every `recover_every` seconds: a started job whose heartbeat is
  older than `abandoned_after` lost its worker (kill -9, a crash); it is failed and its work
  enqueued again at once (every job is idempotent by game, seat and version);
- the reconciler, every `reconcile_every` seconds (workers/reconciler.py);
- the transparency log's sequencer, every `sequence_every` seconds (workers/sequencer.py;
  its lease makes one process of all sequence at a time).

The RQ worker it runs is `SupervisedWorker`, RQ's forking worker with two changes:
- its command listener (the thread that takes RQ's stop-job, kill-horse and shutdown commands
  on the worker's pub/sub channel) survives every error: RQ's own handler let it die on
  anything but a `ConnectionError`, and a Redis loading its data after a restart answers the
  listener's health-check PING with `-LOADING`, which redis-py hands over as if it were a
  message (`TypeError: 'BusyLoadingError' object is not subscriptable`); the listener now
  drops its connection, waits `LISTENER_RETRY` seconds and subscribes again;
- each work horse's metrics files are folded into the archive once it has been reaped
  (workers/metrics.py `archive_process`), so the metrics folder does not grow with every job.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Callable, Optional

from rq import Worker

from .metrics import archive_process, multiprocess_dir

log = logging.getLogger(__name__)

PROBE_EVERY = 0.5
LISTENER_RETRY = 1.0   # seconds the command listener waits before subscribing again


class SupervisedWorker(Worker):
    """RQ's forking worker whose command listener survives Redis restarts and whose work
    horses leave no metrics files behind."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._unarchived: list[int] = []
        self.listener_errors = 0

    # --- the command listener ----------------------------------------------------------

    def _pubsub_exception_handler(self, exc, pubsub, pubsub_thread) -> None:
        """Any error of the listener (refused, reset, timed out, `-LOADING` answered to its
        health check, a bad command payload): drop the connection and go on; the next read
        reconnects, and redis-py subscribes the channel again on connect."""
        if not isinstance(exc, Exception):
            raise exc
        self.listener_errors += 1
        self.log.warning("Worker %s: command listener: %s: %s; subscribing again in %.1f s",
                         self.name, type(exc).__name__, exc, LISTENER_RETRY)
        try:
            if pubsub.connection is not None:
                pubsub.connection.disconnect()
        except Exception:   # already gone
            pass
        time.sleep(LISTENER_RETRY)

    def stop_listening(self) -> None:
        """Stop the command listener if RQ's teardown could not (it unsubscribes over the
        connection that just failed), so a restarted worker does not leave it behind."""
        thread = getattr(self, "pubsub_thread", None)
        if thread is not None and thread.is_alive():
            thread.stop()
            for leave in (lambda: self.pubsub.unsubscribe(), lambda: self.pubsub.connection.disconnect()):
                try:   # the reply to UNSUBSCRIBE, or the socket shut, wakes its blocking read
                    leave()
                except Exception:
                    pass
            thread.join(timeout=LISTENER_RETRY + 2)
            try:
                self.pubsub.close()
            except Exception:
                pass
        self.archive_horses()

    # --- the work horses' metrics ------------------------------------------------------

    def monitor_work_horse(self, job, queue):
        horse = self.horse_pid
        try:
            result = super().monitor_work_horse(job, queue)
        except BaseException:
            if horse:   # perhaps still running: archived once it has ended
                self._unarchived.append(horse)
            raise
        if horse:       # RQ has reaped it
            _archive(horse)
        self.archive_horses()
        return result

    def archive_horses(self) -> None:
        """Fold the metrics of every horse left over that has ended into the archive."""
        waiting = [pid for pid in self._unarchived if _alive(pid)]
        for pid in self._unarchived:
            if pid not in waiting:
                _archive(pid)
        self._unarchived = waiting


def _archive(pid: int) -> None:
    if multiprocess_dir():
        try:
            archive_process(pid)
        except Exception as err:   # never fail a job over its metrics
            log.warning("metrics of work horse %s not archived: %s", pid, err)


def _alive(pid: int) -> bool:
    try:
        reaped, _ = os.waitpid(pid, os.WNOHANG)
        if reaped == pid:
            return False
    except ChildProcessError:   # reaped already (RQ waits for its horse)
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _asked_to_stop(worker) -> bool:
    """Whether a signal asked the RQ worker to stop: RQ notes the time of the request (an idle
    worker then leaves `work()` normally, without the `_stop_requested` flag a busy one sets)."""
    return bool(getattr(worker, "_stop_requested", False) or getattr(worker, "_shutdown_requested_date", None))


class Supervisor:
    def __init__(self, make_worker: Callable[[], object], ping: Callable[[], object], *,
                 reconcile: Optional[Callable[[], object]] = None, reconcile_every: float = 10.0,
                 recover: Optional[Callable[[], object]] = None, recover_every: float = 1.0,
                 sequence: Optional[Callable[[], object]] = None, sequence_every: float = 0.5,
                 sleep: Callable[[float], None] = time.sleep):
        self._make_worker = make_worker
        self._ping = ping
        self._loops = [(name, fn, every) for name, fn, every in
                       (("reconciler", reconcile, reconcile_every), ("abandoned-job sweep", recover, recover_every),
                        ("sequencer", sequence, sequence_every))
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
                finally:
                    if worker is not None and hasattr(worker, "stop_listening"):
                        worker.stop_listening()
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
