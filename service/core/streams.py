"""Live event streams (SSE or NDJSON) and the wait for a game's next version.

`event_stream` is a plain generator of the messages a client receives: the events after a
version, as the viewer may see them, then new ones as they come, with keep-alives. It waits
through a `wait(game_id, after_version, timeout) -> bool` callable: the store's notifier
(events/notify.py: one subscription per process, woken by the append's publish, never
polled), or `poll_for_version` for a store without one.

- Keep-alives: each stream beats every `keepalive` x a factor drawn once per stream in
  [0.8, 1.2], so thousands of streams opened together do not beat in step.
- A fan-out (many streams of one game woken by one append) reads, folds and renders the new
  batch once per (game, from version, to version, viewer, format): `SharedBatches`; a woken
  stream reads the store's head once to know where the batch ends.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import OrderedDict
from typing import Callable, Iterator, Optional

from events.store import EventStore
from projections import disclosure
from projections.session import SCORED, Session, fold

from .errors import Invalid

SSE = "text/event-stream"
NDJSON = "application/x-ndjson"
POLL_INTERVAL = 0.05
JITTER = 0.2

# wait(game_id, after_version, timeout): True once the game's version passes after_version,
# False when timeout seconds elapse first.
Wait = Callable[[str, int, float], bool]


def poll_for_version(store: EventStore, game_id: str, after_version: int, timeout: float) -> bool:
    """A polling `Wait`, for a store with no notifier: read the head every POLL_INTERVAL."""
    deadline = time.monotonic() + timeout
    while store.head(game_id)[0] <= after_version:
        if time.monotonic() >= deadline:
            return False
        time.sleep(min(POLL_INTERVAL, max(0.0, deadline - time.monotonic())))
    return True


def keepalive_interval(base: float, rng=random) -> float:
    """This stream's keep-alive period: `base` +- 20%, drawn once per stream."""
    return base * rng.uniform(1 - JITTER, 1 + JITTER)


class SharedBatches:
    """Compute-once for the waiters of one game: the first caller for a key computes, the
    others that arrive meanwhile wait for its answer; answers are kept for a few recent keys.
    Values must be treated as immutable (sessions and rendered messages are)."""

    def __init__(self, size: int = 512):
        self._size = size
        self._lock = threading.Lock()
        self._done: OrderedDict = OrderedDict()
        self._running: dict = {}

    def get(self, key, compute: Callable[[], object]):
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                return self._done[key]
            running = self._running.get(key)
            mine = running is None
            if mine:
                running = self._running[key] = [threading.Event(), None, None]
        if not mine:
            running[0].wait()
            if running[2] is not None:
                raise running[2]
            return running[1]
        try:
            value = compute()   # None (nothing new) is not kept
        except BaseException as err:
            running[2] = err
            with self._lock:
                self._running.pop(key, None)
            running[0].set()
            raise
        running[1] = value
        with self._lock:
            self._running.pop(key, None)
            if value is not None:
                self._done[key] = value
            while len(self._done) > self._size:
                self._done.popitem(last=False)
        running[0].set()
        return value


def _message(kind: str, event: dict, to_act: list, status: str) -> str:
    body = {"version": event["version"], "to_act": to_act, "status": status, "event": event}
    if kind == SSE:
        return f"id: {event['version']}\nevent: game-event\ndata: {json.dumps(body)}\n\n"
    return json.dumps(body) + "\n"


def _keepalive(kind: str) -> str:
    return ": keep-alive\n\n" if kind == SSE else json.dumps({"keepalive": True}) + "\n"


def _new_batch(store: EventStore, game_id: str, base: Optional[Session], last: int, until: int,
               viewer: Optional[int], kind: str):
    """The events after `last` up to `until` as messages, and the session after them (None:
    nothing new)."""
    fresh = store.read(game_id, last, until)
    if not fresh:
        return None
    after_batch = fold(fresh, game_id, base)
    shown, _ = disclosure.events_for(fresh, base, viewer, after_batch.finished, game_id)
    to_act, status = after_batch.to_act(), after_batch.status
    return "".join(_message(kind, event, to_act, status) for event in shown), after_batch


def event_stream(store: EventStore, game_id: str, viewer: Optional[int], session: Optional[Session],
                 after: int, kind: str, follow: float, keepalive: float, wait: Wait,
                 shared: Optional[SharedBatches] = None,
                 known: Optional[Callable[[str], int]] = None) -> Iterator[str]:
    """The messages of a stream from `session` (the game folded to version `after`) on, for
    `follow` seconds or until the game is scored: each fresh batch folded and disclosed to
    `viewer` (once for every stream of the game at that point, through `shared`), a
    keep-alive whenever `keepalive` seconds pass with nothing new."""
    shared = shared or SharedBatches(1)
    deadline = time.monotonic() + follow
    last = after
    woken = True
    while True:
        if woken:
            # The batch is keyed by where it starts and where the store's head is now, so
            # every stream woken by one append shares one read, fold and render, and a
            # stream that comes later (the head moved on) never gets a shorter, older one.
            # `known`: what the notifier learnt from the append's publish (a lower bound; a
            # later append publishes again and wakes this stream), else one head read.
            base = session
            until = known(game_id) if known is not None else 0
            if until <= last:
                until = store.head(game_id)[0]
            batch = None if until <= last else shared.get(
                (game_id, last, base.head if base else "", until, viewer, kind),
                lambda: _new_batch(store, game_id, base, last, until, viewer, kind))
            if batch is not None:
                text, session = batch
                last = session.version
                if text:
                    yield text
        if (session is not None and session.status == SCORED) or time.monotonic() >= deadline:
            return
        woken = wait(game_id, last, min(keepalive, max(0.0, deadline - time.monotonic())))
        if not woken:
            yield _keepalive(kind)


class Streams:
    """The streaming half of the GameService (service/core/game_service.py builds it)."""

    store: EventStore
    wait: Wait
    stream_keepalive: float
    stream_max_seconds: float
    shared_batches: SharedBatches

    def wait_for(self, game_id: str, after_version: int, wait: float) -> bool:
        """Long-poll: True once the game's version passes `after_version`, False after `wait`."""
        return self.wait(game_id, after_version, wait)

    def open_event_stream(self, game_id: str, viewer: Optional[int], after: int, kind: str,
                          follow: Optional[float] = None) -> Iterator[str]:
        """Check the request now (an unknown game or a version past the head fails before any
        message), then return the stream's generator. `follow` is cut to the longest stream."""
        current = self.load(game_id)  # type: ignore[attr-defined]
        if after > current.version:
            raise Invalid(f"after: the game is at version {current.version}", {"field": "after"})
        session = fold(self.store.read(game_id, 0, after), game_id)
        follow = self.stream_max_seconds if follow is None else min(follow, self.stream_max_seconds)
        return event_stream(self.store, game_id, viewer, session, after, kind, follow,
                            keepalive_interval(self.stream_keepalive), self.wait, self.shared_batches,
                            getattr(getattr(self.store, "notifier", None), "known", None))
