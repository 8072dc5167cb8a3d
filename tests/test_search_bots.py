"""The `search` level of every game: it reads the seat's view alone (two worlds the seat cannot
tell apart give the same sampled worlds and the same move), plays legal moves, is reproducible
from the bot's rng at a fixed iteration count and keeps to its time cap."""

from __future__ import annotations

import dataclasses
import random
import time

import pytest

from projections.registry import game_types, get_game
from projections.templates import matches
from workers.bots import policy
from workers.bots.search import game_search, settings_of
from workers.bots.search.budget import Budget
from workers.bots.search.core import Search, candidate_moves
from workers.bots.study import play_session

# Every hosted game with a search level (its GameType names a search module).
GAMES = tuple(t.name for t in game_types() if t.search)


def decisions(name: str, sessions: int = 2, every: int = 7) -> list[tuple]:
    """(state, seat) at every `every`-th decision of seeded heuristic sessions where the seat
    has a real choice (more than one move to search)."""
    game = get_game(name)
    out = []
    for i in range(sessions):
        count = [0]

        def observer(state, seat, view, legal, action):
            count[0] += 1
            if count[0] % every == 0 and len(candidate_moves(legal, None)) > 1:
                out.append((state, seat))

        play_session(game, 4, f"{i + 1:064x}", f"search-test-{name}-{i}", ["heuristic"] * 4, observer=observer)
    return out


@pytest.fixture(scope="module", params=GAMES)
def game_decisions(request):
    return request.param, decisions(request.param)[:6]


def recorded_search(name: str, state, seat: int, iterations: int = 6, seed: int = 5):
    """The move searched from the seat's view of `state`, and every world the search sampled."""
    game = get_game(name)
    spec = game_search(name)
    worlds = []

    def determinize(view, s, rng):
        world = spec.determinize(view, s, rng)
        worlds.append(world)
        return world

    recording = dataclasses.replace(spec, determinize=determinize)
    view = game.view(state, seat)
    move, stats = Search(recording, view, seat, random.Random(seed), Budget(iterations, 60_000)).run(
        game.legal_actions(state, seat))
    return move, stats, worlds


def test_two_worlds_the_seat_cannot_tell_apart_give_the_same_samples_and_move(game_decisions):
    name, found = game_decisions
    game, spec = get_game(name), game_search(name)
    assert found
    differing = 0
    for state, seat in found:
        # another world behind the same view: the seat's view sampled again
        other = spec.determinize(game.view(state, seat), seat, random.Random(424242))
        assert game.view(other, seat) == game.view(state, seat)
        differing += other != state
        a = recorded_search(name, state, seat)
        b = recorded_search(name, other, seat)
        assert a[0] == b[0]
        assert a[1].visits == b[1].visits and a[1].means == b[1].means
        assert a[2] == b[2] and len(a[2]) == a[1].iterations > 0
    if game.HIDDEN_INFORMATION:
        assert differing == len(found)     # the other world really hid something else


def test_search_plays_a_legal_move_reproducibly(game_decisions):
    name, found = game_decisions
    game = get_game(name)
    choose = policy(name, "search", {"iterations": 5, "time_ms": 60_000})
    for state, seat in found:
        view, legal = game.view(state, seat), game.legal_actions(state, seat)
        move = choose(view, legal, seat, random.Random(9))
        assert matches(move, legal)
        assert choose(view, legal, seat, random.Random(9)) == move


def test_the_default_budget_is_the_games_iterations_under_a_200_ms_cap():
    for name in GAMES:
        budget = policy(name, "search").budget
        assert budget == Budget(settings_of(name)["iterations"], 200.0)


@pytest.mark.timing
def test_the_time_cap_bounds_a_move(game_decisions):
    name, found = game_decisions
    game = get_game(name)
    state, seat = found[-1]
    started = time.perf_counter()
    move, stats = Search(game_search(name), game.view(state, seat), seat, random.Random(1),
                         Budget(10 ** 6, 30)).run(game.legal_actions(state, seat))
    assert stats.cut_by_time and stats.iterations >= 1
    assert time.perf_counter() - started < 1.0
    assert matches(move, game.legal_actions(state, seat))
