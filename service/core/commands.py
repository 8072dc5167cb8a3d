"""The commands: create, claim, act, score, and the turn-timeout decision.

Each command is a few lines over the unit of work (unit_of_work.py): which game, which
idempotency key, how it decides on the game as loaded, how it answers, and how a retry with
the same key is answered. Loading, the append with the expected version, the retry when
another command moved the head, the replay of an idempotent retry and the follow-up jobs
are the unit of work's and the game repository's (game_repository.py), the same for every
command. The same path serves HTTP clients, bots, turn timeouts and the CLI.
"""

from __future__ import annotations

import secrets
import time
from typing import Callable, NamedTuple, Optional

from marshmallow import ValidationError

from events.envelope import NewEvent, StoredEvent, body_digest
from events.index import GameIndex
from events.randomness import Draws, commitment, new_seed
from events.store import EventStore, Receipt
from events.upcast import UPCASTERS
from projections import disclosure
from projections.game import IllegalAction
from projections.registry import UnknownGame, all_games, get_game
from projections.session import ACTIVE, ENDED, OPEN, SCORED, Session, fold
from .bots import BOT_LEVELS, BUDGETED_LEVEL, BudgetError, SearchLimits, check_budget
from .errors import IDEMPOTENCY_KEY, Conflict, Invalid, NotFound
from .game_repository import GameRepository, waits_on
from .tokens import keyed_game_id, keyed_token, new_token, token_hash
from .unit_of_work import RETRY, Answer, Command, Decision, Idempotency, UnitOfWork

CREATED_SCHEMA = 2
# The fields of a game's idempotency hash that creates and claims use (an action's is
# "<seat>:<key>", scoring's "scoring": none of them can collide).
CREATE_IDEM = "create"
CLAIM_IDEM = "claim:{}"
# A claim sent without a key still has one, the request's own (never a client's: "claim:"
# keys are the client's), so that the store's retry of an append whose reply was lost finds
# it done instead of a taken seat. A create without a key needs none of its own: its game id
# is new, so its "create" field is the request's alone.
INTERNAL_CLAIM_IDEM = "claim-request:{}"
SCORING = Idempotency("scoring", "scoring")


class Created(NamedTuple):
    session: Session      # the game as its creation left it
    replayed: bool        # True: a retry with the same idempotency key, nothing was written


class Claimed(NamedTuple):
    session: Session      # the game as the claim left it
    token: str            # the seat's token (the same on a retry with the same key)
    replayed: bool


def _new_events(events: list[dict], cmd: Optional[dict] = None) -> list[NewEvent]:
    out = []
    for i, event in enumerate(events):
        data = {k: v for k, v in event.items() if k != "type"}
        out.append(NewEvent(event["type"], data, UPCASTERS.current(event["type"]),
                            cmd if i == 0 else None))
    return out


def _seat_info(seat: dict) -> dict:
    if not seat.get("bot"):
        return {"kind": "open"}
    # the budget only when given: every other seat is recorded as it always was
    budget = {k: v for k, v in (seat.get("budget") or {}).items() if v is not None}
    return {"kind": "bot", "level": seat["bot"], **({"budget": budget} if budget else {})}


