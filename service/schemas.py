"""Request and response schemas (marshmallow 4): validation and the OpenAPI document."""

from __future__ import annotations

from marshmallow import EXCLUDE, INCLUDE, RAISE, Schema, ValidationError, fields, validate, validates_schema


from .core.bots import BOT_LEVELS, BUDGETED_LEVEL, DEFAULT_TIME_MS
from .limits import NAME_MAX, ascii_int, text_problem

JSON_SCALARS = "string, number, boolean, null, array or object"


def printable_name(value: str) -> None:
    problem = text_problem(value, NAME_MAX)
    if problem:
        raise ValidationError(problem)


class StrictSchema(Schema):
    class Meta:
        unknown = RAISE


# --- errors ---------------------------------------------------------------------------------
class ErrorDetailsSchema(Schema):
    """What an error says beyond its message; each key only where it applies (others may come)."""

    class Meta:
        unknown = INCLUDE

    field = fields.String(metadata={"description": "the field at fault (e.g. action.amount, expected_version)"})
    version = fields.Integer(allow_none=True, metadata={
        "description": "a conflict or a refused action: the game's current version"})
    decision = fields.Integer(allow_none=True, metadata={
        "description": "409 stale_decision: the seat's current decision (null: not to act)"})
    status = fields.String(metadata={"description": "game_not_active: the game's status"})
    game_id = fields.String(metadata={"description": "not_found: the game asked for"})
    errors = fields.Dict(metadata={"description": "invalid fields: the messages by field"})
    retry_after = fields.Integer(metadata={"description": "429: seconds to wait (also the Retry-After header)"})
    limit = fields.Integer(metadata={"description": "too_many_streams: the cap that was reached"})
    per = fields.String(metadata={"description": "too_many_streams: token or address"})


class ErrorBodySchema(Schema):
    code = fields.String(required=True, metadata={"description": "stable machine-readable code"})
    message = fields.String(required=True, metadata={"description": "what is wrong, naming the field"})
    details = fields.Nested(ErrorDetailsSchema, required=True)


class ErrorSchema(Schema):
    error = fields.Nested(ErrorBodySchema, required=True)


# --- signed receipts (docs/audit.md) -----------------------------------------------------
HEX64 = r"^[0-9a-f]{64}$"
B64URL = r"^[A-Za-z0-9_-]+$"


class SignedReceiptSchema(Schema):
    """`speculation-receipt/1` (docs/audit.md): what the service accepted, signed with its
    Ed25519 key. Keep it: a game log without an event `version` whose hash is `head`
    convicts the operator. Verify it with the keys of GET /v1/keys: remove `signature`,
    canonicalise (RFC 8785), check the Ed25519 signature of key `key_id` and that `time` lies
    within that key's validity."""

    format = fields.String(required=True, validate=validate.Equal("speculation-receipt/1"))
    game = fields.String(required=True, metadata={"description": "the game id"})
    first_version = fields.Integer(required=True, metadata={"description": "the batch's first event version"})
    version = fields.Integer(required=True, metadata={"description": "the batch's last event version"})
    head = fields.String(required=True, validate=validate.Regexp(HEX64), metadata={
        "description": "the hash chain's head after the batch (the hash of event `version`)"})
    time = fields.Integer(required=True, metadata={
        "description": "ms since the epoch: the `at` of the batch's last event (a retry gets the same receipt)"})
    include_by = fields.Integer(required=True, metadata={
        "description": "ms since the epoch by which a checkpoint of this game at `version` or later is "
                       "promised in the transparency log"})
    seed_commitment = fields.String(validate=validate.Regexp(HEX64), metadata={
        "description": "only on the creation's receipt (first_version 1): the game's seed commitment"})
    key_id = fields.String(required=True, validate=validate.Regexp(r"^[0-9a-f]{16}$"), metadata={
        "description": "the signing key (GET /v1/keys): first 8 bytes of SHA-256 of its raw public key, hex"})
    signature = fields.String(required=True, validate=validate.Regexp(B64URL), metadata={
        "description": "base64url (no padding) of the Ed25519 signature of the canonical JSON of every "
                       "other member"})


