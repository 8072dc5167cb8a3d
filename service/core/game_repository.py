"""The repository of games: how the unit of work (unit_of_work.py) loads, appends to and
follows up on one game's stream.

An append writes, with the batch and in its meta, the game's status and what it waits on
(`waits_on`); before it, the game is marked touched in the index (in the append's own round
trip when both share a Redis), so the reconciler looks at the game whatever happens to the
writes that follow: the lobby entry and the follow-up jobs, projections it re-derives.
"""

from __future__ import annotations

import logging
import time
from functools import partial
from typing import Optional, Protocol

from events.envelope import decode_body
from events.index import GameIndex
from events.randomness import event_nonce
from events.store import EventStore, Receipt
from projections.session import ACTIVE, ENDED, OPEN, Session, fold

from .jobs import Jobs
from .loading import GameSessions
from .unit_of_work import Decision, Idempotency

log = logging.getLogger(__name__)


class CommandMetrics(Protocol):
    """What the core reports of its appends (the service's Prometheus metrics implement it)."""

    def appended(self, seconds: float, by: Optional[str]) -> None: ...


class NoMetrics:
    def appended(self, seconds: float, by: Optional[str]) -> None:
        pass


def waits_on(session: Session) -> str:
    """What the game waits on from the workers, as written in its meta with each batch:
    "score" (ended, not yet scored), "bot:S" and "timeout:S" per seat to act (a bot's turn, a
    human seat's clock), joined by commas; "" when it waits on people only, or on nothing."""
    if session.status == ENDED:
        return "score"
    if session.status == OPEN and session.platform.get("expires_at"):
        return "expire"   # an invitation (challenge, rematch) past its expiry never starts
    if session.status != ACTIVE:
        return ""
    timeout = session.platform.get("turn_timeout")
    waits = []
    for seat in session.to_act():
        if session.seats[seat].kind == "bot":
            waits.append(f"bot:{seat}")
        elif timeout:
            waits.append(f"timeout:{seat}")
    return ",".join(waits)


def record_in_lobby(index: GameIndex, session: Session) -> None:
    """The game in the lobby's lists under its status (an active one by its last move too)."""
    index.record(session.game_id, session.game_type, session.status, session.created_at,
                 moved_at=session.moved_at, clocked=bool(session.turn_timeout))


