"""Registering the /v1 blueprints and the action schemas they document."""

from __future__ import annotations


def register_blueprints(api) -> None:
    from ..openapi import register_components
    from . import game_types, history, leaderboards, lobby, play

    register_components(api.spec)

    for module in (game_types, lobby, play, history, leaderboards):
        api.register_blueprint(module.blp, url_prefix="/v1")