RECEIPT_DESCRIPTION = ("the signed receipt of the batch this command appended (docs/audit.md); a retry "
                       "with the same Idempotency-Key gets the same bytes")


# --- games ----------------------------------------------------------------------------------
class JsonNumber(fields.Float):
    """A JSON number, integer or not (never a string or a boolean, which a Float would take),
    kept as the client wrote it."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.make_error("invalid", input=value)
        super()._deserialize(value, attr, data, **kwargs)   # NaN and the infinities refused
        return value

    def _serialize(self, value, attr, obj, **kwargs):
        return value   # 50 stays 50, as the client sent it and the log recorded it


class SearchBudgetSchema(StrictSchema):
    """A `search` bot's budget per move, either field optional. The maxima are the service's
    (SEARCH_MAX_ITERATIONS, SEARCH_MAX_TIME_MS): the OpenAPI document gives this service's
    (service/openapi.py), and the core checks them (422 naming the field past them)."""

    iterations = fields.Integer(strict=True, validate=validate.Range(min=1), metadata={
        "description": "search iterations per move (default: the game's own, docs/bots.md), at most the service's "
                       "SEARCH_MAX_ITERATIONS"})
    time_ms = JsonNumber(validate=validate.Range(min=0, min_inclusive=False), metadata={
        "description": f"the most milliseconds the bot thinks per move, whatever the iterations (default "
                       f"{DEFAULT_TIME_MS:g}), above 0 and at most the service's SEARCH_MAX_TIME_MS"})


class SeatRequestSchema(StrictSchema):
    bot = fields.String(validate=validate.OneOf(BOT_LEVELS),
                        metadata={"description": "a bot level; omit for a seat a player claims"})
    open = fields.Boolean(metadata={"description": "true (or an empty object): a seat a player claims"})
    budget = fields.Nested(SearchBudgetSchema, metadata={
        "description": f"only with `\"bot\": \"{BUDGETED_LEVEL}\"`: the bot's budget per move (422 on any "
                       "other seat); omitted, the defaults"})

    @validates_schema
    def _one_kind(self, data, **kwargs):
        if data.get("bot") and data.get("open"):
            raise ValidationError("a seat is either open or a bot", "bot")


class CreateGameSchema(StrictSchema):
    type = fields.String(required=True, metadata={"description": "a game type from /v1/game-types"})
    options = fields.Dict(keys=fields.String(), load_default=dict,
                          metadata={"description": "the game's options (see /v1/game-types)"})
    seats = fields.List(fields.Nested(SeatRequestSchema), required=True,
                        validate=validate.Length(min=1, max=16), metadata={"description": "in table order"})
    rated = fields.Boolean(load_default=False, metadata={
        "description": "a rated game: every seat an account's (claimed with an account token) or a bot's "
                       "at its level's default budget, one seat per account; needs a turn_timeout"})
    turn_timeout = fields.Float(allow_none=True, load_default=None, validate=validate.Range(1, 86400),
                                metadata={"description": "seconds a seat may take before the random bot plays for it"})
    seed = fields.String(validate=validate.Regexp(r"^[0-9a-f]{64}$"),
                         metadata={"description": "test configuration only: the game's secret seed (64 hex)"})
    leave_level = fields.String(validate=validate.OneOf(BOT_LEVELS), metadata={
        "description": "the level of the bot that takes over the seat of a person who leaves (POST "
                       "/v1/games/{game_id}/leave); omitted, heuristic"})


class SeatBudgetSchema(SearchBudgetSchema):
    """A search seat's budget as its game's creation recorded it: within the limits of that
    day, clamped to the service's current ones when the bot plays (so no maxima here)."""


