"""The functions RQ imports and runs. They reach the GameService bound by the worker's
bootstrap (`bind`): a process worker builds its own from the environment, the embedded
worker shares the API's."""

from __future__ import annotations

from . import jobs

_service = None


def bind(service) -> None:
    global _service
    _service = service


def _bound():
    if _service is None:
        from service.config import build_service_from_env

        bind(build_service_from_env())
    return _service


def bot_turn(game_id: str, seat: int, version: int) -> str:
    return jobs.bot_turn(_bound(), game_id, seat, version)


def turn_timeout(game_id: str, seat: int, version: int) -> str:
    return jobs.turn_timeout(_bound(), game_id, seat, version)


def score(game_id: str) -> str:
    return jobs.score(_bound(), game_id)


def reconcile() -> int:
    return jobs.reconcile(_bound())
