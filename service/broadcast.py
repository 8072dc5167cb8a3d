"""Event streams served by one broadcaster greenlet per game, under gunicorn's gevent worker.

Why: a delivery through WSGI costs the API process about 80 µs of CPU (wake the stream's
greenlet, leave and re-enter the notifier, its keep-alive timer, the response iterator,
gunicorn's chunked write). A fan-out to a game's 100 followers is then 8 ms on the very core
that must answer the player's next action, and that is what stretched the action's latency
under load (docs/performance.md, benchmark 8). Here:

- A stream's own greenlet sends its backlog through WSGI as usual (headers, hooks and logs
  stay Flask's and gunicorn's), then *parks*: it waits, holding its connection, and writes
  nothing more itself unless asked.
- One greenlet per game with parked streams waits on the process's notifier (one waiter per
  game, not one per stream), and on each append reads, folds and discloses the batch once
  per group of streams at the same point (`StreamCursor`, `SharedBatches`), then writes it,
  framed as gunicorn frames its own writes (an HTTP/1.1 chunk; raw for HTTP/1.0), straight to
  each parked stream's socket **without blocking**. A socket that cannot take all of it
  keeps the rest in its stream's queue, and the stream's own greenlet sends it (it may
  block; the others never wait for it); a queue past `MAX_PENDING` ends that stream (the
  client resumes with Last-Event-ID).
- A fan-out starts when the event loop is idle (`gevent.idle`) and gives way again every
  `SLICE` writes: a request in flight — the action whose append published — is answered
  first, and a new one never waits behind a whole fan-out.
- Keep-alives are written by the same greenlet when a stream's own jittered period passes
  with nothing sent; the stream ends (its generator returns, gunicorn writes the last chunk)
  at its `follow` deadline, when the game is scored, or when its socket fails.

Only used when the request came through gunicorn's gevent worker on a plain socket
(`usable`); everywhere else (the development server, the test client, gthread) the stream is
the core's generator (service/core/streams.py `event_stream`), with the same messages.
"""

from __future__ import annotations

import logging
import time
from typing import Callable, Iterator, Optional

from .core.streams import StreamCursor, Wait, keepalive_interval
from .observability import BROADCAST_STREAMS

log = logging.getLogger(__name__)

MAX_PENDING = 1 << 20     # bytes a stream may fall behind before it is ended
SLICE = 16                # writes between two yields to the event loop during a fan-out
MAX_NAP = 30.0            # a game's greenlet looks at its streams at least this often


def usable(environ) -> bool:
    """Whether this request can be broadcast to: a GET through gunicorn's gevent worker on a
    plain socket (TLS, HEAD and every other server take the generator)."""
    sock = environ.get("gunicorn.socket")
    if sock is None or environ.get("wsgi.url_scheme") != "http" or environ.get("REQUEST_METHOD") != "GET":
        return False
    try:
        from gevent import monkey
        from gevent.socket import socket as gevent_socket
    except ImportError:
        return False
    return monkey.is_module_patched("socket") and type(sock) is gevent_socket


def _framer(environ) -> Callable[[bytes], bytes]:
    """How gunicorn frames this response's body: chunks for HTTP/1.1 and later (a streamed
    GET has no Content-Length), the bytes as they are for HTTP/1.0."""
    if environ.get("SERVER_PROTOCOL", "HTTP/1.0") in ("HTTP/1.0", "HTTP/0.9"):
        return lambda data: data
    return lambda data: b"%X\r\n%s\r\n" % (len(data), data)


class Parked:
    """One stream waiting in the broadcaster: its cursor, socket and what is left to send."""

    __slots__ = ("cursor", "sock", "frame", "period", "beat_at", "pending", "sending", "wake", "done",
                 "failed")

    def __init__(self, cursor: StreamCursor, sock, frame, period: float, wake):
        self.cursor, self.sock, self.frame, self.period, self.wake = cursor, sock, frame, period, wake
        self.beat_at = time.monotonic() + period
        self.pending = bytearray()
        self.sending = False     # its own greenlet is sending the pending bytes
        self.done = False        # the game is scored: the stream ends
        self.failed = False      # the socket failed, or the client fell too far behind

    def send(self, data: bytes) -> None:
        """Write without blocking; what the socket does not take waits for the stream's greenlet."""
        if self.failed:
            return
        data = self.frame(data)
        self.beat_at = time.monotonic() + self.period
        if not (self.sending or self.pending):
            try:
                sent = self.sock.send(data, 0, 0.0)
            except BlockingIOError:
                sent = 0
            except OSError:
                self.fail()
                return
            if sent == len(data):
                return
            data = data[sent:]
        self.pending += data
        if len(self.pending) > MAX_PENDING:
            self.fail()
        else:
            self.wake.set()

    def fail(self) -> None:
        self.failed = True
        self.pending.clear()
        self.wake.set()

    def finish(self) -> None:
        self.done = True
        self.wake.set()


class _Game:
    """A game's parked streams, the greenlet that serves them and the one that watches."""

    __slots__ = ("members", "bell", "nap_until")

    def __init__(self, bell):
        self.members: set[Parked] = set()
        self.bell = bell          # rung by an append (the watcher), a join or a leave
        self.nap_until = 0.0


