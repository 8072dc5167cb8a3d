"""The functions RQ imports and runs (workers/queue.py names them by path). They reach the
core bound by the worker command (`bind`): a process worker builds its own through the
bootstrap, from the environment; the embedded worker shares the API's."""

from __future__ import annotations

from . import jobs

_service = None


def bind(service) -> None:
    global _service
    _service = service


def _bound():
    if _service is None:
        from service.bootstrap import build_worker_core

        bind(build_worker_core())
    return _service


def bot_turn(game_id: str, seat: int, version: int) -> str:
    return jobs.bot_turn(_bound(), game_id, seat, version)


def turn_timeout(game_id: str, seat: int, version: int) -> str:
    return jobs.turn_timeout(_bound(), game_id, seat, version)


def score(game_id: str) -> str:
    return jobs.score(_bound(), game_id)


def reconcile() -> int:
    return jobs.reconcile(_bound())
