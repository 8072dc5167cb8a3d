"""The `random` level: a uniformly chosen legal action, with templates filled at random."""

from __future__ import annotations

import random
from typing import Any


def is_range(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"min", "max"}


def fill_template(template: dict, rng: random.Random) -> dict:
    """A complete action from a legal-action template: each {"min", "max"} field gets an integer."""
    return {key: rng.randint(value["min"], value["max"]) if is_range(value) else value
            for key, value in template.items()}


def choose(view: dict, legal_actions: list[dict], seat: int, rng: random.Random) -> dict:
    return fill_template(rng.choice(legal_actions), rng)
