"""Live event streams (SSE or NDJSON) and the wait for a game's next version.

`event_stream` is a plain generator of the messages a client receives: the events after a
version, as the viewer may see them, then new ones as they come, with keep-alives. It waits
for new events through a `wait(game_id, after_version, timeout)` callable; today that is
`poll_for_version` (polling the store's head), the one place a notifier would replace.
"""

from __future__ import annotations

import json
import time
from typing import Callable, Iterator, Optional

from events.store import EventStore
from projections import disclosure
from projections.session import SCORED, Session, fold

from .errors import Invalid

SSE = "text/event-stream"
NDJSON = "application/x-ndjson"
POLL_INTERVAL = 0.05

# wait(game_id, after_version, timeout): return once the game's version passes after_version
# or timeout seconds elapse (either way; the caller re-reads the store).
Wait = Callable[[str, int, float], None]


def poll_for_version(store: EventStore, game_id: str, after_version: int, timeout: float) -> None:
    """The polling `Wait`: read the store's head every POLL_INTERVAL seconds until the game's
    version passes `after_version` or `timeout` elapses."""
    deadline = time.monotonic() + timeout
    while store.head(game_id)[0] <= after_version and time.monotonic() < deadline:
        time.sleep(min(POLL_INTERVAL, max(0.0, deadline - time.monotonic())))


def _message(kind: str, event: dict, to_act: list, status: str) -> str:
    body = {"version": event["version"], "to_act": to_act, "status": status, "event": event}
    if kind == SSE:
        return f"id: {event['version']}\nevent: game-event\ndata: {json.dumps(body)}\n\n"
    return json.dumps(body) + "\n"


def _keepalive(kind: str) -> str:
    return ": keep-alive\n\n" if kind == SSE else json.dumps({"keepalive": True}) + "\n"


def event_stream(store: EventStore, game_id: str, viewer: Optional[int], session: Optional[Session],
                 after: int, kind: str, follow: float, keepalive: float, wait: Wait) -> Iterator[str]:
    """The messages of a stream from `session` (the game folded to version `after`) on, for
    `follow` seconds or until the game is scored: each fresh batch folded and disclosed to
    `viewer`, a keep-alive whenever `keepalive` seconds pass with nothing new."""
    deadline = time.monotonic() + follow
    last = after
    while True:
        fresh = store.read(game_id, last)
        if fresh:
            after_batch = fold(fresh, game_id, session)
            shown, _ = disclosure.events_for(fresh, session, viewer, after_batch.finished, game_id)
            to_act, status = after_batch.to_act(), after_batch.status
            for event in shown:
                yield _message(kind, event, to_act, status)
            session, last = after_batch, after_batch.version
        if (session is not None and session.status == SCORED) or time.monotonic() >= deadline:
            return
        wait(game_id, last, min(keepalive, max(0.0, deadline - time.monotonic())))
        if store.head(game_id)[0] <= last:
            yield _keepalive(kind)


class Streams:
    """The streaming half of the GameService (service/core/game_service.py builds it)."""

    store: EventStore
    wait: Wait
    stream_keepalive: float
    stream_max_seconds: float

    def wait_for(self, game_id: str, after_version: int, wait: float) -> None:
        """Long-poll: return once the game's version passes `after_version` or `wait` elapses."""
        self.wait(game_id, after_version, wait)

    def open_event_stream(self, game_id: str, viewer: Optional[int], after: int, kind: str,
                          follow: Optional[float] = None) -> Iterator[str]:
        """Check the request now (an unknown game or a version past the head fails before any
        message), then return the stream's generator."""
        current = self.load(game_id)  # type: ignore[attr-defined]
        if after > current.version:
            raise Invalid(f"after: the game is at version {current.version}", {"field": "after"})
        session = fold(self.store.read(game_id, 0, after), game_id)
        follow = self.stream_max_seconds if follow is None else follow
        return event_stream(self.store, game_id, viewer, session, after, kind, follow,
                            self.stream_keepalive, self.wait)
