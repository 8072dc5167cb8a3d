"""Live event streams and the wait for a game's next version.

How a message is framed on the wire (SSE, NDJSON) is the transport's: it passes a `Framing`
(service/streaming.py), and the core renders each batch once per framing.

`StreamCursor` is where one stream stands (the last version sent, the game folded to it) and
gives each next batch of messages; `event_stream` is a plain generator over a cursor: the
events after a version, as the viewer may see them, then new ones as they come, with
keep-alives. (Under gunicorn's gevent worker the HTTP layer serves streams from one
broadcaster per game instead: service/broadcast.py.) It waits
through a `wait(game_id, after_version, timeout) -> bool` callable: the store's notifier
(events/notify.py: one subscription per process, woken by the append's publish, never
polled), or `poll_for_version` for a store without one.

- Keep-alives: each stream beats every `keepalive` x a factor drawn once per stream in
  [0.8, 1.2], so thousands of streams opened together do not beat in step.
- A fan-out (many streams of one game woken by one append) reads, folds and renders the new
  batch once per (game, from version, to version, viewer, format): `SharedBatches`; where the
  batch ends comes from the notifier (what the append published), else one head read.
"""

from __future__ import annotations

import random
import threading
import time
from collections import OrderedDict
from typing import Callable, Iterator, Optional, Protocol

from events.store import EventStore
from projections import disclosure
from projections.session import ABANDONED, SCORED, Session, fold

from .errors import Invalid

POLL_INTERVAL = 0.05
JITTER = 0.2

# wait(game_id, after_version, timeout): True once the game's version passes after_version,
# False when timeout seconds elapse first.
Wait = Callable[[str, int, float], bool]


class Framing(Protocol):
    """How the transport frames a stream's messages: `message(body)` one message (body: the
    version, the seats to act, the status and the event as the viewer may see it), and the
    keep-alive sent when nothing happened for a while."""

    def message(self, body: dict) -> str: ...
    def keepalive(self) -> str: ...


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


def _new_batch(store: EventStore, game_id: str, base: Optional[Session], last: int, until: int,
               viewer: Optional[int], framing: Framing):
    """The events after `last` up to `until` as messages, and the session after them (None:
    nothing new)."""
    fresh = store.read(game_id, last, until)
    if not fresh:
        return None
    if viewer is not None:   # a seat's stream ends with its person's leave: the bot's moves are not theirs
        gone = next((i for i, e in enumerate(fresh) if e.type == "seat.left" and e.data.get("seat") == viewer), None)
        fresh = fresh if gone is None else fresh[:gone + 1]
    after_batch = fold(fresh, game_id, base)
    shown, _ = disclosure.events_for(fresh, base, viewer, after_batch.finished, game_id)
    to_act, status = after_batch.to_act(), after_batch.status
    clock = {}
    if after_batch.turn_timeout:   # a timed game: the deadlines after the batch, on the server's clock
        clock = {"deadlines": after_batch.deadlines(), "server_time": int(time.time() * 1000)}
    return "".join(framing.message({"version": event["version"], "to_act": to_act, "status": status,
                                    "event": event, **clock}) for event in shown), after_batch


