"""The table chat (docs/api.md "Chat"): the preset messages, a game's chat read and written,
a seat's mutes. The operator's removals are `speculation chat remove` (service/cli.py)."""

from __future__ import annotations

from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import EXCLUDE, Schema, fields, validate

from projections.chat import CHANNELS, PRESETS, Viewer

from ..accounts.credentials import is_account_credential
from ..core.errors import CREDENTIAL, CoreError, Unauthorized
from ..schemas import ErrorSchema, StrictSchema
from .context import READ_OWN_GAME, credential, games, principal, seat_of
from .play import SECURED

blp = Blueprint("chat", __name__, description="The table chat: seats and spectators, presets, mutes")

CHANNEL = fields.String(validate=validate.OneOf(CHANNELS))
SEAT_OF_ACCOUNT = "with an account credential: which of its seats, when it holds more than one"


class ChatPresetSchema(Schema):
    id = fields.String(required=True, validate=validate.OneOf(list(PRESETS)))
    text = fields.String(required=True, metadata={"description": "what the message says"})


class ChatLimitsSchema(Schema):
    max_length = fields.Integer(required=True, metadata={"description": "characters of a message, after NFC"})
    rate_count = fields.Integer(required=True, metadata={"description": "messages (and mutes) an author may send "
                                                                        "per `rate_seconds` in one game"})
    rate_seconds = fields.Integer(required=True)
    max_entries = fields.Integer(required=True, metadata={"description": "entries a game's chat keeps at most"})


class ChatPresetsSchema(Schema):
    presets = fields.List(fields.Nested(ChatPresetSchema), required=True)
    limits = fields.Nested(ChatLimitsSchema, required=True)


class ChatAuthorSchema(Schema):
    seat = fields.Integer(required=True, allow_none=True, metadata={
        "description": "the seat that said it (the players' channel); null in the spectators' channel"})
    account = fields.String(required=True, allow_none=True, metadata={"description": "the account's id, if any"})
    name = fields.String(required=True, metadata={
        "description": "the account's username now, or a guest's typed name (plain text: never render it as HTML)"})
    guest = fields.Boolean(required=True, metadata={"description": "a guest's typed name, not an account's"})


class ChatItemSchema(Schema):
    id = fields.Integer(required=True, metadata={"description": "the entry's place in the game's chat, 1, 2, ..."})
    kind = fields.String(required=True, validate=validate.OneOf(["message", "removal"]), metadata={
        "description": "message: something said; removal: the operator removed message `message` (show it "
                       "without its text from now on)"})
    channel = fields.String(required=True, validate=validate.OneOf(CHANNELS))
    at = fields.Integer(required=True, metadata={"description": "ms since the epoch, the server's clock"})
    version = fields.Integer(required=True, metadata={
        "description": "the game's version when it was said: replays show it beside that event"})
    author = fields.Nested(ChatAuthorSchema, required=True, allow_none=True, metadata={
        "description": "a message's author (null for a removal)"})
    text = fields.String(required=True, allow_none=True, metadata={
        "description": "what was said (a preset's text for a preset), plain text: never render it as HTML; null "
                       "for a removal and for a removed message"})
    preset = fields.String(required=True, allow_none=True, metadata={"description": "the preset's id, if it is one"})
    removed = fields.Boolean(required=True, metadata={"description": "a message the operator removed"})
    message = fields.Integer(required=True, allow_none=True, metadata={"description": "a removal: the message removed"})
    reason = fields.String(required=True, allow_none=True, metadata={"description": "a removal: why, if said"})


class ChatSchema(Schema):
    game_id = fields.String(required=True)
    items = fields.List(fields.Nested(ChatItemSchema), required=True, metadata={
        "description": "the messages and removals after `after` the caller may read, oldest first; a muted "
                       "seat's messages left out"})
    last = fields.Integer(required=True, metadata={
        "description": "ask again with `after` = this: the entries up to it are answered (some may be of a channel "
                       "the caller does not read, or mutes)"})
    more = fields.Boolean(required=True, metadata={"description": "more entries wait: ask again at once"})
    readable = fields.List(CHANNEL, required=True, metadata={"description": "the channels the caller reads"})
    writable = fields.List(CHANNEL, required=True, metadata={"description": "the channels the caller may write in"})
    muted = fields.List(fields.Integer(), required=True, metadata={"description": "the seats the caller's seat muted"})
    seat = fields.Integer(required=True, allow_none=True, metadata={"description": "the caller's seat (null: none)"})


