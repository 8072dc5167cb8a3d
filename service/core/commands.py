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
from projections.session import ABANDONED, ACTIVE, ENDED, EXPIRED, OPEN, SCORED, Session, fold
from ..audit.receipts import Receipts, batch_start
from .bots import BOT_LEVELS, BUDGETED_LEVEL, BudgetError, SearchLimits, check_budget
from .errors import CREDENTIAL, IDEMPOTENCY_KEY, Conflict, Forbidden, Invalid, NotFound, Unauthorized
from .game_repository import GameRepository, record_in_lobby, waits_on
from .tokens import keyed_game_id, keyed_token, new_token, seat_left, token_hash
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
# A seat leaves once: its leave is recorded under the seat's own key, whatever key a client sent.
LEAVE_IDEM = "leave:{}"
SCORING = Idempotency("scoring", "scoring")
# Events read back at a time to find where a batch began (a batch is a few events; a
# creation that starts a game of bots holds its opening deal).
RECEIPT_READ_BACK = 32


class Created(NamedTuple):
    session: Session      # the game as its creation left it
    replayed: bool        # True: a retry with the same idempotency key, nothing was written
    receipt: Optional[Receipt] = None   # the creating batch's (signed_receipt signs it)


class Left(NamedTuple):
    session: Session      # the game as the leave left it (a retry: as the original leave left it)
    replayed: bool        # True: a retry of a leave already recorded, nothing was written
    receipt: Optional[Receipt] = None   # the leaving batch's


class Claimed(NamedTuple):
    session: Session      # the game as the claim left it
    token: str            # the seat's token (the same on a retry with the same key)
    replayed: bool
    receipt: Optional[Receipt] = None   # the claiming batch's


def _new_events(events: list[dict], cmd: Optional[dict] = None) -> list[NewEvent]:
    out = []
    for i, event in enumerate(events):
        data = {k: v for k, v in event.items() if k != "type"}
        out.append(NewEvent(event["type"], data, UPCASTERS.current(event["type"]),
                            cmd if i == 0 else None))
    return out


