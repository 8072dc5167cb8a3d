"""Leaving in the terminal: `L` at the move prompt asks first (anything but yes stays), then
the seat is left; in process the bots play the game to its end while the terminal watches,
and on a server (`play --api`) the leave's signed receipt is kept and the command returns."""

from __future__ import annotations

import json
import random

import pytest

from projections.registry import get_game
from service import terminal
from service.app import create_app
from service.bootstrap import Backend
from tests.gamekit import seed_that_plays
from workers.memory_jobs import MemoryJobs

from test_accounts import CHEAP, Api


def _scripted(answers: list[str]):
    """A `read` that answers the prompts in order (a prompt past them fails the test)."""
    asked = []

    def read(prompt: str) -> str:
        asked.append(prompt)
        assert answers, f"asked once more than expected: {prompt!r}"
        return answers.pop(0)

    read.asked = asked
    return read


def test_leaving_in_process_asks_first_then_the_bots_play_to_the_end(capsys):
    seed = seed_that_plays(get_game("big-shot"), {}, 2, started_at=3)
    read = _scripted(["L", "no", "l", "yes"])
    summary = terminal.play("big-shot", 2, "random", "tess", read=read, seed=seed)
    out = capsys.readouterr().out
    assert "   L. leave the game (a heuristic bot plays your seat)" in out
    assert out.count("Leave this game? A heuristic bot takes your seat over and plays it to the end; "
                     "you cannot come back to it.") == 2
    assert "  you stay" in out
    assert "you left: a heuristic bot plays seat 1 from now on; watching the game to its end" in out
    assert "tess leaves the game: a heuristic bot plays seat 1 from now on." in out   # people count seats from 1
    assert summary["status"] == "scored" and summary["seats"][0]["left"] is True
    assert "verify: OK" in out
    assert [p.split(" ")[0] for p in read.asked] == ["Choose", "Type", "Choose", "Type"]   # nothing after the leave


class _Http:
    """The command line's client shape (get -> JSON, post -> (status, JSON)) over the app."""

    def __init__(self, app, token):
        self.http, self.headers = app.test_client(), {"Authorization": f"Bearer {token}"}

    def get(self, path, params=None):
        return self.http.get(path, headers=self.headers, query_string=params or {}).json

    def post(self, path, body, headers=None):
        answer = self.http.post(path, json=body, headers={**self.headers, **(headers or {})})
        return answer.status_code, answer.json


@pytest.fixture
def api(fake_redis):
    jobs = MemoryJobs()
    app = create_app({"RATE_LIMIT": None, **CHEAP, "SIGNUP_LIMIT": "1000/60", "SIGNIN_LIMIT": "1000/60"},
                     backend=Backend(fake_redis, fake_redis, False), jobs=jobs)
    return Api(app, jobs)


def test_leaving_on_a_server_keeps_the_receipt_and_the_bot_plays_on(api, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    ann, _ = api.account("ann")
    made = api.http.post("/v1/games", json={"type": "big-shot", "seats": [{}, {}], "leave_level": "random"})
    game_id = made.json["game_id"]
    assert api.claim(game_id, 0, ann).status_code == 201
    bob = api.http.post(f"/v1/games/{game_id}/seats/1", json={"name": "bob"}).json["token"]
    rng = random.Random(1)
    for n in range(50):   # bob moves until ann is to act (the terminal waits for her turn)
        game = api.http.get(f"/v1/games/{game_id}").json
        if 0 in game["to_act"]:
            break
        view = api.call("GET", f"/v1/games/{game_id}/view", bob).json
        action = {k: v["min"] if isinstance(v, dict) else v for k, v in rng.choice(view["legal_actions"]).items()}
        assert api.call("POST", f"/v1/games/{game_id}/actions", bob, json={"action": action},
                        headers={"Idempotency-Key": f"bob-{n}"}).status_code == 200
    summary = terminal.play_online(_Http(api.app, ann), game_id, read=_scripted(["L", "yes"]))
    out = capsys.readouterr().out
    assert f"you left game {game_id}: a random bot plays seat 0 to the end" in out
    assert summary["seats"][0]["left"] is True and summary["status"] == "active"
    kept = [json.loads(line) for line in (tmp_path / "speculation" / "receipts.ndjson").read_text().splitlines()]
    assert kept[-1]["game"] == game_id and kept[-1]["version"] == api.service.load(game_id).version
    api.jobs.drain(api.service)   # the random bot plays ann's seat now
    assert api.service.load(game_id).to_act() != [0]


@pytest.fixture(scope="module")
def server():
    import web_kit

    live = web_kit.LiveServer(web_kit.CHEAP_ARGON2).start()
    yield live
    live.stop()


def test_speculation_leave_asks_first_then_leaves(server, capsys, monkeypatch, tmp_path):
    import io

    import web_kit
    from service import cli

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert web_kit.api(server, "POST", "/v1/accounts", json={"username": "cid", "password": "a passphrase 44"}).status_code == 201
    session = web_kit.api(server, "POST", "/v1/sessions", json={"username": "cid", "password": "a passphrase 44"}).json["token"]
    token = web_kit.api(server, "POST", "/v1/account/tokens", session,
                        json={"label": "cli", "scopes": ["play", "read"]}).json["token"]
    game_id = web_kit.api(server, "POST", "/v1/games", json={"type": "big-shot", "seats": [{}, {}]}).json["game_id"]
    assert web_kit.api(server, "POST", f"/v1/games/{game_id}/seats/0", token, json={}).status_code == 201

    def run(answer, *extra):
        monkeypatch.setattr("sys.stdin", io.StringIO(answer))
        try:
            cli.main(["leave", game_id, "--api", server.url, "--token", token, *extra])
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 1
        return code, capsys.readouterr()

    code, out = run("no\n")
    assert code == 0 and "Leave this game? A heuristic bot" in out.out and "you stay" in out.out
    assert not server.service.load(game_id).seats[0].left
    code, out = run("yes\n")
    assert code == 0 and f"you left game {game_id}: a heuristic bot plays seat 0" in out.out
    assert server.service.load(game_id).seats[0].left
    code, out = run("", "--yes", "--json")   # a retry answers the original leave
    assert code == 0 and json.loads(out.out)["seat"] == 0
    kept = (tmp_path / "speculation" / "receipts.ndjson").read_text().splitlines()
    assert len({line for line in kept}) == 1 and json.loads(kept[0])["game"] == game_id