class GameRepository:
    def __init__(self, store: EventStore, index: GameIndex, jobs: Jobs, sessions: GameSessions,
                 metrics: CommandMetrics = NoMetrics(), bot_jobs_per_game: int = 1):
        self.store = store
        self.index = index
        self.jobs = jobs
        self.sessions = sessions
        self.metrics = metrics
        # At most this many bot turns of an all-bot game queued at once (0: no limit).
        self.bot_jobs_per_game = bot_jobs_per_game
        # Told of the game after each of its batches and each repair (idempotent): the
        # accounts' notices and games (service/accounts/notices.py).
        self.observers: list = []

    # --- the unit of work's repository --------------------------------------------------
    def peek(self, game_id: str, idem_key: str):
        return self.store.peek(game_id, idem_key)

    def head(self, game_id: str) -> tuple[int, str]:
        return self.store.head(game_id)

    def load(self, game_id: str, at: Optional[tuple[int, str]] = None) -> Session:
        return self.sessions.load(game_id, at)

    def empty(self, game_id: str) -> Session:
        """A game before its creation: what the creating batch is folded onto."""
        return Session(game_id, "", 0, {}, {}, (), "", 0)

    def append(self, session: Session, decision: Decision,
               idem: Optional[Idempotency]) -> tuple[Receipt, Session, list]:
        """Append a batch built on `session`; the receipt, the session after it and the
        batch's events as stored (decoded once, here). A creating batch carries the game's
        seed in its meta (it is not stored yet): the nonces are drawn from it."""
        meta = decision.meta or {}
        seed = meta.get("seed") or self.sessions.seed(session.game_id)
        folded: dict = {}

        def with_projection(sealed) -> dict:
            stored, prev = [], session.head
            for body, hash_ in sealed:
                stored.append(decode_body(body, prev, hash_))
                prev = hash_
            after = fold(stored, session.game_id, session)
            folded["stored"], folded["after"] = stored, after
            return {**meta, "status": after.status, "waits": waits_on(after)}

        # an active game is listed as moving now (the lobby's live list) in the touch's round trip
        moved = (session.game_type, bool(session.turn_timeout)) if session.status == ACTIVE else None
        before = self.index.touch_with_append(session.game_id, self.store, moved=moved)
        started = time.perf_counter()
        receipt = self.store.append(session.game_id, decision.events, base_version=session.version,
                                    base_head=session.head, expected_version=decision.expected_version,
                                    idempotency_key=idem.key if idem else "", body_digest=idem.digest if idem else "",
                                    meta=with_projection, nonce=partial(event_nonce, seed), before=before)
        command = decision.events[0].cmd if receipt.sealed else None
        self.metrics.appended(time.perf_counter() - started, command.get("by", "player") if command else None)
        if not receipt.sealed:   # an idempotent retry: nothing new was written
            return receipt, session, []
        after, stored = folded["after"], folded["stored"]
        if session.version == 0:
            self.sessions.remember_seed(after.game_id, seed, meta.get("creator") or "")
        self.sessions.remember(after)
        if after.status != session.status or session.version == 0:
            record_in_lobby(self.index, after)
        return receipt, after, stored

    def follow_up(self, session: Session) -> None:
        """Enqueue what the game now waits on, and tell the observers (the accounts' notices).
        The append is already acknowledged: a failure here must not fail the command (the
        reconciler repairs both: they are idempotent)."""
        try:
            self.enqueue_follow_ups(session)
        except Exception:
            log.exception("enqueueing follow-up jobs for %s failed; the reconciler will retry",
                          session.game_id)
        for observe in self.observers:
            try:
                observe(session)
            except Exception:
                log.exception("an observer of %s failed; the reconciler will repair it", session.game_id)

    # --- what a game waits on -------------------------------------------------------------
    def enqueue_follow_ups(self, session: Session) -> None:
        # A game only bots play is background work: its jobs wait until no game with a player
        # seat has any (workers/queue.py), and at most `bot_jobs_per_game` of its bot turns are
        # queued at once (a turn queued for a version another seat's move makes stale is a
        # wasted job; the next seat's turn is enqueued by the move that makes it due).
        background = all(s.kind == "bot" for s in session.seats)
        if session.status == ENDED:
            self.jobs.score(session.game_id, background=background)
            return
        if session.status == OPEN and session.platform.get("expires_at"):
            self.jobs.expire(session.game_id, max(0.0, (session.platform["expires_at"] - time.time() * 1000) / 1000))
            return
        if session.status != ACTIVE:
            return
        timeout = session.platform.get("turn_timeout")
        queued = 0
        creator = ""   # whose bot time its turns are, for the jobs' fair scheduling (workers/queue.py)
        for seat in session.to_act():
            if session.seats[seat].kind == "bot":
                if background and self.bot_jobs_per_game and queued >= self.bot_jobs_per_game:
                    continue
                creator = creator or self.sessions.creator(session.game_id)   # read with the seed
                self.jobs.bot_turn(session.game_id, seat, session.version, background=background, creator=creator)
                queued += 1
            elif timeout:
                # the seat's clock runs from when its decision opened (the view's deadline),
                # whenever this is enqueued: a repair enqueues it for the time left
                deadline = session.deadline(seat)
                left = timeout if deadline is None else max(0.0, (deadline - time.time() * 1000) / 1000)
                self.jobs.turn_timeout(session.game_id, seat, session.decision(seat) or session.version, left)

    def heal(self, game_id: str) -> Session:
        """What a retry repairs of the writes after its append, in case they were lost: the
        lobby entry and the follow-up jobs (both idempotent)."""
        current = self.load(game_id)
        record_in_lobby(self.index, current)
        self.follow_up(current)
        return current