class SeatSchema(Schema):
    kind = fields.String(required=True, validate=validate.OneOf(["open", "player", "bot"]))
    name = fields.String(metadata={"description": "a player's name: the account's username, or the name a "
                                                 "guest typed (then `guest` is true)"})
    account = fields.String(metadata={"description": "the id of the account holding the seat"})
    guest = fields.Boolean(metadata={"description": "true: a seat claimed without an account, by name"})
    closed = fields.Boolean(metadata={"description": "true: the account holding the seat was closed"})
    reserved = fields.String(metadata={"description": "an open seat only this account may take (a challenge's "
                                                     "or a rematch's invitation)"})
    invited = fields.String(metadata={"description": "the username of the account a reserved seat waits for"})
    level = fields.String()
    budget = fields.Nested(SeatBudgetSchema, metadata={
        "description": "a search bot's budget per move, as its creation gave it (absent: the defaults); "
                       "clamped to the service's limits when it plays"})
    left = fields.Boolean(metadata={
        "description": "true: the person who held the seat (`name`, `account`) left the game; a bot of `level` "
                       "plays it now, and that person cannot come back to it"})


class ResultSchema(Schema):
    winners = fields.List(fields.Integer(), required=True)
    ranks = fields.List(fields.Integer(), required=True)
    scores = fields.List(fields.Integer(), required=True)


GAME_STATUSES = ["open", "active", "ended", "scored", "expired", "abandoned"]


class AbandonedSchema(Schema):
    idle_since = fields.Integer(required=True, metadata={
        "description": "ms since the epoch: the game's last move before it was abandoned"})
    to_act = fields.List(fields.Integer(), required=True, metadata={
        "description": "the persons' seats that were to act and did not"})


class GameSummarySchema(Schema):
    game_id = fields.String(required=True)
    type = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(GAME_STATUSES))
    version = fields.Integer(required=True)
    head = fields.String(required=True)
    rules_version = fields.Integer(required=True, metadata={
        "description": "the rules version the game is played, replayed and verified by (its creation event's)"})
    options = fields.Dict(required=True)
    platform_options = fields.Dict(required=True)
    seats = fields.List(fields.Nested(SeatSchema), required=True)
    commitment = fields.String(required=True, metadata={"description": "SHA-256 of the secret seed"})
    created_at = fields.Integer(required=True)
    moved_at = fields.Integer(required=True, metadata={
        "description": "ms since the epoch: when the game last moved (its last event)"})
    to_act = fields.List(fields.Integer(), required=True)
    result = fields.Nested(ResultSchema)
    seed = fields.String(metadata={"description": "revealed once the game is scored"})
    abandoned = fields.Nested(AbandonedSchema, metadata={
        "description": "an abandoned game (status `abandoned`): since when nobody moved, and who was to act"})
    receipt = fields.Nested(SignedReceiptSchema, metadata={
        "description": "only in the answer of a command that appended to the game (create; a challenge's, an "
                       "accept's, a decline's, a cancel's, a rematch's): the signed receipt of the batch that "
                       "left the game at `version` (create: the creation, with the seed commitment; a challenge "
                       "or a rematch: the asker's claim; docs/audit.md). A retry with the same Idempotency-Key "
                       "gets the same bytes"})


class DeadlineSchema(Schema):
    seat = fields.Integer(required=True)
    at = fields.Integer(required=True, metadata={
        "description": "ms since the epoch, on the server's clock: when the seat's move is played for it "
                       "(by the random bot, recorded as a timeout) unless it acts first"})


class ClockSchema(Schema):
    turn_timeout = fields.Float(required=True, metadata={
        "description": "seconds a seat may take per decision (the game's turn_timeout)"})
    deadlines = fields.List(fields.Nested(DeadlineSchema), required=True, metadata={
        "description": "each seat to act that the clock times out (not bots), in seat order; empty when the game "
                       "is not active. Each runs from when the seat's decision opened: another seat's move does "
                       "not restart it. Read it again after every event"})


