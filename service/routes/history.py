"""The record of a game: events (JSON, SSE, NDJSON), stream tickets, replay, ledger, verify, export."""

from __future__ import annotations

import hashlib
import json
import secrets
import time

from flask import Response, current_app, request, stream_with_context
from flask.views import MethodView
from flask_smorest import Blueprint

from projections import disclosure
from projections.session import SCORED, fold

from ..errors import Unauthorized, Unprocessable
from ..streaming import NDJSON, SSE, batches, keepalive_interval, open_wait, stream_kind
from ..schemas import (ErrorSchema, EventsQuerySchema, EventsSchema, LedgerSchema, ReplayQuerySchema,
                       ReplaySchema, TicketSchema, VerifyQuerySchema, VerifySchema)
from . import bearer, games, viewer
from .play import SECURED

blp = Blueprint("history", __name__, description="Events, replays, the ledger, verification and export")


def _ticket_key(ticket: str) -> str:
    return "ticket:" + hashlib.sha256(ticket.encode()).hexdigest()


def _viewer_from_ticket(game_id: str, ticket: str):
    value = games().index.redis.get(_ticket_key(ticket))
    if value is None:
        raise Unauthorized("ticket: unknown or expired stream ticket")
    owner_game, seat = value.decode().rsplit(":", 1)
    if owner_game != game_id:
        raise Unauthorized("ticket: this ticket is for another game")
    return None if seat == "-" else int(seat)


def _stream(game_id: str, seat, after: int, kind: str, follow: float):
    """Events after `after` as SSE or NDJSON, then new ones as they come, with keep-alives."""
    service = games()
    keepalive = keepalive_interval(float(current_app.config["STREAM_KEEPALIVE"]))
    shared = batches()
    current = service.load(game_id)
    if after > current.version:
        raise Unprocessable(f"after: the game is at version {current.version}", {"field": "after"})
    session = fold(service.store.read(game_id, 0, after), game_id)

    def message(event, to_act, status):
        body = {"version": event["version"], "to_act": to_act, "status": status, "event": event}
        if kind == SSE:
            return f"id: {event['version']}\nevent: game-event\ndata: {json.dumps(body)}\n\n"
        return json.dumps(body) + "\n"

    def ping():
        return ": keep-alive\n\n" if kind == SSE else json.dumps({"keepalive": True}) + "\n"

    def new_batch(base, last):
        """The events after `last` as messages, and the session after them (None: nothing
        new); computed once for every stream of this game at this point (a fan-out)."""
        fresh = service.store.read(game_id, last)
        if not fresh:
            return None
        after_batch = fold(fresh, game_id, base)
        shown, _ = disclosure.events_for(fresh, base, seat, after_batch.finished, game_id)
        to_act, status = after_batch.to_act(), after_batch.status
        return "".join(message(event, to_act, status) for event in shown), after_batch

    def generate():
        nonlocal session
        deadline = time.monotonic() + follow
        last = after
        woken = True
        while True:
            if woken:
                batch = shared.get((game_id, last, session.head if session else "", seat, kind),
                                   lambda: new_batch(session, last))
                if batch is not None:
                    text, session = batch
                    last = session.version
                    if text:
                        yield text
            if (session is not None and session.status == SCORED) or time.monotonic() >= deadline:
                return
            woken = service.wait_for(game_id, last, min(keepalive, max(0.0, deadline - time.monotonic())))
            if not woken:
                yield ping()

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return Response(stream_with_context(generate()), mimetype=kind, headers=headers)


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
        seat = _viewer_from_ticket(game_id, query["ticket"]) if query.get("ticket") else viewer(game_id)
        after = query["after"]
        kind = stream_kind(request.accept_mimetypes)
        if kind is not None:
            resume = request.headers.get("Last-Event-ID", "")
            if kind == SSE and resume.isdigit():
                after = int(resume)
            longest = float(current_app.config["STREAM_MAX_SECONDS"])
            follow = longest if query.get("follow") is None else min(query["follow"], longest)
            release = open_wait(query.get("ticket") or bearer())
            try:
                response = _stream(game_id, seat, after, kind, follow)
            except BaseException:
                release()
                raise
            response.call_on_close(release)
            return response
        shown, current = games().events(game_id, seat, after)
        return {"events": shown, "version": current.version, "to_act": current.to_act(),
                "status": current.status}


@blp.route("/games/<game_id>/stream-tickets")
class StreamTickets(MethodView):
    @blp.doc(security=SECURED)
    @blp.response(201, TicketSchema)
    @blp.alt_response(401, schema=ErrorSchema, description="no or unknown token")
    def post(self, game_id):
        """A short-lived ticket for `GET /events?ticket=` (a browser's EventSource cannot send
        headers). Without a token, a spectator's ticket."""
        seat = viewer(game_id)
        games().load(game_id)
        ticket = secrets.token_urlsafe(24)
        ttl = int(current_app.config["TICKET_TTL"])
        games().index.redis.set(_ticket_key(ticket), f"{game_id}:{'-' if seat is None else seat}", ex=ttl)
        return {"ticket": ticket, "expires_in": ttl}


@blp.route("/games/<game_id>/replay")
class Replay(MethodView):
    @blp.arguments(ReplayQuerySchema, location="query")
    @blp.response(200, ReplaySchema)
    @blp.alt_response(422, schema=ErrorSchema, description="`at` out of range")
    def get(self, query, game_id):
        """The view as of version `at`: the caller's seat (token) or the spectator's; after the
        game ended, every seat's view in full."""
        return games().replay(game_id, query["at"], viewer(game_id))


@blp.route("/games/<game_id>/ledger")
class Ledger(MethodView):
    @blp.response(200, LedgerSchema)
    def get(self, game_id):
        """Every transaction, double entry: from, to, asset, quantity, price, event number,
        running balances. Assets secret to the caller show redacted while the game is live."""
        return games().ledger(game_id, viewer(game_id))


@blp.route("/games/<game_id>/verify")
class Verify(MethodView):
    @blp.arguments(VerifyQuerySchema, location="query")
    @blp.response(200, VerifySchema)
    def get(self, query, game_id):
        """Re-run the game from its log: the chain, every decision, every random draw (with the
        server's seed), the result; the first divergence named. `receipts` lists receipts a
        client kept (`version:head,…`): each must be on the chain, which catches a log cut
        short or rewritten wholesale."""
        return games().verify(game_id, query.get("receipts"))


@blp.route("/games/<game_id>/export")
class Export(MethodView):
    @blp.doc(responses={"200": {"content": {NDJSON: {"schema": {"type": "string"}}}}})
    @blp.response(200)
    def get(self, game_id):
        """The log as NDJSON: a header line, then the events. Complete once the game has ended
        (the exact stored bytes, verifiable offline); redacted for the caller before."""
        records = games().export(game_id, viewer(game_id))
        body = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
        return Response(body, mimetype=NDJSON,
                        headers={"Content-Disposition": f'attachment; filename="{game_id}.ndjson"'})
