"""The terminal for people: `speculation play TYPE` under a pseudo-terminal against bots,
prompting from legal_actions, to the end; `replay --at` and `view` drawn as text."""

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from projections.registry import get_game
from tests.gamekit import seed_that_plays

ROOT = Path(__file__).parent.parent


def _play_in_pty(args, timeout=120.0):
    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "service.cli", "play", *args], stdin=child, stdout=child,
                            stderr=child, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, close_fds=True)
    os.close(child)
    out, answered = b"", 0
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(main, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
                tail = out[-300:].decode(errors="replace")
                if re.search(r"Choose 1-\d+: $", tail):
                    os.write(main, b"1\n")
                    answered += 1
                elif re.search(r"\[\-?\d+\]: $", tail):
                    os.write(main, b"\n")  # a template: its minimum
            elif proc.poll() is not None:
                break
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
    return proc.returncode, out.decode(errors="replace"), answered


@pytest.mark.parametrize("game_type,options", [("speculation", {"deals": 1}), ("big-shot", {})])
def test_play_in_the_terminal_against_bots_to_the_end(game_type, options):
    # Created at 1, the one claim at 2 starts the game at 3: a seed whose game asks for a move.
    seed = seed_that_plays(get_game(game_type), options, 3, started_at=3)
    args = [game_type, "--players", "3", "--name", "tess", "--options", json.dumps(options), "--seed", seed]
    code, out, answered = _play_in_pty(args)
    assert code == 0, out[-2000:]
    assert answered > 0
    assert "Your move:" in out and "verify: OK" in out and f"seed: {seed}" in out
    assert re.search(r"wins|share the win", out)
    assert "{" not in out.split("Your move:")[1].split("Choose")[0], "moves are labelled in words"


def test_replay_and_view_drawn_for_a_person(capsys, monkeypatch):
    from service import cli
    from service.app import create_app
    from workers.embedded import EmbeddedWorker

    app = create_app({"REDIS_URL": None, "RATE_LIMIT": None})
    worker = EmbeddedWorker(app.extensions["games"], app.extensions["backend"].rq_client).start()
    http = app.test_client()
    try:
        game = http.post("/v1/games", json={"type": "speculation", "options": {"deals": 1},
                                            "seats": [{"bot": "heuristic"}] * 3}).json["game_id"]
        deadline = time.monotonic() + 60
        while http.get(f"/v1/games/{game}").json["status"] != "scored":
            assert time.monotonic() < deadline
            time.sleep(0.05)

        def fake_get(api, path, accept="application/json", headers=None):
            answer = http.get(path, headers={"Accept": accept, **(headers or {})})
            assert answer.status_code == 200, answer.json  # the real _get exits on an error
            return answer.json

        monkeypatch.setattr(cli, "_get", fake_get)
        # The bots' draws are keyed by this store's own secret, so the game's length varies
        # (one deal can end by version 8): replay the first version with a trump turned up.
        last = http.get(f"/v1/games/{game}").json["version"]
        at = next(str(v) for v in range(1, last + 1)
                  if http.get(f"/v1/games/{game}/replay?at={v}").json["spectator"]["state"].get("trump"))
        cli.main(["replay", game, "--at", at])
        text = capsys.readouterr().out
        assert f"version {at}" in text and "Trumps:" in text and "Every hand" in text
        cli.main(["replay", game, "--at", at, "--json"])
        assert '"full_state"' in capsys.readouterr().out
        cli.main(["view", game])
        text = capsys.readouterr().out
        assert "Result:" in text and "Lately:" in text
    finally:
        worker.stop()
