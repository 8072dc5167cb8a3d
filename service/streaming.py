"""Waiting clients, the HTTP side: which requests stream and the caps on open waits.

- Only an explicit `Accept: text/event-stream` or `application/x-ndjson` streams; `*/*`, no
  Accept, or an Accept that prefers `application/json` gets the JSON answer.
- Caps (app config, all process-local: each API process counts its own clients, so with N
  processes a client may hold up to N x the cap; the kernel spreads connections over them):
  `STREAMS_PER_TOKEN` and `STREAMS_PER_ADDRESS` open waits (event streams and long-polls)
  per bearer token (or stream ticket) and per client address, `STREAM_MAX_SECONDS` the
  longest stream (a longer `follow` is cut to it; the client resumes with Last-Event-ID).
  Past a cap: 429 `too_many_streams` with `Retry-After`.
(Keep-alive jitter and the batches a fan-out shares are the core's: service/core/streams.py;
the wire framing of its messages is this layer's: `FRAMINGS`.)
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Callable, Optional

from flask import current_app, request

from .errors import TooManyRequests

JSON = "application/json"
SSE = "text/event-stream"
NDJSON = "application/x-ndjson"


class SseFraming:
    """Server-Sent Events: the version (an account stream: the event's id) as the event id, so
    a client resumes with Last-Event-ID."""

    def __init__(self, event: str = "game-event", id_field: str = "version"):
        self.event, self.id_field = event, id_field

    def message(self, body: dict) -> str:
        return f"id: {body[self.id_field]}\nevent: {self.event}\ndata: {json.dumps(body)}\n\n"

    def keepalive(self) -> str:
        return ": keep-alive\n\n"


class NdjsonFraming:
    """One JSON message a line."""

    def message(self, body: dict) -> str:
        return json.dumps(body) + "\n"

    def keepalive(self) -> str:
        return json.dumps({"keepalive": True}) + "\n"


# The framing of each streamed media type (one object each: the core renders a batch once per framing).
FRAMINGS = {SSE: SseFraming(), NDJSON: NdjsonFraming()}
# An account's stream (service/accounts/feed.py): its own framing objects, so a fan-out never
# shares a rendered batch between a game and an account.
ACCOUNT_FRAMINGS = {SSE: SseFraming("account-event", "id"), NDJSON: NdjsonFraming()}



def stream_kind(accept) -> Optional[str]:
    """SSE or NDJSON when the Accept header names one explicitly (q > 0) and does not rank
    application/json above it; else None (the JSON answer). Wildcards never stream."""
    named = {}
    for value, quality in accept:
        value = value.lower()
        if quality > 0 and value in (SSE, NDJSON, JSON):
            named[value] = max(quality, named.get(value, 0))
    best = max((SSE, NDJSON), key=lambda kind: named.get(kind, 0))
    if not named.get(best):
        return None
    if named.get(JSON, 0) > named[best]:
        return None
    return best


class TooManyStreams(TooManyRequests):
    code = "too_many_streams"

    def __init__(self, message: str, retry_after: int, details: dict):
        super().__init__(message, retry_after)
        self.details.update(details)


class StreamCaps:
    """Open waits per token and per address, counted in this process."""

    RETRY_AFTER = 5

    def __init__(self, per_token: int, per_address: int):
        self.per_token = per_token
        self.per_address = per_address
        self._lock = threading.Lock()
        self._open: dict[str, int] = {}

    @classmethod
    def from_config(cls, config) -> "StreamCaps":
        return cls(int(config.get("STREAMS_PER_TOKEN") or 0), int(config.get("STREAMS_PER_ADDRESS") or 0))

    def acquire(self, address: Optional[str], token: Optional[str]) -> Callable[[], None]:
        """Count one open wait for this address and token; the returned callable (idempotent)
        releases it. Raises TooManyRequests past a cap (0: no cap)."""
        subjects = []
        if address and self.per_address:
            subjects.append(("addr:" + address, self.per_address, "address"))
        if token and self.per_token:
            subjects.append(("tok:" + hashlib.sha256(token.encode()).hexdigest()[:32], self.per_token, "token"))
        with self._lock:
            for key, limit, kind in subjects:
                if self._open.get(key, 0) >= limit:
                    raise TooManyStreams(f"too many open streams: at most {limit} event streams and long-polls "
                                         f"at once per {kind}; close one or retry later",
                                         self.RETRY_AFTER, {"limit": limit, "per": kind})
            for key, _, _ in subjects:
                self._open[key] = self._open.get(key, 0) + 1
        released = False

        def release() -> None:
            nonlocal released
            with self._lock:
                if released:
                    return
                released = True
                for key, _, _ in subjects:
                    left = self._open.get(key, 0) - 1
                    if left > 0:
                        self._open[key] = left
                    else:
                        self._open.pop(key, None)

        return release

    def open_count(self) -> int:
        with self._lock:
            return sum(v for k, v in self._open.items() if k.startswith("addr:"))


# --- per app (made on first use, so the app factory needs no change) ----------------------
def caps() -> StreamCaps:
    caps_ = current_app.extensions.get("stream_caps")
    if caps_ is None:
        caps_ = current_app.extensions.setdefault("stream_caps", StreamCaps.from_config(current_app.config))
    return caps_


def broadcaster():
    """This process's broadcaster (service/broadcast.py), made on first use."""
    from .broadcast import Broadcaster

    found = current_app.extensions.get("broadcaster")
    if found is None:
        core = current_app.extensions["games"]
        known = getattr(getattr(core.store, "notifier", None), "known", None)

        def version_of(game_id: str) -> int:
            return (known(game_id) if known is not None else 0) or core.store.head(game_id)[0]

        found = current_app.extensions.setdefault(
            "broadcaster", Broadcaster(core.wait, core.stream_keepalive, version_of))
    return found


def stream_body(environ, game_id: str, viewer, after: int, kind: str, follow, principal=None):
    """A stream's WSGI body: parked in the broadcaster under gunicorn's gevent worker, else
    the core's generator (the same messages). Opened with an account credential
    (`principal`), it ends within a second of the credential's revocation."""
    from .broadcast import usable

    core = current_app.extensions["games"]
    watch = None
    if principal is not None:
        revocations = current_app.extensions["revocations"]
        watch = lambda stop: revocations.watch(principal, stop)   # noqa: E731
    if not usable(environ):
        if watch is None:
            return core.open_event_stream(game_id, viewer, after, FRAMINGS[kind], follow)
        return _stoppable(core, game_id, viewer, after, FRAMINGS[kind], follow, watch)
    cursor, follow = core.open_stream_cursor(game_id, viewer, after, FRAMINGS[kind], follow)
    return broadcaster().serve(cursor, follow, environ, watch)


def _stoppable(core, game_id, viewer, after, framing, follow, watch):
    from .core.streams import event_stream, keepalive_interval

    cursor, follow = core.open_stream_cursor(game_id, viewer, after, framing, follow)
    stopped = threading.Event()
    unwatch = watch(stopped.set)

    def messages():
        try:
            yield from event_stream(cursor, follow, keepalive_interval(core.stream_keepalive), core.wait, stopped)
        finally:
            unwatch()

    return messages()


def account_stream_body(environ, principal, after: int, kind: str, follow):
    """An account stream's WSGI body, parked in the broadcaster like a game's (it groups
    streams by the stream's id and waits on the same notifier), else the core's generator."""
    from .accounts.feed import AccountCursor
    from .broadcast import usable
    from .core.streams import event_stream, keepalive_interval

    core = current_app.extensions["games"]
    known = getattr(getattr(core.store, "notifier", None), "known", None)
    cursor = AccountCursor(core.store, principal, after, ACCOUNT_FRAMINGS[kind], known)
    follow = core.stream_max_seconds if follow is None else min(follow, core.stream_max_seconds)
    if not usable(environ):
        return event_stream(cursor, follow, keepalive_interval(core.stream_keepalive), core.wait)
    return broadcaster().serve(cursor, follow, environ)


def open_wait(token: Optional[str], stream: bool = True) -> Callable[[], None]:
    """Count this request as an open wait (a stream, or a long-poll) of its address and token,
    and in the metrics' gauge; returns the release (idempotent). 429 too_many_streams past a
    cap."""
    from .observability import OPEN_STREAMS, WAITING_CLIENTS

    release_cap = caps().acquire(request.remote_addr, token)
    gauge = OPEN_STREAMS if stream else WAITING_CLIENTS
    gauge.inc()
    released = False

    def release() -> None:
        nonlocal released
        if not released:
            released = True
            gauge.dec()
            release_cap()

    return release
