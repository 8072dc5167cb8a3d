"""Enqueueing follow-up jobs on RQ (the service's `Jobs`), one job id per unit of work.

Three queues, in priority order: `games` holds the work of games with a player seat (their
bots' turns, timeouts, scoring), `games-heavy` the bot turns of creators past their share of
bot time, and `games-bots` the work of games only bots play. A worker takes a job from a
queue only when the ones before it are empty (RQ dequeues its queues in order), so a bot turn
in a person's game never waits behind all-bot games; `worker_queues` gives the list every
worker listens on.

Bot turns are scheduled fairly across creators (the game's `creator`, recorded with it: the
client address today). A creator has at most `per_creator` bot turns queued or running at once;
its other due turns wait in its own list in Redis (`fair:wait:<creator>`) and are released, in
order, as its turns finish (`finished`, called by the job) or by the reconciler's pass
(`release_waiting`: a turn whose worker died). Taking a slot and releasing one are each one Lua
script. A creator whose bot turns took more than `ms_per_minute` of worker time over the last
minute or two has its turns queued on `games-heavy`, behind every other creator's: one
creator's backlog never holds up another's next turn, whatever the mix of seats.

A job id names its work, e.g. bot_GAME_SEAT_VERSION, and is enqueued with unique=True, so
the reconciler and a retried request never queue the same turn twice; a finished or failed
job with that id is replaced. Jobs name their functions in workers/tasks.py by path: RQ
imports that module in the worker, and nothing here does (the worker command binds the tasks
to the core the bootstrap built, whose jobs are this queue).

`request_id`, given by whoever builds the queue (the bootstrap: the request id of the HTTP
request being served), is stored in each job's meta: the job's log lines carry it.
"""

from __future__ import annotations

import json
import math
import time
from datetime import timedelta
from typing import Callable, Optional

from rq import Queue, Retry
from rq.exceptions import DuplicateJobError, NoSuchJobError
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry
from rq.utils import now

QUEUE_NAME = "games"              # games with a player seat: first
HEAVY_QUEUE_NAME = "games-heavy"  # bot turns of creators past their share of bot time: next
BACKGROUND_QUEUE_NAME = "games-bots"   # games only bots play: when nothing else waits
PER_CREATOR = 2          # bot turns of one creator queued or running at once
MS_PER_MINUTE = 10_000   # bot time per minute past which a creator's turns go to games-heavy
ADMITTED_GRACE = 30      # seconds a slot may be held by a job RQ does not know (yet)

# Both scripts first free the slots of jobs that are over (finished, failed, stopped,
# canceled in RQ, or unknown to RQ for ADMITTED_GRACE seconds: a release that died before its
# enqueue), and answer, first, the creator's bot time read in the same step (`_USAGE`: what
# `_queue_from_usage` judges by), so that taking a slot, or finishing a turn, is one round trip.
# KEYS: the creator's running set, waiting list, waiting specs, the set of creators with
# waiting turns; then the creator's bot time this minute and the one before, every creator's
# the same, and the creators with bot time this minute and the one before. ARGV: job id, spec
# (admit) / job finished (release), per_creator, now, grace, RQ's job key prefix, creator, ms
# to charge to the creator (release; "" for none).
_USAGE = """
local function usage()
  local out = {}
  for i = 5, 8 do out[#out + 1] = redis.call('GET', KEYS[i]) or '0' end
  out[#out + 1] = redis.call('SCARD', KEYS[9])
  out[#out + 1] = redis.call('SCARD', KEYS[10])
  return out
end
"""
USAGE_REPLIES = 6   # the replies of `usage()`, first in each script's answer
_PRUNE = """
local running = KEYS[1]
local cap, now, grace, prefix = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local held = redis.call('ZRANGE', running, 0, -1, 'WITHSCORES')
for i = 1, #held, 2 do
  local status = redis.call('HGET', prefix .. held[i], 'status')
  if (not status and now - tonumber(held[i + 1]) > grace) or status == 'finished' or status == 'failed'
     or status == 'stopped' or status == 'canceled' then
    redis.call('ZREM', running, held[i])
  end
end
"""
_ADMIT = _USAGE + _PRUNE + """
local job = ARGV[1]
local out = usage()
if redis.call('ZSCORE', running, job) then table.insert(out, 1) return out end
if redis.call('HEXISTS', KEYS[3], job) == 1 then table.insert(out, 0) return out end
if redis.call('ZCARD', running) < cap then
  redis.call('ZADD', running, now, job)
  redis.call('EXPIRE', running, 86400)
  table.insert(out, 1)
  return out
end
redis.call('RPUSH', KEYS[2], job)
redis.call('HSET', KEYS[3], job, ARGV[2])
redis.call('EXPIRE', KEYS[2], 86400)
redis.call('EXPIRE', KEYS[3], 86400)
redis.call('SADD', KEYS[4], ARGV[7])
table.insert(out, 0)
return out
"""
_RELEASE = _USAGE + """
if ARGV[8] ~= '' then
  for _, used in ipairs({KEYS[5], KEYS[7]}) do   -- the creator's, and every creator's
    redis.call('INCRBYFLOAT', used, ARGV[8])
    redis.call('EXPIRE', used, 180)
  end
  redis.call('SADD', KEYS[9], ARGV[7])
  redis.call('EXPIRE', KEYS[9], 180)
end
if ARGV[2] ~= '' then redis.call('ZREM', KEYS[1], ARGV[2]) end
""" + _PRUNE + """
local out = usage()
while redis.call('ZCARD', running) < cap do
  local job = redis.call('LPOP', KEYS[2])
  if not job then break end
  local spec = redis.call('HGET', KEYS[3], job)
  redis.call('HDEL', KEYS[3], job)
  if spec then
    redis.call('ZADD', running, now, job)
    table.insert(out, spec)
  end
end
if redis.call('LLEN', KEYS[2]) == 0 then redis.call('SREM', KEYS[4], ARGV[7]) end
return out
"""
CREATORS_KEY = "fair:creators"
JOB_TIMEOUT = 30
RETRY = Retry(max=3, interval=[1, 2, 5])
TASKS = "workers.tasks"
DONE = {JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED}