class ViewSchema(Schema):
    game_id = fields.String(required=True)
    type = fields.String(required=True)
    version = fields.Integer(required=True)
    head = fields.String(required=True)
    status = fields.String(required=True)
    seat = fields.Integer(allow_none=True, required=True, metadata={"description": "null for a spectator"})
    to_act = fields.List(fields.Integer(), required=True)
    seats = fields.List(fields.Nested(SeatSchema), required=True)
    state = fields.Dict(allow_none=True, required=True, metadata={"description": "the game's state as this seat may see it"})
    legal_actions = fields.List(fields.Dict(), required=True, metadata={
        "description": "complete actions, or templates whose integer fields are {\"min\": a, \"max\": b}"})
    result = fields.Nested(ResultSchema)
    rules_version = fields.Integer(metadata={
        "description": "the rules version the game is played by (its creation event's); present from version 2"})
    decision = fields.Integer(allow_none=True, metadata={
        "description": "a seat's own view (GET /view): the version at which its current decision opened, "
                       "null when it is not to act; echo it as the action's `decision`"})
    clock = fields.Nested(ClockSchema, metadata={
        "description": "a game with a turn_timeout: who is timed out when (absent: the game has no clock)"})
    server_time = fields.Integer(metadata={
        "description": "a live view (GET /view, GET /games/{id}): the server's clock when it answered, ms since "
                       "the epoch; count a deadline down as `at - server_time` from when the answer came, never "
                       "by the client's own clock"})


class GameDetailSchema(GameSummarySchema):
    view = fields.Nested(ViewSchema, required=True, metadata={"description": "the spectator view"})


class LobbyQuerySchema(StrictSchema):
    type = fields.String()
    status = fields.String(validate=validate.OneOf(["open", "active", "ended", "scored", "abandoned"]))
    live = fields.Boolean(load_default=False, metadata={
        "description": "true: only the active games that moved within the service's LIVE_WITHIN seconds (an hour by "
                       "default), latest move first (the lobby's live list); with `status`, only `active`"})
    page = fields.Integer(load_default=1, validate=validate.Range(1, 100000))
    per_page = fields.Integer(load_default=20, validate=validate.Range(1, 100))

    @validates_schema
    def _live_is_active(self, data, **kwargs):
        if data.get("live") and data.get("status", "active") != "active":
            raise ValidationError("live: only active games are live; leave status out or make it active", "live")


class LobbySchema(Schema):
    games = fields.List(fields.Nested(GameSummarySchema), required=True)
    total = fields.Integer(required=True)
    page = fields.Integer(required=True)
    per_page = fields.Integer(required=True)


class GameTypeSchema(Schema):
    name = fields.String(required=True)
    title = fields.String(required=True, metadata={"description": "the game's name for people"})
    drawer = fields.String(required=True, allow_none=True, metadata={
        "description": "the web table's drawer of the game's state (an ES module, a path on this service)"})
    min_players = fields.Integer(required=True)
    max_players = fields.Integer(required=True)
    rules_version = fields.Integer(required=True, metadata={
        "description": "the rules version a game created now gets (the games' pages list every version)"})
    hidden_information = fields.Boolean(required=True)
    options = fields.Dict(required=True, metadata={"description": "each option: type, default, allowed values"})
    actions = fields.List(fields.String(), required=True)
    bot_levels = fields.List(fields.String(), required=True)
    docs = fields.String(required=True, metadata={
        "description": "the game's rules page (markdown), a path on this service: /docs/games/NAME.md"})


class GameTypesSchema(Schema):
    game_types = fields.List(fields.Nested(GameTypeSchema), required=True)


# --- seats ----------------------------------------------------------------------------------
class ClaimSchema(StrictSchema):
    name = fields.String(validate=printable_name, metadata={
        "description": f"a guest's name: printable text, 1 to {NAME_MAX} characters (no control or bidi "
                       "characters); required without an account credential, refused with one (the seat "
                       "is then the account's and shows its username)"})