class Broadcaster:
    """The process's parked streams, grouped by game. Per game, one greenlet serves the
    streams (fan-outs, keep-alives) and one watches the notifier and rings its bell; nothing
    is ever killed from outside (a greenlet killed inside the notifier could leave it
    half-way through a head read)."""

    def __init__(self, wait: Wait, keepalive: float, version_of: Callable[[str], int]):
        self._wait = wait
        self._keepalive = keepalive
        self._version_of = version_of   # what the notifier knows of a game's version, else its head
        self._games: dict[str, _Game] = {}

    def parked(self) -> int:
        return sum(len(game.members) for game in self._games.values())

    # --- one stream's side ----------------------------------------------------------------
    def serve(self, cursor: StreamCursor, follow: float, environ, watch=None) -> Iterator[str]:
        """The WSGI body of one stream: its backlog through gunicorn, then parked here.
        `watch(stop)`: called once parked with what ends the stream (a revoked credential's
        watch, service/accounts/revocation.py); it returns the unwatch."""
        from gevent.event import Event

        deadline = time.monotonic() + follow
        yield cursor.advance()   # "" still makes gunicorn send the headers, and nothing else
        if cursor.finished or time.monotonic() >= deadline:
            return
        parked = Parked(cursor, environ["gunicorn.socket"], _framer(environ),
                        keepalive_interval(self._keepalive), Event())
        self._join(parked)
        BROADCAST_STREAMS.inc()
        unwatch = watch(parked.finish) if watch is not None else None
        try:
            while not parked.failed:
                parked.wake.wait(max(0.0, deadline - time.monotonic()))
                parked.wake.clear()
                self._drain(parked)
                if parked.done or time.monotonic() >= deadline:
                    return
        finally:
            # From here on the connection is gunicorn's again (it may carry the client's next
            # request): nothing more is written to it from the broadcaster.
            parked.failed = True
            if unwatch is not None:
                unwatch()
            self._leave(parked)
            BROADCAST_STREAMS.dec()

    @staticmethod
    def _drain(parked: Parked) -> None:
        """Send what the broadcaster could not (this may block this greenlet, and only it)."""
        parked.sending = True
        try:
            while parked.pending and not parked.failed:
                data = bytes(parked.pending)
                parked.pending.clear()
                try:
                    parked.sock.sendall(data)
                except OSError:
                    parked.fail()
        finally:
            parked.sending = False

    def _join(self, parked: Parked) -> None:
        import gevent
        from gevent.event import Event

        game_id = parked.cursor.game_id
        game = self._games.get(game_id)
        if game is None:
            game = self._games[game_id] = _Game(Event())
            gevent.spawn(self._serve_game, game_id, game)
            gevent.spawn(self._watch_game, game_id, game, parked.cursor.last)
        game.members.add(parked)
        game.bell.set()   # it may be behind what the others were sent, or beat sooner

    def _leave(self, parked: Parked) -> None:
        game = self._games.get(parked.cursor.game_id)
        if game is not None and parked in game.members:
            game.members.discard(parked)
            if not game.members:
                game.bell.set()   # its greenlet ends

    # --- the games' side ------------------------------------------------------------------
    def _watch_game(self, game_id: str, game: _Game, after: int) -> None:
        """Ring the game's bell at each new version (one notifier waiter for all its streams)."""
        try:
            while self._games.get(game_id) is game and game.members:
                if self._wait(game_id, after, MAX_NAP):
                    after = max(after + 1, self._version_of(game_id))
                    game.bell.set()
        except Exception:
            log.exception("watching %s for its streams failed; its streams end", game_id)
            for parked in list(game.members):
                parked.finish()

    def _serve_game(self, game_id: str, game: _Game) -> None:
        import gevent

        members = game.members
        try:
            while True:
                now = time.monotonic()
                game.nap_until = min(min((p.beat_at for p in members), default=now), now + MAX_NAP)
                rang = game.bell.wait(max(0.0, game.nap_until - now))
                game.bell.clear()
                if not members:
                    return
                if rang:
                    gevent.idle()   # the requests in flight first (the action that published)
                    self._fan_out(members)
                self._beat(members)
        except Exception:
            log.exception("broadcasting %s failed; its streams end (clients resume with Last-Event-ID)", game_id)
            for parked in list(members):
                parked.finish()
        finally:
            if self._games.get(game_id) is game:
                del self._games[game_id]

    @staticmethod
    def _fan_out(members: set) -> None:
        import gevent

        live = [p for p in members if not p.failed]
        if not live:
            return
        until = min(live, key=lambda p: p.cursor.last).cursor.until()
        groups: dict[tuple, list[Parked]] = {}
        for parked in live:
            if parked.cursor.last < until:
                groups.setdefault(parked.cursor.batch_key(until), []).append(parked)
        writes = 0
        for group in groups.values():
            lead = group[0].cursor
            data = lead.advance(until).encode()
            for parked in group:
                cursor = parked.cursor
                if cursor is not lead:
                    cursor.session, cursor.last = lead.session, lead.last
                if data:
                    parked.send(data)
                    writes += 1
                    if writes % SLICE == 0:
                        gevent.idle()
                if lead.finished:
                    parked.finish()

    @staticmethod
    def _beat(members: set) -> None:
        now = time.monotonic()
        for parked in list(members):
            if parked.beat_at <= now and not parked.failed:
                parked.send(parked.cursor.keepalive().encode())
