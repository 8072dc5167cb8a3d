"""Enqueueing follow-up jobs on RQ (the service's `Jobs`), one job id per unit of work.

A job id names its work, e.g. bot_GAME_SEAT_VERSION, and is enqueued with unique=True, so
the reconciler and a retried request never queue the same turn twice; a finished or failed
job with that id is replaced.
"""

from __future__ import annotations

from datetime import timedelta

from rq import Queue, Retry
from rq.exceptions import DuplicateJobError, NoSuchJobError
from rq.job import Job, JobStatus

from . import tasks

QUEUE_NAME = "games"
JOB_TIMEOUT = 30
RETRY = Retry(max=3, interval=[1, 2, 5])
DONE = {JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED}


class RQJobs:
    def __init__(self, connection, queue_name: str = QUEUE_NAME):
        self.queue = Queue(queue_name, connection=connection)

    def _enqueue(self, job_id: str, func, *args, delay: float = 0) -> None:
        options = dict(job_id=job_id, job_timeout=JOB_TIMEOUT, retry=RETRY, result_ttl=600,
                       failure_ttl=3600, unique=True)
        for _ in range(2):
            try:
                if delay and self._pending(job_id):
                    return  # enqueue_in ignores unique: re-scheduling would postpone the job
                if delay:
                    self.queue.enqueue_in(timedelta(seconds=delay), func, *args, **options)
                else:
                    self.queue.enqueue(func, *args, **options)
                return
            except DuplicateJobError:
                existing = Job.fetch(job_id, connection=self.queue.connection)
                if existing.get_status(refresh=True) not in DONE:
                    return  # the same work is already waiting or running
                existing.delete()

    def _pending(self, job_id: str) -> bool:
        """True when a job with this id waits or runs; a finished one is deleted."""
        try:
            existing = Job.fetch(job_id, connection=self.queue.connection)
        except NoSuchJobError:
            return False
        if existing.get_status(refresh=True) not in DONE:
            return True
        existing.delete()
        return False

    def bot_turn(self, game_id: str, seat: int, version: int) -> None:
        self._enqueue(f"bot_{game_id}_{seat}_{version}", tasks.bot_turn, game_id, seat, version)

    def score(self, game_id: str) -> None:
        self._enqueue(f"score_{game_id}", tasks.score, game_id)

    def turn_timeout(self, game_id: str, seat: int, version: int, seconds: float) -> None:
        self._enqueue(f"timeout_{game_id}_{seat}_{version}", tasks.turn_timeout, game_id, seat, version,
                      delay=seconds)
