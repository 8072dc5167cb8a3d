"""Registering the /v1 blueprints and the action schemas they document."""

from __future__ import annotations


def register_blueprints(api) -> None:
    from ..openapi import register_components
    from . import accounts, audit, bundle, chat, game_types, history, leaderboards, lobby, matching, play, transparency

    register_components(api.spec)

    for module in (game_types, lobby, play, history, leaderboards, accounts, matching, audit, transparency, bundle,
                   chat):
        api.register_blueprint(module.blp, url_prefix="/v1")