class StreamCursor:
    """Where one stream stands: the last version it sent and the game folded to it.

    `advance` gives the messages of the next batch: the events after `last` up to `until` (what
    the notifier learnt from the append's publish, a lower bound: a later append publishes
    again; else one head read), read, folded and disclosed once for every stream of the game
    at the same point (`shared`, keyed by where the batch starts and ends, so a stream that
    comes later never gets a shorter, older batch). Both ways of serving a stream use it: the
    generator below, and the HTTP layer's broadcaster (service/broadcast.py)."""

    __slots__ = ("store", "game_id", "viewer", "session", "last", "framing", "shared", "known")

    def __init__(self, store: EventStore, game_id: str, viewer: Optional[int], session: Optional[Session],
                 after: int, framing: Framing, shared: Optional[SharedBatches] = None,
                 known: Optional[Callable[[str], int]] = None):
        self.store, self.game_id, self.viewer, self.framing = store, game_id, viewer, framing
        self.session, self.last = session, after
        self.shared = shared or SharedBatches(1)
        self.known = known

    @property
    def finished(self) -> bool:
        """The game is scored or abandoned, or the seat's person left it: nothing more will come."""
        return self.session is not None and (self.session.status in (SCORED, ABANDONED) or (
            self.viewer is not None and 0 <= self.viewer < len(self.session.seats)
            and bool(self.session.seats[self.viewer].left)))

    def batch_key(self, until: int) -> tuple:
        base = self.session
        return (self.game_id, self.last, base.head if base else "", until, self.viewer, self.framing)

    def until(self) -> int:
        until = self.known(self.game_id) if self.known is not None else 0
        return until if until > self.last else self.store.head(self.game_id)[0]

    def advance(self, until: Optional[int] = None) -> str:
        """The messages after `last` up to `until` (default: as far as is known), and move on."""
        until = self.until() if until is None else until
        if until <= self.last:
            return ""
        base, last, store, game_id, viewer, framing = (self.session, self.last, self.store, self.game_id,
                                                       self.viewer, self.framing)
        batch = self.shared.get(self.batch_key(until),
                                lambda: _new_batch(store, game_id, base, last, until, viewer, framing))
        if batch is None:
            return ""
        text, self.session = batch
        self.last = self.session.version
        return text

    def keepalive(self) -> str:
        return self.framing.keepalive()


STOP_CHECK = 0.25   # seconds between two looks at a stream's stop signal (a revoked credential)


def event_stream(cursor: StreamCursor, follow: float, keepalive: float, wait: Wait,
                 stopped: Optional[threading.Event] = None) -> Iterator[str]:
    """The messages of a stream from `cursor` on, for `follow` seconds or until the game is
    scored (or `stopped` is set: its credential was revoked), with a keep-alive whenever
    `keepalive` seconds pass with nothing new."""
    deadline = time.monotonic() + follow
    woken = True
    quiet_since = time.monotonic()
    while True:
        if woken:
            text = cursor.advance()
            if text:
                quiet_since = time.monotonic()
                yield text
        if cursor.finished or time.monotonic() >= deadline or (stopped is not None and stopped.is_set()):
            return
        slice_ = min(keepalive, STOP_CHECK) if stopped is not None else keepalive
        woken = wait(cursor.game_id, cursor.last, min(slice_, max(0.0, deadline - time.monotonic())))
        if not woken and time.monotonic() - quiet_since >= keepalive * 0.999:
            quiet_since = time.monotonic()
            yield cursor.keepalive()


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

    def open_stream_cursor(self, game_id: str, viewer: Optional[int], after: int, framing: Framing,
                           follow: Optional[float] = None) -> tuple[StreamCursor, float]:
        """Check the request now (an unknown game or a version past the head fails before any
        message); the stream's cursor at `after` and how long it may last (`follow` cut to
        the longest stream)."""
        current = self.load(game_id)  # type: ignore[attr-defined]
        if after > current.version:
            raise Invalid(f"after: the game is at version {current.version}", {"field": "after"})
        session = fold(self.store.read(game_id, 0, after), game_id)
        follow = self.stream_max_seconds if follow is None else min(follow, self.stream_max_seconds)
        cursor = StreamCursor(self.store, game_id, viewer, session, after, framing, self.shared_batches,
                              getattr(getattr(self.store, "notifier", None), "known", None))
        return cursor, follow

    def open_event_stream(self, game_id: str, viewer: Optional[int], after: int, framing: Framing,
                          follow: Optional[float] = None) -> Iterator[str]:
        """The stream's messages as a generator (checked now, as `open_stream_cursor`)."""
        cursor, follow = self.open_stream_cursor(game_id, viewer, after, framing, follow)
        return event_stream(cursor, follow, keepalive_interval(self.stream_keepalive), self.wait)
