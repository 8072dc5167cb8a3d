"""A seat's view (with long-poll) and posting actions."""

from __future__ import annotations

from flask import jsonify
from flask.views import MethodView
from flask_smorest import Blueprint

from ..schemas import (ActionRequestSchema, ActionResponseSchema, ErrorSchema, IdempotencyHeaderSchema,
                       ViewQuerySchema, ViewSchema)
from ..streaming import open_wait
from .context import bearer, games, seat_of

blp = Blueprint("play", __name__, description="A seat's view and its actions")
SECURED = [{"seatToken": []}]


@blp.route("/games/<game_id>/view")
class View(MethodView):
    @blp.doc(security=SECURED)
    @blp.arguments(ViewQuerySchema, location="query")
    @blp.response(200, ViewSchema)
    @blp.alt_response(401, schema=ErrorSchema, description="no or unknown token")
    @blp.alt_response(403, schema=ErrorSchema, description="a token of another game")
    @blp.alt_response(429, schema=ErrorSchema, description="too many open long-polls and streams")
    def get(self, query, game_id):
        """The seat's view: version, status, to_act, the state it may see, its legal actions.

        Long-poll with `wait` and `after_version`: answers as soon as the game's version
        passes `after_version`, or after `wait` seconds. A long-poll counts as an open stream
        (429 `too_many_streams` with Retry-After past the caps per token and per address)."""
        seat = seat_of(game_id)
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
    @blp.alt_response(403, schema=ErrorSchema, description="a token of another game")
    @blp.alt_response(409, schema=ErrorSchema, description="stale expected_version, a decision that is over "
                      "(stale_decision), or a reused Idempotency-Key")
    @blp.alt_response(422, schema=ErrorSchema, description="an invalid or illegal action (out of turn included)")
    def post(self, headers, body, game_id):
        """Play an action as the token's seat. Requires an Idempotency-Key header: a retry
        with the same key and body returns the original receipt and appends nothing."""
        seat = seat_of(game_id)
        receipt, session, shown = games().act(game_id, seat, body["action"],
                                              expected_version=body.get("expected_version"),
                                              decision=body.get("decision"),
                                              idempotency_key=headers["idempotency_key"])
        payload = {"receipt": receipt.as_dict(), "events": shown, "to_act": session.to_act(),
                   "status": session.status}
        # Already in ActionResponseSchema's shape: a Response skips the schema's dump (the
        # schema still documents it), which cost as much as deciding the action.
        response = jsonify(payload)
        response.headers["Idempotent-Replayed"] = "true" if receipt.duplicate else "false"
        return response
