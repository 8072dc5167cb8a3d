"""The core's domain errors. None carries a transport status: the HTTP layer maps each kind to
one (service/errors.py). Each has a stable `code`, a `message` naming the field at fault and
`details` (the field, and for a conflict the game's current version)."""

from __future__ import annotations

from typing import Optional

# The fields of a command that travel outside its body, named the core's way: the transport
# names them its own way (service/errors.py maps them to the HTTP headers).
IDEMPOTENCY_KEY = "idempotency_key"
CREDENTIAL = "credential"


class CoreError(Exception):
    code = "error"

    def __init__(self, message: str, details: Optional[dict] = None, code: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.details = details or {}
        if code:
            self.code = code


class NotFound(CoreError):
    """No such game, seat or game type."""

    code = "not_found"


class Conflict(CoreError):
    """The command raced another one (a stale expected version, a taken seat, a reused
    idempotency key): details["version"] is the game's current version when known."""

    code = "conflict"

    @property
    def version(self) -> Optional[int]:
        return self.details.get("version")


class Invalid(CoreError):
    """An invalid command or an action the rules refuse; details["field"] names the field."""

    code = "invalid"


class Unauthorized(CoreError):
    """No credential, or one the service does not know (seat token, stream ticket)."""

    code = "unauthorized"


class Forbidden(CoreError):
    """A known credential that does not give access to this game."""

    code = "forbidden"


class Throttled(CoreError):
    """Refused for now, to be retried after `retry_after` seconds (a sign-in lock, a busy
    password pool)."""

    code = "throttled"

    def __init__(self, message: str, retry_after: int, details: Optional[dict] = None, code: Optional[str] = None):
        super().__init__(message, {**(details or {}), "retry_after": retry_after}, code)
        self.retry_after = retry_after
