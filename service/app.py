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
        messages = data.get("messages") or data.get("errors")
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

    api = ServiceApi(app, spec_kwargs={
        "info": {"description": _DESCRIPTION},
        "servers": [{"url": "/", "description": "the service that serves this document"}],
        "extra_plugins": [ContractPlugin({**SCHEMA_PATCHES, **search_budget_patches(service.search_limits)})]})
    docs_ui.register(app)
    api._app = app
    api.spec.components.security_scheme("seatToken", {"type": "http", "scheme": "bearer",
                                                       "description": "a seat token from POST /v1/games/{id}/seats/{seat}"})
    from .routes.blueprints import register_blueprints

    register_blueprints(api)
    from .web import register as register_web_pages  # the lobby, tables and replay pages (/web/)

    register_web_pages(app)

    @app.errorhandler(CoreError)
    def _domain_error(err: CoreError):
        message, details = in_http_words(err)
        return error_response(status_of(err), err.code, message, details)

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
`{"error": {"code", "message", "details"}}`."""
