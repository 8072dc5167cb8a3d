"""The quick start, end to end: `speculation serve` (what `make serve` runs: the real stack,
an embedded Redis with AOF, gunicorn, worker processes), then the README's curl script plays
a whole game against bots run by the worker processes."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from ops.drills.redis_server import free_port
from projections import big_shot
from projections.registry import game_types, get_game

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The table the README's curl script plays each game at: three players (or the nearest count
# the game allows), big-shot's smallest table (two) to keep it short.
PLAYERS = {big_shot.NAME: 2}


SHORT_OPTIONS = {"speculation": {"deals": 2}, "speculate": {"rounds": 1}}


def _players(name: str) -> int:
    game = get_game(name)
    return PLAYERS.get(name, min(max(3, game.MIN_PLAYERS), game.MAX_PLAYERS))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RQ_REDIS_URL")}
    env["SPECULATION_REDIS_PORT"] = str(free_port())
    data = tmp_path_factory.mktemp("var")
    proc = subprocess.Popen([sys.executable, "-m", "service.cli", "serve", "--port", str(port), "--data", str(data)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if json.load(urllib.request.urlopen(url + "/readyz", timeout=2))["ready"]:
                break
        except (OSError, ValueError):
            time.sleep(0.3)
    yield url
    proc.send_signal(signal.SIGINT)
    proc.wait(30)


# The script is the same for every game: the suite runs it on the shortest two (a card game and
# a board game); FULL_MATRIX=1 (docs/testing.md) on every game.
CURL_GAMES = [t.name for t in game_types()] if os.environ.get("FULL_MATRIX") == "1" else ["big-shot", "speculation"]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
@pytest.mark.parametrize("game_type, players", [(name, _players(name)) for name in CURL_GAMES])
def test_curl_script_plays_a_whole_game_on_the_embedded_service(server, game_type, players):
    # the random bots and the shortest sessions: the script is what is tested, and the
    # heuristics' turns and a full session's length only add time
    out = subprocess.run(["bash", "docs/examples/curl_game.sh", game_type, str(players), "random",
                          json.dumps(SHORT_OPTIONS.get(game_type, {}))], cwd=ROOT,
                         capture_output=True,
                         text=True, timeout=300, env={**os.environ, "API": server})
    assert out.returncode == 0, out.stderr
    assert "status: scored" in out.stdout and '"ok": true' in out.stdout.replace('"ok":true', '"ok": true'), out.stdout


def test_every_seat_a_bot_is_played_to_scored_by_the_embedded_worker(server):
    import json

    request = urllib.request.Request(server + "/v1/games", method="POST", headers={"Content-Type": "application/json"},
                                     data=json.dumps({"type": "speculation", "options": {"deals": 2},   # a short session
                                                     "seats": [{"bot": "heuristic"}] * 3}).encode())
    game = json.load(urllib.request.urlopen(request, timeout=10))
    deadline = time.time() + 120
    while time.time() < deadline:
        summary = json.load(urllib.request.urlopen(f"{server}/v1/games/{game['game_id']}", timeout=10))
        if summary["status"] == "scored":
            break
        time.sleep(0.2)
    assert summary["status"] == "scored" and summary["seed"]
    report = json.load(urllib.request.urlopen(f"{server}/v1/games/{game['game_id']}/verify", timeout=10))
    assert report["ok"]


def test_cli_lists_replays_exports_and_verifies(server, tmp_path):
    import json

    request = urllib.request.Request(server + "/v1/games", method="POST", headers={"Content-Type": "application/json"},
                                     data=json.dumps({"type": "big-shot", "seats": [{"bot": "random"}] * 2}).encode())
    game_id = json.load(urllib.request.urlopen(request, timeout=10))["game_id"]
    deadline = time.time() + 60
    while json.load(urllib.request.urlopen(f"{server}/v1/games/{game_id}"))["status"] != "scored":
        assert time.time() < deadline
        time.sleep(0.2)

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "service.cli", *args, *(["--api", server] if args[0] != "verify" or
                               not args[1].endswith(".ndjson") else [])], cwd=ROOT, capture_output=True, text=True,
                              timeout=60)

    listing = cli("games", "--type", "big-shot")
    assert game_id in listing.stdout
    replay = cli("replay", game_id, "--at", "3", "--json")
    assert json.loads(replay.stdout)["version"] == 3
    export = cli("export", game_id)
    path = tmp_path / "game.ndjson"
    path.write_text(export.stdout)
    verified = cli("verify", str(path))
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"]
    last = json.loads(export.stdout.splitlines()[-1])
    version = json.loads(last["body"])["v"]
    assert cli("verify", str(path), "--receipt", f"{version}:{last['hash']}").returncode == 0
    assert cli("verify", str(path), "--receipt", f"{version}:{'1' * 64}").returncode == 1
    assert json.loads(cli("verify", game_id).stdout)["ok"]
    lines = export.stdout.splitlines()
    lines[5] = lines[5].replace('\\"at\\":', '\\"at\\":1', 1)
    path.write_text("\n".join(lines) + "\n")
    broken = cli("verify", str(path))
    assert broken.returncode == 1 and json.loads(broken.stdout)["first_divergence"]["version"] == 5
