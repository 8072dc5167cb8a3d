"""The worker survives a Redis restart while the restarted server loads its data (issue 38,
items 11/12): a Redis loading its dataset answers `-LOADING` (redis-py's `BusyLoadingError`)
to most commands. RQ's command listener (the pub/sub thread taking stop-job, kill-horse and
shutdown commands) sent its health-check PING then, got the error reply handed over as a
message, died of `TypeError: 'BusyLoadingError' object is not subscriptable`, and the worker
took no command again. Reproduced on a private redis-server whose loading is slowed down
(`key-load-delay`), restarted under the worker (workers/supervisor.py SupervisedWorker)."""

import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
import redis

from ops.drills._kit import stop_group, wait_until
from ops.drills.redis_server import free_port, redis_server_path
from workers.supervisor import SupervisedWorker

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")


class SlowLoadingRedis:
    """A private redis-server whose dataset takes seconds to load after a restart: `keys`
    keys, each delayed `delay_us` microseconds while loading."""

    def __init__(self, keys: int = 20_000, delay_us: int = 200):
        self.port, self.dir = free_port(), tempfile.mkdtemp(prefix="redis-loading-")
        self.keys, self.delay_us = keys, delay_us
        self.proc = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self, wait: bool = True) -> "SlowLoadingRedis":
        self.proc = subprocess.Popen([redis_server_path(), "--port", str(self.port), "--bind", "127.0.0.1",
                                      "--dir", self.dir, "--save", "", "--appendonly", "no",
                                      "--protected-mode", "no", "--key-load-delay", str(self.delay_us),
                                      "--loading-process-events-interval-bytes", "1024"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if wait:
            assert wait_until(self.answers, 30), "redis-server did not start"
        return self

    def answers(self) -> bool:
        try:
            return redis.Redis.from_url(self.url, socket_timeout=1).ping()
        except redis.RedisError:
            return False

    def loading(self) -> bool:
        try:
            redis.Redis.from_url(self.url, socket_timeout=1).ping()
        except redis.BusyLoadingError:
            return True
        except redis.RedisError:
            pass
        return False

    def fill(self) -> None:
        client = redis.Redis.from_url(self.url)
        pipe = client.pipeline(transaction=False)
        for n in range(self.keys):
            pipe.set(f"filler:{n}", "x" * 32)
        pipe.execute()
        client.save()

    def restart_loading(self) -> None:
        """kill -9, then start again on the same dump: it answers LOADING for a few seconds."""
        self.proc.kill()
        self.proc.wait()
        self.start(wait=False)
        assert wait_until(self.loading, 5, every=0.01), "the restarted server never answered LOADING"

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)


def subscribers(url: str, channel: str) -> int:
    try:
        return dict(redis.Redis.from_url(url, socket_timeout=1).pubsub_numsub(channel)).get(channel.encode(), 0)
    except redis.RedisError:
        return 0


@pytest.fixture
def server():
    server = SlowLoadingRedis().start()
    server.fill()
    yield server
    server.stop()


def test_the_command_listener_survives_a_restart_that_answers_loading(server):
    # A health check due at every read: the listener's PING meets the loading server.
    connection = redis.Redis.from_url(server.url, socket_connect_timeout=1.0, health_check_interval=1)
    from rq import Queue

    worker = SupervisedWorker([Queue("games", connection=connection)], connection=connection)
    died = []
    previous = threading.excepthook
    threading.excepthook = lambda args: died.append(args.exc_type)
    try:
        worker.subscribe()
        channel = worker.pubsub_channel_name
        assert wait_until(lambda: subscribers(server.url, channel) == 1, 10)
        server.restart_loading()
        assert wait_until(server.answers, 60, every=0.1), "the server never finished loading"
        # back on its channel within a few seconds of the server answering again
        assert wait_until(lambda: subscribers(server.url, channel) == 1, 10)
        assert worker.pubsub_thread.is_alive() and died == []
        assert worker.listener_errors >= 1       # it did meet the restart
    finally:
        threading.excepthook = previous
        worker.stop_listening()
    assert not worker.pubsub_thread.is_alive()


def test_the_listener_survives_any_error_and_subscribes_again(server):
    """Whatever the listener meets (here a command handler raising), it reconnects and goes on."""
    from rq import Queue

    connection = redis.Redis.from_url(server.url, socket_connect_timeout=1.0)
    worker = SupervisedWorker([Queue("games", connection=connection)], connection=connection)
    calls = []

    def handle(message):
        calls.append(message)
        raise TypeError("a payload nobody expected")

    worker.handle_payload = handle
    try:
        worker.subscribe()
        channel = worker.pubsub_channel_name
        assert wait_until(lambda: subscribers(server.url, channel) == 1, 10)
        publisher = redis.Redis.from_url(server.url)
        # delivered, failed, reconnected and subscribed again: the next one is delivered too
        assert wait_until(lambda: publisher.publish(channel, "{}") and len(calls) >= 3, 20, every=0.2)
        assert worker.listener_errors >= 3 and worker.pubsub_thread.is_alive()
    finally:
        worker.stop_listening()


@pytest.mark.timing
def test_the_worker_process_goes_on_after_a_restart_that_answers_loading(server, tmp_path):
    """The real `speculation worker` through a restart that answers LOADING for seconds: the
    process stays up, its command listener is subscribed again, and it plays a bot game."""
    from events.index import GameIndex
    from events.store import RedisEventStore
    from service.core.game_service import GameService
    from workers.queue import RQJobs

    log = open(tmp_path / "worker.log", "w+b")
    env = dict(os.environ, REDIS_URL=server.url, PYTHONPATH=str(ROOT))
    env.pop("RQ_REDIS_URL", None)
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    worker = subprocess.Popen([sys.executable, "-m", "service.cli", "worker"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)

    def channels() -> list[bytes]:
        try:
            return redis.Redis.from_url(server.url, socket_timeout=1).pubsub_channels("rq:pubsub:*")
        except redis.RedisError:
            return []

    def bot_game_is_played(timeout) -> bool:
        client = redis.Redis.from_url(server.url, socket_timeout=2)
        service = GameService(RedisEventStore(client), GameIndex(client), RQJobs(client))
        game = service.create("big-shot", {}, [{"bot": "random"}] * 2)
        return wait_until(lambda: service.load(game.game_id).version > game.version, timeout, every=0.05)

    try:
        assert wait_until(lambda: len(channels()) == 1, 30), (tmp_path / "worker.log").read_text()[-3000:]
        assert bot_game_is_played(30)
        server.restart_loading()
        assert wait_until(server.answers, 60, every=0.1)
        assert wait_until(lambda: len(channels()) == 1, 15), (tmp_path / "worker.log").read_text()[-3000:]
        assert bot_game_is_played(15), (tmp_path / "worker.log").read_text()[-3000:]
        assert worker.poll() is None
    finally:
        stop_group(worker)
        log.close()
