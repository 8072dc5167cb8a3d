"""The functions RQ imports and runs (workers/queue.py names them by path). They reach the
core that the process's worker binds before any job runs (`bind`): the worker command binds
the core it built through the bootstrap, the embedded worker the API's. Nothing here imports
the service: with the core comes `request_scope`, a context manager that makes a request id
current (the service's request-id context), so a job's log lines, and the jobs it enqueues,
carry the id of the request that enqueued it."""

from __future__ import annotations

import contextlib
import logging
import time
from functools import wraps
from contextlib import AbstractContextManager
from typing import Callable, Optional

from . import jobs
from .metrics import JOBS_DONE

RequestScope = Callable[[Optional[str]], AbstractContextManager]

log = logging.getLogger("workers.jobs")


def _no_request_scope(request_id: Optional[str]) -> AbstractContextManager:
    return contextlib.nullcontext()


_service = None
_request_scope: RequestScope = _no_request_scope


def _observed(kind: str):
    """A job's JSON log line (with the request id of the request that enqueued it) and its
    count by outcome."""
    def wrap(func):
        @wraps(func)
        def run(*args):
            from rq import get_current_job

            job = get_current_job()
            request_id = (job.meta or {}).get("request_id") if job is not None else None
            started = time.perf_counter()
            with _request_scope(request_id):
                try:
                    outcome = func(*args)
                except Exception:
                    JOBS_DONE.labels(kind, "error").inc()
                    log.exception("job failed", extra={"job": kind, "job_args": list(args)})
                    raise
            JOBS_DONE.labels(kind, str(outcome)).inc()
            log.info("job", extra={"job": kind, "game": args[0] if args else None, "outcome": str(outcome),
                                   "ms": round((time.perf_counter() - started) * 1000, 2),
                                   "request_id": request_id})
            return outcome
        return run
    return wrap


def bind(service, request_scope: Optional[RequestScope] = None) -> None:
    """The core the jobs run against (None: unbound), and how a job makes the request id of
    the request that enqueued it current (None: it does not)."""
    global _service, _request_scope
    _service = service
    _request_scope = request_scope or _no_request_scope


def _bound():
    if _service is None:
        raise RuntimeError("workers.tasks: no core bound; a worker binds one before it runs jobs "
                           "(`speculation worker`, workers/embedded.py)")
    return _service


@_observed("bot_turn")
def bot_turn(game_id: str, seat: int, version: int) -> str:
    return jobs.bot_turn(_bound(), game_id, seat, version)


@_observed("match_seeks")
def match_seeks(game_type: str, players: int, rated: bool) -> str:
    return jobs.match_seeks(_bound(), game_type, players, rated)


@_observed("expire")
def expire(game_id: str) -> str:
    return jobs.expire(_bound(), game_id)


@_observed("turn_timeout")
def turn_timeout(game_id: str, seat: int, version: int) -> str:
    return jobs.turn_timeout(_bound(), game_id, seat, version)


@_observed("score")
def score(game_id: str) -> str:
    return jobs.score(_bound(), game_id)


def reconcile() -> int:
    return jobs.reconcile(_bound())
