"""Enqueueing follow-up jobs on RQ (the service's `Jobs`), one job id per unit of work.

Two queues, in priority order: `games` holds the work of games with a player seat (their
bots' turns, timeouts, scoring) and `games-bots` the work of games only bots play. A worker
takes a job from `games-bots` only when `games` is empty (RQ dequeues its queues in order), so
a bot turn in a person's game never waits behind all-bot games; `worker_queues` gives the
list every worker listens on.

A job id names its work, e.g. bot_GAME_SEAT_VERSION, and is enqueued with unique=True, so
the reconciler and a retried request never queue the same turn twice; a finished or failed
job with that id is replaced. Jobs name their functions in workers/tasks.py by path: RQ
imports that module in the worker, and nothing here does (the worker command binds the tasks
to the core the bootstrap built, whose jobs are this queue).

`request_id`, given by whoever builds the queue (the bootstrap: the request id of the HTTP
request being served), is stored in each job's meta: the job's log lines carry it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Callable, Optional

from rq import Queue, Retry
from rq.exceptions import DuplicateJobError, NoSuchJobError
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry
from rq.utils import now

QUEUE_NAME = "games"              # games with a player seat: first
BACKGROUND_QUEUE_NAME = "games-bots"   # games only bots play: when nothing else waits
JOB_TIMEOUT = 30
RETRY = Retry(max=3, interval=[1, 2, 5])
TASKS = "workers.tasks"
DONE = {JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED}


def worker_queues(connection) -> list[Queue]:
    """The queues a worker takes jobs from, first to last."""
    return [Queue(QUEUE_NAME, connection=connection), Queue(BACKGROUND_QUEUE_NAME, connection=connection)]


class RQJobs:
    def __init__(self, connection, queue_name: str = QUEUE_NAME,
                 background_queue_name: str = BACKGROUND_QUEUE_NAME,
                 request_id: Optional[Callable[[], Optional[str]]] = None):
        self.queue = Queue(queue_name, connection=connection)
        self.background = Queue(background_queue_name, connection=connection)
        self.request_id = request_id or (lambda: None)

    def _enqueue(self, job_id: str, func, *args, delay: float = 0, background: bool = False) -> None:
        options = dict(job_id=job_id, job_timeout=JOB_TIMEOUT, retry=RETRY, result_ttl=600,
                       failure_ttl=3600, unique=True)
        request_id = self.request_id()
        if request_id:   # the request that caused the job, in the job's logs
            options["meta"] = {"request_id": request_id}
        queue = self.background if background else self.queue
        for _ in range(2):
            try:
                if delay and self._pending(job_id):
                    return  # enqueue_in ignores unique: re-scheduling would postpone the job
                if delay:
                    queue.enqueue_in(timedelta(seconds=delay), func, *args, **options)
                else:
                    queue.enqueue(func, *args, **options)
                return
            except DuplicateJobError:
                try:
                    existing = Job.fetch(job_id, connection=self.queue.connection)
                except NoSuchJobError:
                    continue   # gone in between: enqueue it now
                if self._waits_somewhere(existing):
                    return  # the same work is already waiting or running
                existing.delete()

    def _pending(self, job_id: str) -> bool:
        """True when a job with this id waits or runs; a finished (or orphaned) one is deleted."""
        try:
            existing = Job.fetch(job_id, connection=self.queue.connection)
        except NoSuchJobError:
            return False
        if self._waits_somewhere(existing):
            return True
        existing.delete()
        return False

    def _waits_somewhere(self, job: Job) -> bool:
        """Whether the job is where its status says: a queued job in its queue (or taken off
        it by a worker), a started one in the started registry, a scheduled one in the
        scheduled registry. A job hash whose list entry was lost (a reply or request lost
        between the service and Redis) would otherwise block its unique id, and its game,
        for good: such an orphan counts as not pending."""
        status = job.get_status(refresh=True)
        if status is None or status in DONE:
            return False
        connection = self.queue.connection
        origin = Queue(job.origin, connection=connection) if job.origin else self.queue
        if status == JobStatus.QUEUED:
            found = (connection.lpos(origin.key, job.id) is not None
                     or connection.lpos(IntermediateQueue(origin.key, connection).key, job.id) is not None)
        elif status == JobStatus.STARTED:
            found = job.id in StartedJobRegistry(queue=origin)
        elif status == JobStatus.SCHEDULED:
            found = job.id in ScheduledJobRegistry(queue=origin)
        else:
            return True   # deferred and the like: left to RQ
        if found:
            return True
        # Not where its status said: an orphan, or a job a worker moved on meanwhile (taken off
        # the queue and started between two reads). Only a status that stayed put is an orphan.
        now = job.get_status(refresh=True)
        return now != status and now is not None and now not in DONE

    def bot_turn(self, game_id: str, seat: int, version: int, background: bool = False) -> None:
        self._enqueue(f"bot_{game_id}_{seat}_{version}", f"{TASKS}.bot_turn", game_id, seat, version,
                      background=background)

    def score(self, game_id: str, background: bool = False) -> None:
        self._enqueue(f"score_{game_id}", f"{TASKS}.score", game_id, background=background)

    def turn_timeout(self, game_id: str, seat: int, version: int, seconds: float) -> None:
        self._enqueue(f"timeout_{game_id}_{seat}_{version}", f"{TASKS}.turn_timeout", game_id, seat, version,
                      delay=seconds)

    def recover_abandoned(self, abandoned_after: float) -> list[str]:
        """Fail the jobs whose worker died under them, so the reconciler's next pass enqueues
        their work again (same job id: a DONE job is replaced).

        RQ itself notices a dead worker's job only when its heartbeat entry expires and its
        maintenance runs (up to ten minutes). Here a job is abandoned when it has been
        started, or taken off the queue, and its heartbeat is older than `abandoned_after`
        seconds; a live worker beats every `job_monitoring_interval` (the worker command sets
        it well below `abandoned_after`). Re-running the work is safe: every job is
        idempotent by (game, seat, version)."""
        recovered = []
        for queue in (self.queue, self.background):
            recovered += self._recover_abandoned(queue, abandoned_after)
        recovered += self.enqueue_overdue(abandoned_after)
        return recovered

    @staticmethod
    def _recover_abandoned(queue: Queue, abandoned_after: float) -> list[str]:
        connection = queue.connection
        started = StartedJobRegistry(queue=queue)
        failed = FailedJobRegistry(queue=queue)
        intermediate = IntermediateQueue(queue.key, connection)
        candidates = [(job_id, "started") for job_id in started.get_job_ids(cleanup=False)]
        candidates += [(job_id, "dequeued") for job_id in intermediate.get_job_ids()]
        recovered = []
        for job_id, where in candidates:
            try:
                job = Job.fetch(job_id, connection=connection)
            except NoSuchJobError:
                if where == "dequeued":
                    intermediate.remove(job_id)
                continue
            status = job.get_status(refresh=False)
            if where == "started" and status != JobStatus.STARTED:
                continue
            beat = job.last_heartbeat or job.started_at or job.enqueued_at
            if beat is None or (now() - beat).total_seconds() < abandoned_after:
                continue
            with connection.pipeline() as pipe:
                if where == "started":
                    started.remove_executions(job, pipeline=pipe)
                else:
                    pipe.lrem(intermediate.key, 1, job_id)
                job.set_status(JobStatus.FAILED, pipeline=pipe)
                failed.add(job, ttl=3600, exc_string=f"abandoned: no heartbeat for {abandoned_after:g} s "
                                                     f"(its worker died); the reconciler runs it again",
                           pipeline=pipe)
                pipe.execute()
            recovered.append(job_id)
        return recovered

    def enqueue_overdue(self, late_by: float) -> list[str]:
        """Move scheduled jobs (turn timeouts, RQ's retries of failed jobs) that are `late_by`
        seconds overdue to their queue, on both queues. RQ's scheduler holds a lock that
        outlives a killed worker by a minute or more; until another worker's scheduler takes
        it over, nothing moves due jobs but this (the outage drill found an all-bot game's
        retried turn left scheduled for good when only the first queue was swept)."""
        from datetime import timedelta as _td

        moved = []
        cutoff = int((now() - _td(seconds=late_by)).timestamp())
        for queue in (self.queue, self.background):
            registry = ScheduledJobRegistry(queue=queue)
            for job_id in registry.get_jobs_to_schedule(cutoff):
                try:
                    job = Job.fetch(job_id, connection=queue.connection)
                except NoSuchJobError:
                    registry.remove(job_id)
                    continue
                with queue.connection.pipeline() as pipe:
                    queue._enqueue_job(job, pipeline=pipe)
                    registry.remove(job, pipeline=pipe)
                    pipe.execute()
                moved.append(job_id)
        return moved
