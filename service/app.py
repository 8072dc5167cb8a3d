"""The Flask app factory: dependencies injected, one JSON error envelope for everything."""

from __future__ import annotations

import logging
from typing import Optional

import redis
from flask import Flask, jsonify, request
from flask_smorest import Api
from werkzeug.exceptions import HTTPException
from werkzeug.routing import IntegerConverter

from events.archive import ArchiveError

from . import bootstrap, docs_ui
from .core.errors import CoreError
from .errors import ApiError, in_http_words, status_of
from .limits import JsonRefused, strict_loads
from .openapi import SCHEMA_PATCHES, ContractPlugin, search_budget_patches
from .schemas import ErrorSchema

log = logging.getLogger(__name__)

API_TITLE = "Speculation game service"
API_VERSION = "v1"


KEY_SHOWN = 64


def shown_key(key) -> str:
    """A field name as an error names it. An unknown field's name is the client's own text: a
    control, bidi or invisible character in it is escaped (a message never carries one raw)
    and a long one is cut."""
    text = key if isinstance(key, str) else str(key)
    if text.isprintable() and len(text) <= KEY_SHOWN:
        return text
    return ascii(text[:KEY_SHOWN]) + ("..." if len(text) > KEY_SHOWN else "")


def _shown_messages(messages):
    """marshmallow's messages with every field name as `shown_key` gives it."""
    if isinstance(messages, dict):
        return {shown_key(k): _shown_messages(v) for k, v in messages.items()}
    if isinstance(messages, list):
        return [_shown_messages(m) for m in messages]
    return messages


def _flatten(messages, prefix: str = "") -> list[str]:
    """marshmallow/webargs messages as 'field.path: message' lines."""
    if isinstance(messages, dict):
        out = []
        for key, value in messages.items():
            path = prefix if key in ("json", "query", "headers", "_schema") else (
                f"{prefix}.{key}" if prefix else str(key))
            out += _flatten(value, path)
        return out
    if isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        return [f"{prefix}: {' '.join(messages)}" if prefix else " ".join(messages)]
    if isinstance(messages, list):
        return [line for m in messages for line in _flatten(m, prefix)]
    return [f"{prefix}: {messages}" if prefix else str(messages)]


def error_response(status: int, code: str, message: str, details: Optional[dict] = None, headers=None):
    response = jsonify({"error": {"code": code, "message": message, "details": details or {}}})
    response.status_code = status
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


_HTTP_CODES = {400: "malformed_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
               405: "method_not_allowed", 409: "conflict", 413: "too_large", 415: "unsupported_media_type",
               422: "invalid", 429: "rate_limited"}


class AsciiIntConverter(IntegerConverter):
    """`<int:...>` in paths: ASCII digits only (werkzeug's `\\d` also matches `１` and `²`)."""

    regex = r"[0-9]{1,16}"


def _refuse_hostile_json() -> None:
    """A JSON body is parsed strictly (service/limits.py) before any route reads it: NaN,
    Infinity, huge integers, deep nesting and lone surrogates are a 400 that names where."""
    if not request.is_json or request.method in ("GET", "HEAD", "OPTIONS"):
        return
    body = request.get_data(cache=True)
    if not body:
        return
    try:
        strict_loads(body, echoed=request.path == "/web/api/words")
    except JsonRefused as why:
        raise ApiError(str(why), {"field": why.where}, code="malformed_json") from None


class ServiceApi(Api):
    ERROR_SCHEMA = ErrorSchema

    def handle_http_exception(self, error: HTTPException):
        data = getattr(error, "data", None) or {}
        messages = _shown_messages(data.get("messages") or data.get("errors"))
        status = error.code or 500
        if messages and isinstance(messages.get("json"), dict) and \
                messages["json"].get("_schema") == ["Invalid input type."]:
            return error_response(400, "malformed_json", "body: must be a JSON object")
        if status == 400 and messages and "json" in messages:
            return error_response(400, "malformed_json", "body: " + " ".join(_flatten(messages["json"])))
        if messages:
            lines = _flatten(messages)
            code = "invalid" if status == 422 else _HTTP_CODES.get(status, "error")
            return error_response(status, code, "; ".join(lines), {"errors": messages})
        if status >= 500:
            log.exception("unhandled error", exc_info=error)
            return error_response(status, "internal_error", "the service failed; nothing was changed")
        message = data.get("message") or error.description or error.name
        if status == 404 and not data:
            message = f"no such resource: {request.path}"
        if status == 413:
            message = f"body: larger than the limit of {self._app.config['MAX_CONTENT_LENGTH']} bytes"
        return error_response(status, _HTTP_CODES.get(status, "error"), message, headers=data.get("headers"))


