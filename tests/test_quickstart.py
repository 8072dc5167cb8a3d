"""The quick start, end to end: `speculation serve` on the embedded store (no Redis), then
the README's curl script plays a whole game against bots run by the embedded worker."""

import os
import shutil
import subprocess
import sys
import time
import urllib.request

import pytest

from ops.redis_process import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def server():
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RQ_REDIS_URL")}
    proc = subprocess.Popen([sys.executable, "-m", "service.cli", "serve", "--port", str(port)], cwd=ROOT,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url + "/v1/game-types", timeout=1)
            break
        except OSError:
            time.sleep(0.2)
    yield url
    proc.terminate()
    proc.wait(10)


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
@pytest.mark.parametrize("game_type, players", [("speculation", 3), ("big-shot", 2)])
def test_curl_script_plays_a_whole_game_on_the_embedded_service(server, game_type, players):
    out = subprocess.run(["bash", "ops/curl_game.sh", game_type, str(players)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, env={**os.environ, "API": server})
    assert out.returncode == 0, out.stderr
    assert "status: scored" in out.stdout and '"ok": true' in out.stdout.replace('"ok":true', '"ok": true'), out.stdout


def test_every_seat_a_bot_is_played_to_scored_by_the_embedded_worker(server):
    import json

    request = urllib.request.Request(server + "/v1/games", method="POST", headers={"Content-Type": "application/json"},
                                     data=json.dumps({"type": "speculation", "seats": [{"bot": "heuristic"}] * 4}).encode())
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
