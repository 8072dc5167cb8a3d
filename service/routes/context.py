"""What every route reads from its request and app: the core, and who the caller is."""

from __future__ import annotations

from typing import Optional

from flask import current_app, request

from ..accounts.credentials import Principal, is_account_credential
from ..core.errors import CREDENTIAL, CoreError, Forbidden, Unauthorized
from ..core.game_service import GameService

SESSION_COOKIE = "speculation_session"
DEVICE_COOKIE = "speculation_device"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def games() -> GameService:
    """The core, injected by the app factory."""
    return current_app.extensions["games"]


def bearer_of(header: Optional[str]) -> Optional[str]:
    """The one reading of an Authorization header, for authentication and the rate limits
    alike (service/ratelimit.py): None without one; the token of `Bearer <token>`, the scheme
    in any case (RFC 9110: case-insensitive) and the spaces around the token dropped; "" for
    anything else (a 401 where a token is read)."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else ""


def bearer() -> Optional[str]:
    return bearer_of(request.headers.get("Authorization"))


def accounts():
    """The accounts' core, injected by the app factory."""
    return current_app.extensions["accounts"]


def credential() -> tuple[Optional[str], bool]:
    """The credential of the request and whether it came in the session cookie: the
    Authorization header when there is one (a request with it is never read from the cookie),
    else the web's session cookie."""
    token = bearer()
    if token is not None:
        return token, False
    cookie = request.cookies.get(SESSION_COOKIE)
    return (cookie, True) if cookie else (None, False)


# Reading a game the account plays: `read`, or `play` (a player's token sees what it plays).
READ_OWN_GAME = ("read", "play")


def principal(scope=None) -> Principal:
    """The account the request is, through a credential holding `scope` (or one of a tuple
    of scopes): 401 without an
    account credential (or with a revoked, expired or unknown one), 403 `missing_scope`
    naming the scope, 403 `csrf_failed` for a cookie session's state-changing request without
    its X-CSRF-Token."""
    token, via_cookie = credential()
    if token is None:
        raise Unauthorized(f"{CREDENTIAL}: an account token is required (Authorization: Bearer spa_... or "
                           "sps_..., or the web's session cookie)", {"field": CREDENTIAL})
    if not is_account_credential(token):
        raise Unauthorized(f"{CREDENTIAL}: this needs an account token, not a seat token", {"field": CREDENTIAL})
    found = accounts().authenticate(token, via_cookie)
    if via_cookie and request.method not in SAFE_METHODS:
        sent = request.headers.get(CSRF_HEADER, "")
        if not sent or not _same(sent, accounts().csrf_token(found)):
            raise Forbidden(f"{CSRF_HEADER}: a request made with the session cookie that changes anything must "
                            f"send the header {CSRF_HEADER} (its value is GET /v1/account's csrf_token)",
                            {"field": CSRF_HEADER}, code="csrf_failed")
    wanted = (scope,) if isinstance(scope, str) else tuple(scope or ())
    if wanted and not any(s in found.scopes for s in wanted):
        raise Forbidden(f"{CREDENTIAL}: this token does not hold the scope {wanted[0]!r} "
                        f"(it holds {', '.join(found.scopes)})", {"field": CREDENTIAL, "scope": wanted[0]},
                        code="missing_scope")
    return found


def _same(a: str, b: str) -> bool:
    import hmac

    return hmac.compare_digest(a.encode(), b.encode())


def viewer(game_id: str, seat: Optional[int] = None) -> Optional[int]:
    """The caller's seat when a credential is given (it must be valid), else None: a
    spectator. An account that holds no seat of the game watches as a spectator; a session
    cookie that is no longer valid is ignored (the page is a spectator's)."""
    token, via_cookie = credential()
    if token is None:
        return None
    if is_account_credential(token):
        try:
            found = principal(READ_OWN_GAME)
        except CoreError:
            if via_cookie:
                return None
            raise
        return games().account_seat(game_id, found.account_id, seat, spectator=True)
    if via_cookie:
        return None
    return games().authenticate(game_id, token)


def stream_principal():
    """The account a stream is opened as (None: a seat token, a ticket or a spectator)."""
    token, _ = credential()
    if token is None or not is_account_credential(token):
        return None
    try:
        return principal()
    except CoreError:
        return None


def viewer_or_ticket(game_id: str, ticket: Optional[str], seat: Optional[int] = None) -> Optional[int]:
    """The caller's seat where a browser may present a stream ticket instead of a header
    (GET /events, POST /web/api/words): the ticket's seat when one is given, else viewer()."""
    return games().stream_ticket_viewer(game_id, ticket) if ticket else viewer(game_id, seat)


def seat_of(game_id: str, scope=("play",), seat: Optional[int] = None, allow_left: bool = False) -> int:
    """The caller's seat: a credential is required, a seat token of this game or an account
    credential holding `scope` (and naming `seat` when the account holds several). A seat
    its person left is refused (403 `seat_left`) unless `allow_left` (the leave's retry)."""
    token, via_cookie = credential()
    if token is None:
        raise Unauthorized("Authorization: a Bearer seat token or account token is required")
    if is_account_credential(token):
        return games().account_seat(game_id, principal(scope).account_id, seat, allow_left=allow_left)
    if via_cookie:
        raise Unauthorized("Authorization: a Bearer seat token or account token is required")
    return games().authenticate(game_id, token, allow_left=allow_left)