def create_app(config: Optional[dict] = None, backend=None, jobs=None) -> Flask:
    """Build the app. `config` overrides the environment; `backend` (the Redis clients) and
    `jobs` (the follow-up queue) may be injected, as tests do."""
    settings = bootstrap.settings(config)
    app = Flask(__name__)
    app.config.update(settings)
    # /docs is Swagger UI with its assets served by the service itself (service/docs_ui.py):
    # no CDN, so the page works behind a firewall.
    app.config.update(API_TITLE=API_TITLE, API_VERSION=API_VERSION, OPENAPI_VERSION="3.1.0",
                      OPENAPI_URL_PREFIX="/", OPENAPI_JSON_PATH="openapi.json",
                      OPENAPI_SWAGGER_UI_PATH="/docs", OPENAPI_SWAGGER_UI_URL=docs_ui.ASSETS_URL,
                      JSON_SORT_KEYS=False)
    app.url_map.converters["int"] = AsciiIntConverter
    backend = backend or bootstrap.build_backend(settings)
    service = bootstrap.build_core(settings, backend, jobs)
    app.extensions["backend"] = backend
    app.extensions["games"] = service
    app.extensions["accounts"] = service.accounts
    app.extensions["ratings"] = service.ratings
    app.extensions["invitations"] = service.invitations
    app.extensions["seeks"] = service.seeks
    app.extensions["transparency"] = service.transparency   # the log's routes (service/routes/transparency.py)
    app.extensions["keyring"] = service.keys   # signs receipts; GET /v1/keys lists its public halves
    if settings.get("REDIS_URL") and not settings.get("AUDIT_KEY_FILE"):
        log.warning("no SPECULATION_AUDIT_KEY_FILE: this process signs receipts with a key of its own, "
                    "which no other process lists (docs/operations.md, 'The signing key')")
    from .matching.seeks import Presence

    app.extensions["presence"] = Presence(backend.store_client)
    from .accounts.feed import AccountGames

    app.extensions["account_games"] = AccountGames(service, service.accounts.index)
    from .accounts.revocation import RevocationWatch

    app.extensions["revocations"] = RevocationWatch(service.accounts.still_valid,
                                                    lambda stream: service.store.head(stream)[0], service.wait)

    api = ServiceApi(app, spec_kwargs={
        "info": {"description": _DESCRIPTION},
        "servers": [{"url": "/", "description": "the service that serves this document"}],
        "extra_plugins": [ContractPlugin({**SCHEMA_PATCHES, **search_budget_patches(service.search_limits)})]})
    docs_ui.register(app)
    api._app = app
    api.spec.components.security_scheme("seatToken", {"type": "http", "scheme": "bearer",
                                                       "description": "a seat token from POST /v1/games/{id}/seats/{seat}"})
    api.spec.components.security_scheme("accountToken", {
        "type": "http", "scheme": "bearer",
        "description": "an account credential: a personal token (spa_..., POST /v1/account/tokens) or a "
                       "session (sps_..., POST /v1/sessions). The scopes an operation needs are listed with "
                       "it: play (claim seats, act), read (the account's games, views, stream), account "
                       "(tokens, password, the account); a missing one is 403 missing_scope."})
    api.spec.components.security_scheme("sessionCookie", {
        "type": "apiKey", "in": "cookie", "name": "speculation_session",
        "description": "the web pages' session (POST /v1/sessions with use_cookie): every scope; a request "
                       "that changes anything also sends X-CSRF-Token"})
    from .routes.blueprints import register_blueprints

    register_blueprints(api)
    from .web import register as register_web_pages  # the lobby, tables and replay pages (/web/)

    register_web_pages(app)

    @app.errorhandler(CoreError)
    def _domain_error(err: CoreError):
        message, details = in_http_words(err)
        retry_after = getattr(err, "retry_after", None)
        return error_response(status_of(err), err.code, message, details,
                              {"Retry-After": str(retry_after)} if retry_after else None)

    @app.errorhandler(ApiError)
    def _api_error(err: ApiError):
        headers = {"Retry-After": str(err.retry_after)} if getattr(err, "retry_after", None) else None
        return error_response(err.status, err.code, err.message, err.details, headers)

    @app.errorhandler(redis.exceptions.ConnectionError)
    @app.errorhandler(redis.exceptions.TimeoutError)
    def _store_unreachable(err: Exception):
        from .observability import REDIS_ERRORS

        REDIS_ERRORS.labels("request").inc()
        log.warning("the store cannot be reached: %s", type(err).__name__)
        return error_response(503, "unavailable", "the store cannot be reached now; retry later (nothing "
                              "was acknowledged)", headers={"Retry-After": "5"})

    @app.errorhandler(ArchiveError)
    def _archive_unreadable(err: ArchiveError):
        log.error("an archived game cannot be read: %s", err)
        return error_response(500, "archive_unreadable", f"the game's archive file cannot be read: {err}")

    @app.errorhandler(Exception)
    def _unexpected(err: Exception):
        if isinstance(err, HTTPException):
            return api.handle_http_exception(err)
        log.exception("unhandled error")
        return error_response(500, "internal_error", "the service failed; nothing was changed")

    from .ratelimit import install_rate_limit

    install_rate_limit(app, backend.store_client)
    from . import security

    security.install(app)   # CSP, nosniff, frame and referrer headers; TRUSTED_PROXIES (ProxyFix)
    app.before_request(_refuse_hostile_json)
    from . import observability

    observability.install(app, backend, service, bootstrap.job_counter(backend))
    return app


