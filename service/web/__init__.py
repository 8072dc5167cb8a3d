"""The pages people look at a game with: a lobby, a table per game, a replay viewer, the
account's pages (sign-in, sign-up, My games, Account), the leaderboard and a player's page.

Plain HTML, CSS and ES modules under static/ (no build step, nothing from a CDN). The pages
talk to the service only through the public JSON API (/v1/...), with the seat's own token,
as the signed-in account (its HttpOnly session cookie, X-CSRF-Token on every change) or as a
spectator. The one read endpoint added here, POST /web/api/words, puts a game into words
with service.render from the server's own record, as the public API shows it to the same
caller (its seat token, stream ticket or account, else the spectator): the events it may
see, its legal actions, the seat labels, the result, and after the end every hand. The body
names the game and versions, never state to draw, so no number a client sends repeats
anything and every answer is bounded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from flask import Blueprint, jsonify, redirect, request, send_from_directory

from service import render

from ..core.errors import Invalid, NotFound
from ..expensive import audit_slot
from ..routes.context import games, viewer_or_ticket

HERE = Path(__file__).parent
PAGES = HERE / "pages"

blueprint = Blueprint("web", __name__, static_folder="static", static_url_path="/web/static")

MAX_TEMPLATES = 64          # legal-action templates labelled without a game
MAX_LABEL = 200             # characters of one label
EVENTS_PER_ANSWER = 500     # events put into words per answer (the page asks again from events_until)


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


# The rules for players, one static page a game (pages/rules/<type>.html, written from the
# game's brief and its rules as implemented; the developers' reading is docs/games/<type>.md).
@blueprint.get("/web/rules")
def rules_index_bare():
    return redirect("/web/rules/")


@blueprint.get("/web/rules/")
def rules_index():
    return _page("rules/index.html")


@blueprint.get("/web/rules/<game_type>")
def rules(game_type):
    if render.words(game_type) is None or not (PAGES / "rules" / f"{game_type}.html").is_file():
        raise NotFound(f"no rules page for the game type {game_type[:40]!r}", {"type": game_type[:40]})
    return _page(f"rules/{game_type}.html")


# The account's pages (docs/accounts.md): they hold no data either; the account is read from
# the API with the HttpOnly session cookie (same origin), every change sends X-CSRF-Token.
@blueprint.get("/web/sign-in")
def sign_in():
    return _page("sign-in.html")


@blueprint.get("/web/sign-up")
def sign_up():
    return _page("sign-up.html")


@blueprint.get("/web/my-games")
def my_games():
    return _page("my-games.html")


@blueprint.get("/web/account")
def account_settings():
    return _page("account.html")


# Ratings (docs/ratings.md): the leaderboard and a player's page, public reads of the API.
@blueprint.get("/web/leaderboard")
def leaderboard():
    return _page("leaderboard.html")


@blueprint.get("/web/players/<username>")
def player(username):
    return _page("profile.html")


@blueprint.get("/web/profile")
def profile():
    # /web/profile?name=NAME: the same page (it reads the name from the query)
    return _page("profile.html")


def _words(field: str, describe):
    """The words for one part of the answer; a legacy action template not shaped as the API
    returns it is a 422 naming it, not a failure of the service."""
    try:
        return describe()
    except (TypeError, KeyError, ValueError, AttributeError, IndexError, RecursionError) as err:
        raise Invalid(f"{field}: not shaped as the API returns it ({type(err).__name__})", {"field": field}) from None


def _version(body: dict, field: str, top: int) -> Optional[int]:
    """An optional version in the body: an integer from 0 to the game's version, else 422."""
    value = body.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        raise Invalid(f"{field}: must be a version from 0 to {top}", {"field": field})
    return value


def _caller(game_id: str, body: dict) -> Optional[int]:
    """The caller's seat, as the public API decides it: a seat token (Authorization), a
    stream ticket (`ticket`) or an account credential (the session cookie with X-CSRF-Token,
    naming `seat` when the account holds several of the game's seats), else the spectator."""
    ticket = body.get("ticket")
    if ticket is not None:
        if not isinstance(ticket, str) or not 0 < len(ticket) <= 200:
            raise Invalid("ticket: a stream ticket is a string of 1 to 200 characters", {"field": "ticket"})
    seat = body.get("seat")
    if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < 1000):
        raise Invalid("seat: an account's seat is an integer from 0", {"field": "seat"})
    return viewer_or_ticket(game_id, ticket, seat)


def _action_labels(game_type: str, actions) -> list[str]:
    """Labels for legal-action templates sent as the API returns them (a game's declaration,
    a client's own): a few, each label cut short; no number repeats anything."""
    if not isinstance(actions, list) or len(actions) > MAX_TEMPLATES:
        raise Invalid(f"actions: a list of at most {MAX_TEMPLATES} legal actions", {"field": "actions"})
    return [_words(f"actions.{i}", lambda a=a: render.describe_action(game_type, a))[:MAX_LABEL]
            if isinstance(a, dict) else "?" for i, a in enumerate(actions)]


