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
}


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

    def __init__(self, message: str, retry_after: int):
        super().__init__(message, {"retry_after": retry_after})
        self.retry_after = retry_after
