"""Request and response schemas of the accounts' endpoints (validation and the OpenAPI
document). The rules a username or password must meet are the core's (service/accounts/
names.py, passwords.py): here only their types and outer bounds, so a bad value gets the
core's message naming the field."""

from __future__ import annotations

from marshmallow import Schema, ValidationError, fields, validate

from .accounts.model import SCOPES
from .limits import text_problem
from .schemas import JsonNumber, RatingSchema, SeatSchema, StrictSchema

USERNAME = {"description": "3 to 24 letters a-z, digits, _ or -, starting with a letter or a digit; unique "
                           "after case folding and look-alike letters (0/o, 1/l/i, rn/m...)"}
PASSWORD = {"description": "8 to 128 characters, not a common password, not containing the username"}


def _text(max_length: int, **metadata) -> fields.String:
    return fields.String(required=True, validate=validate.Length(max=max_length), metadata=metadata)


KEY_SHOWN = 64


def _shown_key(key) -> str:
    """A field name as an error names it. An unknown field's name is the client's own text:
    a control, bidi or invisible character in it is escaped (the message must not carry one
    raw) and a long one is cut."""
    text = key if isinstance(key, str) else str(key)
    if text.isprintable() and len(text) <= KEY_SHOWN:
        return text
    return ascii(text[:KEY_SHOWN]) + ("..." if len(text) > KEY_SHOWN else "")


class AccountSchema(StrictSchema):
    """A request of the accounts' endpoints: unknown fields refused, and named safely."""

    def handle_error(self, error: ValidationError, data, *, many: bool, **kwargs):
        messages = error.messages
        if isinstance(messages, dict) and any(_shown_key(k) != k for k in messages):
            shown: dict = {}
            for key, value in messages.items():
                name = _shown_key(key)   # two long names cut alike: their messages join
                both = isinstance(shown.get(name), list) and isinstance(value, list)
                shown[name] = shown[name] + value if both else value
            raise ValidationError(shown, data=data, valid_data=error.valid_data)


