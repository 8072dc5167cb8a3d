"""The command line as an account, against a live server (embedded store and bot worker on a
free port): `login` (password on stdin, the token kept 0600 and never printed, the sign-in's
session signed out), `whoami`, `play --api` and `play --game` against bots, `my-games`,
SPECULATION_TOKEN over the stored token, the sign-in errors, `logout` revoking the token."""

from __future__ import annotations

import io
import json
import os
import re
import stat
import sys

import httpx
import pytest

from ops.live_server import LiveServer
from projections.registry import get_game
from service import cli
from tests.gamekit import seed_that_plays

PASSWORD = "correct horse battery staple"
CONFIG = {"ARGON2_TIME_COST": 1, "ARGON2_MEMORY_KIB": 1024, "SIGNUP_LIMIT": "1000/60", "SIGNIN_LIMIT": "1000/60",
          "SIGNIN_LOCK_AFTER": 3, "ALLOW_SEED": True}
GAME, PLAYERS, OPTIONS = "big-shot", 2, {}


@pytest.fixture(scope="module")
def server():
    live = LiveServer(CONFIG).start()
    yield live
    live.stop()


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SPECULATION_TOKEN", raising=False)
    monkeypatch.delenv("SPECULATION_API", raising=False)
    return tmp_path


@pytest.fixture
def moves(monkeypatch):
    """The player at the keyboard: the first move offered, a template at its minimum."""
    asked = []

    def answer(prompt=""):
        asked.append(prompt)
        if len(asked) > 500:
            raise EOFError
        return "1" if prompt.startswith("Choose") else ""

    monkeypatch.setattr("builtins.input", answer)
    return asked


def run(capsys, monkeypatch, *args, stdin: str = "") -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    try:
        cli.main(list(args))
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def sign_up(server, username: str) -> None:
    response = httpx.post(server.url + "/v1/accounts", json={"username": username, "password": PASSWORD})
    assert response.status_code == 201, response.text


def credentials(home) -> dict:
    return json.loads((home / "config" / "speculation" / "credentials.json").read_text())


def api_status(server, token: str, path: str = "/v1/account") -> int:
    return httpx.get(server.url + path, headers={"Authorization": f"Bearer {token}"}).status_code


def test_login_play_my_games_logout(capsys, monkeypatch, server, home, moves):
    sign_up(server, "tessa")
    code, out, err = run(capsys, monkeypatch, "login", "--api", server.url, "--username", "tessa",
                         stdin="not the password\n")
    assert code == cli.EXIT_FAILED and "wrong username or password" in err
    assert not (home / "config" / "speculation" / "credentials.json").exists()

    old_umask = os.umask(0)   # even so: the file is made 0600, its folder 0700
    try:
        code, out, err = run(capsys, monkeypatch, "login", "--api", server.url + "/", stdin=f"tessa\n{PASSWORD}\n")
    finally:
        os.umask(old_umask)
    assert code == 0, err
    assert "signed in" in out and "tessa" in out
    path = home / "config" / "speculation" / "credentials.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    entry = credentials(home)["credentials"][server.url]
    assert entry["api"] == server.url and entry["username"] == "tessa"
    token = entry["token"]
    assert token.startswith("spa_") and token not in out + err
    assert api_status(server, token) == 200
    # the sign-in's session was signed out: the personal token is the account's only credential
    auth = {"Authorization": f"Bearer {token}"}
    live = httpx.get(server.url + "/v1/account/tokens", headers=auth).json()["tokens"]
    assert [(t["id"], t["kind"]) for t in live] == [(entry["token_id"], "personal")]
    assert live[0]["label"].startswith("speculation CLI on ")
    assert sorted(live[0]["scopes"]) == ["account", "play", "read"]

    code, out, err = run(capsys, monkeypatch, "whoami", "--api", server.url)
    assert code == 0 and "tessa" in out and entry["token_id"] in out and token not in out

    # signing in again replaces the token: the old one is revoked
    code, out, err = run(capsys, monkeypatch, "login", "--api", server.url, "--username", "tessa",
                         stdin=PASSWORD + "\n")
    assert code == 0, err
    assert api_status(server, token) == 401
    entry = credentials(home)["credentials"][server.url]
    token = entry["token"]
    assert api_status(server, token) == 200 and stat.S_IMODE(path.stat().st_mode) == 0o600

    seed = seed_that_plays(get_game(GAME), OPTIONS, PLAYERS, started_at=3)
    code, out, err = run(capsys, monkeypatch, "play", GAME, "--api", server.url, "--players", str(PLAYERS),
                         "--level", "random", "--options", json.dumps(OPTIONS), "--seed", seed)
    assert code == 0, out[-2000:] + err
    assert any(p.startswith("Choose") for p in moves), "a move was asked"
    assert "Your move:" in out and "verify: OK" in out and re.search(r"wins|share the win", out)
    game_id = re.search(r"game ([0-9a-f]{16})", out).group(1)

    code, out, err = run(capsys, monkeypatch, "my-games", "--api", server.url)
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith(game_id))
    assert GAME in row and "scored" in row and "you" in row and "random bot" in row
    code, out, err = run(capsys, monkeypatch, "my-games", "--api", server.url, "--status", "finished", "--json")
    listing = json.loads(out)
    assert code == 0 and [g["game_id"] for g in listing["games"]] == [game_id]
    assert listing["games"][0]["my_seats"] == [0]
    code, out, err = run(capsys, monkeypatch, "my-games", "--api", server.url, "--status", "active", "--my-turn")
    assert code == 0 and game_id not in out and "0 game(s)" in out

    # SPECULATION_TOKEN wins over the stored token
    monkeypatch.setenv("SPECULATION_TOKEN", "spa_" + "x" * 40)
    code, out, err = run(capsys, monkeypatch, "whoami", "--api", server.url)
    assert code == cli.EXIT_API_ERROR and "401" in err and "SPECULATION_TOKEN" in err
    monkeypatch.delenv("SPECULATION_TOKEN")

    code, out, err = run(capsys, monkeypatch, "logout", "--api", server.url)
    assert code == 0 and "revoked" in out and token not in out
    assert api_status(server, token) == 401
    assert server.url not in credentials(home)["credentials"]
    code, out, err = run(capsys, monkeypatch, "whoami", "--api", server.url)
    assert code == cli.EXIT_FAILED and "not signed in" in err and "speculation login" in err
    code, out, err = run(capsys, monkeypatch, "logout", "--api", server.url)
    assert code == 0 and "nothing to do" in out


