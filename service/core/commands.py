"""The commands: create, claim, act, score, and the turn-timeout decision.

A command loads the game (service/core/loading.py), decides, appends the batch with the
expected version and the idempotency key, then enqueues follow-up jobs (bot turns, scoring,
turn timeouts). The same path serves HTTP clients, bots, turn timeouts and the CLI.
"""

from __future__ import annotations

import logging
import time
import secrets
from functools import partial
from typing import Callable, NamedTuple, Optional

from marshmallow import ValidationError

from service.observability import ACTIONS_APPENDED, APPEND_LATENCY

from events.envelope import NewEvent, StoredEvent, body_digest, decode_body
from events.index import GameIndex
from events.randomness import Draws, commitment, event_nonce, new_seed
from events.store import EventStore, IdempotencyConflict, Receipt, VersionConflict
from events.upcast import UPCASTERS
from projections import disclosure
from projections.game import IllegalAction
from projections.registry import UnknownGame, all_games, get_game
from projections.session import ACTIVE, ENDED, OPEN, SCORED, Session, fold
from .bots import BOT_LEVELS, BUDGETED_LEVEL, BudgetError, SearchLimits, check_budget

from .errors import Conflict, Invalid, NotFound
from .jobs import Jobs
from .tokens import keyed_game_id, keyed_token, new_token, token_hash

log = logging.getLogger(__name__)

CREATED_SCHEMA = 2
MAX_HEAD_RETRIES = 20
# The fields of a game's idempotency hash that creates and claims use (an action's is
# "<seat>:<key>", scoring's "scoring": none of them can collide).
CREATE_IDEM = "create"
CLAIM_IDEM = "claim:{}"


class Created(NamedTuple):
    session: Session      # the game as its creation left it
    replayed: bool        # True: a retry with the same Idempotency-Key, nothing was written


class Claimed(NamedTuple):
    session: Session      # the game as the claim left it
    token: str            # the seat's token (the same on a retry with the same key)
    replayed: bool


def waits_on(session: Session) -> str:
    """What the game waits on from the workers, as written in its meta with each batch:
    "score" (ended, not yet scored), "bot:S" and "timeout:S" per seat to act (a bot's turn, a
    human seat's clock), joined by commas; "" when it waits on people only, or on nothing."""
    if session.status == ENDED:
        return "score"
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


def _new_events(events: list[dict], cmd: Optional[dict] = None) -> list[NewEvent]:
    out = []
    for i, event in enumerate(events):
        data = {k: v for k, v in event.items() if k != "type"}
        out.append(NewEvent(event["type"], data, UPCASTERS.current(event["type"]),
                            cmd if i == 0 else None))
    return out


