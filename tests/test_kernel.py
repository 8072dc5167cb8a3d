"""The rules kernel: one validation, one order of generic checks, one folding batch, one loop of
automatic steps and one to-act guard of legal actions."""

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


def _phase_after(total):
    """Ten ends the game; a positive multiple of three earns an automatic bonus point."""
    return "over" if total >= 10 else "bonus" if total and total % 3 == 0 else "count"


def _added(state, event):
    total = state.total + event["n"]
    return Counter(total, _phase_after(total), (state.turn + 1) % 2)


def _bonus(state, event):
    return Counter(state.total + 1, _phase_after(state.total + 1), state.turn)


evolve = evolver({"added": _added, "bonus": _bonus})


def _add(batch, seat, action, rng):
    batch.emit({"type": "added", "n": action["n"]})
    if action["twice"]:
        batch.emit({"type": "added", "n": action["n"]})


def _shout(state, seat, action, rng):
    return [{"type": "added", "n": 0}]


def _give_bonus(batch, rng):
    batch.emit({"type": "bonus"})


def _legal(state, seat):
    return [{"type": "add", "n": {"min": 1, "max": 5}, "twice": False}]


def _to_act(state):
    return [] if state.phase in ("over", "bonus") else [state.turn]


ACTIONS = Actions("toy-counter", [
    Action("add", _add, {"n": Int(min=1, max=5), "twice": Bool()}, phases=frozenset({"count"})),
    Action("shout", _shout, {"word": Choice(("hey", "ho"))}, phases=frozenset({"other"}), batch=False),
], players=lambda s: 2, to_act=_to_act, is_over=lambda s: s.phase == "over", phase=lambda s: s.phase,
   evolve=evolve, legal=_legal, automatic=lambda s: _give_bonus if s.phase == "bonus" else None)


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
    events = ACTIONS.decide(Counter(), 0, {"type": "add", "n": 2, "twice": True}, None)
    assert events == [{"type": "added", "n": 2}, {"type": "added", "n": 2}]
    assert fold_events(Counter(), events, evolve).total == 4
    batch = Batch(Counter(), evolve)
    assert batch.extend(events).total == 4 and batch.events == events


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


# --- the automatic steps and the to-act guard -----------------------------------------------

def test_automatic_steps_follow_an_action_until_a_seat_must_act():
    events = ACTIONS.decide(Counter(), 0, {"type": "add", "n": 3, "twice": False}, None)
    assert events == [{"type": "added", "n": 3}, {"type": "bonus"}]
    assert fold_events(Counter(), events, evolve) == Counter(4, "count", 1)


def test_automatic_steps_follow_a_list_decider_too():
    events = ACTIONS.decide(Counter(3, "other"), 0, {"type": "shout", "word": "hey"}, None)
    assert events == [{"type": "added", "n": 0}, {"type": "bonus"}]


def test_automatic_steps_stop_when_the_game_is_over():
    # 8 + 1 = 9 earns the bonus, which makes 10: over, and no step runs in a game that is over
    ran = []
    actions = Actions("toy-counter", ACTIONS.by_type.values(), players=lambda s: 2, to_act=_to_act,
                      is_over=lambda s: s.phase == "over", phase=lambda s: s.phase, evolve=evolve,
                      legal=_legal, automatic=lambda s: ran.append(s.phase) or _give_bonus)
    events = actions.decide(Counter(8), 0, {"type": "add", "n": 1, "twice": False}, None)
    assert events == [{"type": "added", "n": 1}, {"type": "bonus"}]
    assert fold_events(Counter(8), events, evolve).phase == "over" and "over" not in ran


def test_the_opening_is_followed_by_the_automatic_steps_and_gets_the_rng():
    rng = object()
    seen = []

    def opening(batch, given):
        seen.append(given)
        batch.emit({"type": "added", "n": 6})

    assert ACTIONS.start(Counter(), rng, opening) == [{"type": "added", "n": 6}, {"type": "bonus"}]
    assert seen == [rng]


def test_a_step_that_emits_nothing_is_a_bug_not_a_hang():
    actions = Actions("toy-counter", ACTIONS.by_type.values(), players=lambda s: 2, to_act=_to_act,
                      is_over=lambda s: s.phase == "over", phase=lambda s: s.phase, evolve=evolve,
                      legal=_legal, automatic=lambda s: (lambda batch, rng: None) if s.phase == "bonus" else None)
    with pytest.raises(RuntimeError, match="emitted nothing"):
        actions.decide(Counter(), 0, {"type": "add", "n": 3, "twice": False}, None)


def test_legal_actions_are_the_hooks_only_for_a_seat_to_act_in_a_live_game():
    assert ACTIONS.legal_actions(Counter(), 0) == _legal(Counter(), 0)
    assert ACTIONS.legal_actions(Counter(), 1) == []                 # not this seat's turn
    assert ACTIONS.legal_actions(Counter(), 7) == []                 # no such seat
    assert ACTIONS.legal_actions(Counter(10, "over"), 0) == []       # the game is over

    def never(state, seat):
        raise AssertionError("the guard must answer first")

    guarded = Actions("toy-counter", ACTIONS.by_type.values(), players=lambda s: 2,
                      to_act=lambda s: [0, 1], is_over=lambda s: s.phase == "over", phase=lambda s: s.phase,
                      evolve=evolve, legal=never)
    assert guarded.legal_actions(Counter(10, "over"), 0) == []      # over, whatever to_act says


def test_a_decider_emits_into_a_batch_unless_it_says_otherwise():
    assert ACTIONS.by_type["add"].batch and not ACTIONS.by_type["shout"].batch
