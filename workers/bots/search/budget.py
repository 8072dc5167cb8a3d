"""A search's budget: iterations per move, cut by a time cap, within the service's limits."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Iterator, Optional

DEFAULT_TIME_MS = 200
# Of a turn's time cap, what a search leaves for the submit after it (ms).
SUBMIT_RESERVE_MS = 10
_TURN_STARTED: ContextVar[Optional[float]] = ContextVar("turn_started", default=None)


@contextmanager
def turn_clock(started: float) -> Iterator[None]:
    """Within it, a search's time cap counts from `started` (a time.perf_counter() reading:
    when the bot's turn began, before its game was loaded), less SUBMIT_RESERVE_MS, so the
    whole turn, not only the search, ends within the cap (workers/jobs.py)."""
    token = _TURN_STARTED.set(started)
    try:
        yield
    finally:
        _TURN_STARTED.reset(token)


def turn_deadline(time_ms: float, searched_from: float) -> float:
    """The perf_counter reading at which a search started at `searched_from` must stop."""
    began = _TURN_STARTED.get()
    if began is None:
        return searched_from + time_ms / 1000.0
    return min(searched_from + time_ms / 1000.0, began + (time_ms - SUBMIT_RESERVE_MS) / 1000.0)


@dataclass(frozen=True)
class Budget:
    """Iterations per move (None: the game's default, the `SETTINGS` of its search module), cut
    by a time cap (milliseconds)."""

    iterations: Optional[int] = None
    time_ms: float = DEFAULT_TIME_MS


@dataclass(frozen=True)
class SearchLimits:
    """The most a client may ask of one search move (the service's configuration)."""

    max_iterations: int = 20_000
    max_time_ms: float = DEFAULT_TIME_MS


class BudgetError(ValueError):
    """A budget a client may not ask for: `field` names the offending field, `why` says what
    is wrong with it."""

    def __init__(self, field: str, why: str):
        super().__init__(f"{field} {why}")
        self.field, self.why = field, why


def check_budget(budget: Optional[dict], limits: SearchLimits) -> dict:
    """A client's budget, checked: a JSON object with optional `iterations` (an integer from
    1 to the limit) and `time_ms` (a number above 0, at most the limit). Returns it as given."""
    if budget is None:
        return {}
    if not isinstance(budget, dict):
        raise BudgetError("budget", "must be an object with iterations and/or time_ms")
    for name in budget:
        if name not in ("iterations", "time_ms"):
            raise BudgetError(f"budget.{name}", "is not a budget field (iterations, time_ms)")
    iterations = budget.get("iterations")
    if iterations is not None:
        if type(iterations) is not int or not 1 <= iterations <= limits.max_iterations:
            raise BudgetError("budget.iterations", f"must be an integer from 1 to {limits.max_iterations}")
    time_ms = budget.get("time_ms")
    if time_ms is not None:
        if type(time_ms) not in (int, float) or not 0 < time_ms <= limits.max_time_ms:
            raise BudgetError("budget.time_ms", f"must be a number above 0 and at most {limits.max_time_ms:g}")
    return dict(budget)


def budget_from(budget: Optional[dict], limits: SearchLimits = SearchLimits()) -> Budget:
    """The budget to search with: the defaults where the client gave none, never above the
    limits (a budget stored with a game is clamped again, should the limits have shrunk)."""
    budget = budget or {}
    iterations = budget.get("iterations")
    time_ms = budget.get("time_ms") or min(DEFAULT_TIME_MS, limits.max_time_ms)
    return Budget(iterations=None if iterations is None else max(1, min(int(iterations), limits.max_iterations)),
                  time_ms=min(float(time_ms), limits.max_time_ms))
