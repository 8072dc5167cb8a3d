"""Snooping: for every registered game with hidden information, every payload a seat or a
spectator receives (view, summary, events as JSON, SSE, NDJSON and by stream ticket,
replays, ledger, export, the answers to illegal actions) is identical to what it receives
in a world where every secret it may not know is relabelled (ops/drills/snooping.py says
how); a leak names the endpoint and the field."""

import pytest

from ops.drills import _kit, snooping


def test_every_hidden_information_game_declares_its_secrets():
    """A new game with hidden information gets the generic check (others' commands) at
    once; this test asks for its secrets to be declared from its rules."""
    missing = [name for name in snooping.hidden_games() if name not in snooping.SPECS]
    assert not missing, f"declare the secrets of {missing} in ops/drills/snooping.py SPECS"


@pytest.mark.parametrize("game_type", snooping.hidden_games())
def test_no_payload_depends_on_a_secret_the_viewer_may_not_know(game_type):
    app = _kit.make_app(_kit.fake_client())
    import random

    result = snooping.check_game(app, game_type, random.Random(game_type), checkpoints=3)
    assert result["payloads_compared"] > 0
    assert result["secrets_relabelled"] > 0, "the relabelled worlds must differ from the real one"
    assert not result["leaks"], result["leaks"][:5]


def test_the_check_finds_a_leak_and_names_its_field(monkeypatch):
    """The check can fail: a game whose redaction forgets the dealt cards is caught, with
    the payload and the field named."""
    import random

    import toygame

    monkeypatch.setattr(toygame, "redact", lambda state, event, seat: event)
    app = _kit.make_app(_kit.fake_client())
    result = snooping.check_game(app, "secret-duel", random.Random(1), checkpoints=1)
    fields = {(leak["payload"], leak["field"]) for leak in result["leaks"]}
    assert any(payload == "events" and "data.cards" in field for payload, field in fields), fields


@pytest.mark.parametrize("game_type", _kit.game_names())
def test_a_seat_can_read_its_view_before_the_game_starts(game_type):
    """Regression (found by the snooping drill): speculate's view indexed the hands of a
    game not started yet, so GET /view of a claimed seat in an open game, and GET /replay
    at version 1 with a token, failed with 500."""
    app = _kit.make_app(_kit.fake_client())
    service = app.extensions["games"]
    http = app.test_client()
    game = service.create(game_type, _kit.short_options(game_type), [{}] * _kit.get_game(game_type).MIN_PLAYERS,
                          seed=_kit.SEED)
    _, token = service.claim(game.game_id, 0, "early")
    view = http.get(f"/v1/games/{game.game_id}/view", headers=_kit.auth(token))
    assert view.status_code == 200 and view.json["status"] == "open", view.json
    replay = http.get(f"/v1/games/{game.game_id}/replay", query_string={"at": 1}, headers=_kit.auth(token))
    assert replay.status_code == 200, replay.json


@pytest.mark.slow
def test_drill_short_form():
    figures = snooping.run(size=1, seed=9, checkpoints=2)
    assert figures["ok"], figures["first_leaks"]
    assert figures["payloads_compared"] > 100
