"""Registering the /v1 blueprints and the action schemas they document."""

from __future__ import annotations


def register_blueprints(api) -> None:
    from ..schemas import ActionRequestSchema, action_components
    from . import game_types, history, leaderboards, lobby, play

    components = action_components()
    for name, schema in components.items():
        api.spec.components.schema(name, schema=schema)
    ActionRequestSchema._declared_fields["action"].metadata["oneOf"] = [
        {"$ref": f"#/components/schemas/{name}"} for name in components]

    for module in (game_types, lobby, play, history, leaderboards):
        api.register_blueprint(module.blp, url_prefix="/v1")
