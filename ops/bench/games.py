"""The hosted games and a random player that drives a GameService (for the benchmarks)."""

from __future__ import annotations

import random
from typing import Optional

from events.store import MemoryEventStore
from projections.registry import all_games
from projections.templates import fill_template


def hosted_games() -> dict:
    """The real games (the test-only ones registered by tests/conftest.py left out)."""
    return {name: game for name, game in sorted(all_games().items())
            if game.__name__.startswith("projections.")}


def seats_for(game) -> int:
    return min(max(game.MIN_PLAYERS, 4), game.MAX_PLAYERS)


def seed_for(n: int) -> str:
    return f"{n + 1:064x}"


class NullIndex:
    """A GameIndex that keeps nothing (the benchmarks measure the store and the rules)."""

    def record(self, *args, **kwargs): pass
    def touch(self, *args, **kwargs): pass
    def touch_with_append(self, *args, **kwargs): return None
    def record_token(self, *args, **kwargs): pass


def service_on(store, **kwargs):
    from service.core.game_service import GameService
    from service.core.jobs import NoJobs

    return GameService(store, NullIndex(), NoJobs(), allow_seed=True, **kwargs)


def memory_service(**kwargs):
    return service_on(MemoryEventStore(), **kwargs)


def open_game(service, game_type: str, seats: int, seed: str, options: Optional[dict] = None):
    """Create a game with every seat open, claim them all. Returns (game_id, tokens)."""
    session = service.create(game_type, options or {}, [{}] * seats, seed=seed)
    tokens = [service.claim(session.game_id, seat, f"p{seat}")[1] for seat in range(seats)]
    return session.game_id, tokens


def random_move(service, game_id: str, rng: random.Random):
    """(seat, action) a random player would play now, or None when the game is not active."""
    session = service.load(game_id)
    if session.status != "active":
        return None
    seat = rng.choice(session.to_act())
    legal = session.game.legal_actions(session.state, seat)
    return seat, fill_template(rng.choice(legal), rng)


def play(service, game_id: str, rng: random.Random, max_actions: int = 100_000,
         until_version: Optional[int] = None, key=lambda n: f"r{n}") -> int:
    """Random legal actions until the game is over (or reaches `until_version`). Returns the
    count. `key(n)`: the idempotency key of the n-th action."""
    count = 0
    while count < max_actions:
        move = random_move(service, game_id, rng)
        if move is None:
            break
        if until_version is not None and service.load(game_id).version >= until_version:
            break
        seat, action = move
        service.act(game_id, seat, action, idempotency_key=key(count))
        count += 1
    return count


def plan(game_type: str, seats: int, seed: str, options: Optional[dict] = None,
         max_actions: int = 100_000) -> list[tuple[int, dict]]:
    """The (seat, action) list of a whole random game. A service given the same type, seats,
    seed and options accepts the same list, in order (outcomes depend on the seed and the
    version only)."""
    service = memory_service(snapshot_every=0)
    game_id, _ = open_game(service, game_type, seats, seed, options)
    rng = random.Random(seed)
    moves = []
    while len(moves) < max_actions:
        move = random_move(service, game_id, rng)
        if move is None:
            break
        service.act(game_id, *move, idempotency_key=f"p{len(moves)}")
        moves.append(move)
    return moves