class ClaimedSchema(Schema):
    game_id = fields.String(required=True)
    seat = fields.Integer(required=True)
    token = fields.String(metadata={"description": "a guest's seat: the seat's bearer token, shown once "
                                                  "(absent for an account's seat: its credentials play it)"})
    account = fields.String(metadata={"description": "an account's seat: the account's id"})
    status = fields.String(required=True)
    version = fields.Integer(required=True)
    receipt = fields.Nested(SignedReceiptSchema, required=True, metadata={"description": RECEIPT_DESCRIPTION})


# --- actions --------------------------------------------------------------------------------
class ActionRequestSchema(StrictSchema):
    # The game checks the action itself (type, fields, legality now) and names the bad field.
    # Its OpenAPI schema is the `Action` union built from the registered games (service/openapi.py).
    action = fields.Dict(required=True, keys=fields.String(), metadata={
        "description": "one of the game's actions; pick among the seat's legal_actions"})
    expected_version = fields.Integer(strict=True, validate=validate.Range(min=0), metadata={
        "description": "when given, the action is refused (409) unless the game is at this version"})
    seat = fields.Integer(strict=True, validate=validate.Range(min=0), metadata={
        "description": "with an account credential: the seat to act for, needed only when the account "
                       "holds more than one seat of the game"})
    decision = fields.Integer(strict=True, validate=validate.Range(min=1), metadata={
        "description": "the view's `decision`, echoed: binds the action to that decision of the seat "
                       "(409 `stale_decision` once it is over, e.g. after a turn timeout played for the "
                       "seat), never to the next round; what a simultaneous choice without "
                       "expected_version needs"})


class IdempotencyHeaderSchema(Schema):
    class Meta:
        unknown = EXCLUDE

    idempotency_key = fields.String(required=True, data_key="Idempotency-Key",
                                    validate=validate.Length(min=1, max=200))


MIN_CREATE_CLAIM_KEY = 16
MIN_DISTINCT_KEY_CHARACTERS = 8


def _not_weak(key: str) -> None:
    """A create or claim key must not be guessable by shape: at least 8 distinct characters
    ("aaaaaaaaaaaaaaaa", "abababababababab", "1212-1212-1212-12" are refused; a UUID, or 16
    random bytes in hex or base64, has 8 or more but once in billions)."""
    if len(set(key)) < MIN_DISTINCT_KEY_CHARACTERS:
        raise ValidationError(f"at least {MIN_DISTINCT_KEY_CHARACTERS} distinct characters (a fresh random "
                              "value, a UUID): a claim's retry answers with the seat's token")


class OptionalIdempotencyHeaderSchema(Schema):
    """Creating a game and claiming a seat: a retry with the same key returns the original
    answer (the claim's token included); the same key with another body is a 409."""

    class Meta:
        unknown = EXCLUDE

    # At least 16 characters, 8 of them distinct: a claim's retry is answered with the seat's
    # token, so whoever knows the game, the seat, the name and the key gets it; a short key
    # ("seat-0") or a weak one ("0000000000000000") could be guessed, and create keys are
    # global, shared with every other client. Action keys are scoped to their seat's token
    # (IdempotencyHeaderSchema) and keep their rules.
    idempotency_key = fields.String(data_key="Idempotency-Key", validate=[
        validate.Length(min=MIN_CREATE_CLAIM_KEY, max=200,
                        error=f"{MIN_CREATE_CLAIM_KEY} to 200 characters (a fresh random value, a UUID)"),
        validate.Regexp(r"^[!-~]+$", error="printable ASCII without spaces"), _not_weak],
        metadata={"description": f"optional: {MIN_CREATE_CLAIM_KEY} to 200 printable ASCII characters, no "
                                 f"spaces, at least {MIN_DISTINCT_KEY_CHARACTERS} of them distinct. Send a "
                                 "fresh random value (a UUID) per create or claim and resend it unchanged on a "
                                 "retry to get the original answer; keep it as secret as the token, since a "
                                 "claim's retry answers with the token. The same key with another body is 409 "
                                 "idempotency_conflict. Kept for the game's life"})


