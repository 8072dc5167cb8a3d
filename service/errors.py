"""The service's errors: each carries its HTTP status, a stable code, and a message naming
the field at fault. The API renders them all as {"error": {"code", "message", "details"}}."""

from __future__ import annotations

from typing import Optional


class ApiError(Exception):
    status = 400
    code = "bad_request"

    def __init__(self, message: str, details: Optional[dict] = None, code: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.details = details or {}
        if code:
            self.code = code


class BadRequest(ApiError):
    status, code = 400, "malformed_request"


class Unauthorized(ApiError):
    status, code = 401, "unauthorized"


class Forbidden(ApiError):
    status, code = 403, "forbidden"


class NotFound(ApiError):
    status, code = 404, "not_found"


class Conflict(ApiError):
    status, code = 409, "conflict"


class Unprocessable(ApiError):
    status, code = 422, "invalid"


class TooLarge(ApiError):
    status, code = 413, "too_large"


class TooManyRequests(ApiError):
    status, code = 429, "rate_limited"

    def __init__(self, message: str, retry_after: int):
        super().__init__(message, {"retry_after": retry_after})
        self.retry_after = retry_after
