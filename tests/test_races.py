"""Races and idempotency on a private real Redis, through the HTTP API, for every registered
game: one winner among concurrent writers on one expected version, one append for
concurrent retries of one key, 409 for a key reused with another body, and a soak with lost
responses that ends with no lost, duplicated or out-of-order event."""

import random

import pytest

from ops.drills import _kit, races
from projections import disclosure
from projections.templates import fill_template


def test_fifty_writers_on_one_expected_version_one_wins_in_every_game(real_redis):
    figures = races.writers(real_redis, n=50, seed=3)
    assert figures["races"] == len(_kit.game_names())
    for game in figures["games"]:
        assert game["statuses"] == {200: 1, 409: 49}, game
        assert game["verify_ok"], game
    assert figures["ok"], figures


def test_concurrent_retries_of_one_key_append_once(real_redis):
    figures = races.same_key(real_redis, n=20)
    assert figures["ok"], figures


@pytest.mark.parametrize("game_type", _kit.game_names())
def test_same_key_same_body_same_response_other_body_409(real_redis, game_type):
    app = _kit.inline_app(real_redis)
    service = app.extensions["games"]
    http = app.test_client()
    game_id, tokens = _kit.create_playable(service, game_type, random.Random(game_type))
    session = service.load(game_id)
    seat = session.to_act()[0]
    legal = disclosure.view_for(session, seat)["legal_actions"]
    action = fill_template(legal[0], random.Random(1))
    body = {"action": action, "expected_version": session.version}
    url = f"/v1/games/{game_id}/actions"
    first = http.post(url, json=body, headers=_kit.auth(tokens[seat], "k"))
    assert first.status_code == 200, first.json
    version = first.json["receipt"]["version"]
    again = http.post(url, json=body, headers=_kit.auth(tokens[seat], "k"))
    assert again.status_code == 200 and again.json == first.json
    assert (first.headers["Idempotent-Replayed"], again.headers["Idempotent-Replayed"]) == ("false", "true")
    other = dict(body, expected_version=session.version + 1)
    conflict = http.post(url, json=other, headers=_kit.auth(tokens[seat], "k"))
    assert conflict.status_code == 409 and conflict.json["error"]["code"] == "idempotency_conflict"
    assert conflict.json["error"]["details"]["version"] >= version
    assert len(_kit.command_events(service.store.read_raw(game_id))) == 1
    # A key belongs to its seat: another seat's identical key is its own command.
    assert service.store.get_idempotent(game_id, f"{seat}:k") is not None


@pytest.mark.slow
def test_soak_short_form(real_redis):
    figures = races.soak(real_redis, games=len(_kit.game_names()), seed=5, lose=0.15)
    assert figures["ok"], figures
    assert figures["acknowledged"] == figures["present"] > 0
    assert figures["responses"].get("retried", 0) > 0
