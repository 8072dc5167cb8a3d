"""GET /v1/leaderboards/{type}: wins, games, average rank, by player name and bot level."""

from __future__ import annotations

from flask.views import MethodView
from flask_smorest import Blueprint

from ..schemas import ErrorSchema, LeaderboardSchema
from .context import games

blp = Blueprint("leaderboards", __name__, description="Results across scored games")


@blp.route("/leaderboards/<game_type>")
class Leaderboard(MethodView):
    @blp.response(200, LeaderboardSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="unknown game type")
    def get(self, game_type):
        """The leaderboard of a game type, best win rate first (ties are shared wins)."""
        return games().leaderboard(game_type)
