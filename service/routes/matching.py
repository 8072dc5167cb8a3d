"""Finding a game: challenges, rematch and quick pairing (docs/matching.md)."""

from __future__ import annotations

from flask import current_app
from flask.views import MethodView
from flask_smorest import Blueprint

from flask import Response

from ..account_schemas import (ChallengeSchema, PreferencesSchema, RematchSchema, SeekRequestSchema, SeekSchema,
                               SeeksSchema)
from ..ratelimit import admit_per_account, admit_per_address, creator
from ..schemas import ErrorSchema, GameSummarySchema
from .context import accounts, games, principal

blp = Blueprint("matching", __name__, description="Challenges, rematch and quick pairing")

PLAY = [{"accountToken": ["play"]}, {"sessionCookie": []}]
ACCOUNT = [{"accountToken": ["account"]}, {"sessionCookie": []}]


def invitations():
    return current_app.extensions["invitations"]


def with_receipt(session) -> dict:
    """The game's summary with the signed receipt of the batch that left it at its version
    (the batch this request appended; docs/audit.md)."""
    service = games()
    return {**service.summary(session), "receipt": service.receipt_through(session.game_id, session.version)}


@blp.route("/challenges")
class Challenges(MethodView):
    @blp.doc(security=PLAY)
    @blp.arguments(ChallengeSchema)
    @blp.response(201, GameSummarySchema)
    @blp.alt_response(403, schema=ErrorSchema, description="`challenges_refused`: an invited account takes none")
    @blp.alt_response(404, schema=ErrorSchema, description="no account of an invited name")
    @blp.alt_response(429, schema=ErrorSchema, description="`too_many_challenges` from this account, or "
                                                          "`too_many_games` from this address")
    def post(self, body):
        """Challenge accounts by name: a new game whose seats are reserved for them (and one for
        you, taken at once); other seats open or bots. Each invited account is told on its
        stream, and accepts (`/accept`, or claiming its seat) or declines; you may cancel. Past
        `expires_in` seconds the game expires: it never starts and leaves the lobby.

        The answer's `receipt` is the signed receipt of your seat's claim (docs/audit.md)."""
        me = principal("play")
        admit_per_account(me.account_id, "CHALLENGE_LIMIT", "too_many_challenges", "challenges")
        admit_per_address("CREATE_LIMIT", "too_many_games", "game creation")
        session = invitations().challenge(me, body["type"], body["options"], body["seats"], rated=body["rated"],
                                          turn_timeout=body.get("turn_timeout"), expires_in=body["expires_in"],
                                          creator=creator())
        return with_receipt(session), 201


def _invitation_route(name: str, doc: str):
    class Route(MethodView):
        @blp.doc(security=PLAY)
        @blp.response(200, GameSummarySchema)
        @blp.alt_response(403, schema=ErrorSchema, description="not invited (`not_invited`) or not yours (`not_yours`)")
        @blp.alt_response(404, schema=ErrorSchema, description="no such game, or not an invitation")
        @blp.alt_response(409, schema=ErrorSchema, description="the invitation is no longer open")
        def post(self, game_id):
            return with_receipt(getattr(invitations(), name)(principal("play"), game_id))

    Route.post.__doc__ = doc + ("\n\nThe answer's `receipt` is the signed receipt of the game's batch its "
                                "version ends (docs/audit.md).")
    Route.__name__ = f"Challenge{name.capitalize()}"
    return Route


blp.route("/challenges/<game_id>/accept")(_invitation_route(
    "accept", "Accept a challenge or a rematch: take the seat reserved for you."))
blp.route("/challenges/<game_id>/decline")(_invitation_route(
    "decline", "Decline a challenge or a rematch: the game expires and never starts."))
blp.route("/challenges/<game_id>/cancel")(_invitation_route(
    "cancel", "Cancel your own challenge or rematch offer: the game expires and never starts."))


@blp.route("/games/<game_id>/rematch")
class Rematch(MethodView):
    @blp.doc(security=PLAY)
    @blp.arguments(RematchSchema)
    @blp.response(201, GameSummarySchema)
    @blp.alt_response(403, schema=ErrorSchema, description="this account held no seat of the game")
    @blp.alt_response(404, schema=ErrorSchema, description="no such game")
    @blp.alt_response(409, schema=ErrorSchema, description="`not_finished`: the game is not scored yet")
    def post(self, body, game_id):
        """The same table again (same accounts and bot levels, options, clock and rating, seats
        rotated by one), your seat taken, the others reserved for their accounts and offered on
        their streams. Two seats asking at once get the same new game.

        The answer's `receipt` is the signed receipt of your seat's claim (docs/audit.md)."""
        return with_receipt(invitations().rematch(principal("play"), game_id, body["expires_in"])), 201


@blp.route("/account/preferences")
class Preferences(MethodView):
    @blp.doc(security=ACCOUNT)
    @blp.response(200, PreferencesSchema)
    def get(self):
        """Who may challenge this account: anyone, or none."""
        return {"challenges": accounts().account(principal("account").account_id).challenges}

    @blp.doc(security=ACCOUNT)
    @blp.arguments(PreferencesSchema)
    @blp.response(200, PreferencesSchema)
    def put(self, body):
        """Set who may challenge this account."""
        return {"challenges": accounts().set_preferences(principal("account"), body["challenges"]).challenges}


def seeks():
    return current_app.extensions["seeks"]


@blp.route("/seeks")
class Seeks(MethodView):
    @blp.doc(security=PLAY)
    @blp.response(200, SeeksSchema)
    def get(self):
        """The account's seeks that are open or matched."""
        return {"seeks": [s.public() for s in seeks().mine(principal("play"))]}

    @blp.doc(security=PLAY)
    @blp.arguments(SeekRequestSchema)
    @blp.response(201, SeekSchema)
    @blp.alt_response(409, schema=ErrorSchema, description="`too_many_seeks`: five open already")
    @blp.alt_response(429, schema=ErrorSchema, description="`too_many_games` from this account")
    def post(self, body):
        """Ask for a game: a table of `players` of this type is formed from the waiting seeks
        (first come, within the rating ranges), completed with bots after `bots_after`
        seconds if given; each account is told on its stream (`seek.matched`, then the game's
        own notices). A seek lasts while the account's stream is open, or 30 s after it closed
        or after the seek was made (a reconnect keeps it), or until cancelled."""
        me = principal("play")
        admit_per_account(me.account_id, "CREATE_LIMIT", "too_many_games", "games asked for")
        seek = seeks().open(me, body["type"], body["players"], body["rated"], body.get("rating_range"),
                            body.get("bots_after"), body.get("turn_timeout"))
        return seek.public(), 201


@blp.route("/seeks/<seek_id>")
class OneSeek(MethodView):
    @blp.doc(security=PLAY)
    @blp.response(204)
    @blp.alt_response(404, schema=ErrorSchema, description="no seek of this account")
    def delete(self, seek_id):
        """Cancel a seek (a matched one stays matched: its game is formed)."""
        seeks().cancel(principal("play"), seek_id)
        return Response(status=204)
