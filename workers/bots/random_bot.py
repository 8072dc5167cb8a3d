"""The `random` level: a uniformly chosen legal action, with templates filled at random."""

from __future__ import annotations

import random

from projections.templates import fill_template


def choose(view: dict, legal_actions: list[dict], seat: int, rng: random.Random) -> dict:
    return fill_template(rng.choice(legal_actions), rng)
