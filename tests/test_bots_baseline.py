"""The `baseline` bot level: no optional action ever, forced choices at random, legal in every
game; named in the API's bot levels and its OpenAPI document."""

from __future__ import annotations

import random

import pytest

from projections.registry import game_types, get_game
from projections.templates import matches
from service.app import create_app
from service.bootstrap import Backend
from workers.bots import LEVELS, baseline, policy
from workers.bots.study import play_session, session_seed
from workers.memory_jobs import MemoryJobs

GAMES = tuple(t.name for t in game_types())   # every hosted game, in the lobby's order
# what taking an option looks like in each game
OPTIONAL = {"bid", "offer", "accept", "offer_blind", "buy", "sell", "borrow"}


@pytest.mark.parametrize("name", GAMES)
def test_baseline_plays_whole_games_and_never_takes_an_option(name):
    game = get_game(name)
    chosen = []

    def observer(state, seat, view, legal, action):
        assert matches(action, legal)
        if seat == 0:
            chosen.append((legal, action))

    for i in range(6):
        record = play_session(game, 4, session_seed("baseline", name, 4, i), f"bl-{i}",
                              ["baseline", "heuristic", "heuristic", "random"], observer=observer)
        assert record.error is None and record.anomalies == []
    assert chosen
    for legal, action in chosen:
        assert action["type"] not in OPTIONAL
        if action["type"] == "respond":
            assert action["count"] == 0
        if any(a["type"] in baseline.DECLINE for a in legal):
            assert action["type"] in baseline.DECLINE


def test_forced_choices_are_drawn_at_random_from_the_legal_actions():
    legal = [{"type": "play_event", "card": c} for c in ("mines:+1", "mines:-2", "stores:+3")]
    picks = {baseline.choose({}, legal, 0, random.Random(i))["card"] for i in range(40)}
    assert picks == {"mines:+1", "mines:-2", "stores:+3"}
    template = [{"type": "choose_start_space", "space": {"min": 0, "max": 3}}]
    spaces = {baseline.choose({}, template, 0, random.Random(i))["space"] for i in range(40)}
    assert spaces == {0, 1, 2, 3}
    assert baseline.choose({}, [{"type": "respond", "count": {"min": 0, "max": 5}}], 0,
                           random.Random(1)) == {"type": "respond", "count": 0}
    with pytest.raises(ValueError):
        baseline.choose({}, [], 0, random.Random(1))


def test_baseline_is_a_level_of_every_game():
    assert "baseline" in LEVELS
    for name in GAMES:
        assert policy(name, "baseline") is baseline.choose


def test_the_api_lists_and_accepts_the_baseline_level(fake_redis):
    jobs = MemoryJobs()
    app = create_app({"ALLOW_SEED": True, "RATE_LIMIT": None}, backend=Backend(fake_redis, fake_redis, False),
                     jobs=jobs)
    http = app.test_client()
    types = {t["name"]: t for t in http.get("/v1/game-types").json["game_types"]}
    assert "baseline" in types["speculate"]["bot_levels"]
    spec = http.get("/openapi.json").json
    assert "baseline" in repr(spec)
    response = http.post("/v1/games", json={"type": "speculate", "seed": "ab" * 32,
                                            "seats": [{}, {"bot": "baseline"}, {"bot": "baseline"}]})
    assert response.status_code == 201, response.json
    assert [s.get("level") for s in response.json["seats"]][1:] == ["baseline", "baseline"]
