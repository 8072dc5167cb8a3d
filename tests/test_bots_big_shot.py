"""The big-shot heuristic's fixed flaws (issue 18), each with a test that fails on the bot
before the fix: the lead-hold chance ignored the margin (a 1-cube lead in a 6-cube district
held 25-44% of the time; it assumed about 0.9), and it stayed uncertain on the 18th lot,
when the board is final."""

from __future__ import annotations

import random

from workers.bots import big_shot as bot


def _view(cubes, auction_number, placing=None):
    names = ["Midtown", "Docks", "Tannery"]
    districts = [{"name": n, "value": v, "parks": [], "neighbours": [], "sold": False, "colour": None,
                  "cubes": dict(c)} for n, v, c in zip(names, (21, 9, 10), cubes)]
    return {"districts": districts, "auctions_total": 18, "auction_number": auction_number,
            "seats": [{"colour": c} for c in ("red", "blue", "green", "yellow")],
            "placing": placing}


def test_a_one_cube_lead_in_a_six_cube_district_is_far_from_safe():
    model = bot._Model(_view([{"red": 3, "blue": 2, "green": 1}, {}, {}], auction_number=12), 0)
    colour, p = model.lead(0)
    assert colour == 0 and p < 0.5          # the old bot: min(0.92, 0.3 + 0.48 + 0.23) = 0.92


def test_a_wider_lead_holds_more_often():
    one = bot._Model(_view([{"red": 3, "blue": 2}, {}, {}], auction_number=14), 0).lead(0)[1]
    three = bot._Model(_view([{"red": 4, "blue": 1}, {}, {}], auction_number=14), 0).lead(0)[1]
    assert one < three


def test_on_the_last_lot_the_board_is_final():
    model = bot._Model(_view([{"red": 2, "blue": 1}, {"blue": 1}, {}], auction_number=18), 0)
    assert model.lead(0) == (0, 1.0) and model.lead(1) == (1, 1.0)
    assert model.lead(2) == (None, 0.0)


def test_last_lot_placement_takes_a_district_it_can_still_win_for_sure():
    # red (seat 0) places the last cube of the game: on Midtown (blue, red, green 1 each, all
    # cancelled) it makes red 2 against 1 and 1, and the district is red's for certain
    view = _view([{"blue": 1, "red": 1, "green": 1}, {"blue": 1}, {}], auction_number=18,
                 placing={"cubes": ["red"]})
    legal = [{"type": "place", "colour": "red", "district": d} for d in ("Midtown", "Docks", "Tannery")]
    action = bot.heuristic(view, legal, 0, random.Random(0))
    assert action == {"type": "place", "colour": "red", "district": "Midtown"}
