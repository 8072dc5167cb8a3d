"""The conformance suite: the properties every game module must have, checked once for every
game of the registry (`projections.registry.all_games()`, the test-only secret-duel of
tests/toygame.py included), through the pure interface of projections/game.py.

Nothing here names a game. What a game is played with comes from its module:

- the seat counts: every count from MIN_PLAYERS to MAX_PLAYERS;
- the options: the defaults (`OptionsSchema().load({})`), every combination of the fields with a
  few values (booleans, `OneOf` choices) when there are at most `MAX_COMBINATIONS`, else each
  value alone, and the ends of each `Range` (the low end; the high end too when the range is
  short, so no variant plays for ever);
- what is secret, and to whom: `HIDDEN_INFORMATION`, and the ledger (`transfers`): a transfer
  whose `visible_to` leaves a seat out hides its asset's identity from that seat.

What is checked, at every event of random games (the opening included):

- events are JSON (no tuple, no float) and a JSON round trip folds to the same state;
- every transfer moves a positive integer quantity between two distinct accounts (so the
  double-entry ledger conserves every asset), a hidden one names what the others see instead;
- `legal_actions` is non-empty exactly for the seats `to_act` names; a game over has neither;
  every action played loads unchanged under its `ACTION_SCHEMAS` schema;
- every seat's and the spectator's redaction keeps the event's type and is JSON; a game without
  hidden information redacts nothing and shows every seat the same view;
- views are JSON; while the game is live, no view or redacted event shows, as a string, the
  identity of an asset the ledger hid from that viewer (while no balance the viewer can see
  holds it), and a viewer's view is a function of the events as that viewer saw them (two
  games the viewer cannot tell apart show it the same view);
- every game ends within `MAX_ACTIONS` random actions, with a well-formed result.

Besides: the same seed plays the same game (a different seed another), a whole log read back
from JSON replays to the final state, `decide` takes both ends of every range of a legal
template and refuses one step beyond, refuses an unknown seat, a seat not to act, a malformed
action and any action once the game is over; a game that declares hidden information hides
something; unknown options and out-of-range seat counts are refused.

The game files (tests/test_<game>.py) keep what is particular to one game: its rules' worked
examples, its special rules, and invariants that read its own state.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
from collections import Counter, defaultdict

import pytest
from marshmallow import ValidationError, fields, validate

from projections import registry
from projections.game import IllegalAction, Transfer
from projections.templates import fill_template, is_range
from tests import toygame
from tests.gamekit import (
    STARTED_VERSION,
    action_draws,
    opening_draws,
    seed_for,
    start_game,
)

pytestmark = pytest.mark.quick

MAX_ACTIONS = 20_000          # a random game that has not ended after this many actions never will
MAX_COMBINATIONS = 32         # option fields with few values: all their combinations up to this many
SHORT_RANGE = 10              # a Range this short is played at both ends, a longer one at its low end
ACTION_BUDGET = 300           # random actions per (variant, seat count): a short game plays several sessions
MAX_SESSIONS = 30
VIEWS_AT_EVERY_EVENT = 800    # the views after each of a test's first events; then after every 7th


def _games() -> dict:
    games = dict(registry.all_games())
    games.setdefault(toygame.NAME, toygame)       # tests/conftest.py registers it; passed in if not
    return games


GAMES = _games()
HOSTED = [t.name for t in registry.game_types()]  # the games the service declares (not the test-only ones)


# --------------------------------------------------------------------------- options from the schema

def _field_values(field: fields.Field) -> tuple[list, list]:
    """(values of a field with few values, values at the ends of its range)."""
    if isinstance(field, fields.Boolean):
        return [False, True], []
    few, ends = [], []
    validators = field.validators if hasattr(field, "validators") else []
    for v in validators:
        if isinstance(v, validate.OneOf):
            few = list(v.choices)
        elif isinstance(v, validate.Range) and v.min is not None:
            ends = [v.min]
            if v.max is not None and v.max - v.min <= SHORT_RANGE:
                ends.append(v.max)
    return few, ends


def option_variants(game) -> list[dict]:
    """The options to play a game with, derived from its OptionsSchema (see the module's doc)."""
    schema = game.OptionsSchema()
    defaults = schema.load({})
    few, ranged = {}, []
    for name, field in schema.fields.items():
        values, ends = _field_values(field)
        if values:
            few[name] = values
        ranged += [{name: end} for end in ends if end != defaults.get(name)]
    variants: list[dict] = []
    if few and len(list(itertools.product(*few.values()))) <= MAX_COMBINATIONS:
        for combo in itertools.product(*few.values()):
            variants.append({k: v for k, v in zip(few, combo) if v != defaults.get(k)})
    else:
        variants.append({})
        variants += [{k: v} for k, values in few.items() for v in values if v != defaults.get(k)]
    variants += ranged
    for options in variants:
        schema.load(options)                       # every variant is valid options
    return variants


def seat_counts(game) -> list[int]:
    return list(range(game.MIN_PLAYERS, game.MAX_PLAYERS + 1))


def _variant_id(options: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(options.items())) or "defaults"


def variant_params():
    """(game, options, seat count): the defaults at every seat count, each other variant at
    one, in turn."""
    out = []
    for name, game in GAMES.items():
        counts = seat_counts(game)
        for i, options in enumerate(option_variants(game)):
            for seats in (counts if not options else [counts[(i - 1) % len(counts)]]):
                out.append(pytest.param(name, options, seats, id=f"{name}-{seats}[{_variant_id(options)}]"))
    return out




# --------------------------------------------------------------------------- helpers

def _no_float(text):
    raise ValueError(f"a float: {text}")


def json_ready(value, text: str | None = None) -> bool:
    """Only what JSON holds, as JSON gives it back: dicts with string keys, lists, strings,
    integers, booleans, None (no tuple, no float). `text`: the value's JSON, when made already."""
    try:
        return json.loads(json.dumps(value) if text is None else text, parse_float=_no_float) == value
    except (TypeError, ValueError):
        return False


def quoted(candidates) -> dict:
    """{candidate as a JSON string: candidate}, for `shown_strings`."""
    return {json.dumps(c): c for c in candidates if c is not None}


JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def shown_strings(text: str, candidates: dict) -> set:
    """The candidates (`quoted`) that a JSON text holds as a string, key or leaf."""
    if not candidates:
        return set()
    return {candidates[q] for q in set(JSON_STRING.findall(text)) if q in candidates}


def identity(asset: str) -> str | None:
    """The identity an asset's name carries after its kind ("card:2C" -> "2C")."""
    return asset.split(":", 1)[1] if ":" in asset else None


def without_seat(view: dict) -> dict:
    return {k: v for k, v in view.items() if k != "seat"}


class Watcher:
    """Every per-event property of the module's doc, for one game; one Watcher may watch
    several sessions of the same game, options and seat count (its view table spans them)."""

    def __init__(self, game, seats: int):
        self.game = game
        self.seats = seats
        self.viewers = list(range(seats)) + [None]
        self.views_seen: dict = {}        # (viewer, digest of its redacted history) -> its view
        self.collisions = 0               # views compared with another game's
        self.hidden_seen = False          # some viewer saw less than another
        self.events = 0

    def new_session(self) -> None:
        self.named = {v: defaultdict(lambda: defaultdict(int)) for v in self.viewers}  # as v sees the names
        self.hidden_moved = {v: set() for v in self.viewers}                 # assets moved hidden from v
        self.secret = {v: {} for v in self.viewers}                          # v's secrets, `quoted`
        self.history = {v: b"" for v in self.viewers}

    def _update_secrets(self, viewer, asset: str) -> None:
        """An asset is secret to `viewer` while the ledger has moved it hidden from the viewer
        and no balance the viewer can see holds it."""
        secret = asset in self.hidden_moved[viewer] and not any(q > 0 for q in self.named[viewer][asset].values())
        for name in (asset, identity(asset)):
            if name is not None:
                if secret:
                    self.secret[viewer][json.dumps(name)] = name
                else:
                    self.secret[viewer].pop(json.dumps(name), None)

    def settled(self, state) -> None:
        """A state between actions (after the opening, after an action and its automatic
        steps): the seats to act are the seats with legal actions."""
        movers = self.game.to_act(state)
        assert not (self.game.is_over(state) and movers), "a game over has seats to act"
        for seat in range(self.seats):
            legal = self.game.legal_actions(state, seat)
            assert bool(legal) == (seat in movers), (seat, movers, legal)

    def __call__(self, before, event, after) -> None:
        game = self.game
        self.events += 1
        assert isinstance(event, dict) and isinstance(event.get("type"), str), event
        assert json_ready(event), event
        assert game.evolve(before, json.loads(json.dumps(event))) == after, \
            f"a JSON round trip of {event['type']} folds differently"

        # the ledger: well-formed transfers (double entry then conserves every asset; that
        # the ledger agrees with the state is each game's own test, which knows its state)
        transfers = game.transfers(before, event)
        hidden_from = defaultdict(set)              # viewer -> assets this event hides from it
        for t in transfers:
            assert isinstance(t, Transfer), t
            assert type(t.quantity) is int and t.quantity > 0, t
            assert t.frm != t.to and isinstance(t.asset, str) and t.asset, t
            assert t.price is None or type(t.price) is int, t
            if t.visible_to is not None:
                assert isinstance(t.visible_to, tuple) and all(type(s) is int for s in t.visible_to), t
                assert t.redacted_asset != t.asset, t
            for v in self.viewers:
                shown = t.asset if t.visible_to is None or v in t.visible_to else t.redacted_asset
                if shown != t.asset:
                    hidden_from[v].add(t.asset)
                    self.hidden_moved[v].add(t.asset)
                self.named[v][shown][t.frm] -= t.quantity
                self.named[v][shown][t.to] += t.quantity
        for asset in {t.asset for t in transfers}:
            for v in self.viewers:
                self._update_secrets(v, asset)

        # what each viewer sees
        over = game.is_over(after)
        look = self.events <= VIEWS_AT_EVERY_EVENT or self.events % 7 == 0
        views = {}
        for v in self.viewers:
            shown = game.redact(before, event, v)
            shown_text = json.dumps(shown, sort_keys=True)
            if shown is not None:
                assert isinstance(shown, dict) and shown.get("type") == event["type"], (v, shown)
                assert json_ready(shown, shown_text), shown
            if not game.HIDDEN_INFORMATION:
                assert shown == event, f"{event['type']} redacted for {v} in a game without hidden information"
            elif shown != event:
                self.hidden_seen = True
            leaked = shown_strings(shown_text, quoted({identity(a) for a in hidden_from[v]} | hidden_from[v]))
            assert not leaked, f"{event['type']} redacted for {v} shows {leaked}, which its transfers hide from {v}"
            self.history[v] = hashlib.sha256(self.history[v] + shown_text.encode()).digest()
            if not look:
                continue
            view = game.view(after, v)
            text = json.dumps(view, sort_keys=True)
            assert isinstance(view, dict) and json_ready(view, text), (v, view)
            views[v] = view
            if not over:
                leaked = shown_strings(text, self.secret[v])
                assert not leaked, f"the view of {v} after {event['type']} shows {leaked}, hidden from it by the ledger"
                seen = self.views_seen.setdefault((v, self.history[v]), text)
                if seen is not text:
                    self.collisions += 1
                    assert seen == text, (f"viewer {v} saw the same events in two games, yet two views "
                                          f"after {event['type']}: {seen} / {text}")
        if not look:
            return
        stripped = [without_seat(views[v]) for v in self.viewers]
        if not game.HIDDEN_INFORMATION:
            assert all(s == stripped[-1] for s in stripped), "views differ by seat in a game without hidden information"
        elif any(s != stripped[-1] for s in stripped):
            self.hidden_seen = True


def play(game, options: dict, seats: int, seed: str, *, watch: Watcher | None = None, probe=None):
    """One random game through the pure interface, as gamekit.random_playout plays it, with
    the opening's events reported too. Returns (final state, every event, every action)."""
    rng = random.Random(seed)
    loaded = game.OptionsSchema().load(options)
    state = game.new_state(loaded, seats)
    if watch:
        watch.new_session()
    log, actions = [], []
    for event in game.start(state, opening_draws(seed)):
        after = game.evolve(state, event)
        if watch:
            watch(state, event, after)
        state = after
        log.append(event)
    version = STARTED_VERSION + len(log)
    while True:
        if watch:
            watch.settled(state)
        if game.is_over(state):
            break
        assert len(actions) < MAX_ACTIONS, f"{game.NAME} did not end in {MAX_ACTIONS} random actions"
        movers = game.to_act(state)
        assert movers, "nobody to act in a live game"
        seat = rng.choice(movers)
        legal = game.legal_actions(state, seat)
        if probe:
            probe(state, seat, legal, version)
        action = fill_template(rng.choice(legal), rng)
        assert game.ACTION_SCHEMAS[action["type"]]().load(action) == action, action
        events = game.decide(state, seat, action, action_draws(seed, version))
        assert events, f"the legal action {action} made no event"
        for event in events:
            after = game.evolve(state, event)
            if watch:
                watch(state, event, after)
            state = after
            log.append(event)
        actions.append((seat, action))
        version += len(events)
    return state, log, actions


def check_result(game, state, seats: int) -> None:
    res = game.result(state)
    assert json_ready(res), res
    winners, ranks, scores = res["winners"], res["ranks"], res["scores"]
    assert len(ranks) == len(scores) == seats
    assert winners == sorted(set(winners)) and all(type(w) is int and 0 <= w < seats for w in winners)
    assert all(type(r) is int and 1 <= r <= seats for r in ranks)
    assert all(type(s) is int for s in scores)
    assert all(ranks[w] == 1 for w in winners)


# --------------------------------------------------------------------------- the module

@pytest.mark.parametrize("name", GAMES)
def test_the_module_has_the_whole_interface(name):
    game = GAMES[name]
    assert [n for n in registry.REQUIRED if not hasattr(game, n)] == []
    assert game.NAME == name and isinstance(game.HIDDEN_INFORMATION, bool)
    assert 1 <= game.MIN_PLAYERS <= game.MAX_PLAYERS
    assert isinstance(game.OptionsSchema().load({}), dict)
    with pytest.raises(ValidationError):
        game.OptionsSchema().load({"no_such_option": 1})
    for kind, schema in game.ACTION_SCHEMAS.items():
        with pytest.raises(ValidationError):
            schema().load({"type": f"not-{kind}"})


@pytest.mark.parametrize("name", HOSTED)
def test_a_hosted_game_refuses_seat_counts_out_of_its_range(name):
    game = GAMES[name]
    options = game.OptionsSchema().load({})
    for seats in (game.MIN_PLAYERS - 1, game.MAX_PLAYERS + 1):
        with pytest.raises(ValueError):
            game.new_state(options, seats)
    for seats in seat_counts(game):
        game.new_state(options, seats)


# --------------------------------------------------------------------------- random play

@pytest.mark.parametrize("name,options,seats", variant_params())
def test_random_games_keep_every_invariant_and_end(name, options, seats):
    game = GAMES[name]
    watch = Watcher(game, seats)
    played = sessions = 0
    while sessions == 0 or (played < ACTION_BUDGET and sessions < MAX_SESSIONS):
        seed = seed_for(1000 * seats + sessions)
        final, log, actions = play(game, options, seats, seed, watch=watch)
        assert game.is_over(final)
        check_result(game, final, seats)
        if sessions == 0:                    # the same seed plays the same game
            again = play(game, options, seats, seed)
            assert again[1] == log and again[2] == actions
        played += len(actions)
        sessions += 1
    if not options:
        # the declaration is true: in a game with hidden information some viewer sees less
        # than another (one without is held to showing everything, event by event)
        assert watch.hidden_seen == game.HIDDEN_INFORMATION


@pytest.mark.parametrize("name", GAMES)
def test_the_seed_decides_the_game_and_a_log_replays_from_json(name):
    game = GAMES[name]
    for seats in (game.MIN_PLAYERS, game.MAX_PLAYERS):
        final, log, _ = play(game, {}, seats, seed_for(5))
        assert play(game, {}, seats, seed_for(5))[1] == log
        assert play(game, {}, seats, seed_for(6))[1] != log
        state = game.new_state(game.OptionsSchema().load({}), seats)
        for event in json.loads(json.dumps(log)):
            state = game.evolve(state, event)
        assert state == final
        # the opening as gamekit.start_game folds it is the log's beginning
        _, opening = start_game(game, {}, seats, seed_for(5))
        assert log[:len(opening)] == opening


# --------------------------------------------------------------------------- decide

BAD_SEATS = (True, -1, "0", None, 1.0)
MALFORMED = (["pass"], "pass", None, {}, {"type": 3}, {"type": "no-such-action"})


def _ends(template: dict, end: str) -> dict:
    return {k: (v[end] if is_range(v) else v) for k, v in template.items()}


@pytest.mark.parametrize("name", GAMES)
def test_decide_takes_what_legal_actions_offer_and_refuses_the_rest(name):
    game = GAMES[name]
    probes = Counter()

    for seats in seat_counts(game):
        def probe(state, seat, legal, version, seats=seats):
            rng = action_draws(seed_for(seats), version)
            for template in legal:
                for end in ("min", "max"):
                    game.decide(state, seat, _ends(template, end), rng)      # both ends are legal
                for key, value in template.items():
                    if is_range(value):
                        for beyond in (value["min"] - 1, value["max"] + 1):
                            with pytest.raises(IllegalAction):
                                game.decide(state, seat, {**_ends(template, "min"), key: beyond}, rng)
                            probes["beyond"] += 1
            action = _ends(legal[0], "min")
            for other in range(seats):
                if other not in game.to_act(state):
                    with pytest.raises(IllegalAction):
                        game.decide(state, other, action, rng)
                    probes["not to act"] += 1
            for bad in BAD_SEATS + (seats,):
                with pytest.raises(IllegalAction):
                    game.decide(state, bad, action, rng)
            for bad in MALFORMED:
                with pytest.raises(IllegalAction) as err:
                    game.decide(state, seat, bad, rng)
                if isinstance(bad, dict):
                    assert err.value.field == "type", (bad, err.value.field)
            probes["states"] += 1

        final, _, actions = play(game, {}, seats, seed_for(seats), probe=probe)
        for seat in range(seats):               # once over, what was legal last is refused
            for _, action in actions[-seats:]:
                with pytest.raises(IllegalAction):
                    game.decide(final, seat, action, action_draws(seed_for(seats), 10_000))
    assert probes["states"]
