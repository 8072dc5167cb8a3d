"""The record of a game: events (JSON, SSE, NDJSON), stream tickets, replay, ledger, verify, export."""

from __future__ import annotations

import json

from flask import Response, request, stream_with_context
from flask.views import MethodView
from flask_smorest import Blueprint

from ..core.errors import Invalid
from ..expensive import audit_slot
from ..limits import MAX_INT_DIGITS, ascii_int
from ..streaming import NDJSON, SSE, open_wait, stream_body, stream_kind
from ..schemas import (ErrorSchema, EventsQuerySchema, EventsSchema, LedgerSchema, ReplayQuerySchema,
                       ReplaySchema, SeatQuerySchema, TicketSchema, VerifyQuerySchema, VerifySchema)
from .context import bearer, games, stream_principal, viewer, viewer_or_ticket
from .play import READ_SECURED as SECURED

SEAT_QUERY = SeatQuerySchema()
blp = Blueprint("history", __name__, description="Events, replays, the ledger, verification and export")

OCTET = "application/octet-stream"
STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


@blp.route("/games/<game_id>/events")
class Events(MethodView):
    @blp.doc(security=SECURED, responses={"200": {"content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/Events"}},
        SSE: {"schema": {"type": "string", "description": "Server-Sent Events; id = version"}},
        NDJSON: {"schema": {"type": "string", "description": "one JSON message per line"}}}}})
    @blp.arguments(EventsQuerySchema, location="query")
    @blp.response(200, EventsSchema)
    @blp.alt_response(401, schema=ErrorSchema, description="unknown token or ticket")
    @blp.alt_response(403, schema=ErrorSchema, description="a token of another game")
    @blp.alt_response(429, schema=ErrorSchema, description="too many open streams for this token or address")
    def get(self, query, game_id):
        """The events after `after`, as the caller may see them (a seat with its token, or a
        spectator). Only an explicit `Accept: text/event-stream` (SSE; resume with
        Last-Event-ID) or `Accept: application/x-ndjson` streams (`*/*` or no Accept gets this
        JSON answer): new events as they come, with keep-alives; each message carries `version`
        and `to_act`. A stream lasts `follow` seconds, at most the server's limit (300 by
        default); open streams and long-polls are capped per token and per address (429
        `too_many_streams` with Retry-After)."""
        seat = viewer_or_ticket(game_id, query.get("ticket"), query.get("seat"))
        after = query["after"]
        kind = stream_kind(request.accept_mimetypes)
        if kind is not None:
            resume = request.headers.get("Last-Event-ID", "")
            if kind == SSE and resume:
                after = ascii_int(resume)
                if after is None:
                    raise Invalid(f"Last-Event-ID: must be a version, 1 to {MAX_INT_DIGITS} ASCII digits",
                                  {"field": "Last-Event-ID"})   # 422, as every malformed header
            release = open_wait(query.get("ticket") or bearer())   # 429 too_many_streams past the caps
            try:
                messages = stream_body(request.environ, game_id, seat, after, kind, query.get("follow"),
                                       stream_principal())
            except BaseException:
                release()
                raise
            response = Response(stream_with_context(messages), mimetype=kind, headers=STREAM_HEADERS)
            response.call_on_close(release)
            return response
        shown, current = games().events(game_id, seat, after)
        return {"events": shown, "version": current.version, "to_act": current.to_act(),
                "status": current.status}


@blp.route("/games/<game_id>/stream-tickets")
class StreamTickets(MethodView):
    @blp.doc(security=SECURED)
    @blp.arguments(SEAT_QUERY, location="query")
    @blp.response(201, TicketSchema)
    @blp.alt_response(401, schema=ErrorSchema, description="no or unknown token")
    def post(self, query, game_id):
        """A short-lived ticket for `GET /events?ticket=` (a browser's EventSource cannot send
        headers). Without a token, a spectator's ticket."""
        return games().issue_stream_ticket(game_id, viewer(game_id, query.get("seat")))


@blp.route("/games/<game_id>/replay")
class Replay(MethodView):
    @blp.arguments(ReplayQuerySchema, location="query")
    @blp.response(200, ReplaySchema)
    @blp.alt_response(422, schema=ErrorSchema, description="`at` out of range")
    @blp.alt_response(429, schema=ErrorSchema, description="too many requests (rate limit), or too many verify, export and replay requests at once from this address")
    def get(self, query, game_id):
        """The view as of version `at`: the caller's seat (token) or the spectator's; after the
        game ended, every seat's view in full. At most `AUDITS_PER_ADDRESS` verify, export and
        replay requests run at once per address (429 `too_many_audits` with Retry-After)."""
        seat = viewer(game_id, query.get("seat"))
        with audit_slot():
            return games().replay(game_id, query["at"], seat)


@blp.route("/games/<game_id>/ledger")
class Ledger(MethodView):
    @blp.arguments(SEAT_QUERY, location="query")
    @blp.response(200, LedgerSchema)
    def get(self, query, game_id):
        """Every transaction, double entry: from, to, asset, quantity, price, event number,
        running balances. Assets secret to the caller show redacted while the game is live."""
        return games().ledger(game_id, viewer(game_id, query.get("seat")))


@blp.route("/games/<game_id>/verify")
class Verify(MethodView):
    @blp.arguments(VerifyQuerySchema, location="query")
    @blp.response(200, VerifySchema)
    @blp.alt_response(429, schema=ErrorSchema, description="too many requests (rate limit), or too many verify, export and replay requests at once from this address")
    def get(self, query, game_id):
        """Re-run the game from its log: the chain, every decision, every random draw (with the
        server's seed), the result; the first divergence named. `receipts` lists receipts a
        client kept (`version:head,…`): each must be on the chain, which catches a log cut
        short or rewritten wholesale. A scored game's report is kept and served again while
        the stored log is byte for byte the one it was made from (checked on every call)."""
        with audit_slot():
            return games().verify(game_id, query.get("receipts"))


@blp.route("/games/<game_id>/export")
class Export(MethodView):
    @blp.doc(responses={"200": {"description": "the log, one JSON record a line", "content": {
        NDJSON: {"schema": {"type": "string"}},
        OCTET: {"schema": {"type": "string", "format": "binary",
                           "description": "the same bytes, for clients that take the log as a file"}}}}})
    @blp.arguments(SEAT_QUERY, location="query")
    @blp.response(200)
    @blp.alt_response(429, schema=ErrorSchema, description="too many requests (rate limit), or too many verify, export and replay requests at once from this address")
    def get(self, query, game_id):
        """The log as NDJSON: a header line, then the events. Complete once the game has ended
        (the exact stored bytes, verifiable offline); redacted for the caller before. Served as
        `application/x-ndjson` unless the client asks for `application/octet-stream` only."""
        seat = viewer(game_id, query.get("seat"))
        with audit_slot():
            records = games().export(game_id, seat)
            body = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
        kind = OCTET if request.accept_mimetypes.best_match([NDJSON, OCTET]) == OCTET and \
            request.accept_mimetypes[NDJSON] == 0 else NDJSON
        return Response(body, mimetype=kind,
                        headers={"Content-Disposition": f'attachment; filename="{game_id}.ndjson"'})
