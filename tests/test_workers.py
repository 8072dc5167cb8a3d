"""Workers: bot turns and scoring on RQ (fakeredis and a real Redis), idempotent jobs, the
reconciler after a lost enqueue, the ratings of rated games."""

import time

import pytest
from rq import Queue

from events.index import GameIndex
from events.store import RedisEventStore
from service.core.game_service import GameService
from service.core.jobs import NoJobs
from service_kit import make_service, rated_game, rated_rows
from workers import jobs as job_functions
from workers import tasks
from workers.embedded import ThreadWorker
from workers.queue import BACKGROUND_QUEUE_NAME, HEAVY_QUEUE_NAME, QUEUE_NAME, RQJobs, worker_queues

SEED = "ef" * 32


def run_worker_until(service, connection, done, timeout=60, request_scope=None):
    """Drain the RQ queue with a SimpleWorker in this thread until done() or timeout."""
    tasks.bind(service, request_scope)
    worker = ThreadWorker(worker_queues(connection), connection=connection)
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        worker.work(burst=True, logging_level="WARNING")
    tasks.bind(None)


@pytest.fixture
def queue_redis(request, redis_client):
    """The Redis RQ runs on beside `redis_client`, the store's: the same one, except beside a
    cluster, where it is a plain Redis of its own (RQ does not support a cluster; a deployment
    sets RQ_REDIS_URL, docs/operations.md)."""
    from service.bootstrap import is_cluster

    return request.getfixturevalue("real_redis") if is_cluster(redis_client) else redis_client


def test_all_bot_game_is_played_to_scored_on_rq(redis_client, queue_redis):
    service = GameService(RedisEventStore(redis_client), GameIndex(redis_client), RQJobs(queue_redis),
                          allow_seed=True)
    session = service.create("speculation", {"deals": 3}, [{"bot": "heuristic"}, {"bot": "random"},
                                                           {"bot": "random"}], seed=SEED)
    run_worker_until(service, queue_redis, lambda: service.load(session.game_id).status == "scored")
    final = service.load(session.game_id)
    assert final.status == "scored" and final.seed == SEED
    assert service.verify(session.game_id)["ok"]
    bots = [e.cmd["by"] for e in service.store.read(session.game_id) if e.cmd]
    assert set(bots) <= {"bot:heuristic", "bot:random"} and bots


def test_a_bot_turn_run_twice_plays_once(fake_redis):
    service, jobs = make_service(fake_redis)
    service.create("speculation", {}, [{"bot": "random"}] * 3, seed=SEED)
    name, game_id, seat, version = jobs.pending[0]
    assert name == "bot_turn"
    assert job_functions.bot_turn(service, game_id, seat, version) == "played"
    after = service.load(game_id).version
    assert job_functions.bot_turn(service, game_id, seat, version) == "stale"
    # Even a replay that got past the version check appends nothing: same idempotency key.
    receipt, _, _ = service.act(game_id, seat, service.store.read(game_id, version, version + 1)[0].cmd["action"],
                                expected_version=version, idempotency_key=f"bot:random:{version}", by="bot:random")
    assert receipt.duplicate and service.load(game_id).version == after


def test_reconciler_recovers_a_lost_enqueue(fake_redis):
    # The first service "crashes" between append and enqueue: its jobs go nowhere.
    lost = GameService(RedisEventStore(fake_redis), GameIndex(fake_redis), NoJobs(), allow_seed=True)
    session = lost.create("big-shot", {}, [{"bot": "random"}] * 2, seed=SEED)
    service, jobs = make_service(fake_redis)
    assert jobs.pending == []
    assert job_functions.reconcile(service) == 1
    assert jobs.pending and jobs.pending[0][0] == "bot_turn"
    jobs.drain(service)
    assert service.load(session.game_id).status == "scored"