_DESCRIPTION = """An event-sourced game service for the Speculation family of trading games.

Every accepted action is an event in the game's append-only, hash-chained log. Create a
game, claim a seat (you get the seat's bearer token once), then read your view and post
actions chosen among its `legal_actions`. Errors are always
`{"error": {"code", "message", "details"}}`.

Two ways to play (docs/accounts.md):

- **As a guest**, with no account: claim a seat with a `name`; the answer holds that seat's
  token (`Authorization: Bearer <seat token>`), shown once. The seat shows the name with
  `guest: true`.
- **As an account**: sign up (`POST /v1/accounts`), sign in (`POST /v1/sessions`) and make a
  personal token with the scopes you need (`POST /v1/account/tokens`: `play`, `read`,
  `account`). Claim seats with it and no name: one token plays every seat the account holds
  (name the `seat` only when it holds several of one game). `GET /v1/account/games` lists
  your games, and `GET /v1/account/events` streams your turns across all of them.

Leaving a game: `POST /v1/games/{game_id}/leave`, as the seat (its token, or the account's
credential), hands the seat to a bot of the game's `leave_level` (chosen at creation,
`heuristic` by default), recorded as a `seat.left` event; the bot plays the seat to the end of
the game. Who left cannot come back: from then on the seat's token, and the account for that
seat, are refused with 403 `seat_left` (read the game as a spectator), the seat shows
`left: true` with the person's name, and the seat's event stream ends with the leave. A seat
leaves once: any retry answers the original leave. In a rated game the seat that left ranks
last (docs/ratings.md).

Clocks (`turn_timeout` at creation: seconds a seat may take per decision). A timed game's view
carries `clock` = `{"turn_timeout", "deadlines": [{"seat", "at"}]}`: each seat to act that a
person holds and when its move is played for it (ms since the epoch, on the server's clock);
every live view also carries `server_time`, the server's clock when it answered. Count a
deadline down as `at - server_time` from when the answer arrived, never against your own
clock (it may be off). A seat's deadline runs from when its decision opened: another seat's
move does not restart it; its own move that leaves it to act opens a new one. Read the
deadline again after every event (the view, or the `deadlines` and `server_time` that a timed
game's stream messages carry): who is to act, and since when, changes with each batch. At the
deadline, never before it and within about two seconds after it, the random bot plays the
seat's move (`cmd.by` "timeout").

Abandoned games. An active game without a clock where a person is to act and nothing moved for
the service's `ABANDON_AFTER` (3 days by default) ends with `game.abandoned` (`idle_since`,
`to_act`) and the status `abandoned`: no more actions (409 `game_abandoned`), never scored or
rated, its hidden cards and seed kept (verify checks the abandonment). `GET /v1/games?live=true`
lists the active games that moved within the service's `LIVE_WITHIN` (an hour by default),
latest move first (each summary's `moved_at`); `status=abandoned` lists the abandoned ones.

Chat. Each game has a table chat in two channels: `players`, the game's seats' (a seat token,
or the account that holds the seat), read by the seats only until the game is over and by
anyone after; and `spectators`, read by anyone and written by any signed-in account. Read it
with `GET /v1/games/{game_id}/chat?after=N` (poll every 2 to 3 s with `after` = the last
answer's `last`); say something with `POST /v1/games/{game_id}/chat` (`text`, or a `preset` of
`GET /v1/chat/presets`). A message is plain text: show it as text, never as HTML (markup
comes back exactly as it was typed). Limits: `max_length` characters after NFC, no control or
format characters (422 `invalid_text`, `details.field` = `text`), `rate_count` messages per
`rate_seconds` per author and game (429 `chat_rate_limited` with Retry-After), `max_entries`
a game (409 `chat_full`); a refused message changes nothing. A seat mutes another for itself
(`POST /v1/games/{game_id}/chat/mutes`, `DELETE .../mutes/{target}`); the operator removes a
message (`speculation chat remove`), kept as a `removal` item, the message shown without its
text from then on. The chat is kept with the game, outside its hash chain: the export's header
carries it (`chat`, as the caller may read it), the replay shows each message beside the event
it followed (`version`), and it moves to the archive with the game (read-only there, 409
`chat_closed`).

Changes to the contract with accounts: a claim's `name` is required only without an account
credential, and its answer's `token` is absent for an account's seat (it has `account`);
seats carry `account`, `guest` and `closed`; views, actions and game streams take an
optional `seat`.

Changes with ratings (docs/ratings.md): `POST /v1/games` takes `rated` (with a
`turn_timeout`); `GET /v1/leaderboards/{type}` lists the openskill ratings of accounts in
rated games, paginated (it used to count wins by the names of every scored game);
`GET /v1/accounts/{username}` carries the account's ratings and recent games."""
