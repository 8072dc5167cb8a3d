"""Clocks and abandoned games through the client generated from /openapi.json
(tests/test_generated_client.py generates it, with no warning allowed), every request and
response checked against the document: a timed game's view carries its typed clock and the
server's time; the lobby's live list (`live=true`) and the `abandoned` status; the 409
`game_abandoned` of an action on an abandoned game; the game.abandoned event, typed."""

from __future__ import annotations

import importlib
import time

import httpx

from ops.drills import _kit
from test_generated_client import PACKAGE, Contract, _Tag, client_package  # noqa: F401


def test_the_clock_the_live_list_and_an_abandoned_game_through_the_generated_client(client_package, fake_redis):
    package, spec = client_package
    models = importlib.import_module(f"{PACKAGE}.models")
    games, play, history = (_Tag(tag) for tag in ("games", "play", "history"))
    contract = Contract(spec)
    app = _kit.make_app(fake_redis)
    service = app.extensions["games"]
    httpx_args = {"transport": httpx.WSGITransport(app=app),
                  "event_hooks": {"request": [contract.request], "response": [contract.response]}}
    anonymous = package.Client(base_url="http://service", httpx_args=httpx_args, raise_on_unexpected_status=True)

    def seat_client(token):
        return package.AuthenticatedClient(base_url="http://service", token=token, httpx_args=httpx_args,
                                           raise_on_unexpected_status=True)

    timed = games.create_game.sync(client=anonymous, body=models.CreateGame.from_dict(
        {"type": "big-shot", "seats": [{}, {"bot": "random"}], "turn_timeout": 60}))
    token = games.claim_seat.sync(timed.game_id, 0, client=anonymous, body=models.Claim(name="ann")).token
    idle = games.create_game.sync(client=anonymous, body=models.CreateGame.from_dict(
        {"type": "big-shot", "seats": [{}, {}]}))
    idle_tokens = [games.claim_seat.sync(idle.game_id, s, client=anonymous, body=models.Claim(name=f"p{s}")).token
                   for s in (0, 1)]
    service.jobs.drain(service)                      # the bot's move, if it is first
    before = int(time.time() * 1000)
    view = play.get_view.sync(timed.game_id, client=seat_client(token))
    assert before <= view.server_time <= int(time.time() * 1000)
    assert view.clock.turn_timeout == 60
    session = service.load(timed.game_id)
    assert [(d.seat, d.at) for d in view.clock.deadlines] == [(s, session.deadline(s)) for s in session.to_act()
                                                              if session.seats[s].kind == "player"]
    spectator = games.get_game.sync(timed.game_id, client=anonymous)
    assert spectator.moved_at == session.moved_at and spectator.view.server_time >= view.server_time

    live = games.list_games.sync(client=anonymous, live=True)
    assert {g.game_id for g in live.games} == {timed.game_id, idle.game_id}
    service.abandon_game(idle.game_id, 60, now_ms=service.load(idle.game_id).moved_at + 61_000)
    assert [g.game_id for g in games.list_games.sync(client=anonymous, live=True).games] == [timed.game_id]
    abandoned = games.list_games.sync(client=anonymous, status=models.ListGamesStatus("abandoned"))
    assert [(g.game_id, str(g.status)) for g in abandoned.games] == [(idle.game_id, "abandoned")]
    assert abandoned.games[0].abandoned.to_act == service.load(idle.game_id).abandoned["to_act"]
    to_act = service.load(idle.game_id).abandoned["to_act"][0]
    refused = play.post_action.sync(idle.game_id, client=seat_client(idle_tokens[to_act]), idempotency_key="late-move",
                                    body=models.ActionRequest.from_dict({"action": {"type": "pass"}}))
    assert isinstance(refused, models.Error) and refused.error.code == "game_abandoned"
    events = history.list_events.sync(idle.game_id, client=anonymous)
    assert type(events.events[-1]).__name__ == "GameAbandonedPlatformEvent"
    assert {"getView", "getGame", "listGames", "postAction", "listEvents"} <= contract.checked["operations"]