def test_scoring_is_idempotent_and_rates_each_rated_game_once(fake_redis):
    service, jobs = make_service(fake_redis, rated=True)
    for n in range(3):
        rated_game(service, "speculation", [{"bot": "heuristic"}, {"bot": "random"}, {"bot": "random"}],
                   f"{n:064x}", {"deals": 3})
    jobs.drain(service)
    game_id = service.index.games_waiting("scored")[0]
    version = service.load(game_id).version
    job_functions.score(service, game_id)
    assert service.load(game_id).version == version
    board = rated_rows(service, "speculation")
    # the random level holds two seats of each table: rated once a table, at its best place
    assert board["heuristic"]["games"] == 3 and board["random"]["games"] == 3
    assert service.store.head("ratings/speculation")[0] == 3


def test_rq_enqueue_is_unique_per_turn(fake_redis):
    jobs = RQJobs(fake_redis)
    jobs.bot_turn("g1", 0, 5)
    jobs.bot_turn("g1", 0, 5)
    jobs.bot_turn("g1", 1, 5)
    assert Queue(QUEUE_NAME, connection=fake_redis).count == 2


def test_an_all_bot_games_work_waits_in_the_background_queue(fake_redis):
    """A game with a player seat has its bot turns on the first queue; a game only bots play
    has them on the background queue, one bot turn of the game queued at a time."""
    service = GameService(RedisEventStore(fake_redis), GameIndex(fake_redis), RQJobs(fake_redis), allow_seed=True)
    mixed = service.create("speculation", {}, [{"bot": "random"}, {}, {}], seed=SEED)
    service.claim(mixed.game_id, 1, "ann")
    service.claim(mixed.game_id, 2, "bob")
    service.create("spekulation", {}, [{"bot": "random"}] * 3, seed=SEED)
    first = Queue(QUEUE_NAME, connection=fake_redis).get_job_ids()
    background = Queue(BACKGROUND_QUEUE_NAME, connection=fake_redis).get_job_ids()
    assert all(mixed.game_id in job_id for job_id in first)
    assert len(background) == 1 and background[0].startswith("bot_")
    assert [q.name for q in worker_queues(fake_redis)] == [QUEUE_NAME, HEAVY_QUEUE_NAME, BACKGROUND_QUEUE_NAME]


def test_a_scoring_retry_repairs_a_rating_missed_by_a_crash(fake_redis):
    service, jobs = make_service(fake_redis, rated=True)
    session = rated_game(service, "big-shot", [{"bot": "random"}, {"bot": "baseline"}], SEED)
    real_record = service.ratings.record
    service.result_observers[:] = [lambda *a, **k: (_ for _ in ()).throw(ConnectionError("crash"))]
    with pytest.raises(ConnectionError):
        jobs.drain(service)  # the scoring job dies after appending game.scored
    service.result_observers[:] = [real_record]
    assert service.load(session.game_id).status == "scored"
    assert rated_rows(service, "big-shot") == {}
    job_functions.score(service, session.game_id)  # RQ's retry of the job
    job_functions.score(service, session.game_id)
    assert {name: row["games"] for name, row in rated_rows(service, "big-shot").items()} == {"random": 1, "baseline": 1}


def test_bots_draw_from_a_server_held_key_kept_with_the_data():
    import fakeredis

    from service.bootstrap import service_secrets
    from workers.jobs import bot_rng

    client = fakeredis.FakeRedis()
    first = service_secrets(client)["bot_key"]
    assert len(first) == 32 and service_secrets(client)["bot_key"] == first   # generated once, kept
    public = bot_rng("g1", 0, 7).random()
    assert bot_rng("g1", 0, 7, first).random() == bot_rng("g1", 0, 7, first).random()
    assert bot_rng("g1", 0, 7, first).random() != public                      # not predictable from (game, seat, version)
    assert bot_rng("g1", 0, 7, service_secrets(fakeredis.FakeRedis())["bot_key"]).random() != bot_rng("g1", 0, 7, first).random()


