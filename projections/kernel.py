"""The rules kernel: what every game's rules share, written once.

A game module declares its actions as a table of `Action`s (the type, its fields, the
phases it is legal in, and the small function that decides it) and gets from the kernel:

- one validation of an action's shape by its one definition (`Actions.check`), the same
  definition that gives the OpenAPI schemas (`Actions.schemas`) and that legal-action
  templates fill (`projections/templates.py`);
- the generic checks of boardgame.io's reducer, in one order for every game
  (`Actions.decide`): the shape, then game over, then whose turn, then the phase;
- the automatic steps (a deal, a die roll, the end of an auction, ...) run after the opening
  and after every action until some seat must act or the game is over
  (`Actions.run_automatic`); a game says only which step is due in a state (its `automatic`
  hook), never how the loop goes (the four games used to write that loop four ways);
- the to-act guard of legal actions (`Actions.legal_actions`): nothing is legal for a seat
  that is not to act or in a game that is over; a game lists only what a seat to act may do
  (its `legal` hook);
- a `Batch` that emits events and keeps the state folded up to the last one, so a decider
  can look at the state its own events made (the four games used to have four of these).

Everything here is pure: no I/O, no clock, no randomness of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from marshmallow import Schema, fields, validate

from .game import IllegalAction

Decider = Callable[..., Any]      # (batch, seat, action, rng) -> None, or (state, seat, action, rng) -> events
Step = Callable[["Batch", Any], None]   # (batch, rng) -> None: emits one automatic step's events


# --- action fields --------------------------------------------------------------------------

class Field:
    """One field of an action: checks a JSON value and describes itself to marshmallow."""

    def check(self, name: str, value: Any) -> None:
        raise NotImplementedError

    def schema_field(self) -> fields.Field:
        raise NotImplementedError


@dataclass(frozen=True)
class Int(Field):
    """A JSON integer (never a boolean), within [min, max] where given."""

    min: Optional[int] = None
    max: Optional[int] = None

    def check(self, name: str, value: Any) -> None:
        if type(value) is not int:
            raise IllegalAction(f"{name} must be an integer", field=name)
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
            raise IllegalAction(f"{name} must be {_range_words(self.min, self.max)}, not {value}", field=name)

    def schema_field(self) -> fields.Field:
        checks = [validate.Range(min=self.min, max=self.max)] if (self.min, self.max) != (None, None) else []
        return fields.Integer(required=True, strict=True, validate=checks)


@dataclass(frozen=True)
class Choice(Field):
    """A JSON string, one of `choices`."""

    choices: tuple[str, ...]

    def check(self, name: str, value: Any) -> None:
        if not isinstance(value, str):
            raise IllegalAction(f"{name} must be a string", field=name)
        if value not in self.choices:
            raise IllegalAction(f"{name} must be one of {list(self.choices)}, not {value!r}", field=name)

    def schema_field(self) -> fields.Field:
        return fields.String(required=True, validate=validate.OneOf(list(self.choices)))


class StrictBoolean(fields.Boolean):
    """A boolean that accepts only JSON true and false (marshmallow's also takes 1, "yes", ...)."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


@dataclass(frozen=True)
class Bool(Field):
    """A JSON boolean."""

    def check(self, name: str, value: Any) -> None:
        if not isinstance(value, bool):
            raise IllegalAction(f"{name} must be true or false", field=name)

    def schema_field(self) -> fields.Field:
        return StrictBoolean(required=True)


def _range_words(low: Optional[int], high: Optional[int]) -> str:
    if low is not None and high is not None:
        return f"between {low} and {high}"
    return f"at least {low}" if low is not None else f"at most {high}"


# --- actions ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Action:
    """One action type: its fields (in order), the phases it is legal in (None: any phase in
    which the seat is to act; the decider checks the rest) and its decider.

    The decider is `(batch, seat, action, rng) -> None` and emits into a `Batch` (every game's
    common case); with `batch=False` it is `(state, seat, action, rng) -> list[event]`. Either
    way it emits only what the action itself causes: the automatic steps after it are the
    kernel's to run."""

    type: str
    decide: Decider
    fields: Mapping[str, Field] = dc_field(default_factory=dict)
    phases: Optional[frozenset] = None
    batch: bool = True
    schema_name: Optional[str] = None   # the OpenAPI component's name, when a game pins one


def _no_automatic_step(state: Any) -> None:
    return None


class Actions:
    """A game's table of actions, with the generic checks every game runs before its own, the
    loop of its automatic steps and the guard of its legal actions.

    The game's hooks: `players`, `to_act`, `is_over`, `phase` and `evolve` read and fold its
    state; `legal(state, seat)` lists the actions of a seat that is to act in a live game
    (templates allowed, see projections/game.py); `automatic(state)` is the step due in that
    state, or None when a seat must act (default: a game with no automatic steps)."""

    def __init__(self, game_name: str, actions: Iterable[Action], *,
                 players: Callable[[Any], int], to_act: Callable[[Any], Sequence[int]],
                 is_over: Callable[[Any], bool], phase: Callable[[Any], str],
                 evolve: Callable[[Any, dict], Any], legal: Callable[[Any, int], list],
                 automatic: Callable[[Any], Optional[Step]] = _no_automatic_step):
        self.game_name = game_name
        self.by_type: dict[str, Action] = {a.type: a for a in actions}
        self._players, self._to_act, self._is_over, self._phase = players, to_act, is_over, phase
        self._evolve, self._legal, self._automatic = evolve, legal, automatic
        self.schemas = {kind: _schema_for(game_name, a) for kind, a in self.by_type.items()}

    # The order of the checks is the platform's: what the client sent, then whether the
    # game can take any action, then whether this seat may act, then whether this action
    # fits the moment. A client learns the first thing wrong with its request.
    def check(self, action: Any) -> Action:
        """The action's definition, once its shape is right (type known, every field present,
        none extra, each of the right kind and static range)."""
        if not isinstance(action, dict):
            raise IllegalAction("the action must be a JSON object")
        kind = action.get("type")
        if "type" not in action:
            raise IllegalAction("missing field 'type'", field="type")
        spec = self.by_type.get(kind) if isinstance(kind, str) else None
        if spec is None:
            raise IllegalAction(f"unknown action type {kind!r}; expected one of {sorted(self.by_type)}",
                                field="type")
        for name in action:
            if name != "type" and name not in spec.fields:
                raise IllegalAction(f"unexpected field {name!r} for {kind}", field=name)
        for name, kind_of in spec.fields.items():
            if name not in action:
                raise IllegalAction(f"missing field {name!r} for {kind}", field=name)
            kind_of.check(name, action[name])
        return spec

    def check_turn(self, state: Any, seat: Any, spec: Action) -> None:
        if self._is_over(state):
            raise IllegalAction("the game is over")
        if type(seat) is not int or not 0 <= seat < self._players(state):
            raise IllegalAction(f"no seat {seat!r} in this game", field="seat")
        movers = list(self._to_act(state))
        if seat not in movers:
            raise IllegalAction(f"it is not your turn (to act: {movers})", field="seat")
        phase = self._phase(state)
        if spec.phases is not None and phase not in spec.phases:
            legal = sorted(t for t, a in self.by_type.items() if a.phases is None or phase in a.phases)
            raise IllegalAction(f"{spec.type} is not possible now (phase {phase!r}); expected one of {legal}",
                                field="type")

    def decide(self, state: Any, seat: int, action: dict, rng) -> list[dict]:
        """The game's `decide`: the generic checks, the action's own events, then the automatic
        steps until a seat must act."""
        spec = self.check(action)
        self.check_turn(state, seat, spec)
        batch = Batch(state, self._evolve)
        if spec.batch:
            spec.decide(batch, seat, action, rng)
        else:
            batch.extend(spec.decide(state, seat, action, rng))
        self.run_automatic(batch, rng)
        return batch.events

    def start(self, state: Any, rng, opening: Callable[[Batch, Any], None]) -> list[dict]:
        """The game's `start`: the opening events (`opening(batch, rng)` emits them), then the
        automatic steps until a seat must act."""
        batch = Batch(state, self._evolve)
        opening(batch, rng)
        self.run_automatic(batch, rng)
        return batch.events

    def run_automatic(self, batch: Batch, rng) -> None:
        """Run the automatic steps until some seat must act or the game is over. A step that
        emits nothing would loop forever: that is a bug in the game's `automatic` hook."""
        while not self._is_over(batch.state):
            step = self._automatic(batch.state)
            if step is None:
                return
            emitted = len(batch.events)
            step(batch, rng)
            if len(batch.events) == emitted:
                raise RuntimeError(f"{self.game_name}: the automatic step {getattr(step, '__name__', step)} "
                                   f"emitted nothing (phase {self._phase(batch.state)!r})")

    def legal_actions(self, state: Any, seat: int) -> list[dict]:
        """The game's `legal_actions`: empty unless the game is live and the seat is to act;
        then what the game's `legal` hook lists."""
        if self._is_over(state) or seat not in self._to_act(state):
            return []
        return self._legal(state, seat)


def _schema_for(game_name: str, spec: Action) -> type[Schema]:
    attrs: dict[str, fields.Field] = {"type": fields.String(required=True, validate=validate.OneOf([spec.type]))}
    attrs.update({name: f.schema_field() for name, f in spec.fields.items()})
    prefix = "".join(part.capitalize() for part in game_name.replace("-", "_").split("_"))
    return Schema.from_dict(attrs, name=spec.schema_name or f"{prefix}_{spec.type}")


# --- folding while deciding -----------------------------------------------------------------

class Batch:
    """The events of one decision, folded as they are emitted: `batch.state` is always the
    state after the last event, so a decider reads what its own events made."""

    __slots__ = ("state", "events", "_evolve")

    def __init__(self, state: Any, evolve: Callable[[Any, dict], Any]):
        self.state = state
        self.events: list[dict] = []
        self._evolve = evolve

    def emit(self, event: dict) -> Any:
        self.events.append(event)
        self.state = self._evolve(self.state, event)
        return self.state

    __call__ = emit

    def extend(self, events: Iterable[dict]) -> Any:
        for event in events:
            self.emit(event)
        return self.state


def emitting(make: Callable[[Any, Any], dict]) -> Step:
    """The step that emits the one event `make(state, rng)` returns (most automatic steps)."""

    def step(batch: Batch, rng) -> None:
        batch.emit(make(batch.state, rng))

    step.__name__ = getattr(make, "__name__", "step")
    return step


def fold_events(state: Any, events: Iterable[dict], evolve: Callable[[Any, dict], Any]) -> Any:
    """The state after `events`."""
    for event in events:
        state = evolve(state, event)
    return state


def evolver(handlers: Mapping[str, Callable[[Any, dict], Any]]) -> Callable[[Any, dict], Any]:
    """An evolve() dispatching one small pure function per event type; an unknown type is a
    bug in the log or the code, never silently ignored."""

    def evolve(state: Any, event: dict) -> Any:
        try:
            handler = handlers[event["type"]]
        except KeyError:
            raise ValueError(f"unknown event type {event.get('type')!r}") from None
        return handler(state, event)

    return evolve


def ledger(handlers: Mapping[str, Callable[[Any, dict], list]]) -> Callable[[Any, dict], list]:
    """A transfers() dispatching one function per event type that moves assets; every other
    event moves nothing."""

    def transfers(state: Any, event: dict) -> list:
        handler = handlers.get(event["type"])
        return handler(state, event) if handler is not None else []

    return transfers
