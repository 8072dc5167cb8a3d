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
# An open game that will never start: a challenge or rematch declined, cancelled or past its
# expiry (service/matching). Its log is kept; it leaves the lobby.
EXPIRED = "expired"
# An active game without a clock that nobody moved for the service's ABANDON_AFTER while a
# person was to act (service/core/commands.py abandon_idle): it ends there, unscored, unrated,
# out of the lobby's live list; its log is kept and nothing more is played.
ABANDONED = "abandoned"
PLATFORM_EVENTS = frozenset({"game.created", "seat.claimed", "game.started", "game.scored", "game.expired",
                             "game.abandoned", "seat.left"})


# The level of the bot that takes over the seat of a person who leaves, when the game's
# creation chose none (its platform data's `leave_level`).
DEFAULT_LEAVE_LEVEL = "heuristic"


@dataclass(frozen=True)
class Seat:
    kind: str                      # "open", "player" or "bot"
    name: Optional[str] = None     # the player's name once claimed
    level: Optional[str] = None    # the bot level
    # a search bot's budget per move as the creation recorded it ({"iterations", "time_ms"},
    # either optional; None: the defaults), clamped to the service's limits when it plays
    budget: Optional[dict] = field(default=None, hash=False)
    # the account holding the seat (its id: the event records no name, which the service
    # resolves when it shows the seat); None for a guest's seat, claimed by name
    account: Optional[str] = None
    # an open seat only this account may take (a challenge's or a rematch's invitation)
    reserved: Optional[str] = None
    # the version of the seat.left event when the person who held the seat left it (0: never):
    # the seat is a bot's from then on (kind "bot", its level), the person's name and account
    # kept for the record (the ratings rank the account last); nobody may take it back
    left: int = 0

    def as_dict(self) -> dict:
        out = {"kind": self.kind}
        if self.left:
            out["left"] = True
        if self.name is not None:
            out["name"] = self.name
        if self.account is not None:
            out["account"] = self.account
        if self.reserved is not None and self.kind == "open":
            out["reserved"] = self.reserved
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
    # why an expired game ended: {"reason": "declined" | "cancelled" | "expired", "by"?: account}
    expired: Optional[dict] = None
    # Per seat, when (the `at` of the event at `decisions[seat]`, ms) its current decision
    # opened (0: not to act): a timed game's deadline for the seat is this plus turn_timeout.
    decided_at: tuple[int, ...] = ()
    # when the game last moved: the `at` (ms) of its last event, whatever caused it
    moved_at: int = 0
    # an abandoned game's game.abandoned data: {"idle_since": ms, "to_act": [seats]}
    abandoned: Optional[dict] = None

    @property
    def game(self):
        return get_game(self.game_type)

    @property
    def finished(self) -> bool:
        """Ended by the rules: from now on everything may be disclosed to everyone."""
        return self.status in (ENDED, SCORED)

    @property
    def leave_level(self) -> str:
        """The level of the bot that takes over a seat whose person leaves (the creation's)."""
        return self.platform.get("leave_level") or DEFAULT_LEAVE_LEVEL

    def to_act(self) -> list[int]:
        return list(self.game.to_act(self.state)) if self.status == ACTIVE else []

    def decision(self, seat: int) -> Optional[int]:
        """The version at which the seat's current decision opened; None when it is not to act."""
        return (self.decisions[seat] if 0 <= seat < len(self.decisions) else 0) or None

    @property
    def turn_timeout(self) -> Optional[float]:
        """Seconds a seat may take per decision (the creation's `turn_timeout`); None: no clock."""
        return self.platform.get("turn_timeout") or None

    def deadline(self, seat: int) -> Optional[int]:
        """When (ms since the epoch, the events' clock) the seat's current decision times out:
        when it opened plus the game's turn_timeout. None: no clock, the game is not active,
        the seat is not to act, or a bot holds it (a bot's turn is played, never timed out)."""
        timeout = self.turn_timeout
        if not timeout or self.status != ACTIVE or not 0 <= seat < len(self.decided_at):
            return None
        opened = self.decided_at[seat]
        if not opened or self.seats[seat].kind == "bot":
            return None
        return opened + round(timeout * 1000)

    def deadlines(self) -> list[dict]:
        """[{"seat", "at"}] for each seat to act that a clock times out, in seat order."""
        if not self.turn_timeout or self.status != ACTIVE:
            return []
        out = []
        for seat in self.to_act():
            at = self.deadline(seat)
            if at is not None:
                out.append({"seat": seat, "at": at})
        return out


