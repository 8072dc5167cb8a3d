"""The `baseline` level (every game): takes no optional action and picks forced choices at random.

It never trades, bids, borrows, offers or accepts: wherever the legal actions include a
"do nothing" (`pass`, `keep`, `decline`, `keep_blind`, `end_trading`, or answering an
announcement with a count of 0), it takes it. Where every legal action does something (play
an event card, reveal, place cubes, choose a start space or a share, move a rank, pay a
reward in shares), it picks one uniformly, its `{"min", "max"}` fields filled at random.
It is a yardstick for measurement: a level that cannot beat a player who does nothing is
not playing the game.
"""

from __future__ import annotations

import random

from projections.templates import fill_template, is_range

# action types that decline an option (speculation: keep, decline, keep_blind, pass;
# speculate: end_trading; spekulation and big-shot: pass)
DECLINE = ("pass", "keep", "keep_blind", "decline", "end_trading")
# action types whose count 0 declines (speculate: answering an announcement)
ZERO_COUNT = ("respond",)


def _declining(action: dict):
    if action["type"] in DECLINE:
        return dict(action)
    if action["type"] in ZERO_COUNT:
        count = action.get("count")
        if is_range(count) and count["min"] == 0:
            return {**action, "count": 0}
        if count == 0:
            return dict(action)
    return None


def choose(view: dict, legal_actions: list[dict], seat: int, rng: random.Random) -> dict:
    if not legal_actions:
        raise ValueError("no legal action")
    for action in legal_actions:
        declined = _declining(action)
        if declined is not None:
            return declined
    return fill_template(rng.choice(legal_actions), rng)
