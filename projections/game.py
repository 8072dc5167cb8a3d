"""The game interface every game module implements (a functional *decider*).

A game is a module (or object) with these attributes; all functions are pure:
no I/O, no clock, no global randomness, no Redis, no Flask.

    NAME: str                       # the game id, e.g. "speculation"
    RULES_VERSION: int              # the version new games get, recorded in their creation event
    MIN_PLAYERS: int, MAX_PLAYERS: int
    OptionsSchema: marshmallow.Schema subclass   # options with defaults; load() validates
    ACTION_SCHEMAS: dict[str, marshmallow.Schema subclass]  # one per action "type" (for OpenAPI)
    HIDDEN_INFORMATION: bool        # True when some seat may not see everything while live

    new_state(options: dict, seats: int, rules_version: int = RULES_VERSION) -> State
        The state before anything random happened (options already loaded by OptionsSchema),
        under the rules version given: the session passes the one recorded in the game's
        creation event, so a game is played, replayed and verified by its own version forever.
        A state keeps it in a field made by `rules_version_field` (see below).
    start(state, rng: Draws) -> list[dict]
        The opening events (shuffles, first player draws, ...). Every random outcome is
        written into an event so that replays never re-roll.
    decide(state, seat: int, action: dict, rng: Draws) -> list[dict]
        The events the action causes, automatic follow-ups included (end of a round, the
        next shuffle, ...). Raises IllegalAction when the action is not legal now
        (out of turn included). `action` is a JSON object with a "type" key.
    evolve(state, event: dict) -> State
        Folds one event. Events are JSON objects with a "type" key.
    view(state, seat: int | None) -> dict
        What that seat (None: a spectator) may see, JSON-ready.
    redact(state, event: dict, seat: int | None) -> dict | None
        The event as that seat may see it, given the state *before* the event.
        Returns None when the seat may not even know the event happened (rare).
    legal_actions(state, seat: int) -> list[dict]
        Complete actions, or templates in which an integer field is {"min": a, "max": b}.
        Empty when the seat may not act now.
    to_act(state) -> list[int]       # seats that may act now (several for simultaneous choices)
    is_over(state) -> bool
    result(state) -> dict            # when over: {"winners": [seats], "ranks": [rank per seat, 1 = best,
                                     #  ties share], "scores": [score per seat]} (lists indexed by seat)
    transfers(state, event: dict) -> list[Transfer]
        The ledger entries the event causes, given the state *before* the event.

Events returned by start/decide are plain dicts; their identity is (type, fields), and
`verify` re-runs start/decide and compares them exactly, so they must be deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

BANK = "bank"


class IllegalAction(Exception):
    """An action that is not legal now. `field` names the offending field when one does."""

    def __init__(self, message: str, field: Optional[str] = None, code: str = "illegal_action"):
        super().__init__(message)
        self.message = message
        self.field = field
        self.code = code


@dataclass(frozen=True)
class Transfer:
    """One double-entry ledger line: `quantity` of `asset` goes from `frm` to `to`.

    Accounts are strings: "seat:0", "bank", "pot", "deck", "house", ... An account that
    only ever gives (the bank) may run negative; every asset sums to a constant.
    `price` is the total paid for the lot when the transfer is a purchase, else None.
    `visible_to` limits who may see the asset's identity while the game is live: None means
    everyone; a tuple of seats means only they do, and everyone else sees `redacted_asset`.
    """

    frm: str
    to: str
    asset: str
    quantity: int
    price: Optional[int] = None
    visible_to: Optional[tuple[int, ...]] = None
    redacted_asset: str = "hidden"

    def as_dict(self) -> dict[str, Any]:
        return {"from": self.frm, "to": self.to, "asset": self.asset,
                "quantity": self.quantity, "price": self.price}


def rules_version_field(latest: int):
    """The state field holding the game's rules version (default: the latest, for states
    built directly). It is a fact of the session (`game.created`, the summary's
    `rules_version`), not of play: `disclosure.full_state` leaves it out, so the whole state of
    a game recorded before versions existed reads exactly as it did."""
    return field(default=latest, metadata={RECORDED_IN_CREATION: True})


RECORDED_IN_CREATION = "recorded_in_creation"


def check_rules_version(version: int, known: tuple[int, ...], name: str) -> int:
    if version not in known:
        raise ValueError(f"{name} has no rules version {version!r} (known: {list(known)})")
    return version


def seat_account(seat: int) -> str:
    return f"seat:{seat}"


def replace(obj, **changes):
    """dataclasses.replace without re-running __init__ over every field: copy the instance's
    fields, then set the changed ones (for frozen states with no __post_init__). The rules
    fold a state per event, and dataclasses.replace was half of a random playout's time in
    the profile."""
    if not changes.keys() <= obj.__dataclass_fields__.keys():
        raise TypeError(f"{type(obj).__name__} has no field(s) {set(changes) - set(obj.__dataclass_fields__)}")
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    new.__dict__.update(changes)
    return new


@dataclass(frozen=True)
class GameInfo:
    """What the registry knows of a game, for the API's game-type listing."""

    name: str
    module: Any
    min_players: int
    max_players: int
    extra: Mapping[str, Any] = field(default_factory=dict)
