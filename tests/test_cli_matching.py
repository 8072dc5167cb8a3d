"""Finding a game on the command line, against a live server (embedded store and bot worker on
a free port), as accounts signed in with `speculation login` each in its own XDG_CONFIG_HOME:
`challenge` (seats reserved, who it waits for), `invitations` (to you, from you), `accept`,
`decline` (the challenger waiting with --play is told and exits 1), `cancel`; a challenge
played to the end by two people (`challenge --play` in another process, `accept --play` here),
then `rematch` by both seats (one new game); `seek` completed with a bot (--json, and --play
to the end, then a rematch that starts at once), Ctrl-C cancelling a seek; `preferences
--challenges none` refusing challenges."""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from ops.live_server import LiveServer
from service import cli

PASSWORD = "correct horse battery staple"
CONFIG = {"ARGON2_TIME_COST": 1, "ARGON2_MEMORY_KIB": 1024, "SIGNUP_LIMIT": "1000/60", "SIGNIN_LIMIT": "1000/60",
          "CREATE_LIMIT": "1000/60", "CHALLENGE_LIMIT": "1000/60", "BOT_GAMES_PER_ADDRESS": 0}
GAME = "big-shot"
NAMES = ("alice", "bob", "carol", "dave")
ROOT = Path(__file__).resolve().parent.parent
GAME_ID = re.compile(r"game ([0-9a-f]{16})")


@pytest.fixture(scope="module")
def server():
    live = LiveServer(CONFIG).start()
    yield live
    live.stop()


