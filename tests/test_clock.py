"""The clock a timed game's seats see: each seat to act has a deadline (when its decision opened,
the `at` of that event, plus turn_timeout), the same however the game is folded (whole, from
a snapshot, through the session cache), shown in the view with the server's clock, in the
stream's messages, and the one the turn-timeout job enforces (never before it)."""

import itertools
import json
import random
import time

import pytest

from events import store as store_module
from ops.drills import _kit
from projections import snapshot
from projections.session import fold
from workers import jobs as job_functions


@pytest.fixture
def ticking(monkeypatch):
    """Every batch a second after the last (the events' clock), so that no two share an `at`."""
    clock = itertools.count(int(time.time() * 1000), 1000)
    monkeypatch.setattr(store_module, "_now_ms", lambda: next(clock))


def _at(events, version):
    return next(e.at for e in events if e.version == version)


def _check_clock(service, game_id, timeout):
    session = service.load(game_id)
    events = service.store.read(game_id, 0, session.version)
    whole = fold(events, game_id)
    assert whole == session                              # the cache's fold is the whole log's
    assert snapshot.loads(snapshot.dumps(session)) == session
    shown = []
    for seat in session.to_act():
        opened = session.decision(seat)
        assert session.decided_at[seat] == _at(events, opened), (seat, opened)
        assert session.deadline(seat) == _at(events, opened) + timeout * 1000
        shown.append({"seat": seat, "at": session.deadline(seat)})
    view = service.view(game_id, None)
    assert view["clock"] == {"turn_timeout": timeout, "deadlines": shown}
    return session


@pytest.mark.parametrize("game_type", ["secret-duel", "big-shot", "spekulation"])
def test_each_deadline_runs_from_the_event_that_opened_the_seats_decision(fake_redis, ticking, game_type):
    service = _kit.make_service(fake_redis)
    game_id, _ = _kit.create_open_game(service, game_type, turn_timeout=30)
    rng = random.Random(7)
    for n in range(60):
        session = _check_clock(service, game_id, 30)
        if session.status != "active":
            break
        seat = rng.choice(session.to_act())
        legal = session.game.legal_actions(session.state, seat)
        action = {k: (rng.randint(v["min"], v["max"]) if isinstance(v, dict) else v)
                  for k, v in rng.choice(legal).items()}
        service.act(game_id, seat, action, idempotency_key=f"k{n}")
        # folded from a snapshot taken now, the rest of the log gives the same clock
        middle = service.load(game_id)
        assert fold([], game_id, snapshot.loads(snapshot.dumps(middle))) == middle


def test_another_seats_move_does_not_restart_a_seats_clock(fake_redis, ticking):
    service = _kit.make_service(fake_redis)
    game_id, _ = _kit.create_open_game(service, "secret-duel", options={"rounds": 1}, turn_timeout=20)
    before = service.load(game_id)
    assert before.to_act() == [0, 1]
    service.act(game_id, 0, {"type": "bet", "amount": 1}, idempotency_key="b")
    after = service.load(game_id)
    assert after.to_act() == [1] and after.version > before.version
    assert after.deadline(1) == before.deadline(1)
    assert after.deadlines() == [{"seat": 1, "at": before.deadline(1)}]


def test_a_snapshot_from_before_the_clock_is_a_miss_and_the_log_gives_the_deadlines(fake_redis):
    service = _kit.make_service(fake_redis)
    game_id, _ = _kit.create_open_game(service, "secret-duel", turn_timeout=20)
    session = service.load(game_id)
    blob = json.loads(snapshot.dumps(session))
    for name in ("decided_at", "moved_at", "abandoned"):
        del blob["session"]["v"][name]        # a snapshot written before these fields existed
    with pytest.raises(snapshot.SnapshotError):
        snapshot.loads(json.dumps(blob).encode())


