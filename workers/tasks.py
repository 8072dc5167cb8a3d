"""The functions RQ imports and runs (workers/queue.py names them by path). They reach the
core bound by the worker command (`bind`): a process worker builds its own through the
bootstrap, from the environment; the embedded worker shares the API's."""

from __future__ import annotations

import logging
import time
from functools import wraps

from service.observability import JOBS_DONE, request_id_var

from . import jobs

log = logging.getLogger("workers.jobs")
_service = None


def _observed(kind: str):
    """A job's JSON log line (with the request id of the request that enqueued it) and its
    count by outcome."""
    def wrap(func):
        @wraps(func)
        def run(*args):
            from rq import get_current_job

            job = get_current_job()
            request_id = (job.meta or {}).get("request_id") if job is not None else None
            token = request_id_var.set(request_id)
            started = time.perf_counter()
            try:
                outcome = func(*args)
            except Exception:
                JOBS_DONE.labels(kind, "error").inc()
                log.exception("job failed", extra={"job": kind, "args": list(args)})
                raise
            finally:
                request_id_var.reset(token)
            JOBS_DONE.labels(kind, str(outcome)).inc()
            log.info("job", extra={"job": kind, "game": args[0] if args else None, "outcome": str(outcome),
                                   "ms": round((time.perf_counter() - started) * 1000, 2),
                                   "request_id": request_id})
            return outcome
        return run
    return wrap


def bind(service) -> None:
    global _service
    _service = service


def _bound():
    if _service is None:
        from service.bootstrap import build_worker_core

        bind(build_worker_core())
    return _service


@_observed("bot_turn")
def bot_turn(game_id: str, seat: int, version: int) -> str:
    return jobs.bot_turn(_bound(), game_id, seat, version)


@_observed("turn_timeout")
def turn_timeout(game_id: str, seat: int, version: int) -> str:
    return jobs.turn_timeout(_bound(), game_id, seat, version)


@_observed("score")
def score(game_id: str) -> str:
    return jobs.score(_bound(), game_id)


def reconcile() -> int:
    return jobs.reconcile(_bound())
