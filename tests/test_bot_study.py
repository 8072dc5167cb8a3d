"""The bot study script (workers/bots/study.py): well-formed figures, and bots that see only their view."""

from __future__ import annotations

import json
import math

import pytest

from workers.bots import study as bot_study
from projections.registry import get_game
from workers.bots import policy

GAMES = bot_study.studied_games()
SESSIONS = 20


@pytest.fixture(scope="module")
def studies():
    return {name: bot_study.run_study(name, sessions=SESSIONS, seed="test") for name in GAMES}


@pytest.mark.parametrize("name", GAMES)
def test_figures_are_well_formed(studies, name):
    study = studies[name]
    game = get_game(name)
    players = study["players"]
    assert players == min(max(4, game.MIN_PLAYERS), game.MAX_PLAYERS)
    assert study["errors"] == [], study["errors"]
    assert study["anomalies"] == [], study["anomalies"]
    assert study["completed"] == SESSIONS
    assert set(study["levels"]) == {"heuristic", "random"}
    shares = 0.0
    for level, fig in study["levels"].items():
        seats = 1 if level == "heuristic" else players - 1
        assert fig["sessions"] == SESSIONS
        assert fig["seats_per_session"] == seats
        assert 0.0 <= fig["wins"] <= SESSIONS
        assert fig["win_rate"] == pytest.approx(fig["wins"] / SESSIONS)
        low, high = fig["ci95"]
        assert 0.0 <= low <= fig["win_rate"] <= high <= 1.0
        assert high > low                       # Wilson never collapses to a point
        nlow, nhigh = fig["normal95"]
        assert nlow <= fig["win_rate"] <= nhigh
        assert fig["fair_share"] == pytest.approx(1 / players)
        assert 1.0 <= fig["avg_rank"] <= players
        shares += fig["win_rate"] * seats
        for extra in fig["extras"].values():
            assert 0.0 <= extra["ci95"][0] <= extra["rate"] <= extra["ci95"][1] <= 1.0
    # every session has at least one winner, and the shares of one session sum to 1
    assert shares == pytest.approx(1.0)
    if name == "speculate":
        assert set(study["levels"]["heuristic"]["extras"]) == {"met_objective"}
    json.dumps(study)                           # --json can write it
    table = bot_study.markdown_table([study])
    assert table.count("\n") == 3 and f"| {name} |" in table


def test_challenger_rotates_over_the_seats():
    assert [bot_study.challenger_seats(i, 4, 1) for i in range(5)] == [[0], [1], [2], [3], [0]]
    assert bot_study.challenger_seats(3, 4, 2) == [0, 3]


def test_wilson_interval():
    low, high = bot_study.wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    assert bot_study.wilson(0, 20)[0] == 0.0 and bot_study.wilson(20, 20)[1] == 1.0
    assert math.isnan(bot_study.wilson(0, 0)[0])


def test_seeded_and_independent_of_the_process_count():
    one = bot_study.run_study("speculation", sessions=6, seed="s", processes=1)
    two = bot_study.run_study("speculation", sessions=6, seed="s", processes=2)
    assert one["levels"] == two["levels"]
    other = bot_study.run_study("speculation", sessions=6, seed="t", processes=1)
    assert bot_study.session_seed("s", "speculation", 4, 0) != bot_study.session_seed("t", "speculation", 4, 0)
    assert other["seed"] == "t"


def test_cli_writes_json(tmp_path, capsys):
    out = tmp_path / "study.json"
    code = bot_study.main(["--game", "speculation", "--sessions", "4", "--processes", "1", "--json", str(out)])
    assert code == 0
    data = json.loads(out.read_text())
    assert data["meta"]["machine"]["cpus"] >= 1
    assert data["studies"][0]["levels"]["heuristic"]["sessions"] == 4
    assert "| speculation | 4 | heuristic |" in capsys.readouterr().out


@pytest.mark.parametrize("name", GAMES)
def test_bots_see_only_their_seats_view(name):
    """Every policy call gets exactly game.view(state, seat) and game.legal_actions(state, seat)."""
    game = get_game(name)
    players = bot_study.default_players(game)
    calls = []

    def recording(level):
        real = policy(name, level)

        def choose(*args):
            assert len(args) == 4
            calls.append(args)
            return real(*args)
        return choose

    checked = []

    def observer(state, seat, view, legal, action):
        got_view, got_legal, got_seat, _rng = calls[-1]
        assert got_seat == seat
        assert got_view == game.view(state, seat)   # the seat's view, built afresh from the state
        assert got_legal == game.legal_actions(state, seat)
        assert got_view is not state and isinstance(got_view, dict)
        json.dumps(got_view)                        # JSON-ready: no state object inside
        checked.append(seat)

    levels = ["heuristic"] + ["random"] * (players - 1)
    record = bot_study.play_session(
        game, players, bot_study.session_seed("iso", name, players, 0), "iso-game", levels,
        policies={lv: recording(lv) for lv in set(levels)}, observer=observer)
    assert record.error is None, record.error
    assert len(calls) == record.actions == len(checked) > 0
    assert set(checked) == set(range(players))     # every seat acted and was checked
