"""Each game's end-of-game score breakdown (service/render/<game>.py `breakdown`): on random
finished games of each type, the parts drawn from the public final view and the public events
add up to the score the rules computed, for every seat."""

import pytest

from gamekit import random_playout, seed_for, start_game
from projections import big_shot, speculate, speculation, spekulation
from service import render

GAMES = [
    (big_shot, {}, 3), (big_shot, {}, 4),
    (speculate, {"rounds": 2}, 3), (speculate, {"rounds": 3}, 5),
    (speculation, {"deals": 4}, 3), (speculation, {"deals": 5, "jack_five_bonus": True, "blind_exchanges": True,
                                                   "dead_hand": True}, 4),
    (spekulation, {}, 3), (spekulation, {"edition": "tiles", "board": "star"}, 5),
]


def finished(game, options, players, n):
    """A random game played to the end; its events as the API shows them (type, data)."""
    events = []
    state, _ = random_playout(game, options, players, seed_for(n),
                              on_event=lambda before, e, after: events.append(e))
    opening = start_game(game, options, players, seed_for(n))[1]
    shown = [{"type": e["type"], "data": {k: v for k, v in e.items() if k != "type"}} for e in opening + events]
    return state, shown


@pytest.mark.parametrize("game,options,players", GAMES, ids=lambda x: getattr(x, "NAME", str(x)))
@pytest.mark.parametrize("n", [1, 2, 3])
def test_the_parts_add_up_to_the_rules_score(game, options, players, n):
    state, events = finished(game, options, players, n)
    result = game.result(state)
    view = game.view(state, None)           # the spectator's: what every seat may see at the end
    rows = render.standings(game.NAME, view, events, result)
    assert sorted(r["seat"] for r in rows) == list(range(players))
    for row in rows:
        assert row["parts"], row
        assert sum(p["amount"] for p in row["parts"]) == result["scores"][row["seat"]], row
        assert row["adds_up"]
        assert all(isinstance(p["label"], str) and p["label"] for p in row["parts"])
    places = [r["place"] for r in rows]
    assert places == sorted(places)
    assert {r["seat"] for r in rows if r["winner"]} == set(result["winners"])


def test_big_shot_names_the_loans_and_the_doubled_districts():
    seen_loans = seen_double = False
    for n in range(1, 12):
        state, events = finished(big_shot, {}, 3, n)
        rows = render.standings(big_shot.NAME, big_shot.view(state, None), events, big_shot.result(state))
        labels = [p["label"] for r in rows for p in r["parts"]]
        seen_loans |= any("repaid at 10 each" in x for x in labels)
        seen_double |= any("doubled beside" in x for x in labels)
        if seen_loans and seen_double:
            break
    assert seen_loans and seen_double


def test_a_mismatch_is_flagged_not_hidden():
    state, events = finished(spekulation, {}, 3, 1)
    result = dict(spekulation.result(state))
    result["scores"] = [s + 1 for s in result["scores"]]
    rows = render.standings(spekulation.NAME, spekulation.view(state, None), events, result)
    assert not any(r["adds_up"] for r in rows)