def test_an_idle_worker_keeps_waiting(redis_server):
    """Regression: on the core's bounded Redis client (1.5 s socket timeout) the worker's
    blocking dequeue timed out when idle and RQ quit, every few seconds."""
    import redis

    from ops.drills import _kit

    client = redis.Redis.from_url(redis_server.url)
    others = {c["id"] for c in client.client_list()}

    def blocked_for() -> int:
        """Seconds (the server's count) the worker's blocking dequeue has been held, -1: none."""
        return max((int(c["idle"]) for c in client.client_list() if "b" in c["flags"] and c["id"] not in others),
                   default=-1)

    worker = _kit.start_worker(redis_server.url, reconcile_every=30)
    try:
        # idle: one blocking dequeue held 4 s by the server, over twice the core client's 1.5 s
        # socket timeout that ended it (the idle span is the condition; the server counts it)
        assert _kit.wait_until(lambda: blocked_for() >= 4, 30, every=0.2), worker.output()[-2000:]
        assert worker.alive(), worker.output()[-2000:]
        assert "connection timeout" not in worker.output()
    finally:
        worker.stop()
        client.close()


def test_an_orphaned_job_does_not_block_its_unique_id(queue_redis):
    """A job hash whose queue entry was lost (a reply or request lost on the way to Redis)
    would otherwise hold its id, and its game, for good: it is replaced."""
    jobs = RQJobs(queue_redis)
    jobs.bot_turn("g1", 0, 5)
    job_id = "bot_g1_0_5"
    assert queue_redis.lpos(jobs.queue.key, job_id) is not None
    jobs.bot_turn("g1", 0, 5)                                   # pending: left alone
    assert queue_redis.llen(jobs.queue.key) == 1
    queue_redis.lrem(jobs.queue.key, 0, job_id)                 # the entry is lost, the hash stays
    jobs.bot_turn("g1", 0, 5)
    assert queue_redis.lpos(jobs.queue.key, job_id) is not None and queue_redis.llen(jobs.queue.key) == 1


def test_overdue_scheduled_jobs_are_moved_on_both_queues(queue_redis):
    """RQ's retry of a failed job is a scheduled job; with the scheduler's lock held by a
    dead worker nothing moves it but the sweep, on the bots' queue as on the first."""
    from datetime import timedelta

    from rq.registry import ScheduledJobRegistry

    jobs = RQJobs(queue_redis)
    for queue, job_id in ((jobs.queue, "bot_g1_0_5"), (jobs.background, "bot_g2_1_7")):
        queue.enqueue_in(timedelta(seconds=-30), "workers.tasks.bot_turn", "g", 0, 5, job_id=job_id)
        assert job_id in ScheduledJobRegistry(queue=queue)
    assert sorted(jobs.enqueue_overdue(3.0)) == ["bot_g1_0_5", "bot_g2_1_7"]
    assert queue_redis.lpos(jobs.queue.key, "bot_g1_0_5") is not None
    assert queue_redis.lpos(jobs.background.key, "bot_g2_1_7") is not None


def test_a_job_a_worker_starts_between_two_reads_is_not_taken_for_an_orphan(queue_redis):
    """Read QUEUED, then a worker takes it off the queue and starts it before the list is
    read: it is in no list its first status names, yet it is pending, not lost."""
    from rq.job import Job, JobStatus

    jobs = RQJobs(queue_redis)
    jobs.bot_turn("g2", 0, 5)
    job = Job.fetch("bot_g2_0_5", connection=queue_redis)
    queue_redis.lrem(jobs.queue.key, 0, job.id)                # taken off the queue by a worker...
    statuses = iter([JobStatus.QUEUED, JobStatus.STARTED])      # ...which starts it meanwhile
    job.get_status = lambda refresh=True: next(statuses)
    assert jobs._waits_somewhere(job)
    statuses = iter([JobStatus.QUEUED, JobStatus.QUEUED])       # still queued and in no list: lost
    assert not jobs._waits_somewhere(job)


def test_an_idle_worker_beats_often_enough_to_keep_the_stack_ready(fake_redis):
    """Regression: an idle RQ worker beats once per blocking dequeue, 405 s by RQ's default,
    and /readyz counts a worker alive for WORKER_HEARTBEAT_MAX_AGE (60 s): an idle stack went
    unready a minute after its last job."""
    from service.cli import rq_worker
    from service.observability import WORKER_HEARTBEAT_MAX_AGE

    worker = rq_worker(fake_redis, job_monitoring_interval=1)
    assert 0 < worker.dequeue_timeout <= WORKER_HEARTBEAT_MAX_AGE / 2


