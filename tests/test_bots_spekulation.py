"""The spekulation heuristic's fixed flaw (issue 18), with a test that fails on the bot before
the fix: its rank pull reversed the early ranking (an early leader valued below the laggards)."""

from __future__ import annotations

import random

import pytest

from workers.bots import spekulation as bot

END = 61


@pytest.mark.parametrize("seed", range(20))
def test_early_in_the_race_a_company_ahead_is_never_valued_below_one_behind(seed):
    rng = random.Random(seed)
    spaces = rng.sample(range(1, 11), 8)            # the race has barely begun
    est = bot.estimates(spaces, [], END, "plain")
    order = sorted(range(8), key=lambda c: -spaces[c])
    assert all(est[a] >= est[b] for a, b in zip(order, order[1:])), (spaces, est)


def test_the_pull_stops_at_the_middle_rank():
    # leader on 10, the rest behind: the old pull (1.5 x the race left) took rank 1 to 6.3
    # and rank 8 to 2.8; now every rank goes at most to the middle
    spaces = [10, 9, 8, 7, 6, 5, 4, 3]
    est = bot.estimates(spaces, [], END, "plain")
    assert est[0] >= est[-1]
    assert est[0] == pytest.approx(max(est))


def test_late_in_the_race_the_ranking_shows_through():
    spaces = [58, 50, 45, 40, 30, 20, 10, 5]
    est = bot.estimates(spaces, [], END, "plain")
    assert est == sorted(est, reverse=True)


def _view_with_discards(discards: list[list[str]]) -> dict:
    seats = [{"money": 20, "shares": {n: 0 for n in bot.COMPANIES}, "discard": d} for d in discards]
    return {"seats": seats}


def test_card_counting_speeds_up_a_company_whose_cards_are_still_unplayed():
    # every seat has played red's card this cycle, nobody yellow's: yellow will move more
    view = _view_with_discards([["red"], ["red"], ["red"], ["red", "green"]])
    pace = bot.card_pace(view, bot.DEFAULT.count_weight)
    red, yellow = bot.COMPANY_INDEX["red"], bot.COMPANY_INDEX["yellow"]
    assert pace[yellow] > 1.0 > pace[red] >= 0.0
    spaces = [20, 20 - 1, 15, 14, 13, 12, 11, 10]
    est = bot.estimates(spaces, [], END, "plain", (), bot.DEFAULT, pace)
    flat = bot.estimates(spaces, [], END, "plain")
    assert est[red] <= flat[red] and est[yellow] >= flat[yellow]
    assert bot.card_pace(view, 0.0) == ()
