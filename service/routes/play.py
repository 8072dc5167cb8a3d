"""A seat's view (with long-poll), posting actions, and leaving the game."""

from __future__ import annotations

from flask import jsonify
from flask.views import MethodView
from flask_smorest import Blueprint

from ..ratelimit import count_self_playing
from ..schemas import (ActionRequestSchema, ActionResponseSchema, ErrorSchema, IdempotencyHeaderSchema,
                       LeaveHeaderSchema, LeaveRequestSchema, LeftSchema, ViewQuerySchema, ViewSchema)
from ..streaming import open_wait
from .context import READ_OWN_GAME, bearer, games, seat_of

blp = Blueprint("play", __name__, description="A seat's view and its actions")
SECURED = [{"seatToken": []}, {"accountToken": ["play"]}, {"sessionCookie": []}]
READ_SECURED = [{"seatToken": []}, {"accountToken": ["read"]}, {"accountToken": ["play"]}, {"sessionCookie": []}]


@blp.route("/games/<game_id>/view")
class View(MethodView):
    @blp.doc(security=READ_SECURED)
    @blp.arguments(ViewQuerySchema, location="query")
    @blp.response(200, ViewSchema)
    @blp.alt_response(401, schema=ErrorSchema, description="no or unknown token")
    @blp.alt_response(403, schema=ErrorSchema, description="a token of another game, or of a seat its person left "
                      "(`seat_left`: read the game as a spectator)")
    @blp.alt_response(429, schema=ErrorSchema, description="too many open long-polls and streams")
    def get(self, query, game_id):
        """The seat's view: version, status, to_act, the state it may see, its legal actions.

        Long-poll with `wait` and `after_version`: answers as soon as the game's version
        passes `after_version`, or after `wait` seconds. A long-poll counts as an open stream
        (429 `too_many_streams` with Retry-After past the caps per token and per address)."""
        seat = seat_of(game_id, READ_OWN_GAME, query.get("seat"))
        service = games()
        if query.get("wait") and query.get("after_version") is not None:
            release = open_wait(bearer(), stream=False)   # 429 too_many_streams past the caps
            try:
                service.wait_for(game_id, query["after_version"], query["wait"])
            finally:
                release()
        return service.view(game_id, seat)


# Schema instances, not classes: given a class, webargs builds a new schema on every request
# (a third of the framework's time per action in the profile).
IDEMPOTENCY_HEADERS = IdempotencyHeaderSchema()
ACTION_REQUEST = ActionRequestSchema()


@blp.route("/games/<game_id>/actions")
class Actions(MethodView):
    @blp.doc(security=SECURED)
    @blp.arguments(IDEMPOTENCY_HEADERS, location="headers")
    @blp.arguments(ACTION_REQUEST)
    @blp.response(200, ActionResponseSchema, headers={
        "Idempotent-Replayed": {"description": "true when this is the stored answer to a retry",
                                "schema": {"type": "string"}}})
    @blp.alt_response(401, schema=ErrorSchema, description="no or unknown token")
    @blp.alt_response(403, schema=ErrorSchema, description="a token of another game, or of a seat its person left "
                      "(`seat_left`: a bot plays it now)")
    @blp.alt_response(409, schema=ErrorSchema, description="stale expected_version, a decision that is over "
                      "(stale_decision), or a reused Idempotency-Key")
    @blp.alt_response(422, schema=ErrorSchema, description="an invalid or illegal action (out of turn included)")
    def post(self, headers, body, game_id):
        """Play an action as the token's seat. Requires an Idempotency-Key header: a retry
        with the same key and body returns the original receipt and appends nothing.

        The answer's `receipt` is signed with the service's key (docs/audit.md): keep it."""
        seat = seat_of(game_id, "play", body.get("seat"))
        service = games()
        receipt, session, shown = service.act(game_id, seat, body["action"],
                                              expected_version=body.get("expected_version"),
                                              decision=body.get("decision"),
                                              idempotency_key=headers["idempotency_key"])
        payload = {"receipt": service.signed_receipt(game_id, receipt), "events": shown,
                   "to_act": session.to_act(), "status": session.status}
        # Already in ActionResponseSchema's shape: a Response skips the schema's dump (the
        # schema still documents it), which cost as much as deciding the action.
        response = jsonify(payload)
        response.headers["Idempotent-Replayed"] = "true" if receipt.duplicate else "false"
        return response


LEAVE_HEADERS = LeaveHeaderSchema()
LEAVE_REQUEST = LeaveRequestSchema()


@blp.route("/games/<game_id>/leave")
class Leave(MethodView):
    @blp.doc(security=SECURED)
    @blp.arguments(LEAVE_HEADERS, location="headers")
    @blp.arguments(LEAVE_REQUEST)
    @blp.response(200, LeftSchema, headers={
        "Idempotent-Replayed": {"description": "true when this is the answer to a leave already recorded",
                                "schema": {"type": "string"}}})
    @blp.alt_response(401, schema=ErrorSchema, description="no or unknown token")
    @blp.alt_response(403, schema=ErrorSchema, description="a token of another game, or an account that holds "
                      "no seat of it")
    @blp.alt_response(404, schema=ErrorSchema, description="no such game")
    @blp.alt_response(409, schema=ErrorSchema, description="the game is over (`game_over`), expired "
                      "(`game_expired`) or abandoned (`game_abandoned`): there is nothing to leave")
    @blp.alt_response(422, schema=ErrorSchema, description="an account holding several seats names none")
    def post(self, headers, body, game_id):
        """Leave the game, as the token's seat (or the account's): a bot of the level the game
        was created with (`leave_level`, heuristic by default) takes the seat over and plays
        it to the end; the leave is recorded as a `seat.left` event. From then on the seat's
        token (or the account, for that seat) is refused with 403 `seat_left`: who left cannot
        come back to the seat, and watches as a spectator. In a rated game the seat that left
        ranks last (docs/ratings.md). Leaving an open game gives the seat to the bot as well.

        A seat leaves once: a retry (with the same Idempotency-Key, another or none) answers
        the original leave, the same signed `receipt` included, with `Idempotent-Replayed:
        true`."""
        seat = seat_of(game_id, "play", body.get("seat"), allow_left=True)
        service = games()
        left = service.leave(game_id, seat)
        session = left.session
        if not left.replayed and all(s.kind == "bot" for s in session.seats):
            # every person left: from now on it is a game only bots play, counted as one
            count_self_playing(game_id, service.sessions.creator(game_id))
        answer = {"game_id": game_id, "seat": seat, "level": session.seats[seat].level, "status": session.status,
                  "version": session.version, "to_act": session.to_act(),
                  "receipt": service.signed_receipt(game_id, left.receipt)}
        return answer, 200, {"Idempotent-Replayed": "true" if left.replayed else "false"}