def test_a_jobs_log_lines_and_follow_ups_carry_the_request_id_that_enqueued_it(fake_redis, caplog):
    """The request id reaches the queue and the jobs as hooks the service binds (workers import
    nothing from it): stored with the job, current while it runs, so its log line and the jobs
    it enqueues in turn carry it."""
    import logging

    from rq.job import Job

    from service.observability import JsonFormatter, current_request_id, request_scope

    service = GameService(RedisEventStore(fake_redis), GameIndex(fake_redis),
                          RQJobs(fake_redis, request_id=current_request_id), allow_seed=True)
    with request_scope("req-0001"):
        session = service.create("big-shot", {}, [{"bot": "random"}] * 2, seed=SEED)
    queued = [Job.fetch(i, connection=fake_redis) for q in worker_queues(fake_redis) for i in q.get_job_ids()]
    assert queued and all(job.meta.get("request_id") == "req-0001" for job in queued)
    caplog.set_level(logging.INFO, logger="workers.jobs")
    run_worker_until(service, fake_redis, lambda: service.load(session.game_id).status == "scored",
                     request_scope=request_scope)
    lines = [r for r in caplog.records if r.name == "workers.jobs" and r.getMessage() == "job"]
    assert len(lines) > 2 and {r.job for r in lines} >= {"bot_turn", "score"}   # follow-ups ran too
    assert {r.request_id for r in lines} == {"req-0001"}
    assert '"request_id": "req-0001"' in JsonFormatter().format(lines[-1])
    assert current_request_id() is None                                         # reset after each job


def test_a_raced_bot_turn_is_stale_and_other_errors_are_raised(fake_redis):
    """The job tells the core's Conflict by its kind, whatever the race's own code, without
    importing the core's errors."""
    from service.core.errors import Conflict, Invalid

    service, jobs = make_service(fake_redis)
    service.create("speculation", {}, [{"bot": "random"}] * 3, seed=SEED)
    _, game_id, seat, version = jobs.pending[0]
    for raised, expected in ((Conflict("raced", code="version_conflict"), "stale"),
                             (Conflict("reused", code="idempotency_conflict"), "stale"),
                             (Invalid("refused", code="illegal_action"), Invalid)):
        def act(*args, **kwargs):
            raise raised
        service.act = act
        if expected is Invalid:
            with pytest.raises(Invalid):
                job_functions.bot_turn(service, game_id, seat, version)
        else:
            assert job_functions.bot_turn(service, game_id, seat, version) == expected
    assert job_functions.raced(Conflict("x")) and not job_functions.raced(ValueError("conflict"))


def test_an_unbound_task_refuses_to_run_and_logs_its_failure(caplog):
    """RQ's job functions never build a core themselves: the worker binds one first. A failed
    job's log line names its arguments (regression: as `args`, a LogRecord attribute, the line
    itself raised KeyError and hid the job's error)."""
    tasks.bind(None)
    with pytest.raises(RuntimeError, match="no core bound"):
        tasks.score("g1")
    failed = [r for r in caplog.records if r.getMessage() == "job failed"]
    assert failed and failed[0].job_args == ["g1"] and failed[0].exc_info[0] is RuntimeError


def test_the_workers_counters_are_on_the_apis_metrics():
    """The job counters live beside the jobs (workers/metrics.py); /metrics still renders them."""
    from service.app import create_app
    from workers.metrics import JOBS_DONE

    JOBS_DONE.labels("score", "scored").inc()
    body = create_app({"REDIS_URL": None, "RATE_LIMIT": None}).test_client().get("/metrics").get_data(as_text=True)
    assert "speculation_reconciler_repairs_total" in body
    assert 'speculation_jobs_total{kind="score",outcome="scored"}' in body
