"""Limits against one client's abuse: game creation capped per address (429 too_many_games),
live all-bot games capped per creating address (429 too_many_bot_games), both with
Retry-After and changing nothing; open games nobody joins leave the lobby, their log kept."""

import time
from types import SimpleNamespace

from ops.drills import _kit
from ops.drills.hostile import store_digest

ALL_BOTS = {"type": "big-shot", "seats": [{"bot": "random"}, {"bot": "random"}]}
OPEN = {"type": "big-shot", "seats": [{}, {}]}


def _keep_in_one_window(monkeypatch, seconds: int = 60) -> None:
    """The limiter counts in fixed windows of the wall clock (service/ratelimit.py reads
    time.time(), no clock of its own to inject): its clock is moved on, running at the real
    pace, to 1 s into a window, so the test has the rest of that window (59 s) and never waits."""
    from service import ratelimit

    shift = seconds - time.time() % seconds + 1
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: time.time() + shift))


def test_creation_is_capped_per_address_with_a_clear_429(redis_client, monkeypatch):
    _keep_in_one_window(monkeypatch)
    app = _kit.make_app(redis_client, CREATE_LIMIT="3/60")
    http = app.test_client()
    statuses = [http.post("/v1/games", json=OPEN, environ_base={"REMOTE_ADDR": "10.9.0.1"}).status_code
                for _ in range(3)]
    assert statuses == [201] * 3
    before = store_digest(redis_client)
    refused = http.post("/v1/games", json=OPEN, environ_base={"REMOTE_ADDR": "10.9.0.1"})
    assert refused.status_code == 429
    assert refused.json["error"]["code"] == "too_many_games"
    assert "3 games in 60 s" in refused.json["error"]["message"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert store_digest(redis_client) == before        # nothing created
    other = http.post("/v1/games", json=OPEN, environ_base={"REMOTE_ADDR": "10.9.0.2"})
    assert other.status_code == 201


def test_live_all_bot_games_are_capped_per_creator(redis_client):
    app = _kit.make_app(redis_client, BOT_GAMES_PER_ADDRESS=2)
    http = app.test_client()
    at = {"REMOTE_ADDR": "10.8.0.1"}
    made = [http.post("/v1/games", json=ALL_BOTS, environ_base=at) for _ in range(2)]
    assert [r.status_code for r in made] == [201, 201]
    refused = http.post("/v1/games", json=ALL_BOTS, environ_base=at)
    assert refused.status_code == 429 and refused.json["error"]["code"] == "too_many_bot_games"
    assert refused.headers["Retry-After"]
    # A game with a player seat is not capped, nor is another address.
    assert http.post("/v1/games", json=OPEN, environ_base=at).status_code == 201
    assert http.post("/v1/games", json=ALL_BOTS, environ_base={"REMOTE_ADDR": "10.8.0.2"}).status_code == 201
    # Once one of the creator's bot games is over, it may start another.
    service = app.extensions["games"]
    service.jobs.drain(service)
    assert service.load(made[0].json["game_id"]).status == "scored"
    assert http.post("/v1/games", json=ALL_BOTS, environ_base=at).status_code == 201


def test_a_retried_create_is_answered_whatever_the_limits(redis_client, monkeypatch):
    """A create whose reply was lost is answered again on its retry (the same game), although
    the limits now refuse a new one; a refused or invalid request takes no place in them."""
    _keep_in_one_window(monkeypatch)
    app = _kit.make_app(redis_client, CREATE_LIMIT="2/60", BOT_GAMES_PER_ADDRESS=1)
    http = app.test_client()
    at = {"REMOTE_ADDR": "10.7.0.1"}
    key = {"Idempotency-Key": "retried-create-0001"}
    invalid = http.post("/v1/games", json={**ALL_BOTS, "type": "no-such-game"}, environ_base=at)
    assert invalid.status_code == 422                       # not counted against CREATE_LIMIT
    first = http.post("/v1/games", json=ALL_BOTS, headers=key, environ_base=at)
    assert first.status_code == 201
    refused = http.post("/v1/games", json=ALL_BOTS, environ_base=at)
    assert refused.status_code == 429 and refused.json["error"]["code"] == "too_many_bot_games"
    retry = http.post("/v1/games", json=ALL_BOTS, headers=key, environ_base=at)
    assert retry.status_code == 201 and retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json["game_id"] == first.json["game_id"]
    # two of the two creates the window allows were counted (the bot-capped one among them)
    assert http.post("/v1/games", json=OPEN, environ_base=at).json["error"]["code"] == "too_many_games"


def test_unjoined_games_leave_the_lobby_and_keep_their_log(redis_client):
    from workers import jobs as job_functions

    app = _kit.make_app(redis_client)
    service = app.extensions["games"]
    http = app.test_client()
    old = http.post("/v1/games", json=OPEN).json["game_id"]
    joined = http.post("/v1/games", json=OPEN).json["game_id"]
    http.post(f"/v1/games/{joined}/seats/0", json={"name": "ann"})
    # the events' clock (ms) past both games' creation, so `fresh_at` comes strictly after them
    created = max(service.load(g).created_at for g in (old, joined))
    assert _kit.wait_until(lambda: int(time.time() * 1000) > created, 5, every=0.001)
    fresh_at = int(time.time() * 1000)
    fresh = http.post("/v1/games", json=OPEN).json["game_id"]
    listed = {g["game_id"] for g in http.get("/v1/games?status=open").json["games"]}
    assert {old, joined, fresh} <= listed
    log_before = service.store.read(old)
    expired = service.expire_unjoined(0, now_ms=fresh_at)
    assert old in expired and joined in expired and fresh not in expired
    lobby = {g["game_id"] for g in http.get("/v1/games").json["games"]}
    assert old not in lobby and fresh in lobby
    assert http.get(f"/v1/games/{old}").status_code == 200            # its log is kept
    assert service.store.read(old) == log_before
    assert http.get(f"/v1/games/{old}/verify").json["ok"]
    # Joined after all: back in the lobby, under its new status.
    http.post(f"/v1/games/{joined}/seats/1", json={"name": "bob"})
    assert joined in {g["game_id"] for g in http.get("/v1/games?status=active").json["games"]}
    # The reconciler does it with the configured expiry.
    service.lobby_expiry = 0.01
    # the clock past the fresh game's creation + that expiry (open_before is strict)
    fresh_created = service.load(fresh).created_at
    assert _kit.wait_until(lambda: int(time.time() * 1000) - 10 > fresh_created, 5, every=0.001)
    job_functions.reconcile(service)
    assert fresh not in {g["game_id"] for g in http.get("/v1/games").json["games"]}
