"""The tournament (ops/tournament), short form: seeded, resumable, well-formed figures, outside
strategies that play legally. The full run is `make tournament` (docs/bots.md)."""

from __future__ import annotations

import json

import pytest

from ops.tournament import runner
from ops.tournament.__main__ import main as tournament_main
from ops.tournament.__main__ import select_cells
from ops.tournament.strategies import OUTSIDE
from projections import big_shot, speculate, speculation, spekulation
from projections.registry import game_types, get_game
from projections.templates import matches
from workers.bots.study import play_session, session_seed

# Every hosted game with a heuristic (the tournament's levels need one), from the declarations.
TOURNAMENT_GAMES = tuple(t.name for t in game_types() if t.bots)


def _cells():
    return [c for c in runner.matrix(sessions=4, speculation_sessions=4, players_extra=False,
                                     games=[speculate.NAME, speculation.NAME])
            if c.challenger in ("heuristic", "baseline") and not c.field.startswith("outside:")]


def test_a_run_is_complete_well_formed_and_resumes_without_replaying(tmp_path):
    path = tmp_path / "t.jsonl"
    cells = _cells()
    first = runner.run(cells, "test", path)
    assert first["complete"] and not first["stopped_by_budget"]
    assert first["played_now"] == sum(c.sessions for c in cells)
    for s in first["cells"]:
        assert s["sessions"] == 4 and s["errors"] == [] and s["anomalies"] == []
        low, high = s["ci95"]
        assert 0.0 <= low <= s["rate"] <= high <= 1.0 and high > low
        assert s["fair_share"] == pytest.approx(1 / s["players"])
        assert s["moves"] > 0 and 0 < s["move_p50_ms"] <= s["move_p95_ms"]
        if s["game"] == "speculation":
            assert s["sales_per_deal"] >= 0
    again = runner.run(cells, "test", path)
    assert again["played_now"] == 0
    assert json.dumps(again["cells"], sort_keys=True, default=str) == json.dumps(first["cells"], sort_keys=True,
                                                                               default=str)


def test_a_run_stopped_by_its_budget_resumes_to_the_same_figures(tmp_path):
    cells = _cells()
    total = sum(c.sessions for c in cells)
    whole = runner.run(cells, "budget", tmp_path / "whole.jsonl")
    # The budget counts the pool's workers too: two processes stop after a small budget.
    cut = tmp_path / "cut.jsonl"
    stopped = runner.run(cells, "budget", cut, processes=2, budget_s=0.3)
    assert stopped["stopped_by_budget"] and not stopped["complete"] and stopped["cpu_s"] >= 0.3
    kept = len(runner.load(cut))
    assert 0 < kept < total
    with open(cut, "a") as f:
        f.write('{"cell": "cut short')            # a line a killed run left half written
    resumed = runner.run(cells, "budget", cut)
    assert resumed["complete"] and resumed["played_now"] == total - kept
    assert len(runner.load(cut)) == total          # no row lost to the half-written line

    def figures(summary):
        return [(s["cell"], s["sessions"], s["wins"], s.get("sales_per_deal")) for s in summary["cells"]]
    assert figures(resumed) == figures(whole)


def test_wins_shared_by_k_count_one_over_k():
    cell = runner.Cell("speculate", 4, "heuristic", "baseline", 2)
    rows = [{"cell": cell.id, "i": 0, "share": 0.5, "rank": 1, "hist": {"10": 3}, "anomalies": []},
            {"cell": cell.id, "i": 1, "share": 0.0, "rank": 3, "hist": {"12": 1}, "anomalies": []}]
    s = runner.summarise(cell, rows)
    assert s["wins"] == 0.5 and s["rate"] == 0.25 and s["avg_rank"] == 2.0
    assert s["moves"] == 4


