"""The pages people look at a game with: a lobby, a table per game, a replay viewer.

Plain HTML, CSS and ES modules under static/ (no build step, nothing from a CDN). The pages
talk to the service only through the public JSON API (/v1/...), with the seat's own token
or as a spectator; the one read endpoint added here, POST /web/api/words, puts into words
what the caller sends it (events it already received, its legal actions, a finished game's
full state) with service.render, and reads nothing from the store: it cannot disclose
anything the caller did not already have.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, jsonify, redirect, request, send_from_directory

from service import render

from ..core.errors import Invalid

HERE = Path(__file__).parent
PAGES = HERE / "pages"

blueprint = Blueprint("web", __name__, static_folder="static", static_url_path="/web/static")

MAX_ITEMS = 5000


@blueprint.get("/")
def root():
    return redirect("/web/")


def _page(name: str):
    response = send_from_directory(PAGES, name, mimetype="text/html")
    # The pages hold no data: every payload comes from the API with the seat's own token.
    response.headers["Cache-Control"] = "no-cache"
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'")
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@blueprint.get("/web/")
def lobby():
    return _page("lobby.html")


@blueprint.get("/web/games/<game_id>")
def table(game_id):
    return _page("table.html")


@blueprint.get("/web/games/<game_id>/replay")
def replay(game_id):
    return _page("replay.html")


def _words(field: str, describe):
    """The words for one part of the body; a part not shaped as the API returns it (the
    drawing code reads the API's shapes) is a 422 naming it, not a failure of the service."""
    try:
        return describe()
    except (TypeError, KeyError, ValueError, AttributeError, IndexError, RecursionError) as err:
        raise Invalid(f"{field}: not shaped as the API returns it ({type(err).__name__})", {"field": field}) from None


@blueprint.post("/web/api/words")
def words():
    """Words for what the caller already has. Body: `type`, `seats` (as in a view), `viewer`
    (the caller's seat or null), and any of `events` (as the API returned them), `actions`
    (legal actions, templates included), `view` (to draw as text), `full_state` (a replay's,
    after the end: every hand revealed)."""
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise Invalid("body: a JSON object is required", {"field": "body"})
    game_type = body.get("type")
    if not isinstance(game_type, str) or game_type not in render.GAMES:
        raise Invalid(f"type: unknown game type {game_type!r}", {"field": "type"})
    seats = body.get("seats") if isinstance(body.get("seats"), list) else []
    viewer = body.get("viewer") if isinstance(body.get("viewer"), int) else None
    out: dict = {"seat_labels": _words("seats", lambda: [render.seat_label(seats, s, viewer)
                                                          for s in range(len(seats))])}
    events = body.get("events")
    if isinstance(events, list):
        out["events"] = [_words(f"events.{i}", lambda e=e: {
            "version": e.get("version"), "type": e.get("type"),
            "text": render.describe_event(game_type, e, seats, viewer)})
            for i, e in enumerate(events[:MAX_ITEMS]) if isinstance(e, dict)]
    actions = body.get("actions")
    if isinstance(actions, list):
        out["actions"] = [_words(f"actions.{i}", lambda a=a: render.describe_action(game_type, a))
                          if isinstance(a, dict) else str(a) for i, a in enumerate(actions[:MAX_ITEMS])]
    if isinstance(body.get("view"), dict):
        out["text"] = _words("view", lambda: render.draw_view(body["view"]))
    if "full_state" in body:
        out["hands"] = _words("full_state", lambda: render.revealed_hands(game_type, body["full_state"], len(seats)))
    if isinstance(body.get("result"), dict):
        out["result"] = _words("result", lambda: render.result_words(body["result"], seats, viewer))
    return jsonify(out)


@blueprint.get("/web/api/glossary/<game_type>")
def glossary(game_type):
    """Names and colours of one game's cards, companies, share types and phases."""
    if game_type not in render.GAMES:
        raise Invalid(f"type: unknown game type {game_type!r}", {"field": "type"})
    response = jsonify(render.glossary(game_type))
    response.headers["Cache-Control"] = "max-age=3600"
    return response


def register(app) -> None:
    app.register_blueprint(blueprint)
