"""Creating games, the lobby, a game's public summary and claiming seats."""

from __future__ import annotations

from flask.views import MethodView
from flask_smorest import Blueprint

from ..schemas import (ClaimedSchema, ClaimSchema, CreateGameSchema, ErrorSchema, GameDetailSchema,
                       GameSummarySchema, LobbyQuerySchema, LobbySchema, OptionalIdempotencyHeaderSchema)
from ..ratelimit import Admission, admit_creation, creator, give_back, record_creation
from ..accounts.credentials import is_account_credential
from ..core.errors import Invalid
from .context import credential, games, principal

blp = Blueprint("games", __name__, description="Create, find and join games")
IDEMPOTENCY_HEADERS = OptionalIdempotencyHeaderSchema()
REPLAYED = {"Idempotent-Replayed": {"description": "true when this is the original answer, given again "
                                                   "to a retry with the same Idempotency-Key",
                                    "schema": {"type": "string"}}}


def _replayed(flag: bool) -> dict:
    return {"Idempotent-Replayed": "true" if flag else "false"}


def _seat(seat: dict) -> dict:
    """A seat of the request as the core takes it: {"bot": level, "budget": {...}} (the budget
    only when given: the core refuses it on any seat but a search bot's), or {} for an open one."""
    out = {"bot": seat["bot"]} if seat.get("bot") else {}
    if "budget" in seat:
        out["budget"] = seat["budget"]
    return out


@blp.route("/games")
class Games(MethodView):
    @blp.arguments(LobbyQuerySchema, location="query")
    @blp.response(200, LobbySchema)
    def get(self, query):
        """The lobby: newest first, filtered by type and status. With `live=true`, the active
        games that moved within the service's LIVE_WITHIN, latest move first."""
        return games().lobby(query.get("type"), query.get("status"), query["page"], query["per_page"],
                             live=query["live"])

    @blp.arguments(IDEMPOTENCY_HEADERS, location="headers")
    @blp.arguments(CreateGameSchema)
    @blp.response(201, GameSummarySchema, headers=REPLAYED)
    @blp.alt_response(409, schema=ErrorSchema, description="an Idempotency-Key already used with another body")
    @blp.alt_response(422, schema=ErrorSchema, description="unknown type, bad options or seat count, "
                                                           "a budget on a seat that is not a search bot's "
                                                           "or past the service's limits, "
                                                           "a malformed Idempotency-Key")
    @blp.alt_response(429, schema=ErrorSchema, description="too many games created from this address "
                      "(`too_many_games`), or too many live games only bots play (`too_many_bot_games`)")
    def post(self, headers, body):
        """Create a game: its type, options and seats (open, or a bot with a level).

        The response publishes the commitment to the game's secret seed; the seed itself is
        revealed when the game is scored. With an `Idempotency-Key`, a retry with the same
        key and body returns the same game as first created (`Idempotent-Replayed: true`).

        A `search` bot's seat may carry a `budget` per move (`iterations`, `time_ms`), within
        the service's limits (SEARCH_MAX_ITERATIONS, SEARCH_MAX_TIME_MS; past them, a 422
        naming the field, e.g. `seats.1.budget.time_ms`); the game's seats show it.

        `leave_level`: the level of the bot that takes over the seat of a person who leaves
        (POST /v1/games/{game_id}/leave); omitted, heuristic.

        The answer's `receipt` (version 1, with the `seed_commitment`) is signed with the
        service's key (docs/audit.md): keep it."""
        seats = [_seat(s) for s in body["seats"]]
        # a game that plays to its end with nobody acting: only bots, or seats a timeout plays
        admission = Admission(all(s.get("bot") for s in seats) or bool(body.get("turn_timeout")))
        try:
            created = games().create_game(body["type"], body["options"], seats, seed=body.get("seed"),
                                          turn_timeout=body.get("turn_timeout"),
                                          idempotency_key=headers.get("idempotency_key"),
                                          admit=lambda: admit_creation(   # 429s, for a new game only
                                              admission, lambda game_id: games().load(game_id).status),
                                          creator=creator(), rated=body.get("rated", False),
                                          leave_level=body.get("leave_level"))
        except BaseException:
            give_back(admission)   # a create that failed after taking its places gives them back
            raise
        if created.replayed:
            give_back(admission)
        else:
            record_creation(created.session.game_id, admission)
        service = games()
        answer = {**service.summary(created.session),
                  "receipt": service.signed_receipt(created.session.game_id, created.receipt)}
        return answer, 201, _replayed(created.replayed)


@blp.route("/games/<game_id>")
class Game(MethodView):
    @blp.response(200, GameDetailSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="no such game")
    def get(self, game_id):
        """A game's public summary and the spectator view."""
        return games().game(game_id)


@blp.route("/games/<game_id>/seats/<int:seat>")
class Seat(MethodView):
    @blp.arguments(IDEMPOTENCY_HEADERS, location="headers")
    @blp.arguments(ClaimSchema)
    @blp.response(201, ClaimedSchema, headers=REPLAYED)
    @blp.alt_response(404, schema=ErrorSchema, description="no such game or seat")
    @blp.alt_response(409, schema=ErrorSchema, description="the seat is not open, or an Idempotency-Key "
                                                           "already used with another body")
    @blp.alt_response(422, schema=ErrorSchema, description="a bad name or a malformed Idempotency-Key")
    def post(self, headers, body, game_id, seat):
        """Claim an open seat: as a guest with a `name` (the seat's token is shown once and
        stored only as a hash), or with an account credential (scope `play`) and no name: the
        seat is the account's, shown with its username, and its credentials play it.
        The game starts when every seat is filled. With an `Idempotency-Key`, a retry with the
        same key and body returns the original answer, the same token included (and the same
        signed `receipt`, docs/audit.md)."""
        token, _ = credential()
        if token is not None and is_account_credential(token):
            if "name" in body:
                raise Invalid("name: a seat claimed with an account shows the account's username; send no name",
                              {"field": "name"})
            account = principal("play").account_id
            claimed = games().claim_seat(game_id, seat, None, headers.get("idempotency_key"), account=account)
            return ({"game_id": game_id, "seat": seat, "account": account, "status": claimed.session.status,
                     "version": claimed.session.version, "receipt": games().signed_receipt(game_id, claimed.receipt)},
                    201, _replayed(claimed.replayed))
        if "name" not in body:
            raise Invalid("name: a guest's seat needs a name (or claim it with an account token)", {"field": "name"})
        claimed = games().claim_seat(game_id, seat, body["name"], headers.get("idempotency_key"))
        return ({"game_id": game_id, "seat": seat, "token": claimed.token, "status": claimed.session.status,
                 "version": claimed.session.version, "receipt": games().signed_receipt(game_id, claimed.receipt)},
                201, _replayed(claimed.replayed))
