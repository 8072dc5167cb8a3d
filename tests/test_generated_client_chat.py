"""The table chat through the client generated from /openapi.json (tests/test_generated_client.py
generates it, with no warning allowed), every request and response checked against the
document: the presets, seats talking in their channel (text and presets, a retry of a key),
a spectator's read, an account in the spectators' channel, a seat's mute and unmute, and the
typed errors (422 invalid_text, 403 chat_forbidden, 429 chat_rate_limited)."""

from __future__ import annotations

import importlib

import httpx

from ops.drills import _kit
from test_accounts import CHEAP, Api
from test_generated_client import PACKAGE, Contract, _Tag, client_package  # noqa: F401


def test_the_chat_through_the_generated_client(client_package, fake_redis):
    package, spec = client_package
    models = importlib.import_module(f"{PACKAGE}.models")
    games, chat = _Tag("games"), _Tag("chat")
    contract = Contract(spec)
    app = _kit.make_app(fake_redis, SIGNUP_LIMIT="1000/60", SIGNIN_LIMIT="1000/60", **CHEAP)
    httpx_args = {"transport": httpx.WSGITransport(app=app),
                  "event_hooks": {"request": [contract.request], "response": [contract.response]}}
    anonymous = package.Client(base_url="http://service", httpx_args=httpx_args, raise_on_unexpected_status=True)

    def as_token(token):
        return package.AuthenticatedClient(base_url="http://service", token=token, httpx_args=httpx_args,
                                           raise_on_unexpected_status=True)

    presets = chat.list_chat_presets.sync(client=anonymous)
    assert [p.id for p in presets.presets][:2] == ["good-luck", "well-played"] and presets.limits.max_length == 280
    game = games.create_game.sync(client=anonymous, body=models.CreateGame.from_dict(
        {"type": "big-shot", "seats": [{}, {}]}))
    seats = [as_token(games.claim_seat.sync(game.game_id, s, client=anonymous, body=models.Claim(name=f"p{s}")).token)
             for s in (0, 1)]

    said = chat.post_chat.sync(game.game_id, client=seats[0], idempotency_key="hello-1", body=models.ChatPost.from_dict(
        {"channel": "players", "text": "<b>hi</b>"}))
    assert isinstance(said, models.ChatItem) and said.text == "<b>hi</b>" and said.author.name == "p0", said
    again = chat.post_chat.sync_detailed(game.game_id, client=seats[0], idempotency_key="hello-1",
                                         body=models.ChatPost.from_dict({"channel": "players", "text": "<b>hi</b>"}))
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true" and again.parsed.id == said.id
    preset = chat.post_chat.sync(game.game_id, client=seats[1], body=models.ChatPost.from_dict(
        {"channel": "players", "preset": "good-luck"}))
    assert (preset.text, str(preset.preset)) == ("Good luck!", "good-luck")

    read = chat.get_chat.sync(game.game_id, client=seats[1])
    assert [i.text for i in read.items] == ["<b>hi</b>", "Good luck!"] and read.last == 2 and read.seat == 1
    spectator = chat.get_chat.sync(game.game_id, client=anonymous)
    assert spectator.items == [] and [str(c) for c in spectator.readable] == ["spectators"]
    forbidden = chat.get_chat.sync(game.game_id, client=anonymous, channel=models.GetChatChannel("players"))
    assert isinstance(forbidden, models.Error) and forbidden.error.code == "chat_forbidden"

    watcher, _ = Api(app, app.extensions["games"].jobs).account("watcher")
    cheer = chat.post_chat.sync(game.game_id, client=as_token(watcher), body=models.ChatPost.from_dict(
        {"channel": "spectators", "text": "go!"}))
    assert cheer.author.name == "watcher" and cheer.author.seat is None
    refused = chat.post_chat.sync(game.game_id, client=seats[0], body=models.ChatPost.from_dict(
        {"channel": "players", "text": "bell\x07"}))
    assert isinstance(refused, models.Error) and refused.error.code == "invalid_text"
    assert refused.error.details.field == "text"

    muted = chat.mute_chat_seat.sync(game.game_id, client=seats[1], body=models.ChatMute(target=0))
    assert muted.muted == [1 - 1] and muted.seat == 1
    assert [i.text for i in chat.get_chat.sync(game.game_id, client=seats[1]).items] == ["Good luck!", "go!"]
    assert chat.unmute_chat_seat.sync(game.game_id, 0, client=seats[1]).muted == []

    for n in range(4):
        chat.post_chat.sync(game.game_id, client=seats[0], body=models.ChatPost.from_dict(
            {"channel": "players", "text": f"m{n}"}))
    flood = chat.post_chat.sync_detailed(game.game_id, client=seats[0], body=models.ChatPost.from_dict(
        {"channel": "players", "text": "too many"}))
    assert flood.status_code == 429 and flood.parsed.error.code == "chat_rate_limited"
    assert int(flood.headers["Retry-After"]) >= 1
    assert {"listChatPresets", "getChat", "postChat", "muteChatSeat", "unmuteChatSeat"} <= contract.checked["operations"]