def test_play_an_existing_game_with_speculation_api_and_a_token(capsys, monkeypatch, server, home, moves):
    sign_up(server, "oskar")
    session = httpx.post(server.url + "/v1/sessions", json={"username": "oskar", "password": PASSWORD}).json()["token"]
    auth = {"Authorization": f"Bearer {session}"}
    token = httpx.post(server.url + "/v1/account/tokens", headers=auth,
                       json={"label": "script", "scopes": ["play", "read"]}).json()["token"]
    seed = seed_that_plays(get_game(GAME), OPTIONS, PLAYERS, started_at=3)
    game = httpx.post(server.url + "/v1/games", json={"type": GAME, "options": OPTIONS, "seed": seed,
                                                      "seats": [{}, {"bot": "random"}]}).json()["game_id"]
    claimed = httpx.post(f"{server.url}/v1/games/{game}/seats/0", json={}, headers={"Authorization": f"Bearer {token}"})
    assert claimed.status_code == 201, claimed.text

    monkeypatch.setenv("SPECULATION_API", server.url)
    monkeypatch.setenv("SPECULATION_TOKEN", token)   # no login: the token of the environment
    code, out, err = run(capsys, monkeypatch, "my-games", "--my-turn")
    assert code == 0, err
    assert game in out and "YOUR TURN" in out
    code, out, err = run(capsys, monkeypatch, "play", "--game", game)
    assert code == 0, out[-2000:] + err
    assert "oskar" in out and "verify: OK" in out
    code, out, err = run(capsys, monkeypatch, "my-games", "--status", "finished")
    assert code == 0 and game in out and re.search(r"you (won|shared the win|ranked 2 of 2)", out)

    other = httpx.post(server.url + "/v1/games", json={"type": GAME, "seats": [{}, {}]}).json()["game_id"]
    code, out, err = run(capsys, monkeypatch, "play", "--game", other)
    assert code == cli.EXIT_FAILED and "holds no seat" in err
    code, out, err = run(capsys, monkeypatch, "play", GAME, "--game", other)
    assert code == cli.EXIT_USAGE and "not both" in err
    monkeypatch.delenv("SPECULATION_API")
    code, out, err = run(capsys, monkeypatch, "play", "--game", other)
    assert code == cli.EXIT_USAGE and "--api" in err


def test_sign_in_errors(capsys, monkeypatch, server, home):
    sign_up(server, "lockedout")
    for _ in range(3):
        code, out, err = run(capsys, monkeypatch, "login", "--api", server.url, "--username", "lockedout",
                             stdin="wrong password\n")
        assert code == cli.EXIT_FAILED and "wrong username or password" in err
    code, out, err = run(capsys, monkeypatch, "login", "--api", server.url, "--username", "lockedout",
                         stdin=PASSWORD + "\n")
    assert code == cli.EXIT_FAILED and "locked" in err and re.search(r"try again in 1[45] minutes", err)
    code, out, err = run(capsys, monkeypatch, "login", "--api", server.url, "--username", "lockedout", stdin="")
    assert code == cli.EXIT_USAGE and "nothing on stdin" in err
    code, out, err = run(capsys, monkeypatch, "whoami", "--api", server.url)
    assert code == cli.EXIT_FAILED and "not signed in" in err
