"""The generic information-set MCTS (workers/bots/search/core.py) on the test-only secret duel:
each seat holds a secret card (1-9, dealt without replacement) and bets 0-3 at once; the
highest card + bet takes every other seat's bet."""

from __future__ import annotations

import dataclasses
import random
import time

import pytest

from events.randomness import Draws
from projections.templates import matches
from tests import toygame
from workers.bots import random_bot
from workers.bots.search.budget import Budget
from workers.bots.search.core import HALVING_VISITS, FastDraws, GameSearch, Search, candidate_moves, search


def duel_determinize(view: dict, seat: int, rng: random.Random) -> toygame.State:
    """The others' cards from the eight the seat does not hold; a bet already made, any."""
    players = len(view["chips"])
    others = rng.sample([c for c in range(1, 10) if c != view["my_card"]], players - 1)
    cards = others[:seat] + [view["my_card"]] + others[seat:]
    bets = tuple(view["my_bet"] if s == seat else (rng.randint(0, 3) if made else None)
                 for s, made in enumerate(view["has_bet"]))
    return toygame.State(seats=players, rounds=1, round=view["round"], cards=tuple(cards), bets=bets,
                         chips=tuple(view["chips"]))


def duel_evaluate(state: toygame.State) -> list[float]:
    winners = toygame.result(state)["winners"]
    return [1 / len(winners) if s in winners else 0.0 for s in range(state.seats)]


DUEL = GameSearch(game=toygame, determinize=duel_determinize, evaluate=duel_evaluate,
                  heuristic=random_bot.choose, rollout_moves=4)


def duel(card: int, players: int = 3, seat: int = 0):
    """A one-round duel in which `seat` holds `card` and nobody has bet."""
    state = toygame.new_state({"rounds": 1}, players)
    for event in toygame.start(state, Draws("ab" * 32)):
        state = toygame.evolve(state, event)
    cards = list(state.cards)
    if cards[seat] != card:
        other = cards.index(card) if card in cards else None
        if other is not None:
            cards[other] = cards[seat]
        cards[seat] = card
    return toygame.State(seats=players, rounds=1, cards=tuple(cards), bets=(None,) * players,
                         chips=state.chips)


ROOTS = ("ucb", "halving")


def play(state, seat: int, iterations: int = 300, seed: int = 7, time_ms: float = 10_000, root: str = "ucb",
         spec: GameSearch = DUEL):
    view = toygame.view(state, seat)
    legal = toygame.legal_actions(state, seat)
    return search(dataclasses.replace(spec, root=root), view, legal, seat, random.Random(seed),
                  Budget(iterations, time_ms))


def test_candidates_spread_a_range_with_the_heuristic_move_first():
    legal = [{"type": "bid", "amount": {"min": 3, "max": 40}}, {"type": "pass"}]
    moves = candidate_moves(legal, {"type": "bid", "amount": 17}, points=5)
    assert moves[0] == {"type": "bid", "amount": 17}
    assert [m.get("amount") for m in moves[1:]] == [3, 12, 21, 31, 40, None]
    assert all(matches(m, legal) for m in moves)
    small = candidate_moves([{"type": "bet", "amount": {"min": 0, "max": 3}}], None)
    assert [m["amount"] for m in small] == [0, 1, 2, 3]
    # a hint the legal actions do not allow is not searched
    assert candidate_moves([{"type": "pass"}], {"type": "bid", "amount": 1}) == [{"type": "pass"}]


def visits_by_bet(stats) -> dict:
    return {dict(key)["amount"]: n for key, n in stats.visits.items()}


@pytest.mark.parametrize("root", ROOTS)
def test_search_bets_nothing_on_the_lowest_card(root):
    """With a 1 every bet loses (a bet of 0 loses nothing): 0 is played and searched most."""
    move, stats = play(duel(1), 0, iterations=400, root=root)
    assert move == {"type": "bet", "amount": 0}, stats.visits
    assert stats.iterations == 400 and stats.root_moves == 4
    visits = visits_by_bet(stats)
    assert visits[0] == max(visits.values())


@pytest.mark.parametrize("root", ROOTS)
def test_search_bets_on_the_top_card(root):
    """With a 9 any bet of 1 or more almost surely takes the others' bets; 0 can lose."""
    move, stats = play(duel(9), 0, iterations=400, root=root)
    assert move["amount"] > 0, stats.visits
    visits = visits_by_bet(stats)
    assert visits[0] == min(visits.values())


def test_halving_keeps_the_heuristic_move_and_halves_the_rest():
    """Sequential halving: 4 moves, 2 rounds of 200. The first round searches each in 50
    worlds; the better two go on, and the heuristic's move (0, from a heuristic that always
    bets 0) with them whatever its value: 66 more worlds each (200 // 3)."""
    zero = dataclasses.replace(DUEL, heuristic=lambda view, legal, seat, rng: {"type": "bet", "amount": 0})
    move, stats = play(duel(9), 0, iterations=400, root="halving", spec=zero)
    visits = visits_by_bet(stats)
    assert visits[0] == 50 + 66
    assert sorted(visits.values()) == [50, 116, 116, 116]
    assert stats.iterations == sum(visits.values()) == 398
    assert move["amount"] > 0


def test_halving_with_more_moves_than_its_budget_covers_searches_the_heuristics_and_a_few():
    """6 iterations for 4 moves: the heuristic's move and one other (6 // HALVING_VISITS - 1),
    the same one for the same rng."""
    zero = dataclasses.replace(DUEL, heuristic=lambda view, legal, seat, rng: {"type": "bet", "amount": 0})
    move, stats = play(duel(9), 0, iterations=6, root="halving", spec=zero)
    visits = visits_by_bet(stats)
    assert len(visits) == 6 // HALVING_VISITS and 0 in visits and stats.iterations == 6
    assert visits_by_bet(play(duel(9), 0, iterations=6, root="halving", spec=zero)[1]) == visits