@blueprint.post("/web/api/words")
def words():
    """Words for a game as the caller may see it, drawn from the server's own record: the
    body names the game and what to put into words, never the state itself.

    Body: `game_id`; the caller is its seat token (Authorization: Bearer), a stream
    `ticket` or an account credential (with `seat` when it holds several), else a spectator. Always: `seat_labels`, and `result` once scored. Optional:
    `actions: true` (the caller's legal actions at `version`, default the current one, in
    words), `after`/`until` (the events in (after, until] the caller may see, in words, at
    most EVENTS_PER_ANSWER a time: `events_until` says where the answer stopped), `at` (after
    the end: every hand revealed as of that version), `standings: true` (once scored: each
    seat's place, score and the parts that made it, render.standings). Every number is checked against the
    game's own version; every answer is bounded.

    Without `game_id`, `type` and `actions` (templates as the API returns them) gives their
    labels only (a game's declaration test, a client's own templates)."""
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise Invalid("body: a JSON object is required", {"field": "body"})
    game_id = body.get("game_id")
    if game_id is None:
        game_type = body.get("type")
        if not isinstance(game_type, str) or render.words(game_type) is None:
            raise Invalid(f"type: unknown game type {str(game_type)[:40]!r}", {"field": "type"})
        for field in ("events", "view", "full_state", "result"):
            if field in body:       # client-sent state is never drawn: the server draws its own
                raise Invalid(f"{field}: not drawn from the body; name the game with game_id", {"field": field})
        if "actions" not in body:
            raise Invalid("game_id: a game id is required (or `type` and `actions`, templates to label)",
                          {"field": "game_id"})
        return jsonify({"actions": _action_labels(game_type, body["actions"])})
    if not isinstance(game_id, str) or not 0 < len(game_id) <= 64:
        raise Invalid("game_id: a game id is required", {"field": "game_id"})
    seat = _caller(game_id, body)
    core = games()
    game = core.summary(core.load(game_id))      # the public summary (no spectator view drawn for nothing)
    game_type, seats, current = game["type"], game["seats"], game["version"]
    out: dict = {"game_id": game_id, "type": game_type, "version": current, "viewer": seat,
                 "seat_labels": [render.seat_label(seats, s, seat) for s in range(len(seats))]}
    if isinstance(game.get("result"), dict):
        out["result"] = render.result_words(game["result"], seats, seat)
    after, until = _version(body, "after", current), _version(body, "until", current)
    at = _version(body, "at", current)
    if at is not None and (game["status"] not in ("ended", "scored") or at < 1):
        raise Invalid("at: every hand is revealed only after the end, at a version from 1", {"field": "at"})
    if body.get("actions") is True:
        asked = _version(body, "version", current)
        out["actions_version"] = current if asked is None else asked
        out["actions"] = _legal_words(core, game_id, game_type, seat, out["actions_version"], current)
    if after is not None:   # what GET /events answers, bounded as it is (not an audit read)
        last = min(current if until is None else until, after + EVENTS_PER_ANSWER)
        shown = core.events(game_id, seat, after, last)[0] if last > after else []
        out["events"] = [{"version": e.get("version"), "type": e.get("type"),
                          "text": render.describe_event(game_type, e, seats, seat)} for e in shown]
        out["events_until"] = max(last, after)
    if body.get("standings") is True:
        out["standings"] = _standings(core, game_id, game_type, seats, seat, game)
    if at is not None:      # a replay, bounded as GET /replay is
        with audit_slot():
            full_state = core.replay(game_id, at, None)["full_state"]
        out["hands"] = render.revealed_hands(game_type, full_state, len(seats))
    return jsonify(out)


def _standings(core, game_id: str, game_type: str, seats: list, seat: Optional[int], game: dict) -> list[dict]:
    """The end screen's table: each seat's place, score and what made it, from the spectator's
    final view and events (at the end of a game what every seat may see); a scored game only."""
    if game["status"] != "scored" or not isinstance(game.get("result"), dict):
        raise Invalid("standings: a game has standings once it is scored", {"field": "standings"})
    with audit_slot():     # the whole log is read: bounded as the other whole-game reads
        final = core.view(game_id, None)
        events = core.events(game_id, None, 0, final["version"])[0]
    return render.standings(game_type, final.get("state") or {}, events, game["result"], seats, seat)


def _legal_words(core, game_id: str, game_type: str, seat: Optional[int], version: int, current: int) -> list[str]:
    """The words of the seat's legal actions at `version` (the view the page holds), in the
    order of that view's `legal_actions`: the live view, or for a version in the past of a
    live game the core's replay for that seat."""
    if seat is None:
        return []
    view = core.view(game_id, seat) if version == current else None
    if view is None or view["version"] != version:
        # a past version (or the game moved on since `current` was read): the core's replay
        # for that seat, an expensive read bounded as the API's /replay is
        with audit_slot():
            view = core.replay(game_id, max(version, 1), seat).get("view") or {}
    return [render.describe_action(game_type, a)[:MAX_LABEL] for a in view.get("legal_actions") or []]


@blueprint.get("/web/api/glossary/<game_type>")
def glossary(game_type):
    """Names and colours of one game's cards, companies, share types and phases."""
    if render.words(game_type) is None:
        raise Invalid(f"type: unknown game type {game_type!r}", {"field": "type"})
    response = jsonify(render.glossary(game_type))
    response.headers["Cache-Control"] = "max-age=3600"
    return response


def register(app) -> None:
    app.register_blueprint(blueprint)
