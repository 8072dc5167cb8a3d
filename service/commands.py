"""The application core: the command handler and the read side, free of Flask and RQ.

A command loads the game (cached state or snapshot, plus the tail of the stream: the cost
does not grow with the game's length), decides, appends the batch with the expected version
and the idempotency key, then enqueues follow-up jobs (bot turns, scoring). The same path
serves HTTP clients, bots, turn timeouts and the CLI.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
import secrets
import threading
from collections import OrderedDict
from functools import partial
from typing import Optional, Protocol

from marshmallow import ValidationError

from events.envelope import NewEvent, StoredEvent, body_digest, chain_hash, decode_body
from events.index import GameIndex
from events.randomness import Draws, commitment, event_nonce, new_seed
from events.store import EventStore, IdempotencyConflict, Receipt, VersionConflict
from events.upcast import UPCASTERS
from projections import disclosure
from projections.game import IllegalAction
from projections.ledger import ledger_for
from projections.registry import UnknownGame, all_games, get_game
from projections.session import ACTIVE, ENDED, OPEN, SCORED, Session, fold
from projections.verify import verify_log

from .errors import Conflict, Forbidden, NotFound, Unauthorized, Unprocessable

log = logging.getLogger(__name__)

CREATED_SCHEMA = 2
MAX_HEAD_RETRIES = 20
TOKEN_CACHE_SIZE = 100_000


class Jobs(Protocol):
    def bot_turn(self, game_id: str, seat: int, version: int) -> None: ...
    def score(self, game_id: str) -> None: ...
    def turn_timeout(self, game_id: str, seat: int, version: int, seconds: float) -> None: ...


class NoJobs:
    """For tools that only read (the CLI's replay, verify and export)."""

    def bot_turn(self, game_id, seat, version): pass
    def score(self, game_id): pass
    def turn_timeout(self, game_id, seat, version, seconds): pass


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _new_events(events: list[dict], cmd: Optional[dict] = None) -> list[NewEvent]:
    out = []
    for i, event in enumerate(events):
        data = {k: v for k, v in event.items() if k != "type"}
        out.append(NewEvent(event["type"], data, UPCASTERS.current(event["type"]),
                            cmd if i == 0 else None))
    return out


class GameService:
    def __init__(self, store: EventStore, index: GameIndex, jobs: Jobs, *, allow_seed: bool = False,
                 snapshot_every: int = 200, cache_size: int = 2048):
        self.store = store
        self.index = index
        self.jobs = jobs
        self.allow_seed = allow_seed
        self.snapshot_every = snapshot_every
        self._cache: OrderedDict[str, Session] = OrderedDict()
        self._seeds: dict[str, str] = {}
        self._tokens: dict[tuple[str, str], int] = {}
        self._snapshot_at: dict[str, int] = {}   # game -> version of its last snapshot
        self._cache_size = cache_size
        self._lock = threading.Lock()

    # --- loading -------------------------------------------------------------------------
    def load(self, game_id: str, at: Optional[tuple[int, str]] = None) -> Session:
        """The game's session at the store's head (`at`: the head when the caller has just
        read it): cache or snapshot, plus the tail."""
        version, head = at if at is not None else self.store.head(game_id)
        if version == 0:
            raise NotFound(f"no game {game_id!r}", {"game_id": game_id})
        with self._lock:
            cached = self._cache.get(game_id)
        if cached is not None and cached.version == version and cached.head == head:
            return cached
        base = cached if cached is not None and cached.version < version else None
        if base is None:
            base = self._snapshot(game_id)
        session = self._fold_tail(game_id, base, version)
        if session is None or session.head != head:
            session = self._fold_tail(game_id, None, version)  # a stale cache: rebuild
        self._remember(session)
        return session

    def _cached(self, game_id: str) -> Optional[Session]:
        with self._lock:
            return self._cache.get(game_id)

    def _fold_tail(self, game_id: str, base: Optional[Session], until: int) -> Optional[Session]:
        after = base.version if base else 0
        raw = self.store.read_raw(game_id, after, until)
        # A cached base is only good if the tail chains from it; the rest of the chain is
        # verify's to check, not every load's.
        if base is not None and raw and chain_hash(base.head, raw[0][0]) != raw[0][1]:
            return None
        events, prev = [], base.head if base else ""
        for body, hash_ in raw:
            events.append(UPCASTERS.upcast(decode_body(body, prev, hash_)))
            prev = hash_
        return fold(events, game_id, base)

    def _snapshot(self, game_id: str) -> Optional[Session]:
        snap = self.store.load_snapshot(game_id)
        if snap is None:
            return None
        version, head, blob = snap
        stored = self.store.read_raw(game_id, version - 1, version)
        if not stored or stored[0][1] != head:
            return None  # a snapshot is a cache: one that disagrees with the log is ignored
        try:
            session = pickle.loads(blob)
        except Exception:
            return None
        if not isinstance(session, Session) or session.version != version or session.head != head:
            return None
        self._snapshot_at[game_id] = version
        return session

    def _remember(self, session: Session) -> None:
        """Cache the session; snapshot it once it is snapshot_every versions past the last
        snapshot. The last snapshot's version is kept in process (read from the store once
        per game), not fetched, blob and all, on every action."""
        with self._lock:
            self._cache[session.game_id] = session
            self._cache.move_to_end(session.game_id)
            while len(self._cache) > self._cache_size:
                evicted, _ = self._cache.popitem(last=False)
                self._snapshot_at.pop(evicted, None)
        if not self.snapshot_every:
            return
        last = self._snapshot_at.get(session.game_id)
        if last is None:
            snap = self.store.load_snapshot(session.game_id)
            last = snap[0] if snap else 0
        if session.version - last >= self.snapshot_every:
            self.store.save_snapshot(session.game_id, session.version, session.head, pickle.dumps(session))
            last = session.version
        self._snapshot_at[session.game_id] = last

    def _seed(self, game_id: str) -> str:
        seed = self._seeds.get(game_id)
        if seed is None:
            seed = self.store.get_meta(game_id, "seed")["seed"]
            self._seeds[game_id] = seed
        return seed

    def _append(self, session: Session, events: list[NewEvent], *, expected_version=None,
                idem_key="", digest="", meta=None) -> tuple[Receipt, Session, list[StoredEvent]]:
        """Append a batch built on `session`; returns the receipt, the session after it and
        the batch's events as stored (decoded once, here)."""
        seed = self._seed(session.game_id)
        receipt = self.store.append(session.game_id, events, base_version=session.version,
                                    base_head=session.head, expected_version=expected_version,
                                    idempotency_key=idem_key, body_digest=digest, meta=meta,
                                    nonce=partial(event_nonce, seed))
        stored, prev = [], session.head
        for body, hash_ in receipt.sealed:
            stored.append(decode_body(body, prev, hash_))
            prev = hash_
        after = fold(stored, session.game_id, session)
        if receipt.sealed:
            self._remember(after)
            if after.status != session.status:
                self.index.record(after.game_id, after.game_type, after.status, after.created_at)
        return receipt, after, stored

    # --- creating and joining ---------------------------------------------------------
    def create(self, game_type: str, options: Optional[dict], seats: list[dict], *,
               seed: Optional[str] = None, turn_timeout: Optional[float] = None) -> Session:
        try:
            game = get_game(game_type)
        except UnknownGame:
            raise Unprocessable(f"type: unknown game type {game_type!r}", {"field": "type",
                                "known": sorted(all_games())}, code="unknown_game_type")
        if not game.MIN_PLAYERS <= len(seats) <= game.MAX_PLAYERS:
            raise Unprocessable(f"seats: {game_type} takes {game.MIN_PLAYERS} to {game.MAX_PLAYERS} seats, "
                                f"not {len(seats)}", {"field": "seats"})
        try:
            loaded = game.OptionsSchema().load(options or {})
        except ValidationError as err:
            problems = err.messages if isinstance(err.messages, dict) else {"_schema": err.messages}
            message = "; ".join(f"options.{name}: {' '.join(map(str, why)) if isinstance(why, list) else why}"
                                for name, why in sorted(problems.items()))
            raise Unprocessable(message, {"field": "options", "errors": err.messages})
        if seed is not None and not self.allow_seed:
            raise Unprocessable("seed: choosing the seed is allowed only in test configuration",
                                {"field": "seed"}, code="seed_not_allowed")
        seed = seed or new_seed()
        seat_info = []
        for seat in seats:
            if seat.get("bot"):
                seat_info.append({"kind": "bot", "level": seat["bot"]})
            else:
                seat_info.append({"kind": "open"})
        game_id = secrets.token_hex(8)
        created = {"game_type": game_type, "rules_version": game.RULES_VERSION, "options": loaded,
                   "platform": {"turn_timeout": turn_timeout}, "seats": seat_info,
                   "commitment": commitment(seed)}
        events = [NewEvent("game.created", created, CREATED_SCHEMA)]
        self._seeds[game_id] = seed
        placeholder = Session(game_id, game_type, game.RULES_VERSION, {}, {}, (), "", 0)
        if all(s["kind"] == "bot" for s in seat_info):
            start = game.start(game.new_state(loaded, len(seat_info)), Draws(seed, "v2"))
            events += _new_events([{"type": "game.started"}] + start)
        _, session, _ = self._append(placeholder, events, expected_version=0,
                                        meta={"seed": seed, "type": game_type})
        if session.status == OPEN:  # _append indexed an all-bot game already (its status changed)
            self.index.record(game_id, game_type, session.status, session.created_at)
        self._follow_up(session)
        return session

    def claim(self, game_id: str, seat: int, name: str) -> tuple[Session, str]:
        token = secrets.token_urlsafe(32)
        for _ in range(MAX_HEAD_RETRIES):
            session = self.load(game_id)
            if not 0 <= seat < len(session.seats):
                raise NotFound(f"seat: game {game_id} has no seat {seat}", {"field": "seat"})
            if session.seats[seat].kind != "open":
                raise Conflict(f"seat: seat {seat} is not open", {"field": "seat", "version": session.version},
                               code="seat_taken")
            events = [NewEvent("seat.claimed", {"seat": seat, "name": name})]
            still_open = [s for i, s in enumerate(session.seats) if s.kind == "open" and i != seat]
            if not still_open:
                game = session.game
                rng = Draws(self._seed(game_id), f"v{session.version + 2}")
                events += _new_events([{"type": "game.started"}] + game.start(session.state, rng))
            try:
                _, after, _ = self._append(session, events, expected_version=session.version,
                                        meta={f"token:{token_hash(token)}": str(seat)})
            except VersionConflict:
                continue
            self.index.record_token(token_hash(token), game_id, seat)
            self._follow_up(after)
            return after, token
        raise Conflict("the game is too busy to claim a seat now; retry", {"version": session.version})

    def authenticate(self, game_id: str, token: Optional[str]) -> int:
        """The seat a bearer token holds in this game."""
        if not token:
            raise Unauthorized("Authorization: a Bearer seat token is required")
        digest = token_hash(token)
        known = self._tokens.get((game_id, digest))
        if known is not None:
            return known
        seat = self.store.get_meta(game_id, f"token:{digest}")[f"token:{digest}"]
        if seat is not None:
            if len(self._tokens) >= TOKEN_CACHE_SIZE:
                self._tokens.clear()
            self._tokens[(game_id, digest)] = int(seat)  # a seat's token never changes hands
            return int(seat)
        if self.index.token_owner(digest) is not None:
            raise Forbidden("Authorization: this token holds a seat in another game")
        if self.store.head(game_id)[0] == 0:
            raise NotFound(f"no game {game_id!r}", {"game_id": game_id})
        raise Unauthorized("Authorization: unknown token")

    # --- acting ---------------------------------------------------------------------------
    def act(self, game_id: str, seat: int, action: dict, *, expected_version: Optional[int] = None,
            idempotency_key: str, by: str = "player") -> tuple[Receipt, Session, list[dict]]:
        """Decide and append one action. A retry with the same key and body returns the
        original receipt; the same key with another body is a conflict.
        Returns the receipt, the session after it, and the batch's events as the seat sees them.

        With the game in the process cache this is one round trip to Redis: decide on the
        cached session and append; the append script checks the idempotency key, the expected
        version and the head before writing, so a stale cache costs a retry, never a wrong
        write. Anything else (no cache, a stale one, an action the cached state refuses) goes
        the careful way: idempotency key and head in one round trip, then load and decide."""
        idem = f"{seat}:{idempotency_key}"
        digest = body_digest({"action": action, "expected_version": expected_version})
        cached = self._cached(game_id)
        if cached is not None and cached.status == ACTIVE and expected_version in (None, cached.version):
            done = self._decide_and_append(cached, seat, action, expected_version, idem, digest, by,
                                           careful=False)
            if done is not None:
                return done
        for _ in range(MAX_HEAD_RETRIES):
            seen, version, head = self.store.peek(game_id, idem)
            if seen is not None:
                return self._replayed(game_id, seen, digest, seat)
            session = self.load(game_id, (version, head))
            if expected_version is not None and expected_version != session.version:
                raise Conflict(f"expected_version: the game is at version {session.version}, not "
                               f"{expected_version}", {"field": "expected_version", "version": session.version},
                               code="version_conflict")
            if session.status != ACTIVE:
                raise Unprocessable(f"action: the game is {session.status}, not active",
                                    {"field": "action", "status": session.status}, code="game_not_active")
            done = self._decide_and_append(session, seat, action, expected_version, idem, digest, by,
                                           careful=True)
            if done is not None:
                return done
        raise Conflict("the game is too busy; retry", {"version": version}, code="version_conflict")

    def _decide_and_append(self, session: Session, seat: int, action: dict, expected_version, idem: str,
                           digest: str, by: str, careful: bool):
        """Decide on `session` and append. None: decide again on a fresh load (the head moved
        or, when not `careful`, the cached session refused the action)."""
        game_id = session.game_id
        rng = Draws(self._seed(game_id), f"v{session.version + 1}")
        try:
            decided = session.game.decide(session.state, seat, action, rng)
        except IllegalAction as err:
            if not careful:
                return None  # maybe a retry of an action already played, or a stale cache
            details = {"field": f"action.{err.field}" if err.field else "action", "version": session.version}
            raise Unprocessable(err.message, details, code=err.code)
        cmd = {"seat": seat, "action": action, "by": by}
        try:
            receipt, after, stored = self._append(session, _new_events(decided, cmd),
                                          expected_version=expected_version, idem_key=idem, digest=digest)
        except IdempotencyConflict as err:
            raise self._idem_conflict(err.current_version)
        except VersionConflict as err:
            if err.reason == "head":
                return None  # someone else appended first: decide again on the new state
            raise Conflict(f"expected_version: the game is at version {err.current_version}",
                           {"field": "expected_version", "version": err.current_version},
                           code="version_conflict")
        if receipt.duplicate:
            return self._replayed(game_id, (digest, receipt), digest, seat)
        self._follow_up(after)
        return receipt, after, self.batch_events(session, stored, seat, after)

    def _replayed(self, game_id: str, seen, digest: str, seat: int):
        stored_digest, receipt = seen
        if stored_digest != digest:
            raise self._idem_conflict(self.store.head(game_id)[0])
        # The original answer: the batch's events and the game as the batch left it (not as it
        # is now), so a retry gets the same response however far the game has moved on.
        finished = self.load(game_id).finished
        stored = self.store.read(game_id, 0, receipt.version)
        before = fold(stored[:receipt.first_version - 1], game_id)
        shown, at_receipt = disclosure.events_for(stored[receipt.first_version - 1:], before, seat,
                                                  finished, game_id)
        return receipt, at_receipt, shown

    @staticmethod
    def _idem_conflict(version: int) -> Conflict:
        return Conflict("Idempotency-Key: this key was already used with another body",
                        {"field": "Idempotency-Key", "version": version}, code="idempotency_conflict")

    def _follow_up(self, session: Session) -> None:
        """Enqueue what the game now waits on. The append is already acknowledged: a queue
        failure must not fail the request (the reconciler re-enqueues what is missing)."""
        try:
            self._enqueue_follow_ups(session)
        except Exception:
            log.exception("enqueueing follow-up jobs for %s failed; the reconciler will retry",
                          session.game_id)

    def _enqueue_follow_ups(self, session: Session) -> None:
        if session.status == ENDED:
            self.jobs.score(session.game_id)
            return
        if session.status != ACTIVE:
            return
        timeout = session.platform.get("turn_timeout")
        for seat in session.to_act():
            if session.seats[seat].kind == "bot":
                self.jobs.bot_turn(session.game_id, seat, session.version)
            elif timeout:
                self.jobs.turn_timeout(session.game_id, seat, session.version, timeout)

    def pending_jobs(self, session: Session) -> None:
        """Re-enqueue what a game waits on (the reconciler's repair; jobs are idempotent)."""
        self._enqueue_follow_ups(session)

    # --- scoring --------------------------------------------------------------------------
    def score(self, game_id: str) -> Session:
        """Append the final result and reveal the seed (idempotent)."""
        for _ in range(MAX_HEAD_RETRIES):
            session = self.load(game_id)
            if session.status == SCORED:
                self._record_leaderboard(session)  # once per game; repairs a crash after the append
            if session.status != ENDED:
                return session
            result = session.game.result(session.state)
            event = NewEvent("game.scored", {"result": result, "seed": self._seed(game_id)})
            try:
                _, after, _ = self._append(session, [event], idem_key="scoring", digest="scoring")
            except VersionConflict:
                continue
            self._record_leaderboard(after)
            return after
        raise Conflict("could not score the game; retry")

    def _record_leaderboard(self, session: Session) -> None:
        result = session.result
        winners = result["winners"]
        players = []
        for seat, info in enumerate(session.seats):
            key = f"bot:{info.level}" if info.kind == "bot" else f"player:{info.name}"
            won = 1.0 / len(winners) if seat in winners else 0.0
            players.append({"key": key, "rank": result["ranks"][seat], "won": won})
        self.index.record_result(session.game_type, session.game_id, players)

    # --- reading --------------------------------------------------------------------------
    def view(self, game_id: str, seat: Optional[int]) -> dict:
        return disclosure.view_for(self.load(game_id), seat)

    def wait_for(self, game_id: str, after_version: int, wait: float) -> bool:
        """Wait until the game's version passes `after_version` (True) or `wait` elapses
        (False): notified by the store (events/notify.py), never polled."""
        return self.store.notifier.wait(game_id, after_version, wait)

    @staticmethod
    def batch_events(before: Session, stored: list[StoredEvent], viewer: Optional[int],
                     after: Session) -> list[dict]:
        """The events of a just-appended batch as `viewer` may see them (no re-read)."""
        shown, _ = disclosure.events_for(stored, before, viewer, after.finished, before.game_id)
        return shown

    def events(self, game_id: str, viewer: Optional[int], after: int = 0,
               until: Optional[int] = None) -> tuple[list[dict], Session]:
        """The events after `after`, as the viewer may see them, with the current session."""
        current = self.load(game_id)
        stored = self.store.read(game_id, 0, until or current.version)
        before = fold(stored[:after], game_id)
        shown, _ = disclosure.events_for(stored[after:], before, viewer, current.finished, game_id)
        return shown, current

    def replay(self, game_id: str, at: int, viewer: Optional[int]) -> dict:
        current = self.load(game_id)
        if not 1 <= at <= current.version:
            raise Unprocessable(f"at: must be between 1 and {current.version}", {"field": "at"})
        past = fold(self.store.read(game_id, 0, at), game_id)
        if current.finished:
            return {"version": at, "spectator": disclosure.view_for(past, None),
                    "seats": [disclosure.view_for(past, s) for s in range(len(past.seats))],
                    "full_state": disclosure.full_state(past.state)}
        return {"version": at, "view": disclosure.view_for(past, viewer)}

    def ledger(self, game_id: str, viewer: Optional[int]) -> dict:
        current = self.load(game_id)
        return ledger_for(self.store.read(game_id, 0, current.version), viewer, current.finished, game_id)

    def verify(self, game_id: str, receipts: Optional[dict[int, str]] = None) -> dict:
        """Verify the stored log with the server's seed, against the store's recorded head and
        any receipts (version -> head hash) a client kept."""
        # No load(): a log that fails its chain cannot be folded, and verify is what names it.
        head = self.store.head(game_id)
        if head[0] == 0:
            raise NotFound(f"no game {game_id!r}", {"game_id": game_id})
        raw = self.store.read_raw(game_id)
        return verify_log(raw, self._seed(game_id), game_id, receipts=receipts, head=head).as_dict()

    def export(self, game_id: str, viewer: Optional[int]) -> list[dict]:
        """The log as NDJSON records: complete (exact stored bytes) once the game has ended,
        otherwise the events as the viewer may see them."""
        current = self.load(game_id)
        header = {"game_id": game_id, "type": current.game_type, "version": current.version,
                  "commitment": current.commitment, "complete": current.finished}
        if current.finished:
            header["seed"] = self._seed(game_id)
            raw = self.store.read_raw(game_id, 0, current.version)
            return [header] + [{"body": body, "hash": hash_} for body, hash_ in raw]
        shown, _ = self.events(game_id, viewer)
        return [header] + shown
