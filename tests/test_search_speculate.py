"""The search bot's determinizer and evaluator for speculate (issue 20): sampled states agree
with the seat's view, play on to the end, sample what is hidden (and only that), leak
nothing, and the evaluator gives win chances."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import fields, replace
from functools import cache
from itertools import combinations, pairwise

import pytest

from events.randomness import Draws
from projections.registry import get_game
from tests.gamekit import check_sampled_worlds, sampling_times
from projections.speculate import (
    EVENT_CARDS_TUPLE,
    LEVELS,
    NT,
    RULES_VERSION,
    State,
    economy,
    parse_objective,
)
from projections.templates import fill_template
from workers.bots import policy
from workers.bots.search.speculate import determinize, evaluate

GAME = get_game("speculate")
HEURISTIC = policy("speculate", "heuristic")
RANDOM = policy("speculate", "random")
H, R = HEURISTIC, RANDOM

# (players, seed number, bots by seat, rules version, options): together every phase
# (event1, trade, respond, event2, pay, over), eliminations, deck reshuffles, every
# objective level, 3 to 6 players, rules version 1 (other targets at 5 and 6) and a short game.
SESSIONS = [
    (3, 1, (H, H, H), RULES_VERSION, {}),
    (4, 2, (H, R, H, R), RULES_VERSION, {}),
    (4, 3, (H, H, H, H), RULES_VERSION, {}),
    (5, 4, (H,) * 5, 1, {}),
    (6, 5, (H,) * 6, 1, {}),
    (6, 6, (R, H) * 3, RULES_VERSION, {}),
    (3, 7, (R, R, R), RULES_VERSION, {"rounds": 4}),
]
HIDDEN = {"hands", "event_deck", "objective_decks", "objectives"}


def _new_game(players: int, seed: str, rules_version: int, options: dict) -> State:
    state = GAME.new_state(GAME.OptionsSchema().load(dict(options)), players, rules_version)
    for event in GAME.start(state, Draws(seed, "v2")):
        state = GAME.evolve(state, event)
    return state


def _play_from(state: State, bots, seed: str, max_actions: int = 20_000) -> list[State]:
    """Every state from `state` to the game's end, each seat choosing from its view only."""
    out = [state]
    for version in range(max_actions):
        if GAME.is_over(state):
            return out
        seat = min(GAME.to_act(state))
        action = bots[seat](GAME.view(state, seat), GAME.legal_actions(state, seat), seat, random.Random(version))
        for event in GAME.decide(state, seat, action, Draws(seed, f"v{version}")):
            state = GAME.evolve(state, event)
        out.append(state)
    raise AssertionError(f"no end within {max_actions} actions")


@cache
def _session(index: int) -> tuple[State, ...]:
    players, seed_no, bots, version, options = SESSIONS[index]
    seed = f"{seed_no:064x}"
    return tuple(_play_from(_new_game(players, seed, version, options), bots, seed))


def _all_states(step: int = 1):
    for i in range(len(SESSIONS)):
        states = _session(i)
        yield from states[::step]
        if (len(states) - 1) % step:
            yield states[-1]                # the final state, always


def _mid_game(index: int = 2, phase: str = "trade") -> State:
    """A state of a 4-player session in its 4th round, in the given phase."""
    return next(s for s in _session(index) if s.round == 4 and s.phase == phase)


# --- what the rules conserve -------------------------------------------------------------------

def _objective_partition_ok(state: State) -> bool:
    """Each level: the cards held, in the deck and met name every type set exactly once, each
    with the level's targets (of the state's rules version)."""
    targets = economy(state.players, state.rules_version).targets
    for level in range(1, LEVELS + 1):
        cards = list(state.objective_decks[level - 1])
        cards += [o for o in state.objectives if o is not None and parse_objective(o)[0] == level]
        cards += [o for met in state.met for o in met if parse_objective(o)[0] == level]
        combos = sorted(tuple(t for t, v in enumerate(parse_objective(o)[1]) if v) for o in cards)
        if combos != sorted(combinations(range(NT), len(targets[level]))):
            return False
        if any(sorted(v for v in parse_objective(o)[1] if v) != sorted(targets[level]) for o in cards):
            return False
    return True


def _event_cards_ok(state: State) -> bool:
    cards = [c for h in state.hands for c in h] + list(state.event_deck) + list(state.discard)
    return Counter(cards) == Counter(EVENT_CARDS_TUPLE)


