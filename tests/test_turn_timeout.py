"""Turn timeouts: a seat that does not act within the game's turn_timeout has its move played
by the random bot, through an RQ scheduled job, recorded as by="timeout"; a seat that acts
in time is not played for; in simultaneous choices a seat's clock does not restart when
another seat acts. In process (RQ's SimpleWorker and scheduler on fakeredis) for every
registered game, and against the real worker process in the drill's short form."""

import random
import time

import pytest

from ops.drills import _kit, turn_timeout
from ops.drills.redis_server import redis_server_path
from workers.embedded import EmbeddedWorker
from workers.queue import RQJobs


@pytest.fixture
def live(fake_redis):
    jobs = RQJobs(fake_redis)
    app = _kit.make_app(fake_redis, jobs=jobs)
    service = app.extensions["games"]
    worker = EmbeddedWorker(service, fake_redis, reconcile_every=3600, idle_sleep=0.01).start()
    yield app, service
    worker.stop()


def _commands(service, game_id):
    return turn_timeout.timed_out_turns(service.store.read_raw(game_id))


@pytest.mark.timing
def test_idle_seats_are_played_by_the_random_bot_in_every_game(live):
    app, service = live
    rng = random.Random(4)
    games = {name: _kit.create_playable(service, name, rng, turn_timeout=0.5)[0] for name in _kit.game_names()}
    assert _kit.wait_until(lambda: all(len(_commands(service, g)) >= 2 or service.load(g).status == "scored"
                                       for g in games.values()), 30, every=0.1)
    for name, game_id in games.items():
        turns = _commands(service, game_id)
        assert turns and all(t["by"] == "timeout" for t in turns), (name, turns)
        assert all(t["delay"] < 2.5 for t in turns), (name, turns)
        assert service.verify(game_id)["ok"], name
        # The view and events show the move was a timeout's, to everyone.
        event = app.test_client().get(f"/v1/games/{game_id}/events").json["events"]
        assert any(e.get("cmd", {}).get("by") == "timeout" for e in event), name


def test_a_game_nobody_plays_ends_by_timeouts_and_is_scored(live):
    app, service = live
    http = app.test_client()
    created = http.post("/v1/games", json={"type": "secret-duel", "seats": [{}, {}], "turn_timeout": 1,
                                           "options": {"rounds": 2}, "seed": _kit.SEED}).json
    assert created["platform_options"] == {"turn_timeout": 1.0}
    for seat in (0, 1):
        http.post(f"/v1/games/{created['game_id']}/seats/{seat}", json={"name": f"idle{seat}"})
    game_id = created["game_id"]
    assert _kit.wait_until(lambda: service.load(game_id).status == "scored", 20, every=0.1)
    turns = _commands(service, game_id)
    assert len(turns) == 4 and {t["by"] for t in turns} == {"timeout"}
    assert service.verify(game_id)["ok"]


@pytest.mark.timing
def test_a_seat_that_acts_in_time_is_not_played_for_and_a_waiting_seats_clock_runs_on(live):
    app, service = live
    game_id, tokens = _kit.create_open_game(service, "secret-duel", options={"rounds": 1}, turn_timeout=3)
    start = time.time()
    session = service.load(game_id)
    assert session.to_act() == [0, 1]
    # a duration, not an event: seat 0 bets 1.2 s into the clock, so a clock its bet restarted
    # (1.2 + 3 s) would break the bound below; nothing in the game marks that point
    time.sleep(1.2)
    service.act(game_id, 0, {"type": "bet", "amount": 1}, idempotency_key="in-time")
    assert _kit.wait_until(lambda: len(_commands(service, game_id)) >= 2, 10, every=0.05)
    played = time.time() - start
    turns = _commands(service, game_id)
    assert [(t["seat"], t["by"]) for t in turns[:2]] == [(0, "player"), (1, "timeout")]
    # Seat 1's clock started with the round (3 s), not when seat 0 bet (1.2 + 3 s).
    assert played < 4.1, played
    assert service.verify(game_id)["ok"]


def test_a_stale_timeout_changes_nothing(live):
    app, service = live
    game_id, tokens = _kit.create_open_game(service, "secret-duel", options={"rounds": 1})
    version = service.load(game_id).version
    service.act(game_id, 0, {"type": "bet", "amount": 2}, idempotency_key="a")
    from workers import jobs

    assert jobs.turn_timeout(service, game_id, 0, version) == "stale"   # seat 0 has acted
    assert jobs.turn_timeout(service, game_id, 1, version) == "played"  # seat 1 has not
    assert jobs.turn_timeout(service, game_id, 1, version) == "stale"   # once only


@pytest.mark.slow
@pytest.mark.timing
@pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")
def test_drill_short_form_with_the_real_worker():
    figures = turn_timeout.run(size=1, timeout=1.0, games=["speculation", "speculate"], max_turns=3,
                               finish_timeout=60)
    assert figures["ok"], figures
    assert figures["played_by_timeout"] == figures["turns_expected"] >= 6


def test_reconciling_does_not_postpone_a_scheduled_timeout(fake_redis):
    """Regression: enqueue_in ignores unique=True, so each reconciler pass re-scheduled a
    waiting seat's timeout from now: with passes more frequent than the timeout, it never
    fired."""
    from rq.registry import ScheduledJobRegistry

    jobs = RQJobs(fake_redis)
    registry = ScheduledJobRegistry(queue=jobs.queue)
    jobs.turn_timeout("g1", 0, 5, 10)
    first = registry.get_scheduled_time("timeout_g1_0_5")
    jobs.turn_timeout("g1", 0, 5, 60)          # what a reconciler pass does again later
    assert registry.get_scheduled_time("timeout_g1_0_5") == first
    assert jobs.queue.count == 0 and registry.count == 1
