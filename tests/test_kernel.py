"""The rules kernel: one validation, one order of generic checks, one folding batch."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from projections.game import IllegalAction
from projections.kernel import Action, Actions, Batch, Bool, Choice, Int, evolver, fold_events

pytestmark = pytest.mark.quick


@dataclass(frozen=True)
class Counter:
    total: int = 0
    phase: str = "count"
    turn: int = 0


def _added(state, event):
    total = state.total + event["n"]
    return Counter(total, "over" if total >= 10 else "count", (state.turn + 1) % 2)


evolve = evolver({"added": _added})


def _add(batch, seat, action, rng):
    batch.emit({"type": "added", "n": action["n"]})
    if action["twice"]:
        batch.emit({"type": "added", "n": action["n"]})


def _shout(state, seat, action, rng):
    return [{"type": "added", "n": 0}]


ACTIONS = Actions("toy-counter", [
    Action("add", _add, {"n": Int(min=1, max=5), "twice": Bool()}, phases=frozenset({"count"}), batch=True),
    Action("shout", _shout, {"word": Choice(("hey", "ho"))}, phases=frozenset({"other"})),
], players=lambda s: 2, to_act=lambda s: [] if s.phase == "over" else [s.turn],
   is_over=lambda s: s.phase == "over", phase=lambda s: s.phase, evolve=evolve)


def _error(action, state=Counter(), seat=0):
    with pytest.raises(IllegalAction) as err:
        ACTIONS.decide(state, seat, action, None)
    return err.value


@pytest.mark.parametrize("action, field", [
    ([], None), ({}, "type"), ({"type": "jump"}, "type"), ({"type": 3}, "type"),
    ({"type": "add", "n": 1}, "twice"), ({"type": "add", "n": 1, "twice": True, "x": 1}, "x"),
    ({"type": "add", "n": True, "twice": True}, "n"), ({"type": "add", "n": 1.0, "twice": True}, "n"),
    ({"type": "add", "n": 6, "twice": True}, "n"), ({"type": "add", "n": 0, "twice": True}, "n"),
    ({"type": "add", "n": 1, "twice": 1}, "twice"), ({"type": "shout", "word": "yo"}, "word"),
    ({"type": "shout", "word": 7}, "word"),
])
def test_shape_errors_name_the_field(action, field):
    assert _error(action).field == field


def test_generic_checks_in_order():
    good = {"type": "add", "n": 1, "twice": False}
    assert _error(good, Counter(10, "over")).message == "the game is over"
    assert _error(good, seat=2).field == "seat"
    assert _error(good, seat=True).field == "seat"
    assert "not your turn" in _error(good, seat=1).message
    assert _error({"type": "shout", "word": "hey"}).field == "type"
    # shape comes first, even in a game that is over
    assert _error({"type": "add"}, Counter(10, "over")).field == "n"


def test_batch_folds_as_it_emits():
    events = ACTIONS.decide(Counter(), 0, {"type": "add", "n": 3, "twice": True}, None)
    assert events == [{"type": "added", "n": 3}, {"type": "added", "n": 3}]
    assert fold_events(Counter(), events, evolve).total == 6
    batch = Batch(Counter(), evolve)
    assert batch.extend(events).total == 6 and batch.events == events


def test_unknown_event_is_an_error():
    with pytest.raises(ValueError):
        evolve(Counter(), {"type": "nope"})


def test_schemas_come_from_the_same_definition():
    schema = ACTIONS.schemas["add"]()
    assert schema.load({"type": "add", "n": 2, "twice": False}) == {"type": "add", "n": 2, "twice": False}
    assert set(schema.fields) == {"type", "n", "twice"}
    assert ACTIONS.schemas["add"].__name__ == "ToyCounter_add"
    assert schema.validate({"type": "add", "n": 9, "twice": False})
    assert schema.validate({"type": "add", "n": 2, "twice": 1})


def test_ledger_dispatches_by_event_type():
    from projections.kernel import ledger

    transfers = ledger({"added": lambda state, event: [("bank", event["n"])]})
    assert transfers(Counter(), {"type": "added", "n": 2}) == [("bank", 2)]
    assert transfers(Counter(), {"type": "other"}) == []
