"""GET /v1/leaderboards/{type}: the accounts' ratings in rated games of a type."""

from __future__ import annotations

from flask import current_app
from flask.views import MethodView
from flask_smorest import Blueprint

from ..schemas import ErrorSchema, LeaderboardQuerySchema, LeaderboardSchema

blp = Blueprint("leaderboards", __name__, description="Ratings across rated games")


@blp.route("/leaderboards/<game_type>")
class Leaderboard(MethodView):
    @blp.arguments(LeaderboardQuerySchema, location="query")
    @blp.response(200, LeaderboardSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="unknown game type")
    def get(self, query, game_type):
        """The accounts' ratings in rated games of this type (bots' accounts included),
        highest ordinal (mu - 3 sigma) first, paginated. Unrated games do not count here."""
        return current_app.extensions["ratings"].leaderboard(game_type, query["offset"], query["limit"])
