"""The spekulation determinizer and leaf evaluator of the `search` bot
(workers/bots/search/spekulation.py): sampled worlds agree with the seat's view, play on to
the end, vary where the view hides something and leak nothing; the evaluator gives win
chances, exact at the end."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import random
from collections import Counter

import pytest

from events.randomness import Draws
from projections.registry import get_game
from tests.gamekit import check_sampled_worlds, sampling_times
from projections.spekulation import CARDS, N_COMPANIES, prices, scores
from projections.templates import fill_template
from workers.bots import policy
from workers.bots.search.spekulation import determinize, evaluate

game = get_game("spekulation")

# (options, players, rules version): both editions, both boards, 3/4/6 players, version 1
CONFIGS = [
    ({}, 3, 2), ({}, 4, 2), ({}, 6, 2),
    ({"edition": "tiles"}, 3, 2), ({"edition": "tiles"}, 4, 2), ({"edition": "tiles"}, 6, 2),
    ({"board": "star"}, 4, 2), ({"edition": "tiles", "board": "star"}, 5, 2),
    ({}, 4, 1), ({"edition": "tiles"}, 4, 1),
]
GAMES_PER_CONFIG = 2
HIDDEN_FIELDS = ("decks", "hands", "commits")



@functools.cache
def _states(options: tuple, players: int, rules_version: int, index: int) -> tuple:
    """Every state of one seeded game (the new state, each decision point, the end): heuristic
    and random bots alternate seats, a random seat of those to act moves (so commits come in
    every order)."""
    seed = hashlib.sha256(repr((options, players, rules_version, index)).encode()).hexdigest()
    bots = [policy("spekulation", "heuristic" if s % 2 == 0 else "random") for s in range(players)]
    order = random.Random(index)
    state = game.new_state(game.OptionsSchema().load(dict(options)), players, rules_version)
    out = [state]
    for event in game.start(state, Draws(seed, "v2")):
        state = game.evolve(state, event)
    version = 3
    while not game.is_over(state):
        out.append(state)
        seat = order.choice(game.to_act(state))
        legal = game.legal_actions(state, seat)
        action = bots[seat](game.view(state, seat), legal, seat, random.Random(version))
        for event in game.decide(state, seat, action, Draws(seed, f"v{version}")):
            state = game.evolve(state, event)
        version += 1
    out.append(state)
    return tuple(out)


def _all_states(configs=CONFIGS):
    for options, players, version in configs:
        for index in range(GAMES_PER_CONFIG):
            yield from _states(tuple(sorted(options.items())), players, version, index)


def _public_part(state):
    """The state with its secret parts blanked (what a determinization must reproduce)."""
    return dataclasses.replace(state, **{name: None for name in HIDDEN_FIELDS})


# ---------------------------------------------------------------------------------------
# 1. Consistency

def test_every_phase_and_option_is_covered():
    phases = Counter((s.edition, s.phase) for s in _all_states())
    for edition in ("dice", "tiles"):
        for phase in ("new", "trade", "rank_move", "commit", "over"):
            assert phases[(edition, phase)], (edition, phase)
    assert phases[("dice", "setup")]
    assert any(s.phase == "commit" and any(c is not None for c in s.commits) for s in _all_states())
    assert any(s.arrivals and s.phase != "over" for s in _all_states())


def test_a_sampled_world_shows_the_same_view_and_the_same_legal_actions():
    assert check_sampled_worlds(game, _all_states(), determinize, random.Random(1)) > 3000


def test_the_public_state_is_rebuilt_exactly():
    """Everything but the secret cards equals the real state, counters included (version 1
    aside, where the view does not always tell the version, and the number in a finished
    version 1 / tiles game, which the view hides and nothing reads)."""
    rng = random.Random(2)
    for state in _all_states():
        seat = state.turn % state.players
        sampled = determinize(game.view(state, seat), seat, rng)
        real = state
        if state.rules_version == 1:
            sampled = dataclasses.replace(sampled, rules_version=1)
        if state.phase == "over" and sampled.number == 0:
            real = dataclasses.replace(real, number=0)
        assert _public_part(sampled) == _public_part(real)


def test_the_rules_version_is_read_from_the_dice_edition_number_while_trading():
    seen = Counter()
    for state in _all_states([({}, 4, 1), ({}, 4, 2)]):
        if state.phase in ("trade", "rank_move"):
            sampled = determinize(game.view(state, 0), 0, random.Random(0))
            assert sampled.rules_version == state.rules_version
            seen[state.rules_version] += 1
    assert seen[1] and seen[2]


# ---------------------------------------------------------------------------------------
# 2. Playable

def _check_conserved(state):
    n = state.players
    if state.phase != "new":
        for c in range(N_COMPANIES):
            assert state.supply[c] + sum(row[c] for row in state.shares) == n - 1
    for s in range(n):
        if state.decks[s]:
            assert sorted(state.decks[s]) == sorted(CARDS)
            rest = state.decks[s][state.drawn[s]:]
            assert sorted(state.hands[s] + state.discards[s] + rest) == sorted(CARDS)
        if state.phase == "commit" and state.commits[s] is not None:
            assert state.commits[s] in state.hands[s]


def _play_to_end(state, seed: str, rng: random.Random):
    version = 0
    while not game.is_over(state):
        _check_conserved(state)
        seat = rng.choice(game.to_act(state))
        action = fill_template(rng.choice(game.legal_actions(state, seat)), rng)
        for event in game.decide(state, seat, action, Draws(seed, f"p{version}")):
            state = game.evolve(state, event)
        version += 1
        assert version < 5000
    _check_conserved(state)
    return state


def test_a_sampled_world_plays_on_to_the_end():
    rng = random.Random(3)
    states = [s for s in _all_states() if s.phase != "over"]
    for k, state in enumerate(rng.sample(states, 60)):
        seat = rng.randrange(state.players)
        sampled = determinize(game.view(state, seat), seat, rng)
        _check_conserved(sampled)
        final = _play_to_end(sampled, "%064x" % (k + 1), rng)
        pr = prices(final)
        assert list(final.final_scores) == scores(final)
        assert all(final.final_scores[s] == final.money[s] + sum(k * pr[c] for c, k in enumerate(final.shares[s]))
                   for s in range(final.players))


# ---------------------------------------------------------------------------------------
# 3. Variety

def _mid_game(phase: str, predicate=lambda s: True):
    for state in _all_states([({}, 4, 2), ({"edition": "tiles"}, 4, 2)]):
        if state.phase == phase and state.turn > 3 and predicate(state):
            return state
    raise AssertionError(f"no {phase} state")


def test_opponent_hands_and_every_deck_are_sampled_from_the_unseen_cards():
    state = _mid_game("trade", lambda s: all(len(h) == 2 for h in s.hands))
    seat = state.active
    view = game.view(state, seat)
    hands, rests = Counter(), Counter()
    for k in range(300):
        sampled = determinize(view, seat, random.Random(k))
        for s in range(state.players):
            hand, discard = sampled.hands[s], sampled.discards[s]
            assert len(set(hand)) == len(hand) == len(state.hands[s])
            assert not set(hand) & set(discard)
            assert sorted(sampled.decks[s]) == sorted(CARDS)
            rest = sampled.decks[s][sampled.drawn[s]:]
            if s == seat:
                assert hand == state.hands[s]
                assert not set(rest) & set(hand)
                rests[rest] += 1
            else:
                hands[(s, frozenset(hand))] += 1
    for s in range(state.players):
        if s != seat:
            unseen = set(CARDS) - set(state.discards[s])
            seen = {c for (t, hand), _ in hands.items() if t == s for c in hand}
            assert seen == unseen                         # every unseen card can be in the hand
            possible = math.comb(len(unseen), len(state.hands[s]))
            assert sum(1 for (t, _) in hands if t == s) == possible   # and every such hand
    own_rest = len(state.decks[seat]) - state.drawn[seat]
    assert len(rests) >= min(20, math.factorial(own_rest))   # the own deck's order is sampled too


def test_an_opponent_commit_is_a_card_of_its_sampled_hand_and_varies():
    state = _mid_game("commit", lambda s: any(c is not None and len(h) == 2
                                              for c, h in zip(s.commits, s.hands)))
    opponent = next(s for s, c in enumerate(state.commits) if c is not None and len(state.hands[s]) == 2)
    seat = next(s for s in range(state.players) if s != opponent)
    view = game.view(state, seat)
    commits = Counter()
    for k in range(100):
        sampled = determinize(view, seat, random.Random(k))
        assert sampled.commits[opponent] in sampled.hands[opponent]
        assert sampled.commits[seat] == state.commits[seat]
        for s in range(state.players):
            assert (sampled.commits[s] is None) == (state.commits[s] is None)
        commits[sampled.commits[opponent]] += 1
    assert len(commits) > 3


def test_a_finished_game_shows_every_hand():
    state = next(s for s in _all_states() if s.phase == "over")
    sampled = determinize(game.view(state, 0), 0, random.Random(0))
    assert sampled.hands == state.hands


# ---------------------------------------------------------------------------------------
# 4. No leak

def _swap_in_deck(state, s: int, a: str, b: str):
    deck = list(state.decks[s])
    i, j = deck.index(a), deck.index(b)
    deck[i], deck[j] = deck[j], deck[i]
    hand = tuple(b if c == a else c for c in state.hands[s])
    return dataclasses.replace(state, decks=state.decks[:s] + (tuple(deck),) + state.decks[s + 1:],
                               hands=state.hands[:s] + (hand,) + state.hands[s + 1:])


def _worlds_look_alike(real, other, seat: int):
    view = game.view(real, seat)
    assert game.view(other, seat) == view
    for k in range(5):
        assert determinize(view, seat, random.Random(k)) == \
            determinize(game.view(other, seat), seat, random.Random(k))


def test_an_opponent_hand_card_swapped_with_a_deck_card_changes_nothing_for_the_seat():
    swapped = 0
    for state in _all_states([({}, 4, 2), ({"edition": "tiles"}, 6, 2)]):
        if state.phase not in ("trade", "rank_move"):
            continue
        seat = state.active
        for s in range(state.players):
            rest = state.decks[s][state.drawn[s]:]
            if s == seat or not rest or not state.hands[s]:
                continue
            other = _swap_in_deck(state, s, state.hands[s][0], rest[-1])
            assert other != state
            _worlds_look_alike(state, other, seat)
            swapped += 1
    assert swapped > 50


def test_the_own_deck_order_and_an_opponent_commit_change_nothing_for_the_seat():
    done = Counter()
    for state in _all_states([({}, 4, 2), ({"edition": "tiles"}, 4, 2)]):
        seat = (state.active + 1) % state.players if state.active >= 0 else 0
        rest = state.decks[seat][state.drawn[seat]:] if state.decks and state.decks[seat] else ()
        if len(rest) >= 2:
            other = _swap_in_deck(state, seat, rest[0], rest[1])
            _worlds_look_alike(state, other, seat)
            done["deck"] += 1
        if state.phase == "commit":
            for s, card in enumerate(state.commits):
                if s != seat and card is not None and len(state.hands[s]) == 2:
                    flipped = next(c for c in state.hands[s] if c != card)
                    other = dataclasses.replace(state, commits=state.commits[:s] + (flipped,) + state.commits[s + 1:])
                    _worlds_look_alike(state, other, seat)
                    done["commit"] += 1
    assert done["deck"] > 50 and done["commit"] > 20


# ---------------------------------------------------------------------------------------
# 5. Evaluate

def test_evaluate_gives_win_chances():
    for state in _all_states():
        values = evaluate(state)
        assert len(values) == state.players
        assert all(0.0 <= v <= 1.0 for v in values)
        assert sum(values) == pytest.approx(1.0)


def test_evaluate_is_exact_at_the_end():
    finals = [s for s in _all_states() if s.phase == "over"]
    for final in finals:
        winners = game.result(final)["winners"]
        assert evaluate(final) == [1.0 / len(winners) if s in winners else 0.0 for s in range(final.players)]
    tie = dataclasses.replace(finals[0], final_scores=(300, 120, 300) + (0,) * (finals[0].players - 3))
    assert evaluate(tie)[:3] == [0.5, 0.0, 0.5]


def test_a_clearly_leading_seat_is_valued_above_a_trailing_one():
    state = _mid_game("trade")
    money = (state.money[1] + 300,) + state.money[1:]
    leading = dataclasses.replace(state, money=money, shares=(state.shares[1],) + state.shares[1:])
    values = evaluate(leading)
    assert values[0] > values[1]
    assert values[0] == max(values)
    # the same lead counts for more near the END than at the start of the race
    late = dataclasses.replace(leading, positions=tuple(min(p + 40, 58) if p else p for p in leading.positions))
    early = dataclasses.replace(leading, positions=tuple(min(p, 3 + c) for c, p in enumerate(leading.positions)))
    assert evaluate(late)[0] - evaluate(late)[1] > evaluate(early)[0] - evaluate(early)[1]


def test_evaluate_favours_the_eventual_winner_late_in_the_race():
    chance = []
    for options, players, version in [({}, 4, 2), ({"edition": "tiles"}, 4, 2)]:
        for index in range(GAMES_PER_CONFIG):
            states = _states(tuple(sorted(options.items())), players, version, index)
            winners = game.result(states[-1])["winners"]
            for state in states[-len(states) // 4:-1]:
                chance.append(sum(evaluate(state)[w] for w in winners))
    assert sum(chance) / len(chance) > 1 / 4


# ---------------------------------------------------------------------------------------
# 6. Speed

@pytest.mark.timing
def test_speed_at_four_players(capsys):
    states = [s for s in _all_states([({}, 4, 2), ({"edition": "tiles"}, 4, 2)]) if s.phase != "over"]
    views = [(game.view(s, s.turn % 4), s.turn % 4) for s in states]
    det_ms, eval_ms = sampling_times(views, determinize, evaluate, random.Random(0))
    with capsys.disabled():
        print(f"\nspekulation 4p: determinize {det_ms:.3f} ms, evaluate {eval_ms:.3f} ms "
              f"(mean of {len(views)} states)")
    assert det_ms < 2.0 and eval_ms < 2.0      # aim 0.5 ms; loose for a loaded machine