def test_the_view_carries_the_clock_and_the_servers_time(fake_redis):
    app = _kit.make_app(fake_redis)
    service = app.extensions["games"]
    http = app.test_client()
    timed, tokens = _kit.create_open_game(service, "secret-duel", turn_timeout=45)
    untimed, untimed_tokens = _kit.create_open_game(service, "secret-duel")
    before = int(time.time() * 1000)
    view = http.get(f"/v1/games/{timed}/view", headers=_kit.auth(tokens[0])).json
    after = int(time.time() * 1000)
    assert before <= view["server_time"] <= after
    session = service.load(timed)
    assert view["clock"] == {"turn_timeout": 45, "deadlines": [
        {"seat": 0, "at": session.decided_at[0] + 45_000}, {"seat": 1, "at": session.decided_at[1] + 45_000}]}
    assert session.decided_at[0] <= view["server_time"] < view["clock"]["deadlines"][0]["at"]
    spectator = http.get(f"/v1/games/{timed}").json["view"]
    assert spectator["clock"] == view["clock"] and before <= spectator["server_time"] <= int(time.time() * 1000)
    plain = http.get(f"/v1/games/{untimed}/view", headers=_kit.auth(untimed_tokens[0])).json
    assert "clock" not in plain and plain["server_time"] >= before


def test_a_bot_seat_has_no_deadline_and_an_ended_game_none(fake_redis):
    service = _kit.make_service(fake_redis)
    game_id, _ = _kit.create_open_game(service, "secret-duel", options={"rounds": 1}, turn_timeout=20, bots=(1,))
    session = service.load(game_id)
    assert session.to_act() == [0, 1] and [d["seat"] for d in session.deadlines()] == [0]
    service.act(game_id, 0, {"type": "bet", "amount": 0}, idempotency_key="b")
    service.jobs.drain(service)
    ended = service.load(game_id)
    assert ended.status in ("ended", "scored") and ended.deadlines() == []
    assert service.view(game_id, None)["clock"] == {"turn_timeout": 20, "deadlines": []}


def test_stream_messages_of_a_timed_game_carry_the_deadlines(fake_redis):
    app = _kit.make_app(fake_redis)
    service = app.extensions["games"]
    game_id, tokens = _kit.create_open_game(service, "secret-duel", options={"rounds": 1}, turn_timeout=20)
    service.act(game_id, 0, {"type": "bet", "amount": 2}, idempotency_key="b")
    response = app.test_client().get(f"/v1/games/{game_id}/events?follow=0.2", headers={
        **_kit.auth(tokens[1]), "Accept": "application/x-ndjson"})
    messages = [json.loads(line) for line in response.get_data(as_text=True).splitlines() if line.strip()]
    messages = [m for m in messages if "event" in m]
    session = service.load(game_id)
    assert messages and messages[-1]["deadlines"] == [{"seat": 1, "at": session.deadline(1)}]
    assert abs(messages[-1]["server_time"] - time.time() * 1000) < 5000


class RecordingJobs:
    """The core's Jobs, recording each turn timeout's delay."""

    def __init__(self):
        self.timeouts = []

    def bot_turn(self, *args, **kwargs): pass
    def score(self, *args, **kwargs): pass
    def expire(self, *args, **kwargs): pass
    def match_seeks(self, *args, **kwargs): pass

    def turn_timeout(self, game_id, seat, version, seconds):
        self.timeouts.append((game_id, seat, version, seconds))


def test_a_repair_enqueues_the_timeout_for_the_time_left_not_a_fresh_clock(fake_redis, monkeypatch):
    jobs = RecordingJobs()
    service = _kit.make_service(fake_redis, jobs=jobs)
    game_id, _ = _kit.create_open_game(service, "secret-duel", options={"rounds": 1}, turn_timeout=60)
    session = service.load(game_id)
    first = [t for t in jobs.timeouts if t[0] == game_id]
    assert {(s, v) for _, s, v, _ in first} == {(0, session.decision(0)), (1, session.decision(1))}
    assert all(59 <= left <= 60 for *_, left in first)
    jobs.timeouts.clear()
    later = time.time() + 25
    from service.core import game_repository

    monkeypatch.setattr(game_repository.time, "time", lambda: later)
    service.repair(game_id)
    assert sorted((s, v) for _, s, v, _ in jobs.timeouts) == [(0, session.decision(0)), (1, session.decision(1))]
    for _, seat, _, left in jobs.timeouts:
        assert left == pytest.approx((session.deadline(seat) - later * 1000) / 1000, abs=0.01)


