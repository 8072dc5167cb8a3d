"""Legal-action templates: filling one with random integers and checking an action against them.

A game's `legal_actions(state, seat)` lists complete actions and templates; a template field
written `{"min": a, "max": b}` stands for any integer from a to b inclusive. Pure: no I/O.
"""

from __future__ import annotations

import random
from typing import Any


def is_range(value: Any) -> bool:
    """Whether a template field is a `{"min", "max"}` integer range."""
    return isinstance(value, dict) and set(value) == {"min", "max"}


def fill_template(template: dict, rng: random.Random) -> dict:
    """A complete action from a legal-action template: each {"min", "max"} field gets an integer."""
    return {key: rng.randint(value["min"], value["max"]) if is_range(value) else value
            for key, value in template.items()}


def fits(action: Any, template: dict) -> bool:
    """Whether a complete action fills this template (each range field an int in range; a bool
    is not an int; every other field equal)."""
    if not isinstance(action, dict) or set(template) != set(action):
        return False
    return all(isinstance(action[k], int) and not isinstance(action[k], bool) and v["min"] <= action[k] <= v["max"] if is_range(v) else action[k] == v
               for k, v in template.items())


def matches(action: Any, legal_actions: list[dict]) -> bool:
    """Whether a complete action is one of the legal actions, or fills one of their templates."""
    return any(fits(action, template) for template in legal_actions)
