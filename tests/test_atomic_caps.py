"""Atomic creation caps (ops/drills/atomic_caps.py, short form): parallel all-bot creates from
one address make exactly BOT_GAMES_PER_ADDRESS games; a create that fails after taking its
place gives it back; an idempotent retry takes no second place; a game whose seats a turn
timeout plays counts as an all-bot game."""

import pytest

from ops.drills import _kit, atomic_caps
from workers.memory_jobs import MemoryJobs

ALL_BOTS = atomic_caps.ALL_BOTS


def test_parallel_creates_make_exactly_the_cap(redis_client):
    figures = _measure(redis_client, size=12, cap=3)
    assert figures["made"] == 3 and figures["refused_too_many_bot_games"] == 9, figures
    assert figures["ok"], figures


def _measure(client, size, cap):
    from ops.drills.atomic_caps import _judge

    apps = [_kit.make_app(client, jobs=MemoryJobs(), BOT_GAMES_PER_ADDRESS=cap, CREATE_LIMIT=None) for _ in range(3)]
    at = {"REMOTE_ADDR": "10.56.0.1"}
    answers = _kit.all_at_once(apps, lambda http: http.post("/v1/games", json=ALL_BOTS, environ_base=at), size)
    http = apps[0].test_client()
    other = {"REMOTE_ADDR": "10.56.0.2"}
    key = {"Idempotency-Key": "atomic-caps-test-0001"}
    first = http.post("/v1/games", json=ALL_BOTS, headers=key, environ_base=other).status_code
    retries = [http.post("/v1/games", json=ALL_BOTS, headers=key, environ_base=other).status_code for _ in range(3)]
    timed = [http.post("/v1/games", json=atomic_caps.TIMED, environ_base=other).status_code for _ in range(cap)]
    return _judge({"parallel_creates": size, "cap": cap,
                   "made": sum(1 for s, _, _ in answers if s == 201),
                   "refused_too_many_bot_games": sum(1 for s, _, b in answers
                                                     if s == 429 and b["error"]["code"] == "too_many_bot_games"),
                   "retry_first": first, "retries": retries, "timed_games": timed}, cap)


def test_a_create_that_fails_after_taking_its_place_gives_it_back(redis_client, monkeypatch):
    app = _kit.make_app(redis_client, jobs=MemoryJobs(), BOT_GAMES_PER_ADDRESS=1, CREATE_LIMIT="5/60")
    app.config["PROPAGATE_EXCEPTIONS"] = False
    service = app.extensions["games"]
    at = {"REMOTE_ADDR": "10.57.0.1"}
    real_append = service.games.append

    def failing(*args, **kw):
        raise RuntimeError("the store failed after the caps were taken")

    monkeypatch.setattr(service.games, "append", failing)
    http = app.test_client()
    assert http.post("/v1/games", json=ALL_BOTS, environ_base=at).status_code == 500
    monkeypatch.setattr(service.games, "append", real_append)
    assert http.post("/v1/games", json=ALL_BOTS, environ_base=at).status_code == 201   # its place came back
    refused = http.post("/v1/games", json=ALL_BOTS, environ_base=at)
    assert refused.status_code == 429 and refused.json["error"]["code"] == "too_many_bot_games"
    # the failed create gave its CREATE_LIMIT count back too: 2 counted (the made one, the refused one)
    for _ in range(3):
        assert http.post("/v1/games", json=atomic_caps.TIMED | {"turn_timeout": None},
                         environ_base=at).status_code == 201
    assert http.post("/v1/games", json={"type": "big-shot", "seats": [{}, {}]},
                     environ_base=at).json["error"]["code"] == "too_many_games"


def test_an_invalid_create_takes_no_place(redis_client):
    app = _kit.make_app(redis_client, jobs=MemoryJobs(), BOT_GAMES_PER_ADDRESS=1)
    http = app.test_client()
    at = {"REMOTE_ADDR": "10.58.0.1"}
    for _ in range(3):
        assert http.post("/v1/games", json={**ALL_BOTS, "type": "nope"}, environ_base=at).status_code == 422
    assert http.post("/v1/games", json=ALL_BOTS, environ_base=at).status_code == 201
    assert http.post("/v1/games", json=ALL_BOTS, environ_base=at).status_code == 429


@pytest.mark.parametrize("size", [12])
def test_the_drill_measure_holds(redis_client, size):
    assert _measure(redis_client, size=size, cap=4)["ok"]