class SigningKeySchema(Schema):
    key_id = fields.String(required=True, metadata={
        "description": "first 8 bytes of SHA-256 of the raw public key, 16 hex digits"})
    algorithm = fields.String(required=True, validate=validate.Equal("Ed25519"))
    public_key = fields.String(required=True, metadata={"description": "base64url (no padding) of the raw "
                                                                       "32-byte Ed25519 public key"})
    valid_from = fields.Integer(required=True, metadata={"description": "ms since the epoch: signs from then"})
    valid_until = fields.Integer(required=True, allow_none=True, metadata={
        "description": "ms since the epoch: signs until then; null for the current key"})


class KeysSchema(Schema):
    keys = fields.List(fields.Nested(SigningKeySchema), required=True, metadata={
        "description": "every key the service has signed with, newest first"})


class EventSchema(Schema):
    version = fields.Integer(required=True)
    type = fields.String(required=True)
    data = fields.Dict(required=True)
    at = fields.Integer(required=True)
    prev_hash = fields.String(required=True)
    hash = fields.String(required=True)
    cmd = fields.Dict()


class ActionResponseSchema(Schema):
    receipt = fields.Nested(SignedReceiptSchema, required=True, metadata={"description": RECEIPT_DESCRIPTION})
    events = fields.List(fields.Nested(EventSchema), required=True)
    to_act = fields.List(fields.Integer(), required=True)
    status = fields.String(required=True)


class LeaveHeaderSchema(Schema):
    class Meta:
        unknown = EXCLUDE

    idempotency_key = fields.String(data_key="Idempotency-Key", validate=validate.Length(min=1, max=200), metadata={
        "description": "optional, and not needed: a seat leaves once, so every retry of its leave (with this key, "
                       "another or none) answers the original leave; accepted for clients that send a key with every "
                       "command"})


class LeaveRequestSchema(StrictSchema):
    seat = fields.Integer(strict=True, validate=validate.Range(min=0), metadata={
        "description": "with an account credential: the seat to leave, needed only when the account holds more "
                       "than one seat of the game"})


class LeftSchema(Schema):
    game_id = fields.String(required=True)
    seat = fields.Integer(required=True, metadata={"description": "the seat left"})
    level = fields.String(required=True, metadata={
        "description": "the level of the bot that plays the seat from now on (the game's leave_level)"})
    status = fields.String(required=True, metadata={"description": "the game's status after the leave"})
    version = fields.Integer(required=True, metadata={"description": "the game's version after the leave"})
    to_act = fields.List(fields.Integer(), required=True)
    receipt = fields.Nested(SignedReceiptSchema, required=True, metadata={"description": RECEIPT_DESCRIPTION})


# --- reading --------------------------------------------------------------------------------
class ViewQuerySchema(StrictSchema):
    wait = fields.Float(load_default=0, validate=validate.Range(0, 60),
                        metadata={"description": "long-poll: seconds to wait for a version after after_version"})
    after_version = fields.Integer(validate=validate.Range(min=0))
    seat = fields.Integer(validate=validate.Range(min=0), metadata={
        "description": "with an account credential: which of its seats, when it holds more than one"})


class EventsQuerySchema(StrictSchema):
    after = fields.Integer(load_default=0, validate=validate.Range(min=0))
    ticket = fields.String(metadata={"description": "a stream ticket, for clients that cannot send headers"})
    seat = fields.Integer(validate=validate.Range(min=0), metadata={
        "description": "with an account credential: which of its seats, when it holds more than one"})
    follow = fields.Float(load_default=None, allow_none=True, validate=validate.Range(0, 3600), metadata={
        "description": "streams only: seconds to keep the stream open (default 300)"})


class EventsSchema(Schema):
    events = fields.List(fields.Nested(EventSchema), required=True)
    version = fields.Integer(required=True)
    to_act = fields.List(fields.Integer(), required=True)
    status = fields.String(required=True)


