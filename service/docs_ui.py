"""The /docs page's assets, served by the service itself: Swagger UI's distribution as the
flask-swagger-ui package ships it (a maintained package that vendors swagger-ui-dist, so no
JavaScript is copied into this repository and nothing is fetched from a CDN). flask-smorest
renders the page at /docs and points it at ASSETS_URL; /swagger, the page's old address,
redirects to it."""

from __future__ import annotations

import os

import flask_swagger_ui
from flask import Blueprint, redirect

ASSETS_URL = "/docs/assets/"
ASSETS_DIR = os.path.join(os.path.dirname(flask_swagger_ui.__file__), "dist")


def register(app) -> None:
    blueprint = Blueprint("docs_assets", __name__, static_folder=ASSETS_DIR, static_url_path=ASSETS_URL.rstrip("/"))
    blueprint.add_url_rule("/swagger", "swagger", lambda: redirect("/docs", code=301))
    app.register_blueprint(blueprint)