def test_halving_compares_the_moves_in_the_same_sampled_worlds():
    """Every move of a round is searched in the same worlds: world i is sampled from one seed
    for each, so the others' cards are the same."""
    worlds = []

    def recording(view, seat, rng):
        world = duel_determinize(view, seat, rng)
        worlds.append(world.cards)
        return world

    play(duel(5), 0, iterations=40, root="halving", spec=dataclasses.replace(DUEL, determinize=recording))
    first_round = worlds[:20]            # 4 moves x 5 worlds, the moves interleaved per world
    for i in range(0, 20, 4):
        assert len(set(first_round[i:i + 4])) == 1
    assert len(set(first_round[::4])) > 1


def _recording(asked: list, name: str, amount: int):
    """A policy that bets `amount` and notes (name, seat) in `asked` each time it is asked."""
    def choose(view, legal, seat, rng):
        asked.append((name, seat))
        return {"type": "bet", "amount": amount}
    return choose


def _two_rounds(view, seat, rng):        # the duel's sampled worlds, two rounds long
    return dataclasses.replace(duel_determinize(view, seat, rng), rounds=2)


@pytest.mark.parametrize("root", ROOTS)
def test_the_own_policy_plays_the_searching_seat_and_the_heuristic_its_rivals(root):
    """`own_policy` gives the searching seat's prior (its root hint) and its moves below the
    root; every other seat is asked the heuristic, the model of the rivals."""
    asked = []
    spec = dataclasses.replace(DUEL, determinize=_two_rounds, heuristic=_recording(asked, "heuristic", 0),
                               own_policy=_recording(asked, "own", 3))
    state = dataclasses.replace(duel(9), rounds=2)
    _, stats = play(state, 1, iterations=60, root=root, spec=spec)
    assert asked[0] == ("own", 1)                       # the root's hint
    assert asked.count(("own", 1)) > 1                  # and its second-round moves below the root
    assert {seat for name, seat in asked if name == "own"} == {1}
    assert {seat for name, seat in asked if name == "heuristic"} == {0, 2}
    assert dict(next(iter(stats.visits))) == {"type": "bet", "amount": 3}   # the hint, searched first


@pytest.mark.parametrize("root", ROOTS)
def test_the_root_hint_gives_the_roots_move_alone(root):
    """`root_hint` is asked once, for the root's move; below the root the searching seat plays
    its own policy and the rivals the heuristic."""
    asked = []
    spec = dataclasses.replace(DUEL, determinize=_two_rounds, heuristic=_recording(asked, "heuristic", 0),
                               own_policy=_recording(asked, "own", 1), root_hint=_recording(asked, "root", 3))
    state = dataclasses.replace(duel(9), rounds=2)
    _, stats = play(state, 1, iterations=60, root=root, spec=spec)
    assert asked.count(("root", 1)) == 1 and asked[0] == ("root", 1)
    assert ("own", 1) in asked                              # its second-round moves
    assert {seat for name, seat in asked if name == "heuristic"} == {0, 2}
    assert dict(next(iter(stats.visits))) == {"type": "bet", "amount": 3}   # the hint, searched first


@pytest.mark.parametrize("root", ROOTS)
def test_a_fixed_iteration_count_is_reproducible_from_the_rng(root):
    a = play(duel(6), 0, iterations=200, seed=11, root=root)
    b = play(duel(6), 0, iterations=200, seed=11, root=root)
    assert a[0] == b[0] and a[1].visits == b[1].visits and a[1].means == b[1].means
    c = play(duel(6), 0, iterations=200, seed=12, root=root)
    assert c[1].means != a[1].means      # another bot rng, another search


@pytest.mark.timing
@pytest.mark.parametrize("root", ROOTS)
def test_the_time_cap_cuts_the_search(root):
    started = time.perf_counter()
    move, stats = play(duel(5), 0, iterations=10 ** 7, time_ms=30, root=root)
    elapsed = time.perf_counter() - started
    assert stats.cut_by_time and 0 < stats.iterations < 10 ** 7
    assert elapsed < 0.5
    assert matches(move, toygame.legal_actions(duel(5), 0))


def test_a_single_legal_move_is_played_without_searching():
    state = duel(4)
    spec = DUEL
    view = toygame.view(state, 0)
    move, stats = Search(spec, view, 0, random.Random(1), Budget(500, 1000)).run([{"type": "bet", "amount": 2}])
    assert move == {"type": "bet", "amount": 2} and stats.iterations == 0


@pytest.mark.parametrize("root", ROOTS)
def test_the_search_reads_the_view_only(root):
    """Two worlds that differ only in the other seats' cards give the same move and tree."""
    state = duel(7, players=3)
    swapped = toygame.State(seats=3, rounds=1, cards=(7, state.cards[2], state.cards[1]),
                            bets=state.bets, chips=state.chips)
    assert toygame.view(state, 0) == toygame.view(swapped, 0)
    a, b = play(state, 0, iterations=150, root=root), play(swapped, 0, iterations=150, root=root)
    assert a[0] == b[0] and a[1].visits == b[1].visits and a[1].means == b[1].means


def test_fast_draws_have_the_rules_interface():
    draws = FastDraws(random.Random(3))
    assert 0 <= draws.below("x", 5) < 5
    assert 2 <= draws.randint("x", 2, 4) <= 4
    assert draws.choice("x", "abc") in "abc"
    assert sorted(draws.shuffle("x", [3, 1, 2])) == [1, 2, 3]
    with pytest.raises(ValueError):
        draws.below("x", 0)