@pytest.mark.timing
def test_the_timeout_job_never_plays_before_the_shown_deadline(fake_redis):
    service = _kit.make_service(fake_redis)
    game_id, _ = _kit.create_open_game(service, "secret-duel", options={"rounds": 1}, turn_timeout=30)
    session = service.load(game_id)
    # far from it: nothing played, the reconciler enqueues it again for the time left
    assert job_functions.turn_timeout(service, game_id, 0, session.decision(0)) == "early"
    assert service.load(game_id).version == session.version
    # a second away (the scheduler keeps whole seconds): the job waits it out, then plays
    short, _ = _kit.create_open_game(service, "secret-duel", options={"rounds": 1}, turn_timeout=1.2)
    opened = service.load(short)
    deadline = opened.deadline(1)
    assert job_functions.turn_timeout(service, short, 1, opened.decision(1)) == "played"
    played = [e for e in service.store.read(short, opened.version, None) if e.cmd is not None]
    assert played[0].cmd["by"] == "timeout" and played[0].cmd["seat"] == 1
    assert deadline <= played[0].at <= deadline + 1000


def test_rq_schedules_the_timeout_at_the_first_whole_second_after_the_deadline(fake_redis):
    from rq.registry import ScheduledJobRegistry

    from workers.queue import RQJobs

    jobs = RQJobs(fake_redis)
    registry = ScheduledJobRegistry(queue=jobs.queue)
    for n, seconds in enumerate([0.2, 1.0, 2.3, 7.9]):
        now = time.time()
        jobs.turn_timeout(f"g{n}", 0, 5, seconds)
        due = registry.get_scheduled_time(f"timeout_g{n}_0_5").timestamp()
        assert now + seconds <= due < now + seconds + 1.01, (seconds, due - now)
    jobs.turn_timeout("late", 0, 5, 0)           # overdue (a repair after an outage): queued now
    assert "timeout_late_0_5" in jobs.queue.job_ids


@pytest.mark.timing
def test_a_timed_out_seat_is_played_at_its_shown_deadline_by_the_real_scheduler(fake_redis):
    from workers.embedded import EmbeddedWorker
    from workers.queue import RQJobs

    app = _kit.make_app(fake_redis, jobs=RQJobs(fake_redis))
    service = app.extensions["games"]
    worker = EmbeddedWorker(service, fake_redis, reconcile_every=3600, idle_sleep=0.01).start()
    try:
        game_id, tokens = _kit.create_open_game(service, "secret-duel", options={"rounds": 1}, turn_timeout=1.5)
        view = app.test_client().get(f"/v1/games/{game_id}/view", headers=_kit.auth(tokens[0])).json
        shown = {d["seat"]: d["at"] for d in view["clock"]["deadlines"]}
        assert _kit.wait_until(lambda: len([e for e in service.store.read(game_id, 0, None)
                                            if e.cmd is not None]) >= 2, 15, every=0.05)
        played = [e for e in service.store.read(game_id, 0, None) if e.cmd is not None]
        for event in played[:2]:
            assert event.cmd["by"] == "timeout"
            # never before the deadline the view showed; within the scheduler's second after it
            assert shown[event.cmd["seat"]] <= event.at <= shown[event.cmd["seat"]] + 2500, \
                (event.cmd["seat"], event.at - shown[event.cmd["seat"]])
    finally:
        worker.stop()
