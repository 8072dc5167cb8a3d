"""The cross-game fold: a game's whole life (seats, status, the rules state) from its events.

Platform events have dotted types (game.created, seat.claimed, game.started, game.scored);
every other event belongs to the game's rules and is folded by the game's `evolve`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from events.envelope import GENESIS, StoredEvent

from .registry import get_game

OPEN, ACTIVE, ENDED, SCORED = "open", "active", "ended", "scored"
PLATFORM_EVENTS = frozenset({"game.created", "seat.claimed", "game.started", "game.scored"})


@dataclass(frozen=True)
class Seat:
    kind: str                      # "open", "player" or "bot"
    name: Optional[str] = None     # the player's name once claimed
    level: Optional[str] = None    # the bot level
    # a search bot's budget per move as the creation recorded it ({"iterations", "time_ms"},
    # either optional; None: the defaults), clamped to the service's limits when it plays
    budget: Optional[dict] = field(default=None, hash=False)

    def as_dict(self) -> dict:
        out = {"kind": self.kind}
        if self.name is not None:
            out["name"] = self.name
        if self.level is not None:
            out["level"] = self.level
        if self.budget is not None:
            out["budget"] = dict(self.budget)
        return out


@dataclass(frozen=True)
class Session:
    game_id: str
    game_type: str
    rules_version: int
    options: dict
    platform: dict
    seats: tuple[Seat, ...]
    commitment: str
    created_at: int
    status: str = OPEN
    state: Any = None
    version: int = 0
    head: str = GENESIS
    result: Optional[dict] = None
    seed: Optional[str] = None
    last_action_at: int = 0
    # Per seat, the version at which its current decision opened (0: not to act). A seat's
    # decision opens when it becomes one of the seats to act, and again after each of its own
    # actions that leaves it to act; another seat's action leaves it as it is, so in a
    # simultaneous choice every seat's decision stays the round's until the round is over.
    decisions: tuple[int, ...] = ()

    @property
    def game(self):
        return get_game(self.game_type)

    @property
    def finished(self) -> bool:
        """Ended by the rules: from now on everything may be disclosed to everyone."""
        return self.status in (ENDED, SCORED)

    def to_act(self) -> list[int]:
        return list(self.game.to_act(self.state)) if self.status == ACTIVE else []

    def decision(self, seat: int) -> Optional[int]:
        """The version at which the seat's current decision opened; None when it is not to act."""
        return (self.decisions[seat] if 0 <= seat < len(self.decisions) else 0) or None


def _settle(movers, prior: tuple, actor: Optional[int], version: int, seats: int) -> tuple:
    """The seats' decisions at the end of a batch (the events of one command, `actor`'s, or of
    a claim or the scoring) that left the game at `version` with `movers` to act: a seat to act
    keeps its decision unless it just became one of the seats to act or it acted itself; the
    others have none."""
    out = [0] * seats
    known = len(prior) == seats
    for s in movers:   # usually one seat: the loop runs over the movers only
        out[s] = prior[s] if known and prior[s] and s != actor else version
    return tuple(out)


def _decided(session: Session, actor: Optional[int]) -> Session:
    decisions = _settle(session.to_act(), session.decisions, actor, session.version, len(session.seats))
    return session if decisions == session.decisions else _with(session, decisions=decisions)


def _created(session: Optional[Session], event: StoredEvent, game_id: str) -> Session:
    data = event.data
    game = get_game(data["game_type"])
    seats = tuple(Seat(kind=s["kind"], name=s.get("name"), level=s.get("level"), budget=s.get("budget"))
                  for s in data["seats"])
    return Session(game_id=game_id, game_type=data["game_type"], rules_version=data["rules_version"],
                   options=data["options"], platform=data["platform"], seats=seats,
                   commitment=data["commitment"], created_at=event.at,
                   state=game.new_state(data["options"], len(seats), rules_version=data["rules_version"]))


def _with(session: Session, **changes) -> Session:
    """`dataclasses.replace` for a Session without re-running its __init__ over all fifteen
    fields: the fold calls this once per event, and replace() was a third of its time."""
    new = object.__new__(Session)
    new.__dict__.update(session.__dict__)
    new.__dict__.update(changes)
    return new


def _seat_claimed(session: Session, event: StoredEvent) -> dict:
    seats = list(session.seats)
    seats[event.data["seat"]] = Seat(kind="player", name=event.data["name"])
    return {"seats": tuple(seats)}


def _started(session: Session, event: StoredEvent) -> dict:
    return {"status": ACTIVE}


def _scored(session: Session, event: StoredEvent) -> dict:
    return {"status": SCORED, "result": event.data["result"], "seed": event.data["seed"]}


def _rules_event(session: Session, event: StoredEvent) -> dict:
    game = get_game(session.game_type)
    state = game.evolve(session.state, event.payload)
    if session.status == ACTIVE and game.is_over(state):
        return {"state": state, "status": ENDED}
    return {"state": state}


_PLATFORM = {"seat.claimed": _seat_claimed, "game.started": _started, "game.scored": _scored}


def evolve(session: Optional[Session], event: StoredEvent, game_id: str = "") -> Session:
    if event.type == "game.created":
        session = _created(session, event, game_id or (session.game_id if session else ""))
        changes = {}
    else:
        changes = _PLATFORM.get(event.type, _rules_event)(session, event)
    changes["version"] = event.version
    changes["head"] = event.hash
    if event.cmd is not None:
        changes["last_action_at"] = event.at
    return _with(session, **changes)


def fold(events: Iterable[StoredEvent], game_id: str, session: Optional[Session] = None) -> Optional[Session]:
    """evolve() over the events. A run of rules events folds straight into the game's state
    and updates the session once at its end (the same result: a game once over stays over,
    and only platform events change anything else). Each batch's end (the next command, or
    the end of the events) settles the seats' decisions."""
    run: list[StoredEvent] = []
    pending, actor = False, None   # a batch folded whose decisions are not settled yet
    for event in events:
        if session is not None and event.type not in PLATFORM_EVENTS:
            run.append(event)
            continue
        if run:
            session, pending, actor = _fold_rules_run(session, run, pending, actor)
            run = []
        if event.cmd is not None:
            if pending:
                session = _decided(session, actor)
            actor = event.cmd.get("seat")
        pending = True
        session = evolve(session, event, game_id)
    if run:
        session, pending, actor = _fold_rules_run(session, run, pending, actor)
    return _decided(session, actor) if pending and session is not None else session


def _fold_rules_run(session: Session, run: list[StoredEvent], pending: bool, actor: Optional[int]):
    """The run folded into the session; the decisions of each batch that ends inside it settled.
    Returns (session, pending, actor) for the batch still open at its end."""
    game = get_game(session.game_type)
    evolve_rules, to_act = game.evolve, game.to_act
    state = session.state
    last_action_at = session.last_action_at
    active, seats, decisions, version = session.status == ACTIVE, len(session.seats), session.decisions, session.version
    for event in run:
        if event.cmd is not None:
            if pending and active:  # a command follows, so the game was not over: no is_over check
                decisions = _settle(to_act(state), decisions, actor, version, seats)
            actor = event.cmd.get("seat")
            last_action_at = event.at
        pending = True
        state = evolve_rules(state, {"type": event.type, **event.data})
        version = event.version
    last = run[-1]
    changes = {"state": state, "version": last.version, "head": last.hash, "last_action_at": last_action_at,
               "decisions": decisions}
    if session.status == ACTIVE and game.is_over(state):
        changes["status"] = ENDED
    return _with(session, **changes), pending, actor
