"""The /v1 blueprints."""

from __future__ import annotations

from typing import Optional

from flask import current_app, request

from ..commands import GameService


def games() -> GameService:
    return current_app.extensions["games"]


def bearer() -> Optional[str]:
    header = request.headers.get("Authorization", "")
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else ""


def viewer(game_id: str) -> Optional[int]:
    """The caller's seat when a token is given (it must be valid), else None: a spectator."""
    token = bearer()
    if token is None:
        return None
    return games().authenticate(game_id, token)


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
