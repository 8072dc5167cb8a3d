"""What the drills share: wiring a service or an app on a Redis client, short game options,
a generic random player that only reads views and legal actions, and figure printing."""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from typing import Callable, Optional

from marshmallow import validate

from events.index import GameIndex
from events.store import RedisEventStore
from projections.registry import all_games, get_game
from projections.templates import fill_template
from service.core.game_service import GameService
from workers.memory_jobs import MemoryJobs

SEED = "5e" * 32


def make_service(client, jobs=None, **kw) -> GameService:
    return GameService(RedisEventStore(client), GameIndex(client), jobs if jobs is not None else MemoryJobs(),
                       allow_seed=True, **kw)


def make_app(client, jobs=None, rq_client=None, **config):
    from service.app import create_app
    from service.bootstrap import Backend

    settings = {"ALLOW_SEED": True, "RATE_LIMIT": None, "CREATE_LIMIT": None, "BOT_GAMES_PER_ADDRESS": 0,
                "STREAM_KEEPALIVE": 0.05}
    settings.update(config)
    return create_app(settings, backend=Backend(client, rq_client or client, False),
                      jobs=jobs if jobs is not None else MemoryJobs())


def game_names(hidden_only: bool = False) -> list[str]:
    """Every registered game (the test-only ones included when registered)."""
    return sorted(name for name, game in all_games().items()
                  if not hidden_only or game.HIDDEN_INFORMATION)


def short_options(game_type: str) -> dict:
    """The shortest game its options allow: any `rounds` or `deals` option at its minimum."""
    game = get_game(game_type)
    out = {}
    for name, field in game.OptionsSchema().fields.items():
        if name in ("rounds", "deals"):
            for v in field.validators:
                if isinstance(v, validate.Range) and v.min is not None:
                    out[name] = v.min
    return out


def create_open_game(service: GameService, game_type: str, players: Optional[int] = None,
                     options: Optional[dict] = None, seed: Optional[str] = SEED,
                     turn_timeout=None, bots: tuple = ()) -> tuple[str, list[Optional[str]]]:
    """A game whose seats are claimed (tokens) except the `bots` seats. Returns (id, tokens)."""
    game = get_game(game_type)
    n = players or game.MIN_PLAYERS
    seats = [{"bot": "random"} if s in bots else {} for s in range(n)]
    session = service.create(game_type, short_options(game_type) if options is None else options, seats,
                             seed=seed, turn_timeout=turn_timeout)
    tokens: list[Optional[str]] = []
    for s in range(n):
        if s in bots:
            tokens.append(None)
        else:
            tokens.append(service.claim(session.game_id, s, f"p{s}")[1])
    return session.game_id, tokens


def play_out(service: GameService, jobs: MemoryJobs, game_id: str, rng: random.Random,
             max_actions: int = 50_000, on_step: Optional[Callable] = None) -> int:
    """Random legal actions for whoever is to act (bots through their jobs) until the game is
    scored. Returns the number of actions played."""
    from projections import disclosure

    played = 0
    for _ in range(max_actions):
        jobs.drain(service)
        session = service.load(game_id)
        if session.status != "active":
            jobs.drain(service)
            return played
        humans = [s for s in session.to_act() if session.seats[s].kind != "bot"]
        if not humans:
            raise AssertionError(f"game {game_id} waits on a bot with no job queued")
        seat = rng.choice(humans)
        legal = disclosure.view_for(session, seat)["legal_actions"]
        service.act(game_id, seat, fill_template(rng.choice(legal), rng), idempotency_key=f"k{session.version}",
                    expected_version=session.version)
        played += 1
        if on_step:
            on_step(service.load(game_id))
    raise AssertionError(f"game {game_id} did not end in {max_actions} actions")


def fake_client():
    import fakeredis

    return fakeredis.FakeRedis(server=fakeredis.FakeServer())