class Commands:
    """The command half of the GameService (service/core/game_service.py builds it)."""

    store: EventStore
    index: GameIndex
    games: GameRepository
    unit_of_work: UnitOfWork
    allow_seed: bool
    lobby_expiry: float = 0   # seconds an open game stays in the lobby (0: forever)
    search_limits: SearchLimits = SearchLimits()   # the most a search seat's budget may ask

    # --- creating and joining ---------------------------------------------------------
    def create(self, game_type: str, options: Optional[dict], seats: list[dict], *,
               seed: Optional[str] = None, turn_timeout: Optional[float] = None,
               idempotency_key: Optional[str] = None) -> Session:
        return self.create_game(game_type, options, seats, seed=seed, turn_timeout=turn_timeout,
                                idempotency_key=idempotency_key).session

    def create_game(self, game_type: str, options: Optional[dict], seats: list[dict], *,
                    seed: Optional[str] = None, turn_timeout: Optional[float] = None,
                    idempotency_key: Optional[str] = None,
                    admit: Optional[Callable[[], None]] = None, creator: str = "") -> Created:
        """Create a game. With an `idempotency_key` the game's id is derived from it (HMAC
        under the server's idem_key): a retry with the same key and body finds the same game
        and gets its original summary (and repairs a lost lobby write or follow-up job); the
        same key with another body is a conflict. `admit()` runs once the request is known to
        be valid and new, not a retry (the caller's creation limits, which may raise).
        `creator`: whose bot time the game's bot turns are (the route's client address), kept
        in the game's meta, not in its events."""
        game, loaded = self._checked_creation(game_type, options, seats, seed)
        digest = body_digest({"type": game_type, "options": options or {}, "seats": seats, "seed": seed,
                              "turn_timeout": turn_timeout})
        game_id = keyed_game_id(self.idem_key, idempotency_key) if idempotency_key else secrets.token_hex(8)
        idem = Idempotency(CREATE_IDEM, digest)
        seed = seed or new_seed()

        def decide(_empty: Session, careful: bool) -> Decision:
            if admit is not None:
                admit()
            seat_info = [_seat_info(seat) for seat in seats]
            created = {"game_type": game_type, "rules_version": game.RULES_VERSION, "options": loaded,
                       "platform": {"turn_timeout": turn_timeout}, "seats": seat_info,
                       "commitment": commitment(seed)}
            events = [NewEvent("game.created", created, CREATED_SCHEMA)]
            if all(s["kind"] == "bot" for s in seat_info):
                state = game.new_state(loaded, len(seat_info), rules_version=game.RULES_VERSION)
                events += _new_events([{"type": "game.started"}] + game.start(state, Draws(seed, "v2")))
            meta = {"seed": seed, "type": game_type, **({"creator": creator} if creator else {})}
            return Decision(events, expected_version=0, meta=meta)

        return self.unit_of_work.run(Command(
            game_id, decide, new=True, idem=idem, unseen=not idempotency_key,
            answer=lambda done: Created(done.after, False),
            # a replay of the client's key is marked so; the store's own retry answers as the first time
            replay=lambda receipt: Created(self._healed_as_of(game_id, receipt), bool(idempotency_key)),
            # Only a keyed id can be taken: by a game created without this key (a 64-bit clash).
            version_conflict=lambda err: Conflict(
                f"{IDEMPOTENCY_KEY}: another game holds the id this key names; use another key",
                {"field": IDEMPOTENCY_KEY, "version": err.current_version}, code="idempotency_conflict")))

    def _checked_creation(self, game_type: str, options: Optional[dict], seats: list[dict],
                          seed: Optional[str]):
        """The game's rules and its loaded options, once the request is known to be valid."""
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
        return game, loaded

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

    def _healed_as_of(self, game_id: str, receipt: Receipt) -> Session:
        """A retry's answer: the game as the original batch left it, once the writes that
        follow an append (lobby entry, jobs) are repaired in case they were lost."""
        self.games.heal(game_id)
        return self.sessions.as_of(game_id, receipt.version)

    def claim(self, game_id: str, seat: int, name: str,
              idempotency_key: Optional[str] = None) -> tuple[Session, str]:
        claimed = self.claim_seat(game_id, seat, name, idempotency_key)
        return claimed.session, claimed.token

    def claim_seat(self, game_id: str, seat: int, name: str,
                   idempotency_key: Optional[str] = None) -> Claimed:
        """Claim an open seat. Without a key the token is random; with one it is derived from
        the server's idem_key, the game, the seat and the key (tokens.keyed_token), so a retry
        with the same key and body gets the same token back although only its hash is stored;
        the same key with another body (seat or name) is a conflict."""
        digest = body_digest({"seat": seat, "name": name})
        if idempotency_key:
            idem = Idempotency(CLAIM_IDEM.format(idempotency_key), digest)
            token = keyed_token(self.idem_key, game_id, seat, idempotency_key)
        else:
            idem, token = Idempotency(INTERNAL_CLAIM_IDEM.format(secrets.token_hex(8)), digest), new_token()

        def decide(session: Session, careful: bool) -> Decision:
            if not 0 <= seat < len(session.seats):
                raise NotFound(f"seat: game {game_id} has no seat {seat}", {"field": "seat"})
            if session.seats[seat].kind != "open":
                raise Conflict(f"seat: seat {seat} is not open", {"field": "seat", "version": session.version},
                               code="seat_taken")
            events = [NewEvent("seat.claimed", {"seat": seat, "name": name})]
            if all(s.kind != "open" for i, s in enumerate(session.seats) if i != seat):
                rng = Draws(self.sessions.seed(game_id), f"v{session.version + 2}")
                events += _new_events([{"type": "game.started"}] + session.game.start(session.state, rng))
            return Decision(events, meta={f"token:{token_hash(token)}": str(seat)})

        def answer(done) -> Claimed:
            self.index.record_token(token_hash(token), game_id, seat)
            return Claimed(done.after, token, False)

        return self.unit_of_work.run(Command(
            game_id, decide, answer, idem=idem,
            replay=lambda receipt: self._claim_replayed(game_id, seat, token, receipt, bool(idempotency_key))))

    def _claim_replayed(self, game_id: str, seat: int, token: str, receipt: Receipt, keyed: bool) -> Claimed:
        digest_of_token = token_hash(token)
        if self.store.get_meta(game_id, f"token:{digest_of_token}")[f"token:{digest_of_token}"] != str(seat):
            # The seat was claimed with this key, but the token no longer derives from it: the
            # server's idem_key was replaced (service:secrets lost). Never hand out a dead token.
            raise RuntimeError(f"the idem_key changed since seat {seat} of {game_id} was claimed")
        self.index.record_token(digest_of_token, game_id, seat)   # a lost directory write, repaired
        return Claimed(self._healed_as_of(game_id, receipt), token, keyed)

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
        version (the view's `decision`): once that decision is over the action is a 409,
        never an action of the next round."""
        body = {"action": action, "expected_version": expected_version}
        if decision is not None:  # absent from the digest when not given: older keys still match
            body["decision"] = decision
        cached = self.sessions.cached(game_id)
        if cached is None or cached.status != ACTIVE or expected_version not in (None, cached.version):
            cached = None

        def decide(session: Session, careful: bool):
            if careful:
                self._check_expected_version(session, expected_version)
                self._check_decision(session, seat, decision)
                self._check_active(session)
            elif decision is not None and session.decision(seat) != decision:
                return RETRY   # maybe a retry of an action already played, or a stale cache
            try:
                decided = session.game.decide(session.state, seat, action,
                                              Draws(self.sessions.seed(game_id), f"v{session.version + 1}"))
            except IllegalAction as err:
                if not careful:
                    return RETRY
                details = {"field": f"action.{err.field}" if err.field else "action", "version": session.version}
                raise Invalid(err.message, details, code=err.code)
            return Decision(_new_events(decided, {"seat": seat, "action": action, "by": by}),
                            expected_version=expected_version)

        return self.unit_of_work.run(Command(
            game_id, decide, cached=cached, idem=Idempotency(f"{seat}:{idempotency_key}", body_digest(body)),
            answer=lambda done: (done.receipt, done.after,
                                 self.batch_events(done.before, done.stored, seat, done.after)),
            replay=lambda receipt: self._act_replayed(game_id, seat, receipt)))

    @staticmethod
    def _check_expected_version(session: Session, expected_version: Optional[int]) -> None:
        if expected_version is not None and expected_version != session.version:
            raise Conflict(f"expected_version: the game is at version {session.version}, not "
                           f"{expected_version}", {"field": "expected_version", "version": session.version},
                           code="version_conflict")

    @staticmethod
    def _check_active(session: Session) -> None:
        if session.status != ACTIVE:
            raise Invalid(f"action: the game is {session.status}, not active",
                          {"field": "action", "status": session.status}, code="game_not_active")

    @staticmethod
    def _check_decision(session: Session, seat: int, decision: Optional[int]) -> None:
        if decision is not None and session.decision(seat) != decision:
            current = session.decision(seat)
            now = f"its current one opened at version {current}" if current else "it is not to act now"
            raise Conflict(f"decision: the seat's decision opened at version {decision} is over ({now})",
                           {"field": "decision", "version": session.version, "decision": current},
                           code="stale_decision")

    def _act_replayed(self, game_id: str, seat: int, receipt: Receipt):
        """The original answer: the batch's events and the game as the batch left it (not as it
        is now), so a retry gets the same response however far the game has moved on."""
        finished = self.load(game_id).finished
        stored = self.store.read(game_id, 0, receipt.version)
        before = fold(stored[:receipt.first_version - 1], game_id)
        shown, at_receipt = disclosure.events_for(stored[receipt.first_version - 1:], before, seat,
                                                  finished, game_id)
        return receipt, at_receipt, shown

    @staticmethod
    def batch_events(before: Session, stored: list[StoredEvent], viewer: Optional[int],
                     after: Session) -> list[dict]:
        """The events of a just-appended batch as `viewer` may see them (no re-read)."""
        shown, _ = disclosure.events_for(stored, before, viewer, after.finished, before.game_id)
        return shown

    # --- scoring --------------------------------------------------------------------------
    def score(self, game_id: str) -> Session:
        """Append the final result and reveal the seed (idempotent)."""
        def decide(session: Session, careful: bool):
            if session.status != ENDED:
                if session.status == SCORED:
                    self._record_leaderboard(session)  # once per game; repairs a crash after the append
                return Answer(session)
            result = session.game.result(session.state)
            return Decision([NewEvent("game.scored", {"result": result, "seed": self.sessions.seed(game_id)})])

        def scored(session: Session) -> Session:
            self._record_leaderboard(session)
            return session

        return self.unit_of_work.run(Command(
            game_id, decide, idem=SCORING, answer=lambda done: scored(done.after),
            replay=lambda receipt: scored(self.load(game_id))))

    def _record_leaderboard(self, session: Session) -> None:
        result = session.result
        winners = result["winners"]
        players = []
        for seat, info in enumerate(session.seats):
            key = f"bot:{info.level}" if info.kind == "bot" else f"player:{info.name}"
            won = 1.0 / len(winners) if seat in winners else 0.0
            players.append({"key": key, "rank": result["ranks"][seat], "won": won})
        self.index.record_result(session.game_type, session.game_id, players)

    # --- the workers' side --------------------------------------------------------------
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
        self.games.enqueue_follow_ups(session)

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
        self.games.enqueue_follow_ups(session)
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
