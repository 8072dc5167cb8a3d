"""GET /v1/game-types: each game in the lobby's order, its title, player counts, options (with
defaults), actions and the web table's drawer."""

from __future__ import annotations

from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import fields as ma_fields
from marshmallow import validate

from projections.registry import UnknownGame, all_games, get_game_type

from ..core.bots import BOT_LEVELS
from ..docs_ui import game_docs_url
from ..schemas import GameTypesSchema

# Where the web pages load a game's drawer from (service/web serves static/ at /web/static).
DRAWER_URL = "/web/static/js/draw/"

blp = Blueprint("game-types", __name__, description="The games this service hosts")

_TYPES = {ma_fields.Boolean: "boolean", ma_fields.Integer: "integer", ma_fields.Float: "number",
          ma_fields.String: "string"}


def describe_option(field) -> dict:
    kind = next((name for cls, name in _TYPES.items() if isinstance(field, cls)), "object")
    default = field.load_default
    out = {"type": kind, "default": None if callable(default) or default is ma_fields.missing_ else default,
           "nullable": bool(field.allow_none)}
    for validator in field.validators:
        if isinstance(validator, validate.OneOf):
            out["choices"] = list(validator.choices)
        if isinstance(validator, validate.Range):
            out["min"], out["max"] = validator.min, validator.max
    if field.metadata.get("description"):
        out["description"] = field.metadata["description"]
    return out


def describe(game) -> dict:
    schema = game.OptionsSchema()
    return {"name": game.NAME, **_declared(game.NAME), "min_players": game.MIN_PLAYERS,
            "max_players": game.MAX_PLAYERS, "rules_version": game.RULES_VERSION,
            "hidden_information": bool(game.HIDDEN_INFORMATION),
            "options": {name: describe_option(f) for name, f in schema.fields.items()},
            "actions": sorted(game.ACTION_SCHEMAS), "bot_levels": list(BOT_LEVELS),
            "docs": game_docs_url(game.NAME)}


def _declared(name: str) -> dict:
    """The title and the web table's drawer, from the game's declaration (a game registered
    with its rules alone, as the tests' toy game is, has neither)."""
    try:
        game_type = get_game_type(name)
    except UnknownGame:
        return {"title": name, "drawer": None}
    return {"title": game_type.title, "drawer": DRAWER_URL + game_type.drawer}


@blp.route("/game-types")
class GameTypes(MethodView):
    @blp.response(200, GameTypesSchema)
    def get(self):
        """Every game type, in the lobby's order: title, player counts, options with defaults,
        action types, rules page, the web table's drawer."""
        return {"game_types": [describe(g) for g in all_games().values()]}
