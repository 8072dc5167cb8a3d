"""The /docs page's assets, served by the service itself: Swagger UI's distribution as the
flask-swagger-ui package ships it (a maintained package that vendors swagger-ui-dist, so no
JavaScript is copied into this repository and nothing is fetched from a CDN). flask-smorest
renders the page at /docs and points it at ASSETS_URL; /swagger, the page's old address,
redirects to it.

Each game's rules page (docs/games/NAME.md, the URL /v1/game-types gives) is served at
/docs/games/NAME.md as text/markdown, from the checkout the service runs from."""

from __future__ import annotations

import os

import flask_swagger_ui
from flask import Blueprint, redirect, send_from_directory

from projections.registry import all_games

ASSETS_URL = "/docs/assets/"
ASSETS_DIR = os.path.join(os.path.dirname(flask_swagger_ui.__file__), "dist")
GAME_DOCS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "games")


def game_docs_url(name: str) -> str:
    return f"/docs/games/{name}.md"


def _game_docs(name: str):
    from .core.errors import NotFound

    if name not in all_games() or not os.path.exists(os.path.join(GAME_DOCS_DIR, f"{name}.md")):
        raise NotFound(f"no rules page for game type {name!r}", {"field": "name"})
    return send_from_directory(GAME_DOCS_DIR, f"{name}.md", mimetype="text/markdown")


def register(app) -> None:
    blueprint = Blueprint("docs_assets", __name__, static_folder=ASSETS_DIR, static_url_path=ASSETS_URL.rstrip("/"))
    blueprint.add_url_rule("/swagger", "swagger", lambda: redirect("/docs", code=301))
    blueprint.add_url_rule("/docs/games/<name>.md", "game_docs", _game_docs)
    app.register_blueprint(blueprint)