@pytest.fixture(scope="module")
def homes(server, tmp_path_factory):
    """Each account signed up and signed in with `speculation login`, in its own config folder."""
    base = tmp_path_factory.mktemp("homes")
    out = {}
    for name in NAMES:
        response = httpx.post(server.url + "/v1/accounts", json={"username": name, "password": PASSWORD})
        assert response.status_code == 201, response.text
        home = base / name
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("XDG_CONFIG_HOME", str(home))
            patch.setattr(sys, "stdin", io.StringIO(f"{name}\n{PASSWORD}\n"))
            with contextlib.redirect_stdout(io.StringIO()):
                cli.main(["login", "--api", server.url])
        out[name] = home
    return out


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ("SPECULATION_TOKEN", "SPECULATION_API"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def moves(monkeypatch):
    """The player at the keyboard: the first move offered, a template at its minimum."""
    asked = []

    def answer(prompt=""):
        asked.append(prompt)
        if len(asked) > 2000:
            raise EOFError
        return "1" if prompt.startswith("Choose") else ""

    monkeypatch.setattr("builtins.input", answer)
    return asked


def run(capsys, monkeypatch, homes, who: str, *args, stdin: str = "") -> tuple[int, str, str]:
    """`speculation ARGS --api URL` in this process, as `who` (its config folder's token)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(homes[who]))
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    try:
        cli.main(list(args))
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


class Background:
    """`speculation ARGS` in another process, as `who`; its output read line by line."""

    def __init__(self, homes, who: str, *args, stdin: str = ""):
        env = {**os.environ, "XDG_CONFIG_HOME": str(homes[who]), "PYTHONUNBUFFERED": "1"}
        env.pop("SPECULATION_TOKEN", None)
        self.process = subprocess.Popen([sys.executable, "-m", "service.cli", *args], cwd=ROOT, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        self.lines: queue.Queue = queue.Queue()
        self.out: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.stdin = threading.Thread(target=self._write, args=(stdin,), daemon=True)
        self.stdin.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)

    def _write(self, text: str) -> None:
        try:
            self.process.stdin.write(text)
            self.process.stdin.close()
        except (BrokenPipeError, ValueError, OSError):
            pass

    def wait_for(self, pattern: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                if self.process.poll() is not None and self.lines.empty():
                    break
                continue
            self.out.append(line)
            if re.search(pattern, line):
                return line
        ended = self.process.stderr.read() if self.process.poll() is not None else ""
        raise AssertionError(f"no {pattern!r} in {''.join(self.out)}{ended}")

    def finish(self, timeout: float = 60.0) -> tuple[int, str, str]:
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
        time.sleep(0.05)
        while not self.lines.empty():
            self.out.append(self.lines.get())
        return code, "".join(self.out), self.process.stderr.read()


def game_of(server, game_id: str) -> dict:
    return httpx.get(f"{server.url}/v1/games/{game_id}").json()


def nothing_open(out: str, game: str) -> bool:
    """`speculation invitations` answered a listing without `game`: the module's other tests,
    in any order, may have left challenges to or from the account open (seen both ways)."""
    return game not in out and ("no open invitations" in out or re.search(r"\n\d+ to you, \d+ from you", out) is not None)


def test_challenge_invitations_accept_decline_cancel(capsys, monkeypatch, server, homes):
    api = ("--api", server.url)
    code, out, err = run(capsys, monkeypatch, homes, "alice", "challenge", "bob", "--type", GAME, "--bots", "1",
                         "--level", "random", *api)
    assert code == 0, err
    game = GAME_ID.search(out).group(1)
    assert "open" in out and "seats: you, bob (invited), random bot" in out and "waiting for: bob" in out
    assert "expires" in out and f"speculation cancel {game}" in out

    code, out, err = run(capsys, monkeypatch, homes, "bob", "invitations", *api)
    assert code == 0, err
    row = next(line for line in out.splitlines() if game in line)
    assert GAME in row and "challenge" in row and "alice" in row and "bob (invited)" in row
    assert "to you" in out   # this module's accounts may hold invitations of its other tests too
    code, out, err = run(capsys, monkeypatch, homes, "alice", "invitations", "--json", *api)
    listing = json.loads(out)
    mine = [g for g in listing["outgoing"] if g["game_id"] == game]
    assert code == 0 and game not in [g["game_id"] for g in listing["incoming"]] and len(mine) == 1
    assert mine[0]["kind"] == "challenge" and mine[0]["from"] == "alice"
    assert mine[0]["platform_options"]["expires_at"] > time.time() * 1000

    code, out, err = run(capsys, monkeypatch, homes, "carol", "accept", game, *api)
    assert code == cli.EXIT_API_ERROR and "403 not_invited" in err
    code, out, err = run(capsys, monkeypatch, homes, "bob", "accept", game, *api)
    assert code == 0, err
    assert f"accepted: game {game}" in out and "active" in out and "seats: alice, you, random bot" in out
    assert game_of(server, game)["status"] == "active"
    code, out, err = run(capsys, monkeypatch, homes, "bob", "invitations", *api)
    assert code == 0 and nothing_open(out, game)

    # declined while the challenger waits on its stream: told, exit 1
    waiting = Background(homes, "alice", "challenge", "bob", "--type", GAME, "--play", *api)
    try:
        line = waiting.wait_for(r"challenge sent")
        second = GAME_ID.search(line).group(1)
        waiting.wait_for(r"waiting for bob to accept")
        code, out, err = run(capsys, monkeypatch, homes, "bob", "decline", second, *api)
        assert code == 0, err
        assert f"declined alice's challenge: game {second}" in out and "expired" in out
        code, out, err = waiting.finish(30)
    finally:
        waiting.process.kill()
    assert code == cli.EXIT_FAILED, out + err
    assert f"bob declined the challenge: game {second} expired" in err
    assert game_of(server, second)["status"] == "expired"
    code, out, err = run(capsys, monkeypatch, homes, "alice", "invitations", *api)
    assert code == 0 and nothing_open(out, second)
    code, out, err = run(capsys, monkeypatch, homes, "alice", "decline", second, *api)
    assert code == cli.EXIT_API_ERROR and "409 not_open" in err

    # cancelled by the challenger
    code, out, err = run(capsys, monkeypatch, homes, "alice", "challenge", "bob", "carol", "--type", GAME, "--open",
                         "1", "--expires", "60", *api)
    assert code == 0, err
    third = GAME_ID.search(out).group(1)
    assert "waiting for: bob, carol, 1 open seat" in out
    code, out, err = run(capsys, monkeypatch, homes, "carol", "invitations", *api)
    assert third in out
    code, out, err = run(capsys, monkeypatch, homes, "bob", "cancel", third, *api)
    assert code == cli.EXIT_API_ERROR and "403 not_yours" in err
    code, out, err = run(capsys, monkeypatch, homes, "alice", "cancel", third, *api)
    assert code == 0 and f"cancelled your challenge: game {third}" in out
    code, out, err = run(capsys, monkeypatch, homes, "carol", "invitations", *api)
    assert code == 0 and nothing_open(out, third)

    # usage errors
    code, out, err = run(capsys, monkeypatch, homes, "alice", "challenge", "bob", "--type", GAME, "--rated", *api)
    assert code == cli.EXIT_USAGE and "--clock" in err
    code, out, err = run(capsys, monkeypatch, homes, "alice", "challenge", "bob", "--type", GAME, "--play", "--json",
                         *api)
    assert code == cli.EXIT_USAGE


def test_a_challenge_played_by_two_then_a_rematch(capsys, monkeypatch, server, homes, moves):
    api = ("--api", server.url)
    # the challenger's keyboard: "1" chooses the first move; an empty line takes a number's minimum
    challenger = Background(homes, "dave", "challenge", "bob", "--type", GAME, "--play", *api, stdin="1\n\n" * 3000)
    try:
        game = GAME_ID.search(challenger.wait_for(r"challenge sent")).group(1)
        challenger.wait_for(r"waiting for bob to accept")
        code, out, err = run(capsys, monkeypatch, homes, "bob", "accept", game, "--play", *api)
        assert code == 0, out[-2000:] + err
        assert "verify: OK" in out
        code, out, err = challenger.finish(60)
    finally:
        challenger.process.kill()
    assert code == 0, out[-2000:] + err
    assert "bob accepted" in out and "verify: OK" in out
    assert game_of(server, game)["status"] == "scored"

    code, out, err = run(capsys, monkeypatch, homes, "bob", "rematch", game, *api)
    assert code == 0, err
    new = GAME_ID.search(out).group(1)
    assert out.startswith(f"rematch of {game}: game {new} ({GAME}), open")
    assert "seats: you, dave (invited)" in out and "waiting for: dave" in out   # the seats rotated by one
    code, out, err = run(capsys, monkeypatch, homes, "dave", "invitations", *api)
    row = next(line for line in out.splitlines() if new in line)
    assert "rematch" in row and "bob" in row
    # the other seat asks too: the same new game, its seat taken, the game under way
    code, out, err = run(capsys, monkeypatch, homes, "dave", "rematch", game, *api)
    assert code == 0, err
    assert f"rematch of {game}: game {new} ({GAME}), active" in out and "waiting for: nobody: it has started" in out


def test_seek_with_a_bot_play_and_rematch(capsys, monkeypatch, server, homes, moves):
    api = ("--api", server.url)
    code, out, err = run(capsys, monkeypatch, homes, "carol", "seek", GAME, "--players", "2", "--bots-after", "0",
                         "--json", *api)
    assert code == 0, err
    found = json.loads(out)
    assert found["seek"]["status"] == "matched" and found["game"]["game_id"] == found["seek"]["game_id"]
    assert sorted(s["kind"] for s in found["game"]["seats"]) == ["bot", "player"]
    assert "waiting" in err or "seeking" in err   # the words go to stderr with --json

    code, out, err = run(capsys, monkeypatch, homes, "carol", "seek", GAME, "--players", "2", "--bots-after", "0",
                         "--play", *api)
    assert code == 0, out[-2000:] + err
    assert "seeking a game of big-shot for 2 players" in out
    game = re.search(r"found: game ([0-9a-f]{16})", out).group(1)
    assert "heuristic bot" in out and "verify: OK" in out
    assert game_of(server, game)["status"] == "scored"

    code, out, err = run(capsys, monkeypatch, homes, "carol", "rematch", game, *api)
    assert code == 0, err
    new = GAME_ID.search(out).group(1)
    assert new != game and f"rematch of {game}: game {new} ({GAME}), active" in out
    assert re.search(r"seats: (you, heuristic bot|heuristic bot, you)", out)
    assert f"speculation play --game {new}" in out
    code, out, err = run(capsys, monkeypatch, homes, "alice", "rematch", game, *api)
    assert code == cli.EXIT_API_ERROR and "403" in err   # alice held no seat of it


def test_ctrl_c_cancels_a_seek(capsys, monkeypatch, server, homes):
    seeker = Background(homes, "alice", "seek", "speculation", "--players", "5", "--api", server.url)
    try:
        line = seeker.wait_for(r"seeking a game")
        seek_id = re.search(r"seek ([0-9a-f]{16})", line).group(1)
        seeker.wait_for(r"waiting\.\.\. \(Ctrl-C cancels the seek\)")
        token = json.loads((homes["alice"] / "speculation" / "credentials.json").read_text())["credentials"][server.url]
        auth = {"Authorization": f"Bearer {token['token']}"}
        listed = httpx.get(server.url + "/v1/seeks", headers=auth).json()["seeks"]
        assert [(s["seek_id"], s["status"]) for s in listed] == [(seek_id, "open")]
        seeker.process.send_signal(signal.SIGINT)
        code, out, err = seeker.finish(20)
    finally:
        seeker.process.kill()
    assert code == cli.EXIT_FAILED and f"seek {seek_id} cancelled" in err, out + err
    assert httpx.get(server.url + "/v1/seeks", headers=auth).json()["seeks"] == []


def test_preferences_refuse_challenges(capsys, monkeypatch, server, homes):
    api = ("--api", server.url)
    code, out, err = run(capsys, monkeypatch, homes, "carol", "preferences", *api)
    assert code == 0 and out.startswith("challenges: anyone")
    code, out, err = run(capsys, monkeypatch, homes, "carol", "preferences", "--challenges", "none", *api)
    assert code == 0 and out.startswith("challenges: none") and "refused" in out
    code, out, err = run(capsys, monkeypatch, homes, "alice", "challenge", "bob", "carol", "--type", GAME, *api)
    assert code == cli.EXIT_API_ERROR
    assert "403 challenges_refused" in err and "carol does not take challenges" in err and "not sent" in err
    code, out, err = run(capsys, monkeypatch, homes, "carol", "preferences", "--json", *api)
    assert code == 0 and json.loads(out) == {"challenges": "none"}
    code, out, err = run(capsys, monkeypatch, homes, "carol", "preferences", "--challenges", "anyone", *api)
    assert code == 0 and out.startswith("challenges: anyone")
    code, out, err = run(capsys, monkeypatch, homes, "alice", "challenge", "carol", "--type", GAME, *api)
    assert code == 0, err
    assert "waiting for: carol" in out
