"""The table chat in the terminal: lines printed as plain text (nothing a terminal would take
as a sequence), `play --api` showing the chat's lines and sending a preset with `C` at the
move prompt, `speculation chat show | say` against a live server, and the operator's
`speculation chat remove` on the store's Redis."""

from __future__ import annotations

import json
import random

import pytest

from service import terminal
from service.terminal_chat import line, printable

from service_kit import make_service
from test_accounts import CHEAP, Api
from test_terminal_leave import _Http, _scripted


def test_a_line_is_plain_text_whatever_it_holds():
    said = {"kind": "message", "channel": "players", "author": {"name": "eve\x1b[2J", "guest": True},
            "text": "<b>hi</b> \x1b[31mred\x07 \u202eevil", "removed": False}
    shown = line(said)
    assert shown == "  [players] eve\\x1b[2J (guest): <b>hi</b> \\x1b[31mred\\x07 \\u202eevil"
    assert all(c.isprintable() for c in shown)
    assert line({**said, "removed": True, "text": None}).endswith(": (removed)")
    assert line({"kind": "removal", "channel": "spectators", "message": 4, "reason": "spam"}) == \
        "  [spectators] (message 4 was removed by the operator: spam)"
    assert printable("ok ☺") == "ok ☺"


@pytest.fixture
def api(fake_redis):
    from ops.drills import _kit

    app = _kit.make_app(fake_redis, SIGNUP_LIMIT="1000/60", SIGNIN_LIMIT="1000/60", **CHEAP)
    return Api(app, app.extensions["games"].jobs)


