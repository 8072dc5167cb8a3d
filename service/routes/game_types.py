"""GET /v1/game-types: each game, its player counts, options (with defaults) and actions."""

from __future__ import annotations

from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import fields as ma_fields
from marshmallow import validate

from projections.registry import all_games

from ..core.bots import BOT_LEVELS
from ..docs_ui import game_docs_url
from ..schemas import GameTypesSchema

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
    return {"name": game.NAME, "min_players": game.MIN_PLAYERS, "max_players": game.MAX_PLAYERS,
            "rules_version": game.RULES_VERSION, "hidden_information": bool(game.HIDDEN_INFORMATION),
            "options": {name: describe_option(f) for name, f in schema.fields.items()},
            "actions": sorted(game.ACTION_SCHEMAS), "bot_levels": list(BOT_LEVELS),
            "docs": game_docs_url(game.NAME)}


@blp.route("/game-types")
class GameTypes(MethodView):
    @blp.response(200, GameTypesSchema)
    def get(self):
        """Every game type: player counts, options with defaults, action types."""
        return {"game_types": [describe(g) for _, g in sorted(all_games().items())]}
