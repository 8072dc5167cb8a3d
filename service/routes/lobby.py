"""Creating games, the lobby, a game's public summary and claiming seats."""

from __future__ import annotations

from flask.views import MethodView
from flask_smorest import Blueprint

from ..schemas import (ClaimedSchema, ClaimSchema, CreateGameSchema, ErrorSchema, GameDetailSchema,
                       GameSummarySchema, LobbyQuerySchema, LobbySchema)
from ..ratelimit import check_creation, record_creation
from .context import games

blp = Blueprint("games", __name__, description="Create, find and join games")


@blp.route("/games")
class Games(MethodView):
    @blp.arguments(LobbyQuerySchema, location="query")
    @blp.response(200, LobbySchema)
    def get(self, query):
        """The lobby: newest first, filtered by type and status."""
        return games().lobby(query.get("type"), query.get("status"), query["page"], query["per_page"])

    @blp.arguments(CreateGameSchema)
    @blp.response(201, GameSummarySchema)
    @blp.alt_response(422, schema=ErrorSchema, description="unknown type, bad options or seat count")
    @blp.alt_response(429, schema=ErrorSchema, description="too many games created from this address "
                      "(`too_many_games`), or too many live games only bots play (`too_many_bot_games`)")
    def post(self, body):
        """Create a game: its type, options and seats (open, or a bot with a level).

        The response publishes the commitment to the game's secret seed; the seed itself is
        revealed when the game is scored."""
        seats = [{"bot": s["bot"]} if s.get("bot") else {} for s in body["seats"]]
        all_bots = all(s.get("bot") for s in seats)
        check_creation(all_bots, lambda game_id: games().load(game_id).status)   # 429s
        session = games().create(body["type"], body["options"], seats, seed=body.get("seed"),
                                 turn_timeout=body.get("turn_timeout"))
        record_creation(session.game_id, all_bots)
        return games().summary(session)


@blp.route("/games/<game_id>")
class Game(MethodView):
    @blp.response(200, GameDetailSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="no such game")
    def get(self, game_id):
        """A game's public summary and the spectator view."""
        return games().game(game_id)


@blp.route("/games/<game_id>/seats/<int:seat>")
class Seat(MethodView):
    @blp.arguments(ClaimSchema)
    @blp.response(201, ClaimedSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="no such game or seat")
    @blp.alt_response(409, schema=ErrorSchema, description="the seat is not open")
    def post(self, body, game_id, seat):
        """Claim an open seat. The token is shown once and stored only as a hash.
        The game starts when every seat is filled."""
        session, token = games().claim(game_id, seat, body["name"])
        return {"game_id": game_id, "seat": seat, "token": token, "status": session.status,
                "version": session.version}
