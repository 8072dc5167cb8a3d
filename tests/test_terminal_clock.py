"""The terminal: a timed game's clock line counted from the view's server_time; `games --live`
and `--status abandoned`; an abandoned game's view says so."""

import time

import pytest

import web_kit
from ops.drills import _kit
from service import cli, terminal


def test_the_clock_line_counts_from_the_servers_time_not_this_machines():
    view = {"seat": 0, "seats": [{"kind": "player", "name": "ann"}, {"kind": "player", "name": "bob"}],
            "server_time": 1_000_000, "clock": {"turn_timeout": 120, "deadlines": [
                {"seat": 0, "at": 1_000_000 + 104_500}, {"seat": 1, "at": 1_000_000 + 3_725_000}]}}
    line = terminal.clock_line(view)
    assert line.startswith("clock: you 1:45 · ") and "bob" in line and "1:02:05" in line
    assert terminal.clock_line({**view, "clock": {"turn_timeout": 120, "deadlines": []}}) == ""
    assert terminal.clock_line({"seat": None, "seats": []}) == ""


def test_a_real_views_clock_line(fake_redis):
    app = _kit.make_app(fake_redis)
    game_id, tokens = _kit.create_open_game(app.extensions["games"], "secret-duel", turn_timeout=90)
    view = app.test_client().get(f"/v1/games/{game_id}/view", headers=_kit.auth(tokens[1])).json
    line = terminal.clock_line(view)
    assert "you 1:30" in line or "you 1:29" in line, line


@pytest.fixture(scope="module")
def server():
    live = web_kit.LiveServer().start()
    yield live
    live.stop()


def _run(capsys, *args):
    try:
        cli.main(list(args))
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    return code, capsys.readouterr().out


def test_games_live_and_abandoned_and_an_abandoned_games_view(capsys, server):
    service = server.service
    made = [web_kit.api(server, "POST", "/v1/games", json={"type": "big-shot", "seats": [{}, {}]}).json["game_id"]
            for _ in range(2)]
    for game_id in made:
        for seat in (0, 1):
            web_kit.api(server, "POST", f"/v1/games/{game_id}/seats/{seat}", json={"name": f"p{seat}"})
    idle, moving = made
    moved = service.load(idle).moved_at
    service.abandon_game(idle, 60, now_ms=moved + 61_000)
    code, out = _run(capsys, "games", "--live", "--api", server.url)
    assert code == 0 and moving in out and idle not in out
    code, out = _run(capsys, "games", "--status", "abandoned", "--api", server.url)
    assert code == 0 and idle in out and "abandoned" in out and moving not in out
    code, out = _run(capsys, "view", idle, "--api", server.url)
    assert code == 0 and terminal.ABANDONED_WORDS in out
    assert time.time() * 1000 - service.load(moving).moved_at < 60_000