class JsonBoolean(fields.Boolean):
    """A JSON true or false (never 1, "yes" or "on", which a Boolean would take)."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


LABEL_MAX = 64


def _printable_label(value: str) -> None:
    problem = text_problem(value, LABEL_MAX)
    if problem:
        raise ValidationError(problem)


class SignUpSchema(AccountSchema):
    username = _text(96, **USERNAME)
    password = _text(512, **PASSWORD)


class AccountPublicSchema(Schema):
    id = fields.String(required=True)
    username = fields.String(required=True)
    created_at = fields.Integer(required=True, metadata={"description": "ms since the epoch"})
    closed = fields.Boolean(required=True)


class ProfileSchema(AccountPublicSchema):
    bot = fields.Boolean(required=True, metadata={"description": "a bot level's account (rated, never signs in)"})
    ratings = fields.Dict(keys=fields.String(), values=fields.Nested(RatingSchema), required=True, metadata={
        "description": "the account's rating per game type it was rated in"})
    recent_games = fields.List(fields.Dict(), required=True, metadata={
        "description": "its latest games: game_id, type, status, rated, last_move_at"})


class RatingHistoryEntrySchema(RatingSchema):
    game_id = fields.String(required=True)
    at = fields.Integer(required=True)
    place = fields.Integer(required=True)
    seat = fields.Integer(required=True)
    players = fields.Integer(required=True)


class RatingHistorySchema(Schema):
    account = fields.String(required=True)
    type = fields.String(required=True)
    history = fields.List(fields.Nested(RatingHistoryEntrySchema), required=True, metadata={
        "description": "the rating after each rated game, oldest first (the last 100)"})


class SignedUpSchema(Schema):
    account = fields.Nested(AccountPublicSchema, required=True)
    recovery_codes = fields.List(fields.String(), required=True, metadata={
        "description": "10 one-time codes that reset the password (POST /v1/account/recover): shown once"})


class SignInSchema(AccountSchema):
    username = _text(96)
    password = _text(512)
    device = fields.String(validate=validate.Length(max=64), metadata={
        "description": "the `device` of an earlier sign-in to this account: passes a sign-in lock"})
    use_cookie = JsonBoolean(load_default=False, metadata={
        "description": "true (the web pages): the session goes in an HttpOnly cookie, not in the body"})


class SessionSchema(Schema):
    token = fields.String(metadata={"description": "the session's bearer credential (sps_...), shown once; "
                                                   "absent with use_cookie"})
    token_id = fields.String(required=True)
    account = fields.Nested(AccountPublicSchema, required=True)
    scopes = fields.List(fields.String(), required=True)
    expires_at = fields.Integer(required=True)
    device = fields.String(required=True, metadata={"description": "keep it and send it with later sign-ins"})
    csrf_token = fields.String(required=True, metadata={
        "description": "send it as X-CSRF-Token with every state-changing request made with the cookie"})


class WhoAmISchema(Schema):
    id = fields.String(required=True)
    username = fields.String(required=True)
    created_at = fields.Integer(required=True)
    token_id = fields.String(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(["session", "personal"]))
    scopes = fields.List(fields.String(), required=True)
    csrf_token = fields.String(metadata={"description": "a cookie session's CSRF token"})


class PasswordChangeSchema(AccountSchema):
    current_password = _text(512)
    new_password = _text(512, **PASSWORD)


class PasswordSchema(AccountSchema):
    password = _text(512)


class RecoverSchema(AccountSchema):
    username = _text(96)
    recovery_code = _text(64)
    new_password = _text(512, **PASSWORD)


class RecoveryCodesSchema(Schema):
    recovery_codes = fields.List(fields.String(), required=True)


class TokenRequestSchema(AccountSchema):
    label = fields.String(required=True, validate=[validate.Length(min=1, max=LABEL_MAX), _printable_label],
                          metadata={"description": "what the token is for (shown in the list): printable "
                                                   "text, no control or bidi characters"})
    scopes = fields.List(fields.String(validate=validate.OneOf(SCOPES)), required=True,
                         validate=validate.Length(min=1, max=len(SCOPES)), metadata={
                             "description": "play: claim seats and act; read: the account's games, views "
                                            "and stream; account: tokens, password and the account"})
    expires_in_days = JsonNumber(allow_none=True, load_default=None, validate=validate.Range(1 / 24, 3650))


class TokenSchema(Schema):
    id = fields.String(required=True)
    kind = fields.String(required=True)
    label = fields.String(required=True)
    scopes = fields.List(fields.String(), required=True)
    created_at = fields.Integer(required=True)
    expires_at = fields.Integer(allow_none=True, required=True)
    last_used_at = fields.Integer(allow_none=True)
    current = fields.Boolean(metadata={"description": "the credential of this request"})


class NewTokenSchema(TokenSchema):
    token = fields.String(required=True, metadata={"description": "the bearer credential (spa_...), shown once"})


class TokensSchema(Schema):
    tokens = fields.List(fields.Nested(TokenSchema), required=True)


class AccountGamesQuerySchema(AccountSchema):
    status = fields.String(validate=validate.OneOf(["active", "finished"]))
    my_turn = fields.Boolean(load_default=False)
    type = fields.String(validate=validate.Length(max=64))
    offset = fields.Integer(load_default=0, validate=validate.Range(0, 100_000))
    limit = fields.Integer(load_default=20, validate=validate.Range(1, 100))


class AccountGameSchema(Schema):
    game_id = fields.String(required=True)
    type = fields.String(required=True)
    status = fields.String(required=True)
    version = fields.Integer(required=True)
    seats = fields.List(fields.Nested(SeatSchema), required=True)
    my_seats = fields.List(fields.Integer(), required=True)
    left_seats = fields.List(fields.Integer(), required=True, metadata={
        "description": "the account's seats it left (among my_seats): a bot plays them now, and the account "
                       "cannot come back to them"})
    to_act = fields.List(fields.Integer(), required=True)
    my_turn = fields.Boolean(required=True, metadata={"description": "a seat the account holds (and did not "
                                                                     "leave) is to act"})
    created_at = fields.Integer(required=True)
    last_move_at = fields.Integer(required=True)
    rated = fields.Boolean(required=True)
    turn_timeout = fields.Float(allow_none=True, required=True, metadata={"description": "seconds a seat may take"})
    result = fields.Dict()


class AccountGamesSchema(Schema):
    games = fields.List(fields.Nested(AccountGameSchema), required=True)
    total = fields.Integer(required=True)
    offset = fields.Integer(required=True)
    limit = fields.Integer(required=True)


class AccountEventsQuerySchema(AccountSchema):
    after = fields.Integer(load_default=0, validate=validate.Range(min=0))
    follow = fields.Float(load_default=None, allow_none=True, validate=validate.Range(0, 3600), metadata={
        "description": "streams only: seconds to keep the stream open (default 300)"})


class AccountEventSchema(Schema):
    class Meta:
        unknown = "include"

    id = fields.Integer(required=True, metadata={"description": "the position in the account's stream"})
    type = fields.String(required=True, validate=validate.OneOf([
        "game.joined", "game.started", "turn", "game.ended", "invitation", "invitation.accepted",
        "invitation.expired", "seek.matched"]))
    at = fields.Integer(required=True)
    game_id = fields.String(required=True)
    game_type = fields.String(required=True)
    seat = fields.Integer(metadata={"description": "the account's seat (an invitation: the seat reserved for it)"})
    version = fields.Integer(metadata={"description": "turn: the game's version"})
    decision = fields.Integer(metadata={"description": "turn: the decision to echo with the action"})
    rank = fields.Integer(metadata={"description": "game.ended: the seat's rank (1: first)"})
    winners = fields.List(fields.Integer(), metadata={"description": "game.ended: the winning seats"})
    won = fields.Boolean(metadata={"description": "game.ended: whether this seat won"})
    kind = fields.String(metadata={"description": "invitation*: challenge or rematch"})
    from_ = fields.String(data_key="from", attribute="from",
                          metadata={"description": "invitation*: the asking account's id"})
    by = fields.String(metadata={"description": "invitation.accepted, invitation.expired: the account that did it"})
    reason = fields.String(metadata={"description": "invitation.expired: declined, cancelled or expired"})
    rated = fields.Boolean(metadata={"description": "invitation*: a rated game"})
    expires_at = fields.Integer(allow_none=True, metadata={"description": "invitation: when it expires (ms)"})
    seek_id = fields.String(metadata={"description": "seek.matched: the seek that found this game"})


class AccountEventsSchema(Schema):
    events = fields.List(fields.Nested(AccountEventSchema), required=True)
    until = fields.Integer(required=True, metadata={"description": "ask again with after=until"})


class ExportSchema(Schema):
    account = fields.Nested(AccountPublicSchema, required=True)
    tokens = fields.List(fields.Nested(TokenSchema), required=True)
    games = fields.List(fields.Nested(AccountGameSchema), required=True)
    exported_at = fields.Integer(required=True)


class ChallengeSeatSchema(AccountSchema):
    me = JsonBoolean(metadata={"description": "the challenger's own seat (exactly one)"})
    account = fields.String(validate=validate.Length(max=96), metadata={"description": "invite this username"})
    bot = fields.String(metadata={"description": "a bot of this level"})


class ChallengeSchema(AccountSchema):
    type = fields.String(required=True)
    options = fields.Dict(keys=fields.String(), load_default=dict)
    seats = fields.List(fields.Nested(ChallengeSeatSchema), required=True, validate=validate.Length(min=2, max=16),
                        metadata={"description": "`{\"me\": true}`, `{\"account\": username}`, `{\"bot\": level}` "
                                                 "or `{}` (open to anyone)"})
    rated = JsonBoolean(load_default=False)
    turn_timeout = JsonNumber(allow_none=True, load_default=None, validate=validate.Range(1, 86400))
    expires_in = JsonNumber(load_default=600, validate=validate.Range(10, 7 * 86400), metadata={
        "description": "seconds the invitation waits (default 600); then the game expires"})


class RematchSchema(AccountSchema):
    expires_in = JsonNumber(load_default=600, validate=validate.Range(10, 7 * 86400))


class PreferencesSchema(AccountSchema):
    challenges = fields.String(required=True, validate=validate.OneOf(["anyone", "none"]), metadata={
        "description": "who may challenge this account"})


class RatingRangeSchema(AccountSchema):
    min = JsonNumber(allow_none=True, load_default=None, metadata={"description": "lowest rating (ordinal) to meet"})
    max = JsonNumber(allow_none=True, load_default=None, metadata={"description": "highest rating (ordinal) to meet"})


class SeekRequestSchema(AccountSchema):
    type = fields.String(required=True)
    players = fields.Integer(strict=True, required=True, validate=validate.Range(2, 16))
    rated = JsonBoolean(load_default=False)
    rating_range = fields.Nested(RatingRangeSchema, allow_none=True, load_default=None, metadata={
        "description": "meet only accounts rated within it (and whose own range holds yours)"})
    bots_after = JsonNumber(allow_none=True, load_default=None, validate=validate.Range(0, 3600), metadata={
        "description": "seconds after which the table is completed with bots (none: wait for people)"})
    turn_timeout = JsonNumber(allow_none=True, load_default=None, validate=validate.Range(1, 86400))


class SeekSchema(Schema):
    seek_id = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["open", "matched", "cancelled"]))
    type = fields.String(required=True)
    players = fields.Integer(required=True)
    rated = fields.Boolean(required=True)
    rating = fields.Float(required=True, metadata={"description": "the account's rating (ordinal) when it asked"})
    rating_range = fields.List(fields.Float(allow_none=True), allow_none=True)
    bots_after = fields.Float(allow_none=True)
    opened_at = fields.Integer(required=True)
    game_id = fields.String(metadata={"description": "matched: the game formed"})


class SeeksSchema(Schema):
    seeks = fields.List(fields.Nested(SeekSchema), required=True)
