"""Rated games and ratings through the API, on fakeredis and a real server: what a rated game
refuses, the ratings applied once per game whatever repeats the ask, the rebuild from the
logs equal to the last digit, the leaderboard and profiles, and the "victim" trick (a guest
game) moving no rating."""

from __future__ import annotations

import random

import pytest

from service.app import create_app
from service.bootstrap import Backend
from service.ratings.model import Rating, initial, rate
from service.ratings.service import bot_account_id, log_of
from workers.memory_jobs import MemoryJobs

from test_accounts import CHEAP, PASSWORD, Api, error

SEED = "ef" * 32


@pytest.fixture
def api(redis_client):
    jobs = MemoryJobs()
    app = create_app({"ALLOW_SEED": True, "RATE_LIMIT": None, **CHEAP, "SIGNUP_LIMIT": "1000/60",
                      "SIGNIN_LIMIT": "1000/60", "BOT_GAMES_PER_ADDRESS": 0, "CREATE_LIMIT": "1000/60"},
                     backend=Backend(redis_client, redis_client, False), jobs=jobs)
    return Api(app, jobs)


def rated(api, seats, game_type="secret-duel", seed=SEED):
    response = api.http.post("/v1/games", json={"type": game_type, "seats": seats, "rated": True,
                                                "turn_timeout": 60, "seed": seed})
    assert response.status_code == 201, response.json
    return response.json["game_id"]


def test_a_rated_game_needs_a_clock_and_default_bots(api):
    no_clock = api.http.post("/v1/games", json={"type": "secret-duel", "seats": [{}, {}], "rated": True})
    assert error(no_clock, 422, "rated_needs_clock")["details"]["field"] == "turn_timeout"
    budget = api.http.post("/v1/games", json={"type": "speculation", "rated": True, "turn_timeout": 60,
                                              "seats": [{}, {"bot": "search", "budget": {"iterations": 10}}, {}]})
    assert error(budget, 422, "invalid")["details"]["field"] == "seats.1.budget"


def test_a_rated_game_refuses_guests_and_an_account_in_two_seats(api):
    alice, _ = api.account("alice")
    reader, _ = api.account("reader", scopes=("read",))
    game = rated(api, [{}, {}])
    guest = api.http.post(f"/v1/games/{game}/seats/0", json={"name": "victim"})
    assert error(guest, 401, "account_required")
    assert error(api.claim(game, 0, reader), 403, "missing_scope")["details"]["scope"] == "play"
    assert api.claim(game, 0, alice).status_code == 201
    assert error(api.claim(game, 1, alice), 409, "already_seated")


def test_a_rated_bot_game_is_rated_once_and_the_rebuild_finds_every_rating(api):
    games = [rated(api, [{"bot": "baseline"}, {"bot": "random"}], seed=f"{i:02x}" * 32) for i in range(3)]
    api.jobs.drain(api.service)
    ratings = api.app.extensions["ratings"]
    assert api.service.store.head(log_of("secret-duel"))[0] == 3
    for game in games:                                   # the reconciler's repair asks again: nothing moves
        api.service.repair(game)
        api.service.score(game)
    assert api.service.store.head(log_of("secret-duel"))[0] == 3
    board = api.http.get("/v1/leaderboards/secret-duel").json
    assert {r["name"] for r in board["rows"]} == {"baseline", "random"}
    assert all(r["bot"] and r["games"] == 3 and r["provisional"] for r in board["rows"])
    assert board["rows"][0]["ordinal"] >= board["rows"][1]["ordinal"]
    done = ratings.rebuild("secret-duel")
    assert done == {"games": 3, "players": 2, "kept_differing": 0}
    assert api.http.get("/v1/leaderboards/secret-duel").json == board
    profile = api.http.get("/v1/accounts/baseline").json
    assert profile["bot"] and profile["id"] == bot_account_id("baseline")
    assert profile["ratings"]["secret-duel"]["games"] == 3
    history = api.http.get("/v1/accounts/baseline/ratings/secret-duel").json["history"]
    assert [h["game_id"] for h in history] == games and history[-1]["mu"] == profile["ratings"]["secret-duel"]["mu"]
    assert api.http.post("/v1/sessions", json={"username": "baseline", "password": "anything at all"}).status_code == 401


def test_two_accounts_play_a_rated_game_and_the_winner_goes_up(api):
    alice, _ = api.account("alice")
    bob, _ = api.account("bob")
    game = rated(api, [{}, {}])
    api.claim(game, 0, alice)
    api.claim(game, 1, bob)
    api.play_out(game, {0: alice, 1: bob}, random.Random(5))
    result = api.http.get(f"/v1/games/{game}").json["result"]
    rows = {r["name"]: r for r in api.http.get("/v1/leaderboards/secret-duel").json["rows"]}
    assert set(rows) == {"alice", "bob"}
    start = initial()
    for seat, name in enumerate(("alice", "bob")):
        moved = rows[name]["mu"] - start.mu
        if result["ranks"][seat] < result["ranks"][1 - seat]:
            assert moved > 0
        elif result["ranks"][seat] > result["ranks"][1 - seat]:
            assert moved < 0
    assert api.http.get("/v1/accounts/alice").json["recent_games"][0]["rated"] is True


def test_the_victim_trick_moves_no_rating(api):
    game = api.create()
    for seat in (0, 1):
        api.http.post(f"/v1/games/{game}/seats/{seat}", json={"name": "victim"})
    assert api.http.get("/v1/leaderboards/secret-duel").json["total"] == 0


def test_ties_share_a_place():
    before = [initial(), initial(), initial()]
    after = rate(before, [1, 2, 2], [True, False, False])
    assert after[1].mu == after[2].mu and after[0].mu > after[1].mu
    assert Rating.from_record(after[0].as_record()) == after[0]