def test_verdicts_name_the_issue_criteria(tmp_path):
    summary = runner.run(_cells(), "test", tmp_path / "v.jsonl")
    text = "\n".join(runner.verdicts(summary))
    assert "speculate: heuristic vs 3 baselines >= 2 x fair share" in text
    assert "speculation: heuristics among themselves" in text
    table = runner.markdown(summary)
    assert table.count("\n") == 2 + len(summary["cells"])


@pytest.mark.parametrize("game,name", [(g, n) for g, strategies in sorted(OUTSIDE.items()) for n in strategies])
def test_outside_strategies_play_legal_actions_from_the_view(game, name):
    g = get_game(game)
    policies = {"outside": OUTSIDE[game][name]}

    def observer(state, seat, view, legal, action):
        assert matches(action, legal), (action, legal)
        assert view == g.view(state, seat)

    for i in range(2):
        levels = ["heuristic"] * 4
        levels[i] = "outside"
        record = play_session(g, 4, session_seed("outside", game, 4, i), f"o-{i}", levels,
                              policies=policies, observer=observer)
        assert record.error is None and record.anomalies == []


def test_the_matrix_covers_every_level_pair_and_the_extra_player_counts():
    cells = runner.matrix(sessions=400, speculation_sessions=2000)
    ids = {c.id for c in cells}
    for game in TOURNAMENT_GAMES:
        for a in ("random", "baseline", "heuristic"):
            for b in ("random", "baseline", "heuristic"):
                if a != b:
                    assert f"{game}/4p/{a}-vs-{b}" in ids
    assert "speculate/6p/heuristic-vs-baseline" in ids and "big-shot/3p/heuristic-vs-baseline" in ids
    assert not any(c.id.startswith("big-shot/6p") for c in cells)      # big-shot takes 2-4 players
    assert {c.sessions for c in cells if c.game == "speculation" and c.players == 4
            and "search" not in c.id} == {2000}
    # the search level: one seat against three heuristics at the issue's n, and at a reduced
    # budget outside 4 players
    assert {c.sessions for c in cells if c.challenger == "search" and c.field == "heuristic"} == {400, 2000}
    assert "speculate/6p/search@8-vs-heuristic" in ids      # a third of speculate's 24 iterations
    assert "spekulation/4p/search-vs-outside:buy-leader" in ids
    assert not any(c.field.startswith("search") for c in cells)
    assert not any("search" in c.id for c in runner.matrix(sessions=4, search=False))


def test_the_search_level_plays_in_the_tournament(tmp_path):
    cells = [runner.Cell(game, 4, "search@3", "heuristic", 1) for game in (big_shot.NAME, spekulation.NAME)]
    summary = runner.run(cells, "test", tmp_path / "s.jsonl")
    for s in summary["cells"]:
        assert s["sessions"] == 1 and s["errors"] == [] and s["anomalies"] == []
        assert s["moves"] > 0


def test_cells_are_selected_by_level_field_and_player_count():
    matrix = runner.matrix
    cells = select_cells(matrix(100, 100), only="search", field="heuristic", players={3, 6})
    assert cells and all(c.challenger.startswith("search@") and c.field == "heuristic" for c in cells)
    assert {c.players for c in cells} == {3, 6} and {c.sessions for c in cells} == {50}
    assert {c.game for c in cells} == set(TOURNAMENT_GAMES)
    assert select_cells(matrix(100, 100), players={5}) == []
    everything = matrix(100, 100)
    assert select_cells(everything) == everything


def test_a_selection_that_matches_no_cell_is_refused_before_anything_runs(tmp_path, capsys):
    results = tmp_path / "results.jsonl"
    with pytest.raises(SystemExit) as stop:
        tournament_main(["--players", "5", "--games", "big-shot", "--results", str(results)])
    assert stop.value.code == 2 and not results.exists()
    assert "no cell of the tournament matches" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        tournament_main(["--players", "three"])
    assert "--players: comma-separated player counts, not 'three'" in capsys.readouterr().err
