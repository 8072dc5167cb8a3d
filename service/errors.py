"""The HTTP layer's errors and the one mapping from the core's domain errors to statuses.
The API renders every error as {"error": {"code", "message", "details"}}."""

from __future__ import annotations


from .core import errors as core

# Each kind of domain error and the status it answers with: the only place they meet.
STATUS_OF = {
    core.Unauthorized: 401,
    core.Forbidden: 403,
    core.NotFound: 404,
    core.Conflict: 409,
    core.Invalid: 422,
    core.Throttled: 429,
}


# The fields the core names its own way that HTTP carries in headers: a message and its
# details name the header a client sends.
HEADER_OF_FIELD = {core.IDEMPOTENCY_KEY: "Idempotency-Key", core.CREDENTIAL: "Authorization"}


def in_http_words(err: core.CoreError) -> tuple[str, dict]:
    """The error's message and details, naming HTTP headers where the core names fields."""
    message, details = err.message, dict(err.details)
    for field, header in HEADER_OF_FIELD.items():
        if message.startswith(f"{field}:"):
            message = header + message[len(field):]
        if details.get("field") == field:
            details["field"] = header
    return message, details


def status_of(err: core.CoreError) -> int:
    if isinstance(err, ApiError):
        return err.status
    for kind in type(err).__mro__:
        if kind in STATUS_OF:
            return STATUS_OF[kind]
    return 400


class ApiError(core.CoreError):
    """An error only the HTTP layer raises (rate limits, malformed requests), with its status."""

    status = 400
    code = "bad_request"


class TooManyRequests(ApiError):
    status, code = 429, "rate_limited"

    def __init__(self, message: str, retry_after: int, code: str = None):
        super().__init__(message, {"retry_after": retry_after}, code=code)
        self.retry_after = retry_after


# --- the HTTP server's own errors -------------------------------------------------------
# gunicorn answers some requests itself, before the app sees them (a header block too large,
# a malformed request line, an unsupported transfer coding), with an HTML page by default.
# ops/gunicorn.conf.py installs `write_server_error` in its place: the same JSON envelope as
# every other error. gunicorn's 501 (a transfer coding it does not implement) is answered as
# 400: the request is the client's fault, and nothing was changed.
SERVER_ERROR_CODES = {400: "malformed_request", 403: "forbidden", 414: "uri_too_long",
                      431: "headers_too_large"}


def server_error_bytes(status: int, reason: str, message: str) -> bytes:
    import json

    if status == 501:
        status, reason = 400, "Bad Request"
        code = "unsupported_transfer_coding"
    elif status >= 500:
        code = "internal_error"
    else:
        code = SERVER_ERROR_CODES.get(status, "malformed_request")
    text = message or reason
    body = json.dumps({"error": {"code": code, "message": f"request: {text}",
                                 "details": {"status": status}}}).encode()
    from .security import HEADERS, POLICY   # the same headers as every answer of the app

    security = "".join(f"{name}: {value}\r\n" for name, value in {**HEADERS, "Content-Security-Policy": POLICY}.items())
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
            f"{security}Content-Length: {len(body)}\r\n\r\n").encode("latin-1")
    return head + body


def write_server_error(sock, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn.util.write_error's signature, writing the JSON envelope."""
    from gunicorn.util import write_nonblock

    write_nonblock(sock, server_error_bytes(int(status_int), str(reason), str(mesg)))
