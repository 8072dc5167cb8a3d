"""The league (ops/tournament/league.py), short form: the families play legal actions from the
seat's view alone, the CMA-ES search is seeded and resumes without replaying, the kept members
are well formed and playable, and the matrix's verdicts name the issue's bars. The full run is
`make league` (docs/bots.md, League)."""

from __future__ import annotations

import json

import pytest

from ops.tournament import league, runner
from ops.tournament.families import FAMILIES
from projections import spekulation
from projections.registry import get_game
from projections.templates import matches
from workers.bots.study import play_session, session_seed

FAMILY_LIST = [(g, name) for g, fams in sorted(FAMILIES.items()) for name in fams]


@pytest.mark.parametrize("game,name", FAMILY_LIST)
def test_a_family_plays_legal_actions_from_the_seat_view_at_its_corners(game, name):
    family = FAMILIES[game][name]
    g = get_game(game)

    def observer(state, seat, view, legal, action):
        assert matches(action, legal), (action, legal)
        assert view == g.view(state, seat)

    for i, corner in enumerate(([0.0] * len(family.params), [1.0] * len(family.params))):
        policy = family.policy(family.decode(corner))
        levels = ["heuristic"] * 4
        levels[i] = "member"
        record = play_session(g, 4, session_seed("league", game, 4, i), f"l-{i}", levels,
                              policies={"member": policy}, observer=observer)
        assert record.error is None and record.anomalies == []


def test_decode_clips_to_the_ranges_and_encode_inverts_it():
    family = FAMILIES[spekulation.NAME]["race-value"]
    values = family.decode([-1.0] + [0.25] * (len(family.params) - 1))
    assert values["forward"] == family.params[0].low
    assert family.decode(family.encode(values)) == values
    with pytest.raises(ValueError, match="parameters missing"):
        family.policy({"forward": 0.5})


def test_the_search_is_seeded_resumes_under_a_budget_and_replays_nothing(tmp_path):
    family = FAMILIES[spekulation.NAME]["race-value"]
    kwargs = dict(generations=2, popsize=3, sessions=2, validate=2, finalists=1, echo=lambda *_: None)
    whole = league.search_family(family, "t", league.Log(tmp_path / "whole.jsonl"), **kwargs)
    assert whole is not None and whole.name == "race-value-t"
    assert [k for k, _ in whole.params] == [p.name for p in family.params]
    for (_, value), p in zip(whole.params, family.params):
        assert p.low <= value <= p.high
    # a run stopped by its budget after a few evaluations, resumed in runs as short
    cut = tmp_path / "cut.jsonl"
    plays = []
    for _ in range(40):
        log = _ShortLog(cut, plays_allowed=3)
        found = league.search_family(family, "t", log, **kwargs)
        plays.append(log.played)
        if found is not None:
            break
    assert found == whole and len(plays) > 2 and all(p <= 3 for p in plays)
    assert len(cut.read_text().splitlines()) == len((tmp_path / "whole.jsonl").read_text().splitlines())
    again = _ShortLog(cut, plays_allowed=0)
    assert league.search_family(family, "t", again, **kwargs) == whole and again.played == 0


class _ShortLog(league.Log):
    """A log whose budget runs out after `plays_allowed` evaluations (a CPU budget, made exact)."""

    def __init__(self, path, plays_allowed):
        super().__init__(path)
        self.plays_allowed, self.played = plays_allowed, 0

    def over_budget(self):
        return self.played >= self.plays_allowed

    def evaluate(self, key, *args):
        known = key in self.rows
        rate = super().evaluate(key, *args)
        self.played += rate is not None and not known
        return rate


def test_kept_members_load_with_their_family_parameters_and_play_as_tournament_levels():
    members = league.load_members()
    assert set(members) == set(FAMILIES)
    for game, kept in members.items():
        names = [m.name for m in kept]
        assert len(names) == len(set(names))
        assert any(m.family == league.SEARCH_FAMILY for m in kept)      # the best response
        for m in kept:
            if m.family == league.SEARCH_FAMILY:
                continue
            family = FAMILIES[game][m.family]
            assert [k for k, _ in m.params] == [p.name for p in family.params]
            assert callable(runner.level_policy(game, m.level))
            assert dict(m.found)["sessions"] >= 200


def test_save_member_adds_and_replaces_by_name(tmp_path):
    path = tmp_path / "league.json"
    m = league.Member("spekulation", "race-value-x", "race-value", (("forward", 0.5),), "x", (("sessions", 2),))
    league.save_member(m, path)
    league.save_member(m, path)
    assert json.loads(path.read_text())["spekulation"] == [
        {"name": "race-value-x", "family": "race-value", "params": {"forward": 0.5}, "seed": "x",
         "found": {"sessions": 2}}]
    assert league.load_members(path)["spekulation"] == [m]


def test_the_matrix_plays_each_member_both_ways_and_judges_the_bars(tmp_path):
    cells = league.league_cells(games=[spekulation.NAME], sessions=2)
    ids = {c.id for c in cells}
    kept = [m for m in league.load_members()[spekulation.NAME] if m.family != league.SEARCH_FAMILY]
    for m in kept:
        assert f"spekulation/4p/{m.level}-vs-heuristic" in ids and f"spekulation/4p/heuristic-vs-{m.level}" in ids
    assert not any(c.challenger == "search" for c in cells)
    assert any(c.challenger == "search" for c in league.league_cells(games=[spekulation.NAME], search=True))
    summary = runner.run(cells[:2], "league-test", tmp_path / "m.jsonl")
    lines = league.league_verdicts(summary)
    assert len(lines) == 2
    assert "vs 3 heuristics <= 30%" in lines[0] and "heuristic vs 3 league:" in lines[1]