def test_play_online_shows_the_chat_and_sends_a_preset(api, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    ann, _ = api.account("ann")
    game_id = api.http.post("/v1/games", json={"type": "big-shot", "seats": [{}, {}], "leave_level": "random"}).json["game_id"]
    assert api.claim(game_id, 0, ann).status_code == 201
    bob = api.http.post(f"/v1/games/{game_id}/seats/1", json={"name": "bob"}).json["token"]
    rng = random.Random(1)
    for n in range(50):   # bob moves until ann is to act
        if 0 in api.http.get(f"/v1/games/{game_id}").json["to_act"]:
            break
        view = api.call("GET", f"/v1/games/{game_id}/view", bob).json
        action = {k: v["min"] if isinstance(v, dict) else v for k, v in rng.choice(view["legal_actions"]).items()}
        api.call("POST", f"/v1/games/{game_id}/actions", bob, json={"action": action},
                 headers={"Idempotency-Key": f"bob-{n}"})
    api.call("POST", f"/v1/games/{game_id}/chat", bob, json={"channel": "players", "text": "<i>hello</i> ann"})
    read = _scripted(["c", "1", "C", "", "L", "yes"])
    terminal.play_online(_Http(api.app, ann), game_id, read=read)
    out = capsys.readouterr().out
    assert "  [players] bob (guest): <i>hello</i> ann" in out
    assert "   C. chat: the new lines, and say a preset" in out
    assert "  [players] ann: Good luck!" in out
    assert [i["text"] for i in api.service.chat.read(game_id, _viewer(0))["items"]] == ["<i>hello</i> ann", "Good luck!"]
    assert [p.split(" ")[0] for p in read.asked] == ["Choose", "", "Choose", "", "Choose", "Type"]


def _viewer(seat):
    from projections.chat import Viewer

    return Viewer(seat=seat)


@pytest.fixture(scope="module")
def server():
    import web_kit

    live = web_kit.LiveServer(web_kit.CHEAP_ARGON2).start()
    yield live
    live.stop()


def _run(capsys, *argv):
    from service import cli

    try:
        cli.main(list(argv))
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    return code, capsys.readouterr()


def test_speculation_chat_show_and_say(server, capsys, monkeypatch, tmp_path):
    import web_kit

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("SPECULATION_TOKEN", raising=False)
    game_id = web_kit.api(server, "POST", "/v1/games", json={"type": "big-shot", "seats": [{}, {}]}).json["game_id"]
    tokens = [web_kit.api(server, "POST", f"/v1/games/{game_id}/seats/{s}", json={"name": f"p{s}"}).json["token"]
              for s in (0, 1)]
    code, out = _run(capsys, "chat", "say", game_id, "<script>x</script>", "--api", server.url, "--token", tokens[0])
    assert code == 0 and out.out.strip() == "[players] p0 (guest): <script>x</script>"
    code, out = _run(capsys, "chat", "say", game_id, "--preset", "thanks", "--api", server.url, "--token", tokens[1])
    assert code == 0 and "p1 (guest): Thanks!" in out.out
    code, out = _run(capsys, "chat", "show", game_id, "--api", server.url, "--token", tokens[1])
    assert code == 0 and out.out.splitlines() == ["  [players] p0 (guest): <script>x</script>",
                                                  "  [players] p1 (guest): Thanks!"]
    code, out = _run(capsys, "chat", "show", game_id, "--api", server.url)     # a spectator: nothing yet
    assert code == 0 and out.out.strip() == "(nothing said yet)"
    code, out = _run(capsys, "chat", "show", game_id, "--api", server.url, "--json")
    assert code == 0 and json.loads(out.out)["readable"] == ["spectators"]
    code, out = _run(capsys, "chat", "say", game_id, "bell\x07", "--api", server.url, "--token", tokens[0])
    assert code == 3 and "invalid_text" in out.err
    code, out = _run(capsys, "chat", "say", game_id, "hi", "--channel", "spectators", "--api", server.url,
                     "--token", tokens[0])
    assert code == 3 and "chat_forbidden" in out.err
    code, out = _run(capsys, "chat", "say", game_id, "--api", server.url, "--token", tokens[0])
    assert code == 2 and "give TEXT or --preset" in out.err


def test_the_operator_removes_a_message_with_the_cli(real_redis, redis_server, capsys, monkeypatch):
    service, _ = make_service(real_redis)
    game_id = service.create("big-shot", {}, [{}, {}]).game_id
    tokens = [service.claim(game_id, s, f"p{s}")[1] for s in (0, 1)]
    assert tokens
    from projections.chat import Viewer

    service.chat.post(game_id, Viewer(seat=0), "players", "something awful")
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    code, out = _run(capsys, "chat", "remove", game_id, "1", "--reason", "abuse")
    assert code == 0, out.err
    assert json.loads(out.out)["removal"]["reason"] == "abuse"
    items = service.chat.read(game_id, Viewer(seat=1))["items"]
    assert [(i["kind"], i["text"], i["removed"]) for i in items] == [("message", None, True), ("removal", None, False)]
    code, out = _run(capsys, "chat", "remove", game_id, "7")
    assert code == 1 and "no chat message 7" in out.err


def test_view_prints_the_chat_under_the_table(api, capsys):
    from ops.drills import _kit

    game_id, tokens = _kit.create_open_game(api.service, "big-shot")
    api.call("POST", f"/v1/games/{game_id}/chat", tokens[0], json={"channel": "players", "preset": "good-luck"})
    http = api.app.test_client()

    def get(_api, path, headers=None):
        return http.get(path, headers=headers or {}).json

    terminal.main_view(get, "http://service", game_id, tokens[1], False, False)
    assert "  [players] p0 (guest): Good luck!" in capsys.readouterr().out
    terminal.main_view(get, "http://service", game_id, None, False, False)     # a spectator, while it runs
    assert "Good luck!" not in capsys.readouterr().out
    _kit.play_out(api.service, api.jobs, game_id, random.Random(2))
    terminal.main_view(get, "http://service", game_id, None, False, True)      # --follow stops at the end
    assert "  [players] p0 (guest): Good luck!" in capsys.readouterr().out
