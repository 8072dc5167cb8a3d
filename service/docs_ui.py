"""The /docs page's assets, served by the service itself: Swagger UI's distribution as the
flask-swagger-ui package ships it (a maintained package that vendors swagger-ui-dist, so no
JavaScript is copied into this repository and nothing is fetched from a CDN). flask-smorest
renders the page at /docs and points it at ASSETS_URL; /swagger, the page's old address,
redirects to it.

Each hosted game's rules page, the `docs` its GameType declares (projections/game_type.py, a
path from the project's root such as docs/games/big-shot.md), is served at that path
(/docs/games/big-shot.md, the URL /v1/game-types gives) as text/markdown, from the checkout
the service runs from. No other file is served there."""

from __future__ import annotations

import os

import flask_swagger_ui
from flask import Blueprint, redirect, send_from_directory

from projections.registry import UnknownGame, game_types, get_game_type

ASSETS_URL = "/docs/assets/"
ASSETS_DIR = os.path.join(os.path.dirname(flask_swagger_ui.__file__), "dist")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS_DIR = os.path.join(ROOT, "docs")


def game_docs_url(name: str) -> str:
    """The URL of a game's declared rules page: its `docs` path, from the root of this service.
    A game registered with its rules alone (the tests' toy game) declares none: its URL, under
    /docs/games/, is not served (404)."""
    try:
        return "/" + get_game_type(name).docs
    except UnknownGame:
        return f"/docs/games/{name}.md"


def _game_docs(page: str):
    """A page under /docs/ that is a hosted game's declared rules page, and nothing else."""
    from .core.errors import NotFound

    declared = {t.docs for t in game_types()}
    path = f"docs/{page}"
    if path not in declared or not os.path.isfile(os.path.join(ROOT, path)):
        raise NotFound(f"no rules page at /{path}", {"field": "name"})
    return send_from_directory(DOCS_DIR, page, mimetype="text/markdown")


def register(app) -> None:
    blueprint = Blueprint("docs_assets", __name__, static_folder=ASSETS_DIR, static_url_path=ASSETS_URL.rstrip("/"))
    blueprint.add_url_rule("/swagger", "swagger", lambda: redirect("/docs", code=301))
    blueprint.add_url_rule("/docs/<path:page>", "game_docs", _game_docs)
    app.register_blueprint(blueprint)