def _assets(state: State) -> tuple:
    """Total money, and total shares of each type (seats + bank)."""
    money = sum(state.money) + state.bank_money
    shares = tuple(state.bank_shares[t] + sum(h[t] for h in state.shares) for t in range(NT))
    return money, shares


# --- 1. consistency ----------------------------------------------------------------------------

def test_the_sessions_cover_every_phase_eliminations_reshuffles_and_every_level():
    states = list(_all_states())
    assert {s.phase for s in states} >= {"event1", "trade", "respond", "event2", "pay", "over"}
    assert any(s.eliminated for s in states)
    assert any(b.event_deck and len(b.event_deck) > len(a.event_deck) for a, b in pairwise(states))
    assert max(max(s.levels) for s in states) == LEVELS + 1
    assert {s.players for s in states} == {3, 4, 5, 6}


def test_a_sampled_state_shows_the_seat_the_same_view_and_legal_actions():
    assert check_sampled_worlds(GAME, _all_states(step=3), determinize, random.Random(1)) > 2000


def test_a_sampled_state_keeps_every_public_field_of_the_real_one():
    """All but the hidden parts equal the real state's; the reconstructed `turns` is exact for
    live seats; the rules version is the real one unless the view cannot tell them apart."""
    rng = random.Random(2)
    for real in _all_states(step=5):
        for seat in range(real.players):
            sampled = determinize(GAME.view(real, seat), seat, rng)
            for f in fields(State):
                if f.name not in HIDDEN | {"turns", "rules_version"}:
                    assert getattr(sampled, f.name) == getattr(real, f.name), f.name
            assert sorted(sampled.hands[seat]) == sorted(real.hands[seat])
            assert sampled.objectives[seat] == real.objectives[seat]
            assert all(a == b for a, b, alive in zip(sampled.turns, real.turns, real.alive) if alive)
            assert sampled.rules_version in (real.rules_version, RULES_VERSION)


def test_the_rules_version_is_read_from_the_objectives_in_view():
    """Version 1 at 6 players has other level-3 and level-4 targets: once such a card is in
    view the sampled state is version 1, and its unseen cards carry version 1 targets."""
    rng = random.Random(3)
    found = 0
    for real in _session(4):
        view = GAME.view(real, 0)
        seen = [o["id"] for met in view["objectives_met"] for o in met]
        if any(parse_objective(o)[0] >= 3 for o in seen):
            sampled = determinize(view, 0, rng)
            assert sampled.rules_version == 1
            assert _objective_partition_ok(sampled)
            found += 1
    assert found


def test_at_game_over_every_hand_and_objective_is_the_real_one():
    rng = random.Random(4)
    for i in range(len(SESSIONS)):
        real = _session(i)[-1]
        for seat in range(real.players):
            sampled = determinize(GAME.view(real, seat), seat, rng)
            assert [sorted(h) for h in sampled.hands] == [sorted(h) for h in real.hands]
            assert sampled.objectives == real.objectives
            assert evaluate(sampled) == evaluate(real)


# --- 2. playable -------------------------------------------------------------------------------

