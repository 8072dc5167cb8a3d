"""The worker process keeps itself going (workers/supervisor.py): its RQ worker restarted
after Redis goes away and comes back, a warm shutdown honoured; against a real redis-server
killed with -9 and restarted under a running `speculation worker`."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from events.index import GameIndex
from events.store import RedisEventStore
from ops.drills._kit import stop_group, wait_until
from ops.drills.redis_server import RedisProcess, redis_server_path
from service.core.game_service import GameService
from workers.queue import RQJobs
from workers.supervisor import Supervisor

ROOT = Path(__file__).resolve().parents[1]


class FakeWorker:
    def __init__(self, script):
        self.script, self._stop_requested = script, False

    def work(self, with_scheduler):
        outcome = self.script.pop(0)
        if outcome == "stop":
            self._stop_requested = True
        elif outcome == "raise":
            raise redis.ConnectionError("gone")


def test_the_rq_worker_is_restarted_until_a_warm_shutdown():
    script = ["quit", "raise", "quit", "stop"]
    pings = iter([redis.ConnectionError("down"), redis.ConnectionError("down")] + [True] * 10)
    naps = []

    def ping():
        answer = next(pings)
        if isinstance(answer, Exception):
            raise answer

    supervisor = Supervisor(lambda: FakeWorker(script), ping, sleep=naps.append)
    supervisor.run()
    assert supervisor.restarts == 3 and script == []
    assert len(naps) == 2      # it waited for Redis to answer before the first restart


def test_each_worker_stops_its_command_listener_when_it_ends():
    """RQ's teardown unsubscribes over the connection that just failed, and may leave its
    listener thread running: the supervisor stops it before starting the next worker."""
    script = ["quit", "raise", "stop"]
    stopped = []

    class Listening(FakeWorker):
        def stop_listening(self):
            stopped.append(self)

    supervisor = Supervisor(lambda: Listening(script), lambda: True, sleep=lambda s: None)
    supervisor.run()
    assert len(stopped) == 3 and len(set(map(id, stopped))) == 3


def test_a_periodic_part_survives_its_failures():
    calls = []

    def flaky():
        calls.append(time.monotonic())
        if len(calls) < 3:
            raise redis.TimeoutError("slow")

    script = ["quit"] * 50 + ["stop"]

    def make():
        # the supervisor goes on until the periodic part has failed twice and run once more
        wait_until(lambda: len(calls) >= 3, 10, every=0.01)
        return FakeWorker(script)

    Supervisor(make, lambda: True, recover=flaky, recover_every=0.01).run()
    assert len(calls) >= 3


def blocked_clients(url) -> int:
    """Clients the server holds in a blocking command (an idle RQ worker's dequeue)."""
    client = redis.Redis.from_url(url)
    try:
        return sum("b" in c["flags"] for c in client.client_list())
    finally:
        client.close()


@pytest.mark.timing
@pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")
def test_the_worker_process_is_back_by_itself_after_redis_restarts(tmp_path):
    server = RedisProcess(durable=True).start()
    stderr = open(tmp_path / "worker.log", "w+b")   # a file, not a pipe nobody reads while it runs
    env = dict(os.environ, REDIS_URL=server.url, PYTHONPATH=str(ROOT))
    env.pop("RQ_REDIS_URL", None)
    worker = subprocess.Popen([sys.executable, "-m", "service.cli", "worker"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)

    def bot_game_is_played(timeout):
        client = redis.Redis.from_url(server.url, socket_timeout=2)
        service = GameService(RedisEventStore(client), GameIndex(client), RQJobs(client))
        game = service.create("big-shot", {}, [{"bot": "random"}] * 2)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if service.load(game.game_id).version > game.version:
                return time.monotonic() - (deadline - timeout)
            time.sleep(0.05)
        return None

    try:
        assert bot_game_is_played(30) is not None, "the worker never played"
        seen = len((tmp_path / "worker.log").read_bytes())
        server.kill()                 # kill -9; then the same port again (AOF kept the data)
        # Down for about 6 s as the worker lives it: its abandoned-job sweep (once a second) has
        # failed 6 times. The outage's length is the condition; the worker's log marks it.
        assert wait_until(lambda: (tmp_path / "worker.log").read_bytes()[seen:].count(b"abandoned-job sweep: ") >= 6,
                          30, every=0.1), (tmp_path / "worker.log").read_text()[-3000:]
        server.start()
        back = time.monotonic()
        played = bot_game_is_played(15)
        assert worker.poll() is None, (tmp_path / "worker.log").read_text()[-3000:]
        assert played is not None, "the worker did not come back"
        assert time.monotonic() - back < 5, "back by itself within 5 s of Redis returning"
    finally:
        stop_group(worker)
        server.stop()
    stderr.close()


@pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")
def test_the_worker_process_stops_on_sigterm_while_idle(tmp_path):
    server = RedisProcess().start()
    log = open(tmp_path / "worker.log", "w+b")
    env = dict(os.environ, REDIS_URL=server.url, PYTHONPATH=str(ROOT))
    env.pop("RQ_REDIS_URL", None)
    worker = subprocess.Popen([sys.executable, "-m", "service.cli", "worker"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while b"Listening on" not in (tmp_path / "worker.log").read_bytes():
            assert time.monotonic() < deadline and worker.poll() is None, "the worker never started"
            time.sleep(0.1)
        # idle, waiting for a job: the server holds its blocking dequeue
        assert wait_until(lambda: blocked_clients(server.url) >= 1, 30), (tmp_path / "worker.log").read_text()[-3000:]
        worker.send_signal(signal.SIGTERM)
        worker.wait(10)                    # a supervisor that took it for a crash would start another
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        server.stop()
        log.close()