class ChatQuerySchema(StrictSchema):
    after = fields.Integer(load_default=0, validate=validate.Range(min=0), metadata={
        "description": "the items after this id (the previous answer's `last`)"})
    channel = fields.String(validate=validate.OneOf(CHANNELS), metadata={"description": "only this channel's"})
    limit = fields.Integer(validate=validate.Range(min=1, max=200), metadata={"description": "entries read at most"})
    seat = fields.Integer(validate=validate.Range(min=0), metadata={"description": SEAT_OF_ACCOUNT})


class ChatHeaderSchema(Schema):
    class Meta:
        unknown = EXCLUDE

    idempotency_key = fields.String(data_key="Idempotency-Key", validate=validate.Length(min=1, max=200), metadata={
        "description": "optional: a retry with the same key and message answers the original one (201, "
                       "Idempotent-Replayed: true) and says nothing twice; the same key with another message is 409"})


class ChatPostSchema(StrictSchema):
    channel = fields.String(required=True, validate=validate.OneOf(CHANNELS), metadata={
        "description": "players: the game's seats only; spectators: any signed-in account"})
    text = fields.String(metadata={
        "description": "what to say: plain text, at most the service's max_length characters after NFC (GET "
                       "/v1/chat/presets), no control or format characters; or `preset`"})
    preset = fields.String(validate=validate.OneOf(list(PRESETS)), metadata={
        "description": "a preset message's id instead of `text`"})
    seat = fields.Integer(strict=True, validate=validate.Range(min=0), metadata={"description": SEAT_OF_ACCOUNT})


class ChatMuteSchema(StrictSchema):
    target = fields.Integer(required=True, strict=True, validate=validate.Range(min=0), metadata={
        "description": "the seat to mute"})
    seat = fields.Integer(strict=True, validate=validate.Range(min=0), metadata={"description": SEAT_OF_ACCOUNT})


class ChatMutedSchema(Schema):
    game_id = fields.String(required=True)
    seat = fields.Integer(required=True, metadata={"description": "the caller's seat"})
    muted = fields.List(fields.Integer(), required=True, metadata={"description": "the seats it muted"})


class SeatOnlyQuerySchema(StrictSchema):
    seat = fields.Integer(validate=validate.Range(min=0), metadata={"description": SEAT_OF_ACCOUNT})


CHAT_QUERY, CHAT_HEADERS, CHAT_POST = ChatQuerySchema(), ChatHeaderSchema(), ChatPostSchema()
CHAT_MUTE, SEAT_QUERY = ChatMuteSchema(), SeatOnlyQuerySchema()


def chat_viewer(game_id: str, seat=None) -> Viewer:
    """Who reads: the caller's seat (its token, or the account's seat) and its account; a
    caller without a credential (or with a cookie no longer valid) is a spectator."""
    token, via_cookie = credential()
    if token is None:
        return Viewer()
    if is_account_credential(token):
        try:
            found = principal(READ_OWN_GAME)
        except CoreError:
            if via_cookie:
                return Viewer()
            raise
        return Viewer(games().account_seat(game_id, found.account_id, seat, spectator=True), found.account_id)
    if via_cookie:
        return Viewer()
    return Viewer(games().authenticate(game_id, token))


def poster(game_id: str, channel: str, seat=None) -> Viewer:
    """Who writes: in the players' channel a seat (its token, or the account that holds it);
    in the spectators' an account (a seat token alone is refused by the chat's rules)."""
    if channel == "players":
        return Viewer(seat_of(game_id, "play", seat))
    token, _ = credential()
    if token is None:
        raise Unauthorized(f"{CREDENTIAL}: an account credential is required to write in the spectators' channel",
                           {"field": CREDENTIAL})
    if not is_account_credential(token):
        games().authenticate(game_id, token)    # a seat token of this game (else 401/403 as anywhere)
        return Viewer()
    return Viewer(None, principal("play").account_id)


@blp.route("/chat/presets")
class Presets(MethodView):
    @blp.response(200, ChatPresetsSchema)
    def get(self):
        """The preset messages (send one with its `preset` id) and the chat's limits."""
        return games().chat.presets()