def test_random_play_from_sampled_states_ends_and_conserves_money_shares_and_cards():
    rng = random.Random(5)
    starts = []
    for i in range(len(SESSIONS)):
        states = _session(i)
        picks = [s for s in states if s.phase == "pay"][:1] + list(states[1:-1:len(states) // 3])
        starts += [(s, (i + k) % s.players) for k, s in enumerate(picks)]
    assert any(s.phase == "pay" for s, _ in starts) and any(s.phase == "respond" for s, _ in starts)
    for n, (real, seat) in enumerate(starts):
        sampled = determinize(GAME.view(real, seat), seat, rng)
        assets = _assets(real)
        assert _assets(sampled) == assets
        state = sampled
        for k in range(20_000):
            assert _event_cards_ok(state) and _objective_partition_ok(state)
            assert _assets(state) == assets
            if GAME.is_over(state):
                break
            mover = min(GAME.to_act(state))
            action = fill_template(rng.choice(GAME.legal_actions(state, mover)), rng)
            for event in GAME.decide(state, mover, action, Draws(f"{n + 1:064x}", f"p{k}")):
                state = GAME.evolve(state, event)
        assert GAME.is_over(state)


# --- 3. variety --------------------------------------------------------------------------------

def test_different_seeds_sample_different_hidden_parts_all_of_them_possible():
    real = _mid_game()
    seat = real.active
    view = GAME.view(real, seat)
    others = [q for q in range(real.players) if q != seat]
    samples = [determinize(view, seat, random.Random(k)) for k in range(30)]
    seen_cards = Counter(view["you"]["hand"]) + Counter(view["discard"])
    unseen = Counter(EVENT_CARDS_TUPLE) - seen_cards
    seen_combos = {(parse_objective(o)[0], tuple(t for t, v in enumerate(parse_objective(o)[1]) if v))
                   for o in [view["you"]["objective"]["id"]] + [o["id"] for m in view["objectives_met"] for o in m]}
    for s in samples:
        assert _event_cards_ok(s) and _objective_partition_ok(s)
        # no card twice, none the seat has seen: the others' hands and the deck are the unseen cards
        assert Counter([c for q in others for c in s.hands[q]] + list(s.event_deck)) == unseen
        for q in others:
            level, values = parse_objective(s.objectives[q])
            assert level == real.levels[q]
            assert (level, tuple(t for t, v in enumerate(values) if v)) not in seen_combos
    assert len({tuple(s.hands[q] for q in others) for s in samples}) > 20
    assert len({s.event_deck for s in samples}) > 20
    assert len({tuple(s.objectives[q] for q in others) for s in samples}) > 20
    assert len({s.objective_decks for s in samples}) > 20
    # every other seat's objective varies, and so do the target orders of a fixed type set
    for q in others:
        assert len({s.objectives[q] for s in samples}) > 5
    deck4 = Counter(o for s in samples for o in s.objective_decks[LEVELS - 1])
    assert len(deck4) > 10 * 3              # 10 type sets, 6 target orders each: far more than 10 ids


def test_a_rivals_objective_is_read_off_the_types_it_still_holds():
    """Heuristic players sell the types their objective does not name: by round 4 a rival's
    holdings point at its objective, and the samples follow them (weight 0.1 per named type
    it holds none of) instead of dealing the unseen type sets uniformly."""
    real = _mid_game()
    seat = real.active
    view = GAME.view(real, seat)
    def types(objective: str) -> set:
        return {t for t, v in enumerate(parse_objective(objective)[1]) if v}

    def held(q: int) -> set:
        return {t for t, k in enumerate(real.shares[q]) if k}

    # the rivals that hold their objective's types and at most four (not yet bought in: no)
    rivals = [q for q in range(real.players) if q != seat and real.objectives[q] is not None
              and len(held(q)) <= 4 and types(real.objectives[q]) <= held(q)]
    assert rivals
    samples = [determinize(view, seat, random.Random(k)) for k in range(300)]
    for q in rivals:
        named = [types(s.objectives[q]) for s in samples]
        within = sum(1 for t in named if t <= held(q)) / len(samples)
        assert within > 0.6, (q, held(q), within)      # uniform: C(|held|, 3) / 10 or less
        assert sum(1 for t in named if t == types(real.objectives[q])) / len(samples) > 0.3


def test_a_seat_at_a_level_whose_deck_ran_dry_may_hold_no_objective():
    """C(5, 3) = 10 cards a level outnumber 6 seats, so the shipped data never runs a deck dry;
    a replaced data file could. Built by hand: 6 seats at level 1, its 4 deck cards and seat
    5's card moved to seat 0's met list, seat 5 holding none: 4 unseen cards for 5 seats."""
    start = _new_game(6, f"{8:064x}", RULES_VERSION, {})
    real = start
    moved = real.objective_decks[0] + (real.objectives[5],)
    real = replace(real, objective_decks=((),) + real.objective_decks[1:],
                   objectives=real.objectives[:5] + (None,), met=(moved,) + real.met[1:])
    view = GAME.view(real, 0)
    none_at = Counter()
    for k in range(40):
        sampled = determinize(view, 0, random.Random(k))
        assert GAME.view(sampled, 0) == view and _objective_partition_ok(sampled)
        empty = [q for q in range(1, 6) if sampled.objectives[q] is None]
        assert len(empty) == 1
        none_at[empty[0]] += 1
    assert len(none_at) == 5


# --- 4. no leak --------------------------------------------------------------------------------

def _swap_hidden(real: State, seat: int) -> State:
    """The same world but for what `seat` may not know: an opponent's event card swapped with a
    different one from the deck, another opponent's objective swapped with one of its level's
    deck, and an unseen deck card's targets dealt to its types in another order."""
    a, b = [q for q in range(real.players) if q != seat][:2]
    hand_a = list(real.hands[a])
    j = next(j for j, c in enumerate(real.event_deck) if c != hand_a[0])
    deck = list(real.event_deck)
    hand_a[0], deck[j] = deck[j], hand_a[0]
    level = real.levels[b]
    decks = [list(d) for d in real.objective_decks]
    objectives = list(real.objectives)
    objectives[b], decks[level - 1][0] = decks[level - 1][0], objectives[b]
    last = decks[LEVELS - 1][-1]
    lv, values = parse_objective(last)
    named = [t for t in range(NT) if values[t]]
    rotated = {t: values[named[(i + 1) % len(named)]] for i, t in enumerate(named)}
    decks[LEVELS - 1][-1] = f"L{lv}:" + ",".join(f"{GAME.SHARES[t]}={rotated[t]}" for t in named)
    return replace(real, hands=real.hands[:a] + (tuple(hand_a),) + real.hands[a + 1:], event_deck=tuple(deck),
                   objectives=tuple(objectives), objective_decks=tuple(tuple(d) for d in decks))


@pytest.mark.parametrize("phase", ["event1", "trade", "respond", "event2"])
def test_worlds_that_differ_only_in_what_the_seat_cannot_see_sample_alike(phase):
    real = _mid_game(phase=phase)
    for seat in range(real.players):
        other = _swap_hidden(real, seat)
        assert other != real and _event_cards_ok(other) and _objective_partition_ok(other)
        assert any(GAME.view(other, q) != GAME.view(real, q) for q in range(real.players) if q != seat)
        assert GAME.view(other, seat) == GAME.view(real, seat)
        for k in range(5):
            assert (determinize(GAME.view(real, seat), seat, random.Random(k))
                    == determinize(GAME.view(other, seat), seat, random.Random(k)))


# --- 5. evaluate -------------------------------------------------------------------------------

def test_evaluate_gives_win_chances_and_exact_shares_at_the_end():
    rng = random.Random(6)
    for real in _all_states(step=7):
        seat = rng.randrange(real.players)
        values = evaluate(determinize(GAME.view(real, seat), seat, rng))
        assert len(values) == real.players
        assert all(0.0 <= v <= 1.0 for v in values)
        assert sum(values) == pytest.approx(1.0)
        assert all(v == 0.0 for v, alive in zip(values, real.alive) if not alive)
        if GAME.is_over(real):
            winners = GAME.result(real)["winners"]
            assert values == [1 / len(winners) if q in winners else 0.0 for q in range(real.players)]


def test_a_tie_at_the_end_shares_the_win():
    real = _session(2)[-1]
    tied = replace(real, money=(100,) * 4, shares=((0,) * NT,) * 4)
    assert evaluate(tied) == [0.25] * 4


def test_a_clearly_leading_seat_is_valued_above_a_clearly_trailing_one():
    real = _mid_game()
    money = list(real.money)
    money[0], money[1] = money[0] + 600, 0
    values = evaluate(replace(real, money=tuple(money)))
    assert values[0] > 0.5 > values[1]
    assert values[0] == max(values) and values[1] == min(values)


def test_the_same_lead_counts_for_more_when_fewer_rounds_are_left():
    early = next(s for s in _session(2) if s.round == 2 and s.phase == "trade")
    late = replace(early, round=early.rounds)

    def leader_value(state: State) -> float:
        """Seat 0's chance when it is 150 ahead in money and the seats are otherwise alike."""
        money = state.money[1]
        alike = replace(state, money=(money + 150,) + (money,) * 3, shares=(state.shares[1],) * 4,
                        objectives=(None,) * 4)
        return evaluate(alike)[0]

    assert leader_value(late) > leader_value(early) > 0.25


# --- 6. speed ----------------------------------------------------------------------------------

@pytest.mark.timing
def test_determinize_and_evaluate_are_fast_at_four_players():
    states = [s for i in (1, 2) for s in _session(i)[::2]]
    views = [(GAME.view(s, s.active), s.active) for s in states]
    det_ms, eval_ms = sampling_times(views, determinize, evaluate, random.Random(7))
    print(f"\nspeculate, 4 players, {len(views)} states: determinize {det_ms:.3f} ms, evaluate {eval_ms:.3f} ms")
    assert det_ms < 2.0 and eval_ms < 1.0     # aim 0.5 ms; slack for a loaded machine