def parser(doc: str, size: int, size_help: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    p.add_argument("--size", type=int, default=size, help=size_help)
    p.add_argument("--seed", type=int, default=1, help="the drill's random seed")
    p.add_argument("--json", action="store_true", help="print the figures as JSON too")
    return p


def report(name: str, figure: str, ok: bool, figures: dict, as_json: bool = False) -> None:
    print(f"{name}: {figure} -> {'OK' if ok else 'FAILED'}")
    if as_json:
        print(json.dumps(figures, indent=2, sort_keys=True, default=str))
    sys.stdout.flush()


def conclude(name: str, args, measure: Callable[[], dict], summary: Callable[[dict], str]) -> None:
    """A drill's end: `measure()` under a timer (its figures get "seconds"), the summary line,
    the figures as JSON when asked for or when the drill failed; exit 0 when it held, else 1."""
    with Timer() as t:
        fig = measure()
    fig["seconds"] = round(t.seconds, 1)
    report(name, summary(fig), fig["ok"], fig, args.json or not fig["ok"])
    raise SystemExit(0 if fig["ok"] else 1)


def all_at_once(apps, send, n: int) -> list:
    """`send(http)` from n threads released together, spread over the apps (test clients of
    each): each answer's (status, Idempotent-Replayed, JSON body), in thread order."""
    barrier, results = threading.Barrier(n), [None] * n

    def client(i: int) -> None:
        http = apps[i % len(apps)].test_client()
        barrier.wait()
        response = send(http)
        results[i] = (response.status_code, response.headers.get("Idempotent-Replayed"), response.json)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


class Timer:
    def __enter__(self):
        self.start = time.monotonic()
        return self

    def __exit__(self, *exc):
        self.seconds = time.monotonic() - self.start


def inline_app(client, **config):
    """An app whose follow-up jobs (bot turns, scoring) run at once in the caller's thread;
    timeouts are recorded, not run. For drills where every request may come from any thread."""
    jobs = MemoryJobs(run_now=True)
    app = make_app(client, jobs=jobs, **config)
    jobs.bind(app.extensions["games"])
    return app


class private_redis:
    """A private redis-server for a drill run from the command line (never the shared one)."""

    def __init__(self, durable: bool = False):
        self.durable = durable

    def __enter__(self):
        from ops.drills.redis_server import RedisProcess

        self.server = RedisProcess(durable=self.durable).start()
        return self.server

    def __exit__(self, *exc):
        self.server.stop()


def redis_client(url: str):
    import redis

    return redis.Redis.from_url(url)


def auth(token: Optional[str], key: Optional[str] = None) -> dict:
    headers = {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if key:
        headers["Idempotency-Key"] = key
    return headers


def command_events(raw: list[tuple[str, str]]) -> list[dict]:
    """The stored events that a command caused first (they carry `c`), decoded."""
    return [body for body in (json.loads(b) for b, _ in raw) if body.get("c")]


def create_playable(service: GameService, game_type: str, rng: random.Random, **kw) -> tuple[str, list]:
    """Like create_open_game with a random seed, retried until a seat is to act (a short game
    can end in its opening draws, e.g. a one-deal speculation whose turn-up ends the deal)."""
    for _ in range(50):
        game_id, tokens = create_open_game(service, game_type, seed=f"{rng.getrandbits(256):064x}", **kw)
        if service.load(game_id).to_act():
            return game_id, tokens
    raise AssertionError(f"no playable {game_type} game in 50 seeds")


REPO = __import__("pathlib").Path(__file__).resolve().parents[2]


def stop_group(proc, grace: float = 10) -> None:
    """SIGTERM to a child's whole process group (it started a session of its own), SIGKILL
    after `grace` seconds; the child waited for either way."""
    import os
    import signal
    import subprocess

    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    except ProcessLookupError:
        proc.wait()


class ChildProcess:
    """A child process in its own process group (so kill -9 takes its children with it:
    an RQ worker's work horse, gunicorn's workers), its output in a log file."""

    def __init__(self, args: list[str], env: Optional[dict] = None, name: str = "child"):
        import os
        import subprocess
        import tempfile

        self.log_path = tempfile.mktemp(prefix=f"drill-{name}-", suffix=".log")
        self._log = open(self.log_path, "w")
        full_env = dict(os.environ)
        full_env["PYTHONPATH"] = str(REPO) + (":" + full_env["PYTHONPATH"] if full_env.get("PYTHONPATH") else "")
        full_env.update(env or {})
        self.proc = subprocess.Popen(args, cwd=str(REPO), env=full_env, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """kill -9 of the whole process group: exactly a crash."""
        import os
        import signal

        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def stop(self) -> None:
        stop_group(self.proc, grace=5)
        self._log.close()

    def output(self) -> str:
        self._log.flush()
        with open(self.log_path) as handle:
            return handle.read()


def start_worker(redis_url: str, slow_turn: float = 0, reconcile_every: float = 0.5,
                 monitoring: int = 1, abandoned_after: float = 3.0, extra_env: Optional[dict] = None) -> ChildProcess:
    """`speculation worker` (the real CLI) on a private Redis, with fast abandoned-job recovery."""
    env = {"REDIS_URL": redis_url, **(extra_env or {})}
    # slow_turn: every turn waits that long before its append (ops/drills/slow_worker.py)
    command = ["ops.drills.slow_worker", str(slow_turn)] if slow_turn else ["service.cli"]
    return ChildProcess([sys.executable, "-m", *command, "worker", "--reconcile-every", str(reconcile_every),
                         "--job-monitoring-interval", str(monitoring), "--abandoned-after", str(abandoned_after)],
                        env, name="worker")


def wait_until(predicate: Callable[[], bool], timeout: float, every: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return predicate()


def service_games() -> list[str]:
    """The games a separate service or worker process hosts (the test-only games that a
    test registers in its own process are not among them)."""
    return sorted(name for name, game in all_games().items() if game.__name__.startswith("projections."))