def worker_queues(connection) -> list[Queue]:
    """The queues a worker takes jobs from, first to last."""
    return [Queue(name, connection=connection) for name in (QUEUE_NAME, HEAVY_QUEUE_NAME, BACKGROUND_QUEUE_NAME)]


class RQJobs:

    def __init__(self, connection, queue_name: str = QUEUE_NAME,
                 background_queue_name: str = BACKGROUND_QUEUE_NAME,
                 request_id: Optional[Callable[[], Optional[str]]] = None,
                 per_creator: int = PER_CREATOR, ms_per_minute: float = MS_PER_MINUTE,
                 heavy_queue_name: str = HEAVY_QUEUE_NAME):
        self.queue = Queue(queue_name, connection=connection)
        self.heavy = Queue(heavy_queue_name, connection=connection)
        self.background = Queue(background_queue_name, connection=connection)
        self.request_id = request_id or (lambda: None)
        self.per_creator = per_creator        # 0: bot turns are not held back per creator
        self.ms_per_minute = ms_per_minute    # 0: no creator's turns go to games-heavy
        self._admit = connection.register_script(_ADMIT)
        self._release = connection.register_script(_RELEASE)

    @property
    def queues(self) -> tuple[Queue, ...]:
        return (self.queue, self.heavy, self.background)

    def _enqueue(self, job_id: str, func, *args, delay: float = 0, background: bool = False,
                 creator: str = "", queue: Optional[Queue] = None, request_id: Optional[str] = None) -> None:
        options = dict(job_id=job_id, job_timeout=JOB_TIMEOUT, retry=RETRY, result_ttl=600,
                       failure_ttl=3600, unique=True)
        request_id = request_id or self.request_id()
        meta = {}
        if request_id:   # the request that caused the job, in the job's logs
            meta["request_id"] = request_id
        if creator:      # whose bot time the job is (finished: charged, and the next released)
            meta["creator"] = creator
        if meta:
            options["meta"] = meta
        queue = queue or (self.background if background else self.queue)
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

    def bot_turn(self, game_id: str, seat: int, version: int, background: bool = False,
                 creator: str = "") -> None:
        job_id, func = f"bot_{game_id}_{seat}_{version}", f"{TASKS}.bot_turn"
        if not creator or not self.per_creator:
            self._enqueue(job_id, func, game_id, seat, version, background=background, creator=creator,
                          queue=self._queue_for(creator, background))
            return
        spec = json.dumps({"id": job_id, "func": func, "args": [game_id, seat, version],
                           "background": background, "creator": creator, "request_id": self.request_id()})
        *usage, admitted = self._admit(keys=self._fair_keys(creator), args=self._fair_args(job_id, spec, creator))
        if admitted:
            self._enqueue(job_id, func, game_id, seat, version, background=background, creator=creator,
                          queue=self._queue_from_usage(usage, background))
        # else it waits in the creator's list: released as the creator's turns finish

    # --- fair bot time across creators --------------------------------------------------
    @staticmethod
    def _fair_keys(creator: str) -> list[str]:
        minute = int(time.time() // 60)
        return [f"fair:running:{creator}", f"fair:wait:{creator}", f"fair:spec:{creator}", CREATORS_KEY,
                *RQJobs._usage_keys(creator, minute), f"fair:used:*:{minute}", f"fair:used:*:{minute - 1}",
                f"fair:active:{minute}", f"fair:active:{minute - 1}"]

    def _fair_args(self, job_id: str, spec_or_done: str, creator: str, charge_ms: str = "") -> list:
        return [job_id, spec_or_done, self.per_creator, time.time(), ADMITTED_GRACE,
                Job.redis_job_namespace_prefix, creator, charge_ms]

    @staticmethod
    def _usage_keys(creator: str, minute: Optional[int] = None) -> list[str]:
        minute = int(time.time() // 60) if minute is None else minute
        return [f"fair:used:{creator}:{minute}", f"fair:used:{creator}:{minute - 1}"]

    def usage_ms(self, creator: str) -> float:
        """The creator's bot time, in ms, over this minute and the one before."""
        return sum(float(v or 0) for v in self.queue.connection.mget(self._usage_keys(creator)))

    def _queue_for(self, creator: str, background: bool) -> Queue:
        """The queue for a turn of the creator's outside the fair slots (`_queue_from_usage`),
        its bot time read here."""
        if background:
            return self.background
        if not creator or not self.ms_per_minute:
            return self.queue
        minute = int(time.time() // 60)
        with self.queue.connection.pipeline(transaction=False) as pipe:
            pipe.mget(self._usage_keys(creator, minute) + [f"fair:used:*:{minute}", f"fair:used:*:{minute - 1}"])
            pipe.scard(f"fair:active:{minute}")
            pipe.scard(f"fair:active:{minute - 1}")
            values, active, before = pipe.execute()
        return self._queue_from_usage([*values, active, before], background)

    def _queue_from_usage(self, usage: list, background: bool) -> Queue:
        """`games-heavy` for a creator past its share of bot time: more than `ms_per_minute`,
        or more than a fair share (the mean of the creators with bot time in the window) once
        it has used a tenth of that; `games` otherwise. `usage`: the creator's bot time this
        minute and the one before, every creator's the same, and how many creators had bot
        time this minute and the one before (`_USAGE`)."""
        if background:
            return self.background
        if not self.ms_per_minute:
            return self.queue
        mine = sum(float(v or 0) for v in usage[0:2])
        total = sum(float(v or 0) for v in usage[2:4])
        share = total / max(1, int(usage[4]), int(usage[5]))
        if mine > self.ms_per_minute or (mine > self.ms_per_minute / 10 and mine > share):
            return self.heavy
        return self.queue

    def finished(self, job_id: str, seconds: float) -> list[str]:
        """A bot turn is over (called by the job, workers/jobs.py): its time is charged to its
        creator, its slot freed, and the creator's next waiting turns enqueued. Returns their ids."""
        from rq import get_current_job

        job = get_current_job()
        if job is None or job.id != job_id:
            try:
                job = Job.fetch(job_id, connection=self.queue.connection)
            except NoSuchJobError:
                return []
        creator = (job.meta or {}).get("creator")
        if not creator:
            return []
        # charged, its slot freed and the next turns taken in one step (the release script)
        ms = format(round(seconds * 1000.0, 3), "f")
        return self._release_next(creator, job_id, ms)

    def _release_next(self, creator: str, done: str = "", charge_ms: str = "") -> list[str]:
        reply = self._release(keys=self._fair_keys(creator), args=self._fair_args(done, done, creator, charge_ms))
        usage, specs = reply[:USAGE_REPLIES], reply[USAGE_REPLIES:]
        released = []
        for raw in specs:   # the creator's turns: its bot time was read with them
            spec = json.loads(raw)
            self._enqueue(spec["id"], spec["func"], *spec["args"], background=spec["background"],
                          creator=creator, queue=self._queue_from_usage(usage, spec["background"]),
                          request_id=spec.get("request_id"))
            released.append(spec["id"])
        return released

    def release_waiting(self) -> list[str]:
        """Release what every creator's free slots allow (the reconciler's pass): the turns
        held back behind a job whose worker died, or whose job failed."""
        released = []
        for creator in self.queue.connection.smembers(CREATORS_KEY):
            released += self._release_next(creator.decode())
        return released

    def waiting(self, creator: str) -> int:
        """How many bot turns of the creator wait for a slot."""
        return self.queue.connection.llen(f"fair:wait:{creator}")

    def score(self, game_id: str, background: bool = False) -> None:
        self._enqueue(f"score_{game_id}", f"{TASKS}.score", game_id, background=background)

    def turn_timeout(self, game_id: str, seat: int, version: int, seconds: float) -> None:
        # RQ's scheduler keeps whole seconds, cut down: the job is due at the first whole second
        # at or after the deadline, never before it (the job waits out any rest: jobs.turn_timeout)
        now = time.time()
        delay = math.ceil(now + seconds) - now + 0.001 if seconds > 0 else 0
        self._enqueue(f"timeout_{game_id}_{seat}_{version}", f"{TASKS}.turn_timeout", game_id, seat, version,
                      delay=delay)

    def expire(self, game_id: str, seconds: float) -> None:
        # one job per due second: a job that ran early and asks again is not its own duplicate
        due = int(time.time() + seconds)
        self._enqueue(f"expire_{game_id}_{due}", f"{TASKS}.expire", game_id, delay=seconds)

    def match_seeks(self, game_type: str, players: int, rated: bool, seconds: float) -> None:
        due = int(time.time() + seconds)
        self._enqueue(f"seeks_{game_type}_{players}_{int(rated)}_{due}", f"{TASKS}.match_seeks", game_type, players,
                      rated, delay=seconds)

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
        for queue in self.queues:
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
        for queue in self.queues:
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