class Commands:
    """The command half of the GameService (service/core/game_service.py builds it)."""

    store: EventStore
    index: GameIndex
    jobs: Jobs
    allow_seed: bool
    bot_jobs_per_game: int = 1
    lobby_expiry: float = 0   # seconds an open game stays in the lobby (0: forever)
    search_limits: SearchLimits = SearchLimits()   # the most a search seat's budget may ask

    def _append(self, session: Session, events: list[NewEvent], *, expected_version=None,
                idem_key="", digest="", meta=None, seed=None) -> tuple[Receipt, Session, list[StoredEvent]]:
        """Append a batch built on `session`; returns the receipt, the session after it and
        the batch's events as stored (decoded once, here). `seed`: the game's, when it is not
        stored yet (its creation).

        The game's status and what it waits on (`waits_on`) are written with the batch, in
        its meta; and before the append the game is marked touched in the index, so the
        reconciler looks at it whatever happens to the writes that follow the append (the
        lobby, the token directory, the jobs): they are projections it re-derives."""
        seed = seed or self._seed(session.game_id)
        folded: dict = {}

        def with_projection(sealed) -> dict:
            stored, prev = [], session.head
            for body, hash_ in sealed:
                stored.append(decode_body(body, prev, hash_))
                prev = hash_
            after = fold(stored, session.game_id, session)
            folded["stored"], folded["after"] = stored, after
            return {**(meta or {}), "status": after.status, "waits": waits_on(after)}

        game_id = session.game_id
        before = None
        if getattr(self.index, "redis", None) is not None and self.index.redis is getattr(self.store, "redis", None):
            def before(pipe):   # one Redis: the touch rides in the append's round trip, ahead of it
                self.index.touch(game_id, pipe=pipe)
        else:
            self.index.touch(game_id)
        started = time.perf_counter()
        receipt = self.store.append(game_id, events, base_version=session.version,
                                    base_head=session.head, expected_version=expected_version,
                                    idempotency_key=idem_key, body_digest=digest, meta=with_projection,
                                    nonce=partial(event_nonce, seed), before=before)
        APPEND_LATENCY.observe(time.perf_counter() - started)
        if not receipt.sealed:   # an idempotent retry: nothing new was written
            return receipt, session, []
        if events and events[0].cmd is not None:
            ACTIONS_APPENDED.labels(str(events[0].cmd.get("by", "player")).split(":")[0]).inc()
        after, stored = folded["after"], folded["stored"]
        self._remember(after)
        if after.status != session.status:
            self.index.record(after.game_id, after.game_type, after.status, after.created_at)
        return receipt, after, stored

    # --- creating and joining ---------------------------------------------------------
    def create(self, game_type: str, options: Optional[dict], seats: list[dict], *,
               seed: Optional[str] = None, turn_timeout: Optional[float] = None,
               idempotency_key: Optional[str] = None) -> Session:
        return self.create_game(game_type, options, seats, seed=seed, turn_timeout=turn_timeout,
                                idempotency_key=idempotency_key).session

    def create_game(self, game_type: str, options: Optional[dict], seats: list[dict], *,
                    seed: Optional[str] = None, turn_timeout: Optional[float] = None,
                    idempotency_key: Optional[str] = None,
                    admit: Optional[Callable[[], None]] = None) -> Created:
        """Create a game. With an `idempotency_key` the game's id is derived from it (HMAC
        under the server's idem_key): a retry with the same key and body finds the same game
        and gets its original summary (and repairs a lost lobby write or follow-up job); the
        same key with another body is a conflict. The append records the key in the game's
        idempotency hash, so two concurrent creates with one key append once. `admit()` runs
        once the request is known to be valid and new, not a retry (the caller's creation limits,
        which may raise): a retry of a create that was made is answered, whatever the limits."""
        try:
            game = get_game(game_type)
        except UnknownGame:
            raise Invalid(f"type: unknown game type {game_type!r}", {"field": "type",
                          "known": sorted(all_games())}, code="unknown_game_type")
        if not game.MIN_PLAYERS <= len(seats) <= game.MAX_PLAYERS:
            raise Invalid(f"seats: {game_type} takes {game.MIN_PLAYERS} to {game.MAX_PLAYERS} seats, "
                          f"not {len(seats)}", {"field": "seats"})
        for i, seat in enumerate(seats):
            if seat.get("bot") and seat["bot"] not in BOT_LEVELS:
                raise Invalid(f"seats.{i}.bot: unknown bot level {seat['bot']!r}",
                              {"field": f"seats.{i}.bot", "known": list(BOT_LEVELS)})
            if "budget" in seat:
                self._check_budget(i, seat)
        try:
            loaded = game.OptionsSchema().load(options or {})
        except ValidationError as err:
            problems = err.messages if isinstance(err.messages, dict) else {"_schema": err.messages}
            message = "; ".join(f"options.{name}: {' '.join(map(str, why)) if isinstance(why, list) else why}"
                                for name, why in sorted(problems.items()))
            raise Invalid(message, {"field": "options", "errors": err.messages})
        if seed is not None and not self.allow_seed:
            raise Invalid("seed: choosing the seed is allowed only in test configuration",
                          {"field": "seed"}, code="seed_not_allowed")
        game_id, digest = secrets.token_hex(8), ""
        if idempotency_key:
            digest = body_digest({"type": game_type, "options": options or {}, "seats": seats, "seed": seed,
                                  "turn_timeout": turn_timeout})
            game_id = keyed_game_id(self.idem_key, idempotency_key)
            seen = self.store.get_idempotent(game_id, CREATE_IDEM)
            if seen is not None:
                return self._created_replayed(game_id, seen, digest)
        if admit is not None:
            admit()
        seed = seed or new_seed()
        seat_info = []
        for seat in seats:
            if seat.get("bot"):
                # the budget only when given: every other seat is recorded as it always was
                budget = {k: v for k, v in (seat.get("budget") or {}).items() if v is not None}
                seat_info.append({"kind": "bot", "level": seat["bot"], **({"budget": budget} if budget else {})})
            else:
                seat_info.append({"kind": "open"})
        created = {"game_type": game_type, "rules_version": game.RULES_VERSION, "options": loaded,
                   "platform": {"turn_timeout": turn_timeout}, "seats": seat_info,
                   "commitment": commitment(seed)}
        events = [NewEvent("game.created", created, CREATED_SCHEMA)]
        placeholder = Session(game_id, game_type, game.RULES_VERSION, {}, {}, (), "", 0)
        if all(s["kind"] == "bot" for s in seat_info):
            start = game.start(game.new_state(loaded, len(seat_info), rules_version=game.RULES_VERSION),
                               Draws(seed, "v2"))
            events += _new_events([{"type": "game.started"}] + start)
        try:
            receipt, session, _ = self._append(placeholder, events, expected_version=0,
                                               idem_key=CREATE_IDEM if digest else "", digest=digest,
                                               meta={"seed": seed, "type": game_type}, seed=seed)
        except IdempotencyConflict as err:
            raise self._idem_conflict(err.current_version)
        except VersionConflict as err:
            # Only a keyed id can be taken: by a game created without this key (a 64-bit clash).
            raise Conflict("Idempotency-Key: another game holds the id this key names; use another key",
                           {"field": "Idempotency-Key", "version": err.current_version},
                           code="idempotency_conflict")
        if receipt.duplicate:   # a concurrent create with the same key appended first
            return self._created_replayed(game_id, (digest, receipt), digest)
        self._seeds[game_id] = seed
        if session.status == OPEN:  # _append indexed an all-bot game already (its status changed)
            self.index.record(game_id, game_type, session.status, session.created_at)
        self._follow_up(session)
        return Created(session, False)

    def _check_budget(self, i: int, seat: dict) -> None:
        """A seat's budget: only on a search bot, within the service's limits (SEARCH_MAX_*)."""
        if seat.get("bot") != BUDGETED_LEVEL:
            kind = f"a {seat['bot']} bot" if seat.get("bot") else "an open seat"
            raise Invalid(f"seats.{i}.budget: only a {BUDGETED_LEVEL} bot takes a budget, not {kind}",
                          {"field": f"seats.{i}.budget"})
        try:
            check_budget(seat["budget"], self.search_limits)
        except BudgetError as err:
            raise Invalid(f"seats.{i}.{err.field}: {err.why}", {"field": f"seats.{i}.{err.field}"}) from None

    def _created_replayed(self, game_id: str, seen, digest: str) -> Created:
        stored_digest, receipt = seen
        if stored_digest != digest:
            raise self._idem_conflict(self.store.head(game_id)[0])
        self._heal(game_id)
        return Created(self._as_of(game_id, receipt.version), True)

    def _as_of(self, game_id: str, version: int) -> Session:
        """The game as the batch that ended at `version` left it (a retry's original answer,
        however far the game has moved on since)."""
        return fold(self.store.read(game_id, 0, version), game_id)

    def _heal(self, game_id: str) -> None:
        """What a retry repairs of the writes after its append, in case they were lost: the
        lobby entry and the follow-up jobs (both idempotent)."""
        current = self.load(game_id)
        self.index.record(game_id, current.game_type, current.status, current.created_at)
        self._follow_up(current)

    def claim(self, game_id: str, seat: int, name: str,
              idempotency_key: Optional[str] = None) -> tuple[Session, str]:
        claimed = self.claim_seat(game_id, seat, name, idempotency_key)
        return claimed.session, claimed.token

    def claim_seat(self, game_id: str, seat: int, name: str,
                   idempotency_key: Optional[str] = None) -> Claimed:
        """Claim an open seat. Without a key the token is random; with one it is derived from
        the server's idem_key, the game, the seat and the key (tokens.keyed_token), so a retry
        with the same key and body gets the same token back although only its hash is stored;
        the same key with another body (seat or name) is a conflict. The key is checked first,
        by the append script too, so two concurrent claims with one key append once and both
        get the token."""
        idem = digest = ""
        if idempotency_key:
            idem = CLAIM_IDEM.format(idempotency_key)
            digest = body_digest({"seat": seat, "name": name})
            token = keyed_token(self.idem_key, game_id, seat, idempotency_key)
        else:
            token = new_token()
        for _ in range(MAX_HEAD_RETRIES):
            if idem:
                seen, version, head = self.store.peek(game_id, idem)
                if seen is not None:
                    return self._claim_replayed(game_id, seat, token, seen, digest)
                session = self.load(game_id, (version, head))
            else:
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
                receipt, after, _ = self._append(session, events, expected_version=session.version,
                                                 idem_key=idem, digest=digest,
                                                 meta={f"token:{token_hash(token)}": str(seat)})
            except IdempotencyConflict as err:
                raise self._idem_conflict(err.current_version)
            except VersionConflict:
                continue
            if receipt.duplicate:   # a concurrent claim with the same key appended first
                return self._claim_replayed(game_id, seat, token, (digest, receipt), digest)
            self.index.record_token(token_hash(token), game_id, seat)
            self._follow_up(after)
            return Claimed(after, token, False)
        raise Conflict("the game is too busy to claim a seat now; retry", {"version": session.version})

    def _claim_replayed(self, game_id: str, seat: int, token: str, seen, digest: str) -> Claimed:
        stored_digest, receipt = seen
        if stored_digest != digest:
            raise self._idem_conflict(self.store.head(game_id)[0])
        digest_of_token = token_hash(token)
        if self.store.get_meta(game_id, f"token:{digest_of_token}")[f"token:{digest_of_token}"] != str(seat):
            # The seat was claimed with this key, but the token no longer derives from it: the
            # server's idem_key was replaced (service:secrets lost). Never hand out a dead token.
            raise RuntimeError(f"the idem_key changed since seat {seat} of {game_id} was claimed")
        self.index.record_token(digest_of_token, game_id, seat)   # a lost directory write, repaired
        self._heal(game_id)
        return Claimed(self._as_of(game_id, receipt.version), token, True)

    # --- acting ---------------------------------------------------------------------------
    def act(self, game_id: str, seat: int, action: dict, *, expected_version: Optional[int] = None,
            idempotency_key: str, by: str = "player", decision: Optional[int] = None
            ) -> tuple[Receipt, Session, list[dict]]:
        """Decide and append one action. A retry with the same key and body returns the
        original receipt; the same key with another body is a conflict.
        Returns the receipt, the session after it, and the batch's events as the seat sees them.

        With the game in the process cache this is one round trip to Redis: decide on the
        cached session and append; the append script checks the idempotency key, the expected
        version and the head before writing, so a stale cache costs a retry, never a wrong
        write. Anything else (no cache, a stale one, an action the cached state refuses) goes
        the careful way: idempotency key and head in one round trip, then load and decide.

        `decision`, when given, binds the action to the seat's decision that opened at that
        version (the view's `decision`): once that decision is over (the seat acted, or was
        played for by a turn timeout, and the round moved on) the action is a 409, never an
        action of the next round."""
        idem = f"{seat}:{idempotency_key}"
        body = {"action": action, "expected_version": expected_version}
        if decision is not None:  # absent from the digest when not given: older keys still match
            body["decision"] = decision
        digest = body_digest(body)
        cached = self._cached(game_id)
        if cached is not None and cached.status == ACTIVE and expected_version in (None, cached.version):
            done = self._decide_and_append(cached, seat, action, expected_version, idem, digest, by,
                                           careful=False, decision=decision)
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
            self._check_decision(session, seat, decision)
            if session.status != ACTIVE:
                raise Invalid(f"action: the game is {session.status}, not active",
                              {"field": "action", "status": session.status}, code="game_not_active")
            done = self._decide_and_append(session, seat, action, expected_version, idem, digest, by,
                                           careful=True, decision=decision)
            if done is not None:
                return done
        raise Conflict("the game is too busy; retry", {"version": version}, code="version_conflict")

    @staticmethod
    def _check_decision(session: Session, seat: int, decision: Optional[int]) -> None:
        if decision is not None and session.decision(seat) != decision:
            current = session.decision(seat)
            now = f"its current one opened at version {current}" if current else "it is not to act now"
            raise Conflict(f"decision: the seat's decision opened at version {decision} is over ({now})",
                           {"field": "decision", "version": session.version, "decision": current},
                           code="stale_decision")

    def _decide_and_append(self, session: Session, seat: int, action: dict, expected_version, idem: str,
                           digest: str, by: str, careful: bool, decision: Optional[int] = None):
        """Decide on `session` and append. None: decide again on a fresh load (the head moved
        or, when not `careful`, the cached session refused the action)."""
        game_id = session.game_id
        if decision is not None and session.decision(seat) != decision:
            if not careful:
                return None  # maybe a retry of an action already played, or a stale cache
            self._check_decision(session, seat, decision)
        rng = Draws(self._seed(game_id), f"v{session.version + 1}")
        try:
            decided = session.game.decide(session.state, seat, action, rng)
        except IllegalAction as err:
            if not careful:
                return None  # maybe a retry of an action already played, or a stale cache
            details = {"field": f"action.{err.field}" if err.field else "action", "version": session.version}
            raise Invalid(err.message, details, code=err.code)
        cmd = {"seat": seat, "action": action, "by": by}
        try:
            receipt, after, stored = self._append(session, _new_events(decided, cmd),
                                                  expected_version=expected_version, idem_key=idem,
                                                  digest=digest)
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

    @staticmethod
    def batch_events(before: Session, stored: list[StoredEvent], viewer: Optional[int],
                     after: Session) -> list[dict]:
        """The events of a just-appended batch as `viewer` may see them (no re-read)."""
        shown, _ = disclosure.events_for(stored, before, viewer, after.finished, before.game_id)
        return shown

    # --- follow-up jobs -------------------------------------------------------------------
    def _follow_up(self, session: Session) -> None:
        """Enqueue what the game now waits on. The append is already acknowledged: a queue
        failure must not fail the request (the reconciler re-enqueues what is missing)."""
        try:
            self._enqueue_follow_ups(session)
        except Exception:
            log.exception("enqueueing follow-up jobs for %s failed; the reconciler will retry",
                          session.game_id)

    def _enqueue_follow_ups(self, session: Session) -> None:
        # A game only bots play is background work: its jobs wait until no game with a player
        # seat has any (workers/queue.py), and at most `bot_jobs_per_game` of its bot turns are
        # queued at once (a turn queued for a version another seat's move makes stale is a
        # wasted job; the next seat's turn is enqueued by the move that makes it due).
        background = all(s.kind == "bot" for s in session.seats)
        if session.status == ENDED:
            self.jobs.score(session.game_id, background=background)
            return
        if session.status != ACTIVE:
            return
        timeout = session.platform.get("turn_timeout")
        queued = 0
        for seat in session.to_act():
            if session.seats[seat].kind == "bot":
                if background and self.bot_jobs_per_game and queued >= self.bot_jobs_per_game:
                    continue
                self.jobs.bot_turn(session.game_id, seat, session.version, background=background)
                queued += 1
            elif timeout:
                self.jobs.turn_timeout(session.game_id, seat, session.version, timeout)

    def expire_unjoined(self, older_than: float, now_ms: Optional[int] = None, limit: int = 1000) -> list[str]:
        """Take out of the lobby the open games created more than `older_than` seconds ago
        that nobody filled (their log stays; a game joined meanwhile is put back)."""
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        expired = []
        for game_id in self.index.open_before(now_ms - int(older_than * 1000), limit):
            session = self.load(game_id)
            if session.status != OPEN:
                continue
            self.index.expire(game_id, session.game_type)
            again = self.load(game_id)   # a claim that landed in between: back in the lobby
            if again.status != OPEN:
                self.index.record(game_id, again.game_type, again.status, again.created_at)
            else:
                expired.append(game_id)
        return expired

    def pending_jobs(self, session: Session) -> None:
        """Re-enqueue what a game waits on (the reconciler's repair; jobs are idempotent)."""
        self._enqueue_follow_ups(session)

    @staticmethod
    def waits(session: Session) -> str:
        """What the game waits on from the workers ("" for nothing): `waits_on`."""
        return waits_on(session)

    def repair(self, game_id: str) -> Optional[Session]:
        """Re-derive every projection of one game from its own keys (the reconciler's pass):
        the lobby entry, the token directory, the leaderboard once scored, and the jobs it
        waits on. Idempotent. None for a game that has no events (a create that failed)."""
        try:
            session = self.load(game_id)
        except NotFound:
            return None
        expired = (session.status == OPEN and self.lobby_expiry
                   and session.created_at < time.time() * 1000 - self.lobby_expiry * 1000)
        if expired:   # out of the lobby, as expire_unjoined left it
            self.index.expire(game_id, session.game_type)
        else:
            self.index.record(game_id, session.game_type, session.status, session.created_at)
        for field, seat in self.store.get_meta_prefixed(game_id, "token:").items():
            self.index.record_token(field[len("token:"):], game_id, int(seat))
        if session.status == SCORED:
            self._record_leaderboard(session)
        self._enqueue_follow_ups(session)
        return session

    def timed_out_turn(self, game_id: str, seat: int, version: int) -> Optional[int]:
        """The version at which a seat whose clock started at `version` is played for, or
        None when the timeout is stale (the game moved on, or the seat acted since).

        When others acted since (simultaneous choices) but this seat did not and still has
        to, its clock runs on: it is played on the current version."""
        session = self.load(game_id)
        if session.status != ACTIVE or seat not in session.to_act():
            return None
        if session.version != version:
            since = self.store.read(game_id, version, session.version)
            if any(e.cmd is not None and e.cmd.get("seat") == seat for e in since):
                return None
        return session.version

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
