"""Challenges and rematches through the API, on fakeredis and a real server: reserved seats,
accept, decline, cancel, expiry, the invited account's choice to take no challenges, the
challenger's rate limit, a rematch asked by two seats at once, and a chain finished after
its process died between its steps."""

from __future__ import annotations

import random
import threading
import time

import pytest

from service.app import create_app
from service.bootstrap import Backend
from workers.memory_jobs import MemoryJobs

from test_accounts import CHEAP, Api, error


@pytest.fixture
def api(redis_client):
    jobs = MemoryJobs()
    app = create_app({"ALLOW_SEED": True, "RATE_LIMIT": None, **CHEAP, "SIGNUP_LIMIT": "1000/60",
                      "SIGNIN_LIMIT": "1000/60", "CHALLENGE_LIMIT": "3/3600", "CREATE_LIMIT": "1000/60"},
                     backend=Backend(redis_client, redis_client, False), jobs=jobs)
    return Api(app, jobs)


def challenge(api, token, seats, **body):
    return api.call("POST", "/v1/challenges", token, json={"type": "secret-duel", "seats": seats, **body})


def kinds(api, token):
    return [e["type"] for e in api.call("GET", "/v1/account/events", token).json["events"]]


def test_a_challenge_reserves_a_seat_that_only_its_account_takes(api):
    alice, _ = api.account("alice")
    bob, _ = api.account("bob")
    carol, _ = api.account("carol")
    made = challenge(api, alice, [{"me": True}, {"account": "bob"}])
    assert made.status_code == 201, made.json
    game = made.json["game_id"]
    seats = made.json["seats"]
    assert seats[0]["name"] == "alice" and seats[1]["kind"] == "open" and seats[1]["reserved"]
    assert error(api.http.post(f"/v1/games/{game}/seats/1", json={"name": "bob"}), 403, "seat_reserved")
    assert error(api.claim(game, 1, carol), 403, "seat_reserved")
    assert "invitation" in kinds(api, bob)
    accepted = api.call("POST", f"/v1/challenges/{game}/accept", bob)
    assert accepted.status_code == 200 and accepted.json["status"] == "active"
    assert "invitation.accepted" in kinds(api, alice)


def test_a_declined_challenge_never_starts_and_leaves_the_lobby(api):
    alice, _ = api.account("alice")
    bob, _ = api.account("bob")
    game = challenge(api, alice, [{"me": True}, {"account": "bob"}]).json["game_id"]
    assert game in [g["game_id"] for g in api.http.get("/v1/games").json["games"]]
    declined = api.call("POST", f"/v1/challenges/{game}/decline", bob)
    assert declined.json["status"] == "expired"
    assert game not in [g["game_id"] for g in api.http.get("/v1/games").json["games"]]
    assert error(api.claim(game, 1, bob), 409, "game_expired")
    for token in (alice, bob):
        ended = [e for e in api.call("GET", "/v1/account/events", token).json["events"]
                 if e["type"] == "invitation.expired"]
        assert len(ended) == 1 and ended[0]["reason"] == "declined"
    assert api.http.get(f"/v1/games/{game}/verify").json["ok"]


def test_only_the_challenger_cancels(api):
    alice, _ = api.account("alice")
    bob, _ = api.account("bob")
    game = challenge(api, alice, [{"me": True}, {"account": "bob"}]).json["game_id"]
    assert error(api.call("POST", f"/v1/challenges/{game}/cancel", bob), 403, "not_yours")
    assert api.call("POST", f"/v1/challenges/{game}/cancel", alice).json["status"] == "expired"


def test_an_invitation_expires_on_its_time(api):
    alice, _ = api.account("alice")
    api.account("bob")
    made = challenge(api, alice, [{"me": True}, {"account": "bob"}], expires_in=10).json
    game = made["game_id"]
    assert ("expire", game) in api.jobs.pending
    assert api.service.expire_if_due(game) is not None                 # not yet: the job comes back
    assert api.service.load(game).status == "open"
    api.service.expire_if_due(game, now_ms=int(time.time() * 1000) + 11_000)
    assert api.service.load(game).status == "expired"


def test_an_account_can_refuse_challenges_and_a_challenger_is_rate_limited(api):
    alice, _ = api.account("alice")
    bob, _ = api.account("bob")
    assert api.call("PUT", "/v1/account/preferences", bob, json={"challenges": "none"}).json == {"challenges": "none"}
    refused = challenge(api, alice, [{"me": True}, {"account": "bob"}])
    assert error(refused, 403, "challenges_refused")["details"]["field"] == "seats.1.account"
    api.call("PUT", "/v1/account/preferences", bob, json={"challenges": "anyone"})
    for _ in range(2):
        assert challenge(api, alice, [{"me": True}, {"account": "bob"}]).status_code == 201
    assert error(challenge(api, alice, [{"me": True}, {"account": "bob"}]), 429, "too_many_challenges")


def test_a_rematch_asked_by_both_seats_at_once_is_one_game(api):
    alice, _ = api.account("alice")
    bob, _ = api.account("bob")
    game = api.create()
    api.claim(game, 0, alice)
    api.claim(game, 1, bob)
    api.play_out(game, {0: alice, 1: bob}, random.Random(9))
    answers = {}

    def ask(name, token):
        answers[name] = api.app.test_client().post(f"/v1/games/{game}/rematch", json={},
                                                   headers={"Authorization": f"Bearer {token}"})

    threads = [threading.Thread(target=ask, args=pair) for pair in (("alice", alice), ("bob", bob))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers["alice"].status_code == answers["bob"].status_code == 201, (answers["alice"].json,
                                                                               answers["bob"].json)
    again = answers["alice"].json["game_id"]
    assert answers["bob"].json["game_id"] == again != game
    summary = api.http.get(f"/v1/games/{again}").json
    assert [s["name"] for s in summary["seats"]] == ["bob", "alice"]      # rotated
    assert summary["status"] == "active"


def test_a_challenge_whose_process_died_after_creating_it_is_finished_by_the_repair(api, monkeypatch):
    alice, _ = api.account("alice")
    api.account("bob")
    invitations = api.app.extensions["invitations"]
    real = invitations._seat_asker
    monkeypatch.setattr(invitations, "_seat_asker", lambda session, asker: session)   # step 2 lost
    monkeypatch.setattr(invitations, "heal", lambda session: None)
    api.service.games.observers[:] = [o for o in api.service.games.observers if getattr(o, "__self__", None)
                                      is not invitations]
    game = challenge(api, alice, [{"me": True}, {"account": "bob"}]).json["game_id"]
    assert api.http.get(f"/v1/games/{game}").json["seats"][0]["kind"] == "open"
    monkeypatch.setattr(invitations, "_seat_asker", real)
    monkeypatch.undo()
    api.service.games.observers.append(invitations.heal)
    api.service.repair(game)
    assert api.http.get(f"/v1/games/{game}").json["seats"][0]["name"] == "alice"
