"""The /docs page's assets, served by the service itself: Swagger UI's distribution as the
flask-swagger-ui package ships it (a maintained package that vendors swagger-ui-dist, so no
JavaScript is copied into this repository and nothing is fetched from a CDN). flask-smorest
routes /docs, whose page is served here (the same page, its start script a file: /docs runs
under a Content-Security-Policy without inline scripts, service/security.py); /swagger, the
page's old address, redirects to it.

Each hosted game's rules page, the `docs` its GameType declares (projections/game_type.py, a
path from the project's root such as docs/games/big-shot.md), is served at that path
(/docs/games/big-shot.md, the URL /v1/game-types gives) as text/markdown, from the checkout
the service runs from. No other file is served there."""

from __future__ import annotations

import json
import os

import flask_swagger_ui
from flask import Blueprint, Response, current_app, redirect, send_from_directory, url_for

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


# /docs under a Content-Security-Policy: flask-smorest's page starts Swagger UI with an inline
# script, which a CSP without 'unsafe-inline' blocks, so the page is served here instead, the
# same page with that script as a file of its own (START_URL). Swagger UI's styles are set
# through the CSSOM (allowed) and its icons are data: images.
START_URL = "/docs/start.js"
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
          "connect-src 'self'; font-src 'self'")

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<link href="{assets}swagger-ui.css" rel="stylesheet" type="text/css">
</head>
<body>
<div id="swagger-ui-container"></div>
<script src="{assets}swagger-ui-standalone-preset.js"></script>
<script src="{assets}swagger-ui-bundle.js"></script>
<script src="{start}"></script>
</body>
</html>
"""


def _spec_url() -> str:
    return next(url_for(rule.endpoint) for rule in current_app.url_map.iter_rules()
                if rule.endpoint.endswith(".openapi_json"))


def _docs_page():
    from markupsafe import escape

    page = _PAGE.format(title=escape(current_app.config["API_TITLE"]), assets=ASSETS_URL, start=START_URL)
    response = Response(page, mimetype="text/html")
    response.headers["Content-Security-Policy"] = POLICY
    return response


def _start_script():
    config = {"url": _spec_url(), "dom_id": "#swagger-ui-container",
              **current_app.config.get("OPENAPI_SWAGGER_UI_CONFIG", {})}
    script = (f"window.addEventListener('load', function () {{\n"
              f"  window.ui = SwaggerUIBundle({json.dumps(config)});\n}});\n")
    return Response(script, mimetype="text/javascript")


def register(app) -> None:
    # flask-smorest keeps its /docs route; its view is the page above (no inline script).
    for endpoint in list(app.view_functions):
        if endpoint.endswith(".openapi_swagger_ui"):
            app.view_functions[endpoint] = _docs_page
    blueprint = Blueprint("docs_assets", __name__, static_folder=ASSETS_DIR, static_url_path=ASSETS_URL.rstrip("/"))
    blueprint.add_url_rule(START_URL, "start", _start_script)
    blueprint.add_url_rule("/swagger", "swagger", lambda: redirect("/docs", code=301))
    blueprint.add_url_rule("/docs/<path:page>", "game_docs", _game_docs)
    app.register_blueprint(blueprint)