@blp.route("/games/<game_id>/chat")
class Chat(MethodView):
    @blp.arguments(CHAT_QUERY, location="query")
    @blp.response(200, ChatSchema)
    @blp.alt_response(401, schema=ErrorSchema, description="an unknown token")
    @blp.alt_response(403, schema=ErrorSchema, description="a token of another game, or `channel=players` asked by "
                      "a spectator while the game runs (`chat_forbidden`)")
    @blp.alt_response(404, schema=ErrorSchema, description="no such game")
    def get(self, query, game_id):
        """The table chat after `after`: the channels the caller reads. The players' channel is
        the game's seats' (a seat token, or the account's seat) until the game is over, then
        anyone's; the spectators' is anyone's. A seat's muted seats are left out. Poll with
        `after` = the last answer's `last` (every 2 to 3 seconds is plenty). Every text is
        plain text: show it as text, never as HTML."""
        viewer = chat_viewer(game_id, query.get("seat"))
        return games().chat.read(game_id, viewer, query.get("channel"), query["after"], query.get("limit"))

    @blp.doc(security=SECURED)
    @blp.arguments(CHAT_HEADERS, location="headers")
    @blp.arguments(CHAT_POST)
    @blp.response(201, ChatItemSchema, headers={
        "Idempotent-Replayed": {"description": "true when this answers a retry of the same Idempotency-Key",
                                "schema": {"type": "string"}}})
    @blp.alt_response(401, schema=ErrorSchema, description="no or unknown credential")
    @blp.alt_response(403, schema=ErrorSchema, description="not a seat of this game (players), no account "
                      "(spectators): `chat_forbidden`; a token of another game")
    @blp.alt_response(404, schema=ErrorSchema, description="no such game")
    @blp.alt_response(409, schema=ErrorSchema, description="the chat is full (`chat_full`), the game is archived "
                      "(`chat_closed`), or a reused Idempotency-Key (`idempotency_conflict`)")
    @blp.alt_response(422, schema=ErrorSchema, description="`text` empty, too long or with a control or format "
                      "character (`invalid_text`), neither or both of `text` and `preset`, an unknown `preset` or "
                      "`channel`")
    @blp.alt_response(429, schema=ErrorSchema, description="more than the chat's rate for this author "
                      "(`chat_rate_limited`, with Retry-After), or the service's rate limit")
    def post(self, headers, body, game_id):
        """Say something at the table: `text`, or a `preset`'s id, in a `channel`. In the
        players' channel as the seat (its token, or the account that holds it); in the
        spectators' as a signed-in account. At most the service's `rate_count` messages per
        `rate_seconds` per author and game (429 `chat_rate_limited`), `max_length` characters,
        `max_entries` entries a game (409 `chat_full`): GET /v1/chat/presets gives them. A
        refused message changes nothing. The chat is kept with the game (its export's header,
        `chat`; its archive) but outside its hash chain."""
        viewer = poster(game_id, body["channel"], body.get("seat"))
        item, replayed = games().chat.post(game_id, viewer, body["channel"], body.get("text"), body.get("preset"),
                                           headers.get("idempotency_key"))
        return item, 201, {"Idempotent-Replayed": "true" if replayed else "false"}


@blp.route("/games/<game_id>/chat/mutes")
class Mutes(MethodView):
    @blp.doc(security=SECURED)
    @blp.arguments(CHAT_MUTE)
    @blp.response(200, ChatMutedSchema)
    @blp.alt_response(401, schema=ErrorSchema, description="no or unknown credential")
    @blp.alt_response(403, schema=ErrorSchema, description="not a seat of this game")
    @blp.alt_response(404, schema=ErrorSchema, description="no such game")
    @blp.alt_response(409, schema=ErrorSchema, description="the chat is full (`chat_full`) or the game archived "
                      "(`chat_closed`)")
    @blp.alt_response(422, schema=ErrorSchema, description="`target` is not another seat of the game")
    @blp.alt_response(429, schema=ErrorSchema, description="past the chat's rate for this seat (`chat_rate_limited`)")
    def post(self, body, game_id):
        """Mute a seat: its messages are left out of this seat's reads of the chat (they stay
        in the log and in the export). Muting a seat already muted changes nothing."""
        seat = seat_of(game_id, "play", body.get("seat"))
        return games().chat.mute(game_id, seat, body["target"], True)


@blp.route("/games/<game_id>/chat/mutes/<int:target>")
class Mute(MethodView):
    @blp.doc(security=SECURED)
    @blp.arguments(SEAT_QUERY, location="query")
    @blp.response(200, ChatMutedSchema)
    @blp.alt_response(401, schema=ErrorSchema, description="no or unknown credential")
    @blp.alt_response(403, schema=ErrorSchema, description="not a seat of this game")
    @blp.alt_response(404, schema=ErrorSchema, description="no such game")
    @blp.alt_response(409, schema=ErrorSchema, description="the chat is full (`chat_full`) or the game archived "
                      "(`chat_closed`)")
    @blp.alt_response(422, schema=ErrorSchema, description="`target` is not another seat of the game")
    @blp.alt_response(429, schema=ErrorSchema, description="past the chat's rate for this seat (`chat_rate_limited`)")
    def delete(self, query, game_id, target):
        """Unmute a seat: its messages are shown to this seat again, the earlier ones too."""
        seat = seat_of(game_id, "play", query.get("seat"))
        return games().chat.mute(game_id, seat, target, False)