def _seat_info(seat: dict) -> dict:
    if seat.get("reserved"):
        return {"kind": "open", "reserved": seat["reserved"]}   # an invitation: only that account claims it
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
    abandon_after: float = 0  # seconds an unclocked game waits on people before it is abandoned (0: never)
    search_limits: SearchLimits = SearchLimits()   # the most a search seat's budget may ask
    receipts: Receipts                             # signs the receipts of appended batches

    # --- creating and joining ---------------------------------------------------------
    def create(self, game_type: str, options: Optional[dict], seats: list[dict], *,
               seed: Optional[str] = None, turn_timeout: Optional[float] = None,
               idempotency_key: Optional[str] = None) -> Session:
        return self.create_game(game_type, options, seats, seed=seed, turn_timeout=turn_timeout,
                                idempotency_key=idempotency_key).session

    def create_game(self, game_type: str, options: Optional[dict], seats: list[dict], *,
                    seed: Optional[str] = None, turn_timeout: Optional[float] = None,
                    idempotency_key: Optional[str] = None,
                    admit: Optional[Callable[[], None]] = None, creator: str = "",
                    rated: bool = False, platform_extra: Optional[dict] = None,
                    leave_level: Optional[str] = None) -> Created:
        """Create a game. With an `idempotency_key` the game's id is derived from it (HMAC
        under the server's idem_key): a retry with the same key and body finds the same game
        and gets its original summary (and repairs a lost lobby write or follow-up job); the
        same key with another body is a conflict. `admit()` runs once the request is known to
        be valid and new, not a retry (the caller's creation limits, which may raise).
        `creator`: whose bot time the game's bot turns are (the route's client address), kept
        in the game's meta, not in its events. `leave_level`: the level of the bot that takes
        over the seat of a person who leaves (`leave`), recorded in the platform data only when
        given (absent: DEFAULT_LEAVE_LEVEL)."""
        game, loaded = self._checked_creation(game_type, options, seats, seed)
        if rated:
            self._check_rated(seats, turn_timeout)
        if leave_level is not None and leave_level not in BOT_LEVELS:
            raise Invalid(f"leave_level: unknown bot level {leave_level!r}", {"field": "leave_level",
                          "known": list(BOT_LEVELS)})
        given = {"leave_level": leave_level} if leave_level is not None else {}
        digest = body_digest({"type": game_type, "options": options or {}, "seats": seats, "seed": seed,
                              "turn_timeout": turn_timeout, **({"rated": True} if rated else {}), **given})
        game_id = keyed_game_id(self.idem_key, idempotency_key) if idempotency_key else secrets.token_hex(8)
        idem = Idempotency(CREATE_IDEM, digest)
        seed = seed or new_seed()

        def decide(_empty: Session, careful: bool) -> Decision:
            if admit is not None:
                admit()
            seat_info = [_seat_info(seat) for seat in seats]
            created = {"game_type": game_type, "rules_version": game.RULES_VERSION, "options": loaded,
                       "platform": {"turn_timeout": turn_timeout, **({"rated": True} if rated else {}),
                                    **given, **(platform_extra or {})},
                       "seats": seat_info,
                       "commitment": commitment(seed)}
            events = [NewEvent("game.created", created, CREATED_SCHEMA)]
            if all(s["kind"] == "bot" for s in seat_info):
                state = game.new_state(loaded, len(seat_info), rules_version=game.RULES_VERSION)
                events += _new_events([{"type": "game.started"}] + game.start(state, Draws(seed, "v2")))
            meta = {"seed": seed, "type": game_type, **({"creator": creator} if creator else {})}
            return Decision(events, expected_version=0, meta=meta)

        return self.unit_of_work.run(Command(
            game_id, decide, new=True, idem=idem, unseen=not idempotency_key,
            answer=lambda done: Created(done.after, False, done.receipt),
            # a replay of the client's key is marked so; the store's own retry answers as the first time
            replay=lambda receipt: Created(self._healed_as_of(game_id, receipt), bool(idempotency_key), receipt),
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

    @staticmethod
    def _check_rated(seats: list[dict], turn_timeout: Optional[float]) -> None:
        """A rated game has a clock (a person who walks away cannot hold it forever) and its
        bots play at their level's default budget (one rating per level)."""
        if not turn_timeout:
            raise Invalid("turn_timeout: a rated game needs a turn clock (seconds a seat may take)",
                          {"field": "turn_timeout"}, code="rated_needs_clock")
        for i, seat in enumerate(seats):
            if "budget" in seat:
                raise Invalid(f"seats.{i}.budget: a rated game's bots play at their level's default budget",
                              {"field": f"seats.{i}.budget"})

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

    def claim_seat(self, game_id: str, seat: int, name: Optional[str],
                   idempotency_key: Optional[str] = None, account: Optional[str] = None) -> Claimed:
        """Claim an open seat. Without a key the token is random; with one it is derived from
        the server's idem_key, the game, the seat and the key (tokens.keyed_token), so a retry
        with the same key and body gets the same token back although only its hash is stored;
        the same key with another body (seat or name) is a conflict.

        With `account` the seat is the account's: the event records its id (never a name),
        no seat token is made (the account's own credentials play it), and the token of the
        answer is ""."""
        if account is not None:
            return self._claim_for_account(game_id, seat, account, idempotency_key)
        digest = body_digest({"seat": seat, "name": name})
        if idempotency_key:
            idem = Idempotency(CLAIM_IDEM.format(idempotency_key), digest)
            token = keyed_token(self.idem_key, game_id, seat, idempotency_key)
        else:
            idem, token = Idempotency(INTERNAL_CLAIM_IDEM.format(secrets.token_hex(8)), digest), new_token()

        def decide(session: Session, careful: bool) -> Decision:
            self._check_reservation(session, seat, None)
            if session.platform.get("rated"):
                raise Unauthorized(f"{CREDENTIAL}: a rated game's seats are claimed with an account token "
                                   "(scope play), not by name", {"field": CREDENTIAL}, code="account_required")
            return Decision(self._claim_events(session, seat, {"seat": seat, "name": name}),
                            meta={f"token:{token_hash(token)}": str(seat)})

        def answer(done) -> Claimed:
            self.index.record_token(token_hash(token), game_id, seat)
            return Claimed(done.after, token, False, done.receipt)

        return self.unit_of_work.run(Command(
            game_id, decide, answer, idem=idem,
            replay=lambda receipt: self._claim_replayed(game_id, seat, token, receipt, bool(idempotency_key))))

    @staticmethod
    def _check_reservation(session: Session, seat: int, account: Optional[str]) -> None:
        if session.status == EXPIRED:
            raise Conflict(f"seat: game {session.game_id} has expired (declined, cancelled or past its expiry): "
                           "it never starts", {"field": "seat", "version": session.version}, code="game_expired")
        if 0 <= seat < len(session.seats) and session.seats[seat].kind == "open":
            reserved = session.seats[seat].reserved
            if reserved is not None and reserved != account:
                raise Forbidden(f"seat: seat {seat} is reserved for an invited account", {"field": "seat"},
                                code="seat_reserved")

    def _claim_events(self, session: Session, seat: int, claimed: dict) -> list[NewEvent]:
        game_id = session.game_id
        if not 0 <= seat < len(session.seats):
            raise NotFound(f"seat: game {game_id} has no seat {seat}", {"field": "seat"})
        if session.seats[seat].kind != "open":
            raise Conflict(f"seat: seat {seat} is not open", {"field": "seat", "version": session.version},
                           code="seat_taken")
        events = [NewEvent("seat.claimed", claimed)]
        if all(s.kind != "open" for i, s in enumerate(session.seats) if i != seat):
            rng = Draws(self.sessions.seed(game_id), f"v{session.version + 2}")
            events += _new_events([{"type": "game.started"}] + session.game.start(session.state, rng))
        return events

    def _claim_for_account(self, game_id: str, seat: int, account: str,
                           idempotency_key: Optional[str]) -> Claimed:
        key = CLAIM_IDEM.format(idempotency_key) if idempotency_key else \
            INTERNAL_CLAIM_IDEM.format(secrets.token_hex(8))
        idem = Idempotency(key, body_digest({"seat": seat, "account": account}))
        def decide(session: Session, careful: bool) -> Decision:
            if session.platform.get("rated") and any(s.account == account for s in session.seats):
                raise Conflict("seat: in a rated game an account holds one seat; this one holds "
                               f"seat {[s.account for s in session.seats].index(account)}",
                               {"field": "seat", "version": session.version}, code="already_seated")
            self._check_reservation(session, seat, account)
            return Decision(self._claim_events(session, seat, {"seat": seat, "account": account}))

        return self.unit_of_work.run(Command(
            game_id, decide,
            lambda done: Claimed(done.after, "", False, done.receipt), idem=idem,
            replay=lambda receipt: Claimed(self._healed_as_of(game_id, receipt), "", bool(idempotency_key),
                                           receipt)))

    def _claim_replayed(self, game_id: str, seat: int, token: str, receipt: Receipt, keyed: bool) -> Claimed:
        digest_of_token = token_hash(token)
        if self.store.get_meta(game_id, f"token:{digest_of_token}")[f"token:{digest_of_token}"] != str(seat):
            # The seat was claimed with this key, but the token no longer derives from it: the
            # server's idem_key was replaced (service:secrets lost). Never hand out a dead token.
            raise RuntimeError(f"the idem_key changed since seat {seat} of {game_id} was claimed")
        self.index.record_token(digest_of_token, game_id, seat)   # a lost directory write, repaired
        return Claimed(self._healed_as_of(game_id, receipt), token, keyed, receipt)

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
            if by == "player" and 0 <= seat < len(session.seats) and session.seats[seat].left:
                if not careful:
                    return RETRY   # a stale cache may not know yet: the careful way refuses it
                raise seat_left(session, seat)   # the person left: the bot plays the seat now
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
        if session.status == ABANDONED:
            raise Conflict(f"action: game {session.game_id} was abandoned (nobody moved for too long): it is over, "
                           "unscored, and takes no more actions",
                           {"field": "action", "status": session.status, "version": session.version},
                           code="game_abandoned")
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

    # --- leaving --------------------------------------------------------------------------
    def leave(self, game_id: str, seat: int) -> Left:
        """The person holding `seat` leaves the game: `seat.left` {seat, level}, and from then
        on a bot of the level the creation chose (`leave_level`, DEFAULT_LEAVE_LEVEL when none)
        plays the seat to the end of the game. When the seat is to act, the bot's turn is
        enqueued at once (the batch's follow-up, as after any batch; the reconciler's repair
        enqueues it again after a crash). Leaving an open game gives the seat to the bot as
        well: the game starts once its other open seats are taken.

        A seat leaves once: the command's idempotency key is the seat's own (`leave:<seat>`),
        so any retry, whatever Idempotency-Key it carries, answers the original leave (the
        same receipt) and appends nothing. Refused (409) once the game has ended, expired or
        been abandoned, and for a seat no person holds."""
        def decide(session: Session, careful: bool) -> Decision:
            self._check_can_leave(session, seat)
            return Decision([NewEvent("seat.left", {"seat": seat, "level": session.leave_level})])

        key = LEAVE_IDEM.format(seat)
        return self.unit_of_work.run(Command(
            game_id, decide, lambda done: Left(done.after, False, done.receipt), idem=Idempotency(key, key),
            replay=lambda receipt: Left(self._healed_as_of(game_id, receipt), True, receipt)))

    @staticmethod
    def _check_can_leave(session: Session, seat: int) -> None:
        if not 0 <= seat < len(session.seats):
            raise NotFound(f"seat: game {session.game_id} has no seat {seat}", {"field": "seat"})
        if session.status not in (OPEN, ACTIVE):
            over = {ENDED: "game_over", SCORED: "game_over"}.get(session.status, f"game_{session.status}")
            raise Conflict(f"seat: game {session.game_id} is {session.status}: there is nothing left to leave",
                           {"field": "seat", "status": session.status, "version": session.version}, code=over)
        held = session.seats[seat]
        if held.kind != "player":
            what = ("its person left it already" if held.left else "a bot plays it" if held.kind == "bot"
                    else "nobody holds it")
            raise Conflict(f"seat: seat {seat} has no person to leave it: {what}",
                           {"field": "seat", "kind": held.kind, "version": session.version},
                           code="seat_left" if held.left else "not_a_person")

    # --- signed receipts (docs/audit.md, service/audit/receipts.py) -------------------------
    def signed_receipt(self, game_id: str, receipt: Receipt) -> dict:
        """The signed `speculation-receipt/1` of a batch the store appended (or, for an
        idempotent retry, had appended): from the batch as written, else read back, so a
        retry's receipt is byte-identical to the first answer's."""
        batch = receipt.sealed or self.store.read_raw(game_id, receipt.first_version - 1, receipt.version)
        return self.receipts.of_batch(game_id, receipt.first_version, batch)

    def receipt_through(self, game_id: str, version: int) -> dict:
        """The signed receipt of the game's batch that ends at `version` (a version a command
        left the game at: the head then), its start found by reading back from it."""
        for after in (max(0, version - RECEIPT_READ_BACK), 0):
            events = self.store.read_raw(game_id, after, version)
            if version < 1 or len(events) != version - after:
                raise NotFound(f"game_id: game {game_id} has no version {version}", {"field": "game_id"})
            start = batch_start(events, after + 1)
            if start is not None:
                return self.receipts.of_batch(game_id, start, events[start - after - 1:])
        raise RuntimeError(f"game {game_id}: no batch starts at or before version {version}")

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
        """What a scored game's result feeds, once (each observer is idempotent): the ratings
        of a rated game (service/ratings)."""
        for observe in self.result_observers:
            observe(session)

    # --- an invitation that ends ---------------------------------------------------------
    def expire_game(self, game_id: str, reason: str, by: Optional[str] = None) -> Session:
        """An open game that will never start (a challenge declined or cancelled, an invitation
        past its expiry): `game.expired`, once. A game that is no longer open is left as it is."""
        def decide(session: Session, careful: bool):
            if session.status != OPEN:
                return Answer(session)
            return Decision([NewEvent("game.expired", {"reason": reason, **({"by": by} if by else {})})])

        return self.unit_of_work.run(Command(game_id, decide, lambda done: done.after,
                                             idem=Idempotency("expire", "expire"),
                                             replay=lambda receipt: self.load(game_id)))

    def expire_if_due(self, game_id: str, now_ms: Optional[int] = None) -> Optional[float]:
        """The expiry job: expire the game when its `expires_at` has passed; else the seconds
        left (the job comes back then). None: nothing to do."""
        session = self.load(game_id)
        expires_at = session.platform.get("expires_at")
        if session.status != OPEN or not expires_at:
            return None
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        if now_ms < expires_at:
            return (expires_at - now_ms) / 1000
        self.expire_game(game_id, "expired")
        return None

    # --- a game nobody moves ---------------------------------------------------------------
    def abandon_game(self, game_id: str, idle_for: float, now_ms: Optional[int] = None) -> Session:
        """End an active game without a clock that nobody moved for `idle_for` seconds while a
        person was to act: `game.abandoned`, once (its data: since when it was idle, the
        persons' seats to act). Any other game is left as it is."""
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms

        def decide(session: Session, careful: bool):
            if not abandonable(session, idle_for, now_ms):
                return Answer(session)
            people = [s for s in session.to_act() if session.seats[s].kind == "player"]
            return Decision([NewEvent("game.abandoned", {"idle_since": session.moved_at, "to_act": people})])

        return self.unit_of_work.run(Command(game_id, decide, lambda done: done.after,
                                             idem=Idempotency("abandon", "abandon"),
                                             replay=lambda receipt: self.load(game_id)))

    def abandon_idle(self, idle_for: float, now_ms: Optional[int] = None, limit: int = 100) -> list[str]:
        """The reconciler's pass over games nobody moves: each active game without a clock
        whose last move is older than `idle_for` seconds (the index's list of them, longest
        idle first: no game that moved is read) is abandoned if a person is to act. One whose
        index entry was stale is put right (its own last move, or out of the list)."""
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        abandoned = []
        for game_id in self.index.idle_before(now_ms - int(idle_for * 1000), limit):
            try:
                session = self.load(game_id)
            except NotFound:
                self.index.idle_checked(game_id, None)
                continue
            if abandonable(session, idle_for, now_ms):
                session = self.abandon_game(game_id, idle_for, now_ms)
                if session.status == ABANDONED:
                    abandoned.append(game_id)
            record_in_lobby(self.index, session)
            if session.status == ACTIVE and session.moved_at < now_ms - idle_for * 1000:
                # idle but waiting on bots (a job the reconciler repairs): looked at again in
                # `idle_for`, so that it never holds the head of the list
                self.index.idle_checked(game_id, now_ms)
        return abandoned

    def backfill_moved(self, limit: int = 200) -> int:
        """One step of the walk, once per deployment, over the active games created before the
        lobby listed games by their last move: each is listed by it (live, or idle for the
        abandon pass). Returns the games looked at (0 once the walk is done)."""
        cursor = self.index.backfill_cursor()
        if cursor is None:
            return 0
        rows = self.index.active_from(cursor, limit)
        for game_id, _ in rows:
            try:
                record_in_lobby(self.index, self.load(game_id))
            except NotFound:
                continue
        if len(rows) < limit:
            self.index.set_backfill_cursor(None)
        else:   # on from the last creation time read (again: games created in the same ms)
            self.index.set_backfill_cursor(rows[-1][1] if rows[-1][1] > cursor else cursor + 1)
        return len(rows)

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
                record_in_lobby(self.index, again)
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
            record_in_lobby(self.index, session)
        for field, seat in self.store.get_meta_prefixed(game_id, "token:").items():
            self.index.record_token(field[len("token:"):], game_id, int(seat))
        if session.status == SCORED:
            self._record_leaderboard(session)
        self.games.enqueue_follow_ups(session)
        for observe in self.games.observers:   # the accounts' notices and games, re-derived
            observe(session)
        return session

    def timeout_due(self, game_id: str, seat: int, version: int,
                    now_ms: Optional[int] = None) -> tuple[Optional[int], float]:
        """(the version to play the seat's timed-out turn at, None when the timeout is stale;
        the seconds still to run before the seat's deadline, 0 once it has passed): the
        deadline the seat's view shows is the one enforced."""
        at = self.timed_out_turn(game_id, seat, version)
        if at is None:
            return None, 0.0
        deadline = self.load(game_id).deadline(seat)
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        return at, max(0.0, (deadline - now_ms) / 1000) if deadline is not None else 0.0

    def timed_out_turn(self, game_id: str, seat: int, version: int) -> Optional[int]:
        """The version at which a seat whose clock started at `version` is played for, or
        None when the timeout is stale (the game moved on, or the seat acted since).

        When others acted since (simultaneous choices) but this seat did not and still has
        to, its clock runs on: it is played on the current version."""
        session = self.load(game_id)
        if session.status != ACTIVE or seat not in session.to_act() or session.seats[seat].kind == "bot":
            return None   # (a bot's seat: its person left since the clock started; the bot plays)
        if session.version != version:
            since = self.store.read(game_id, version, session.version)
            if any(e.cmd is not None and e.cmd.get("seat") == seat for e in since):
                return None
        return session.version


def abandonable(session: Session, idle_for: float, now_ms: int) -> bool:
    """An active game without a clock, idle for `idle_for` seconds, with a person to act (a
    game that waits on bots only is the workers' to move, not abandoned)."""
    return (session.status == ACTIVE and not session.turn_timeout
            and session.moved_at <= now_ms - idle_for * 1000
            and any(session.seats[s].kind == "player" for s in session.to_act()))
