"""The in-memory twin of the RQ job queue (`workers/queue.py`): the follow-up jobs the
application core enqueues (bot turns, scoring, turn timeouts) kept in a list, and run with the
same job functions (`workers/jobs.py`) when drained. No RQ, no Redis: for tests, drills and
tools that want the whole service in one process and in a known order.

    jobs = MemoryJobs()                 # record; the caller runs them with jobs.drain(core)
    jobs = MemoryJobs(run_now=True)     # bot turns and scoring run at once in the caller's
    jobs.bind(core)                     # thread (timeouts are recorded, never run)
"""

from __future__ import annotations

from . import jobs as job_functions

RUNNABLE = ("bot_turn", "score")


class MemoryJobs:
    def __init__(self, run_now: bool = False):
        self.pending: list[tuple] = []   # ("bot_turn", game, seat, version), ("score", game),
        self.run_now = run_now           # ("turn_timeout", game, seat, version), in order
        self.core = None

    def bind(self, core) -> "MemoryJobs":
        """The core that jobs run against when run at once."""
        self.core = core
        return self

    def bot_turn(self, game_id: str, seat: int, version: int, background: bool = False,
                 creator: str = "") -> None:
        if self.run_now:
            job_functions.bot_turn(self.core, game_id, seat, version)
        else:
            self.pending.append(("bot_turn", game_id, seat, version))

    def score(self, game_id: str, background: bool = False) -> None:
        if self.run_now:
            job_functions.score(self.core, game_id)
        else:
            self.pending.append(("score", game_id))

    def match_seeks(self, game_type: str, players: int, rated: bool, seconds: float) -> None:
        self.pending.append(("match_seeks", game_type, players, rated))

    def expire(self, game_id: str, seconds: float) -> None:
        self.pending.append(("expire", game_id))

    def turn_timeout(self, game_id: str, seat: int, version: int, seconds: float) -> None:
        self.pending.append(("turn_timeout", game_id, seat, version))

    def drain(self, core, limit: int = 1_000_000, only: tuple = RUNNABLE) -> int:
        """Run the pending jobs in order (those named in `only`; the others are dropped), the
        jobs they enqueue included, until none is left or `limit` ran. Returns how many ran."""
        ran = 0
        while self.pending and ran < limit:
            name, *args = self.pending.pop(0)
            if name in only:
                getattr(job_functions, name)(core, *args)
                ran += 1
        return ran