class TicketSchema(Schema):
    ticket = fields.String(required=True)
    expires_in = fields.Integer(required=True)


class ReplayQuerySchema(StrictSchema):
    at = fields.Integer(required=True, validate=validate.Range(min=1))
    seat = fields.Integer(validate=validate.Range(min=0), metadata={
        "description": "with an account credential: which of its seats, when it holds more than one"})


class SeatQuerySchema(StrictSchema):
    seat = fields.Integer(validate=validate.Range(min=0), metadata={
        "description": "with an account credential: which of its seats, when it holds more than one"})


class ReplaySchema(Schema):
    version = fields.Integer(required=True)
    view = fields.Nested(ViewSchema, metadata={"description": "while live: the caller's view (or the spectator's)"})
    spectator = fields.Nested(ViewSchema, metadata={"description": "after the end: the spectator view"})
    seats = fields.List(fields.Nested(ViewSchema), metadata={"description": "after the end: every seat's view"})
    full_state = fields.Raw(metadata={"description": "after the end: the whole rules state, hidden parts included"})


class LedgerEntrySchema(Schema):
    event = fields.Integer(required=True)
    from_ = fields.String(required=True, data_key="from", attribute="from")
    to = fields.String(required=True)
    asset = fields.String(required=True)
    quantity = fields.Integer(required=True)
    price = fields.Integer(allow_none=True, required=True)
    balance_from = fields.Integer(required=True)
    balance_to = fields.Integer(required=True)


class LedgerSchema(Schema):
    entries = fields.List(fields.Nested(LedgerEntrySchema), required=True)
    balances = fields.Dict(keys=fields.String(), values=fields.Dict(keys=fields.String(), values=fields.Integer()),
                           required=True)


class DivergenceSchema(Schema):
    version = fields.Integer(required=True)
    check = fields.String(required=True)
    message = fields.String(required=True)


class ReceiptsField(fields.String):
    """`version:head,version:head` -> {version: head}."""

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        receipts = {}
        for item in filter(None, text.split(",")):
            version, _, head = item.partition(":")
            if ascii_int(version) is None or int(version) < 1 or len(head) != 64 or \
                    any(c not in "0123456789abcdef" for c in head):
                raise ValidationError(f"{item!r} is not version:head (a version from 1, 64 hex digits)")
            receipts[int(version)] = head
        return receipts


class VerifyQuerySchema(StrictSchema):
    receipts = ReceiptsField(validate=validate.Length(max=20000), metadata={
        "description": "receipts you kept, as version:head pairs separated by commas"})


class VerifySchema(Schema):
    ok = fields.Boolean(required=True)
    events_checked = fields.Integer(required=True)
    seed_checked = fields.Boolean(required=True)
    first_divergence = fields.Nested(DivergenceSchema, allow_none=True, required=True)


class RatingSchema(Schema):
    ordinal = fields.Float(required=True, metadata={"description": "mu - 3 sigma: what the leaderboard sorts by"})
    mu = fields.Float(required=True)
    sigma = fields.Float(required=True)
    games = fields.Integer(required=True, metadata={"description": "rated games played"})
    wins = fields.Integer(required=True)
    provisional = fields.Boolean(required=True, metadata={"description": "fewer than 10 rated games"})


class LeaderboardRowSchema(RatingSchema):
    rank = fields.Integer(required=True)
    account = fields.String(required=True)
    name = fields.String(required=True)
    bot = fields.Boolean(required=True, metadata={"description": "a bot level's account"})
    closed = fields.Boolean()


class LeaderboardQuerySchema(StrictSchema):
    offset = fields.Integer(load_default=0, validate=validate.Range(0, 1_000_000))
    limit = fields.Integer(load_default=50, validate=validate.Range(1, 200))


class LeaderboardSchema(Schema):
    type = fields.String(required=True)
    rows = fields.List(fields.Nested(LeaderboardRowSchema), required=True)
    total = fields.Integer(required=True)
    offset = fields.Integer(required=True)
    limit = fields.Integer(required=True)