def _settle(movers, prior: tuple, prior_at: tuple, actor: Optional[int], version: int, at: int,
            seats: int) -> tuple[tuple, tuple]:
    """The seats' decisions, and when each opened, at the end of a batch (the events of one
    command, `actor`'s, or of a claim or the scoring) that left the game at `version` at time
    `at` with `movers` to act: a seat to act keeps its decision (and its time) unless it just
    became one of the seats to act or it acted itself; the others have none."""
    out, out_at = [0] * seats, [0] * seats
    known = len(prior) == seats
    timed = len(prior_at) == seats
    for s in movers:   # usually one seat: the loop runs over the movers only
        if known and prior[s] and s != actor:
            out[s] = prior[s]
            out_at[s] = prior_at[s] if timed else 0
        else:
            out[s], out_at[s] = version, at
    return tuple(out), tuple(out_at)


def _decided(session: Session, actor: Optional[int]) -> Session:
    decisions, decided_at = _settle(session.to_act(), session.decisions, session.decided_at, actor,
                                    session.version, session.moved_at, len(session.seats))
    if decisions == session.decisions and decided_at == session.decided_at:
        return session
    return _with(session, decisions=decisions, decided_at=decided_at)


def _created(session: Optional[Session], event: StoredEvent, game_id: str) -> Session:
    data = event.data
    game = get_game(data["game_type"])
    seats = tuple(Seat(kind=s["kind"], name=s.get("name"), level=s.get("level"), budget=s.get("budget"),
                       reserved=s.get("reserved")) for s in data["seats"])
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
    seats[event.data["seat"]] = Seat(kind="player", name=event.data.get("name"), account=event.data.get("account"),
                                     reserved=seats[event.data["seat"]].reserved)
    return {"seats": tuple(seats)}


def _seat_left(session: Session, event: StoredEvent) -> dict:
    """A person left: a bot of the recorded level plays the seat from now on."""
    seats = list(session.seats)
    before = seats[event.data["seat"]]
    seats[event.data["seat"]] = Seat(kind="bot", name=before.name, level=event.data["level"],
                                     account=before.account, left=event.version)
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


def _expired(session: Session, event: StoredEvent) -> dict:
    return {"status": EXPIRED, "expired": dict(event.data)}


def _abandoned(session: Session, event: StoredEvent) -> dict:
    return {"status": ABANDONED, "abandoned": dict(event.data)}


_PLATFORM = {"seat.claimed": _seat_claimed, "seat.left": _seat_left, "game.started": _started, "game.scored": _scored,
             "game.expired": _expired, "game.abandoned": _abandoned}


def evolve(session: Optional[Session], event: StoredEvent, game_id: str = "") -> Session:
    if event.type == "game.created":
        session = _created(session, event, game_id or (session.game_id if session else ""))
        changes = {}
    else:
        changes = _PLATFORM.get(event.type, _rules_event)(session, event)
    changes["version"] = event.version
    changes["head"] = event.hash
    changes["moved_at"] = event.at
    if event.cmd is not None:
        changes["last_action_at"] = event.at
    return _with(session, **changes)


def fold(events: Iterable[StoredEvent], game_id: str, session: Optional[Session] = None) -> Optional[Session]:
    """evolve() over the events. A run of rules events folds straight into the game's state
    and updates the session once at its end (the same result: a game once over stays over,
    and only platform events change anything else). Each batch's end (the next command or
    leave, or the end of the events) settles the seats' decisions; a seat its person left
    opens a new decision, the bot's."""
    run: list[StoredEvent] = []
    pending, actor = False, None   # a batch folded whose decisions are not settled yet
    for event in events:
        if session is not None and event.type not in PLATFORM_EVENTS:
            run.append(event)
            continue
        if run:
            session, pending, actor = _fold_rules_run(session, run, pending, actor)
            run = []
        if event.cmd is not None or event.type == "seat.left":   # a batch of its own begins
            if pending:
                session = _decided(session, actor)
            actor = event.cmd.get("seat") if event.cmd is not None else event.data["seat"]
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
    decided_at, at = session.decided_at, session.moved_at
    for event in run:
        if event.cmd is not None:
            if pending and active:  # a command follows, so the game was not over: no is_over check
                decisions, decided_at = _settle(to_act(state), decisions, decided_at, actor, version, at, seats)
            actor = event.cmd.get("seat")
            last_action_at = event.at
        pending = True
        state = evolve_rules(state, {"type": event.type, **event.data})
        version, at = event.version, event.at
    last = run[-1]
    changes = {"state": state, "version": last.version, "head": last.hash, "last_action_at": last_action_at,
               "decisions": decisions, "decided_at": decided_at, "moved_at": last.at}
    if session.status == ACTIVE and game.is_over(state):
        changes["status"] = ENDED
    return _with(session, **changes), pending, actor
