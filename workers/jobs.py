"""The work RQ runs: a bot's turn, a timed-out turn, end-of-game scoring, the reconciler.

Every job is idempotent: a bot turn is keyed by (game, seat, version) and submits with that
version as expected_version and an idempotency key derived from it, so running it twice,
or after the game moved on, changes nothing.

The jobs are written against the application core's interface (service/core: GameService),
which the caller passes in: its commands and queries, the jobs it enqueues, its bot key and
search limits. Nothing here imports the service; a command that raced another is told by its
error's kind, the class-level `code` "conflict" (service/core/errors.py: Conflict; the
instance's own code says which race).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import random
import time
from typing import Optional

from .bots import policy
from .bots.search.budget import turn_clock
from .metrics import RECONCILER_REPAIRS

CONFLICT = "conflict"   # the kind (class-level code) of the core's error for a raced command

log = logging.getLogger(__name__)


def raced(err: Exception) -> bool:
    """Whether the core refused a command because it raced another (a stale expected
    version, a reused idempotency key): its Conflict, by kind, whatever its own code."""
    return getattr(type(err), "code", None) == CONFLICT


def bot_rng(game_id: str, seat: int, version: int, key: bytes = b"") -> random.Random:
    """A bot's randomness, never from the game's seed: HMAC-SHA256 of (game, seat, version)
    under the server-held bot key, so nobody can predict a bot's move from public data (with
    no key, as in the bot study and benchmarks, plain SHA-256: reproducible)."""
    label = f"bot/{game_id}/{seat}/{version}".encode()
    digest = hmac.new(key, label, hashlib.sha256).digest() if key else hashlib.sha256(label).digest()
    return random.Random(int.from_bytes(digest, "big"))


def _play(service, game_id: str, seat: int, version: int, level: str, by: str,
          key_version: Optional[int] = None, budget: Optional[dict] = None,
          session=None, started: Optional[float] = None) -> str:
    """Play the seat's move at `version` with the level's policy. `budget`: a search seat's,
    as stored with the game; the policy clamps it to the service's limits (SEARCH_MAX_*). A
    search's time cap counts from `started`, the job's start (`turn_clock`): loading the game
    and its view are part of the turn the cap bounds."""
    started = time.perf_counter() if started is None else started
    session = session if session is not None and session.version == version else service.load(game_id)
    if session.version != version or seat not in session.to_act():
        return "stale"
    view = service.view_of(session, seat)  # the seat's view only, never the full state
    choose = policy(session.game_type, level, budget=budget, limits=service.search_limits)
    with turn_clock(started):
        action = choose(view["state"], view["legal_actions"], seat, bot_rng(game_id, seat, version, service.bot_key))
    try:
        key = f"{by}:{version if key_version is None else key_version}"
        receipt, _, _ = service.act(game_id, seat, action, expected_version=version, idempotency_key=key, by=by)
    except Exception as err:
        if not raced(err):
            raise
        return "stale"   # the game moved on between the load and the act
    return "duplicate" if receipt.duplicate else "played"


def bot_turn(service, game_id: str, seat: int, version: int) -> str:
    """A bot's turn. Its wall time is charged to the game's creator and frees the creator's
    slot in the fair scheduling of bot turns (workers/queue.py), when the jobs schedule so."""
    started = time.perf_counter()
    session = service.load(game_id)
    info = session.seats[seat]
    if info.kind != "bot":
        outcome = "not a bot"
    else:
        outcome = _play(service, game_id, seat, version, info.level, f"bot:{info.level}", budget=info.budget,
                        session=session, started=started)
    finished = getattr(service.jobs, "finished", None)
    if finished is not None:   # on an error RQ retries the job: its slot stays taken meanwhile
        try:
            finished(f"bot_{game_id}_{seat}_{version}", time.perf_counter() - started)
        except Exception as err:   # the reconciler releases waiting turns too
            log.warning("releasing the next bot turn after %s failed: %s", game_id, err)
    return outcome


def turn_timeout(service, game_id: str, seat: int, version: int) -> str:
    """The seat did not act in time: the random bot plays its move, recorded as a timeout.

    The seat's clock started at `version`. When others acted since (simultaneous choices)
    but this seat did not and still has to, its clock runs on: it is played now, on the
    current version (the idempotency key stays the one of the turn that timed out).

    Never before the deadline the seat's view shows: a job that runs early (the scheduler
    keeps whole seconds; another machine's clock) waits out up to EARLY_BY seconds, and past
    that returns "early" (the reconciler enqueues it again for the time left)."""
    at, left = service.timeout_due(game_id, seat, version)
    if at is not None and 0 < left <= EARLY_BY:
        time.sleep(left)
        at, left = service.timeout_due(game_id, seat, version)
    if at is None:
        return "stale"
    if left > 0:
        return "early"
    return _play(service, game_id, seat, at, "random", "timeout", key_version=version)


EARLY_BY = 2.0   # seconds a scheduled job (an expiry, a turn timeout) may run before its time and still do the work itself


def expire(service, game_id: str) -> str:
    """An invitation's expiry: expire the game if it is still open past its expires_at; early
    (the job ran before its time), it is enqueued again for the time left."""
    left = service.expire_if_due(game_id)
    if left is not None and left <= EARLY_BY:   # the scheduler keeps whole seconds: wait out the rest
        time.sleep(left)
        left = service.expire_if_due(game_id)
    if left is not None:
        service.jobs.expire(game_id, left)
        return "later"
    return service.load(game_id).status


def match_seeks(service, game_type: str, players: int, rated: bool) -> str:
    """A matchmaker's pass over one pool (a seek's bots_after came)."""
    return f"{len(service.seeks.match(game_type, players, rated))} formed"


def score(service, game_id: str) -> str:
    return service.score(game_id).status


def reconcile(service, limit: int = 1000, abandoned_after: float = 0) -> int:
    """One reconciler pass (workers/reconciler.py): every game touched since the last pass and
    every game waiting on a job gets its projections and jobs re-derived. With
    `abandoned_after`, jobs whose worker stopped beating that long ago are recovered first.
    Open games older than the lobby expiry leave the lobby (their log is kept), active games
    without a clock that waited on a person past `abandon_after` are abandoned, and scored
    games past the archive's age move to the archive. Returns the number of games looked at."""
    from .reconciler import reconcile_pass

    if abandoned_after:
        recover_abandoned(service, abandoned_after)
    if service.lobby_expiry:
        service.expire_unjoined(service.lobby_expiry)
    try:
        service.backfill_moved()   # the games from before the lobby knew when each moved (once)
    except Exception as err:       # the next pass goes on from where this one stopped
        log.warning("listing active games by their last move failed: %s", err)
    if getattr(service, "abandon_after", 0):   # unclocked games nobody moved for that long end
        try:
            service.abandon_idle(service.abandon_after)
        except Exception as err:   # the next pass tries again
            log.warning("abandoning idle games failed: %s", err)
    done = reconcile_pass(service, batch=max(limit, 1))
    release = getattr(service.jobs, "release_waiting", None)
    if release is not None:   # bot turns held back whose releasing job died with its worker
        try:
            release()
        except Exception as err:
            log.warning("releasing waiting bot turns failed: %s", err)
    if service.archiving is not None:     # scored games past SPECULATION_ARCHIVE_AFTER leave Redis
        service.archive_due(limit=min(limit, 100))
    seeks = getattr(service, "seeks", None)
    if seeks is not None:   # every pool: seeks gone stale leave, tables a crash left half-formed finish
        for pool in seeks.pools():
            try:
                seeks.match(*pool)
            except Exception as err:
                log.warning("a matchmaker pass over %s failed: %s", pool, err)
    return done.touched + done.waiting


def recover_abandoned(service, abandoned_after: float) -> list[str]:
    """Fail the jobs whose worker died under them (no heartbeat for `abandoned_after` s) and
    enqueue their games' work again at once (the job id names the game)."""
    if not hasattr(service.jobs, "recover_abandoned"):
        return []
    recovered = service.jobs.recover_abandoned(abandoned_after) or []
    RECONCILER_REPAIRS.inc(len(recovered))
    for job_id in recovered:
        game_id = job_id.split("_")[1] if "_" in job_id else None
        if game_id:
            try:
                service.repair(game_id)
            except Exception as err:   # the next reconciler pass tries again
                log.warning("re-enqueueing the work of %s failed: %s", job_id, err)
    return recovered
