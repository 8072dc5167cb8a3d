"""Append notifications: one subscription per process wakes every local waiter.

The append script publishes the game's new version on the game's channel
`game:{g:ID}:appended` (the game's hash tag: the channel lives in the game's Redis Cluster
slot) right after a successful append: SPUBLISH (sharded pub/sub, Redis >= 7) where the server
has it, else PUBLISH. Which one is asked once (`sharded_pubsub`).

`RedisNotifier` holds ONE pub/sub connection per process. A game's channel is subscribed when
its first local waiter arrives and unsubscribed some seconds after its last one left (a
long-poll comes straight back: `LINGER` keeps its subscription, and what it knows, warm). A
background listener (a thread; under gevent's monkey-patching a greenlet) reads the messages
and wakes the game's waiters. So an idle waiter costs no Redis command at all:

- `wait(game, after, timeout)` returns True as soon as the game's version passes `after`,
  False when the timeout elapses; it never polls.
- The race between a waiter's arrival and an append is closed by one head read per
  (re)subscription of a game: when Redis confirms a subscription, one waiter reads the head
  and what it learns serves every later waiter of that game (a message only ever raises it).
- A dropped connection is reconnected by the listener (with backoff); redis-py re-subscribes
  every channel, and each confirmation wakes the game's waiters to re-read the head, so an
  append published while the connection was down is not missed.

On a Redis Cluster the channel lives on the primary of the game's slot (sharded pub/sub:
the append script's SPUBLISH reaches the subscribers of that shard only). The notifier then
holds one pub/sub connection per primary that serves a subscribed game, each read by a
listener of its own (`_ClusterSubscriptions`); when a primary is lost (a failover), its
games' channels are unconfirmed, the topology is read again, and they are subscribed on the
slot's new primary, whose confirmations have the heads read again as above. So the parked
streams and long-polls of any API process wake on an append made by any other process.

`LocalNotifier` is the in-process twin for `MemoryEventStore` (the store tells it directly).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections import OrderedDict
from typing import Callable, Optional

from .keys import stream_of_prefix, stream_prefix

log = logging.getLogger(__name__)

LINGER = 10.0          # seconds a game's subscription outlives its last local waiter


def channel(game_id: str) -> str:
    return f"{stream_prefix(game_id)}:appended"


def game_of(channel_name) -> str:
    name = channel_name.decode() if isinstance(channel_name, bytes) else channel_name
    return stream_of_prefix(name[:-len(":appended")])


def sharded_pubsub(client) -> bool:
    """Whether the server has sharded pub/sub (SPUBLISH/SSUBSCRIBE, Redis >= 7): one probe,
    a publish to a channel nobody listens on. Callers keep the answer."""
    import redis

    try:
        client.execute_command("SPUBLISH", "notify:{probe}", "")
        return True
    except redis.ResponseError:
        return False


def _after_requests() -> None:
    """Under gevent, let every greenlet that is ready run before a fan-out starts: the request
    whose append published the message (and any other request in flight) finishes first,
    the streams follow a few hundred microseconds later. A writer is never made to wait for
    its own readers. Without gevent (threads), nothing to do."""
    try:
        from gevent import monkey
    except ImportError:
        return
    if monkey.is_module_patched("threading"):
        import gevent

        gevent.idle()


class _Game:
    """What a process knows about one game it has waiters for."""

    __slots__ = ("waiters", "known", "confirmed", "gen", "checked", "checking", "event")

    def __init__(self) -> None:
        self.waiters = 0
        self.known = 0            # a lower bound of the game's version (head reads, messages)
        self.confirmed = False    # Redis confirmed the subscription (and it was not dropped since)
        self.gen = 0              # bumped at each confirmation: the head must be read again
        self.checked = -1         # the gen whose head read is done
        self.checking = False
        self.event = threading.Event()


class Notifier:
    """What waiting needs from a store: wait for a game's version to pass a number."""

    def known(self, game_id: str) -> int:
        """A lower bound of the game's version learnt from its notifications (0: nothing
        known), so the streams one append wakes need not each read the head."""
        with self._lock:
            game = self._games.get(game_id)
            return game.known if game is not None else 0

    def wait(self, game_id: str, after_version: int, timeout: float) -> bool:
        raise NotImplementedError

    def close(self) -> None:
        pass

    # the bookkeeping both notifiers share ------------------------------------------------
    def _setup(self) -> None:
        self._lock = threading.Lock()
        self._games: dict[str, _Game] = {}

    def _wake(self, game: _Game) -> None:
        """Wake every waiter of `game` (call with the lock held)."""
        old, game.event = game.event, threading.Event()
        old.set()

    def waiting(self) -> int:
        """Local waiters now (all games)."""
        with self._lock:
            return sum(g.waiters for g in self._games.values())

    def subscribed_games(self) -> int:
        with self._lock:
            return len(self._games)


class LocalNotifier(Notifier):
    """The in-process twin: the store calls `published` after each append it commits."""

    def __init__(self, head: Callable[[str], tuple[int, str]]):
        self._setup()
        self._head = head

    def published(self, game_id: str, version: int) -> None:
        with self._lock:
            game = self._games.get(game_id)
            if game is not None and version > game.known:
                game.known = version
                self._wake(game)

    def wait(self, game_id: str, after_version: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._lock:
            game = self._games.setdefault(game_id, _Game())
            game.waiters += 1
        try:
            version = self._head(game_id)[0]
            with self._lock:
                game.known = max(game.known, version)
            while True:
                with self._lock:
                    if game.known > after_version:
                        return True
                    event = game.event
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                event.wait(remaining)
        finally:
            with self._lock:
                game.waiters -= 1
                if game.waiters == 0 and self._games.get(game_id) is game:
                    del self._games[game_id]


class RedisNotifier(Notifier):
    """One pub/sub connection and one listener per process, for every local waiter.

    `client` is the store's Redis client (or fakeredis: the same code runs on both); `head`
    reads a game's (version, head). Nothing is started before the first wait (so a process
    that forks after building its app, or never waits, holds no subscription)."""

    def __init__(self, client, head: Callable[[str], tuple[int, str]], *, linger: float = LINGER,
                 sharded: Optional[bool] = None):
        self._setup()
        self._client = client
        self._head = head
        self._linger = linger
        self._sharded = sharded
        self._pubsub = None
        self._listener: Optional[threading.Thread] = None
        self._pid = None
        self._idle: OrderedDict[str, float] = OrderedDict()   # games with no waiter, since when
        self._closed = False
        self.reconnects = 0

    # --- subscriptions --------------------------------------------------------------------
    def _start(self) -> None:
        """(lock held) the pub/sub connection and the listener, once per process."""
        if self._pubsub is not None and self._pid == os.getpid():
            return
        if self._sharded is None:
            self._sharded = sharded_pubsub(self._client)
        self._pid = os.getpid()
        self._games.clear()  # a forked child inherits nothing it could use
        self._idle.clear()
        if _is_cluster(self._client):
            self._pubsub = _ClusterSubscriptions(self, self._client, self._sharded)
            return
        self._pubsub = self._client.pubsub()
        self._listener = threading.Thread(target=self._listen, name="append-notifier", daemon=True)
        self._listener.start()

    def _subscribe(self, game_id: str) -> None:
        name = channel(game_id)
        if isinstance(self._pubsub, _ClusterSubscriptions):
            self._pubsub.subscribe(name)
            return
        try:
            if self._sharded:
                self._pubsub.ssubscribe(name)
            else:
                self._pubsub.subscribe(name)
        except Exception as err:
            # Redis is down: the listener's reconnect subscribes every channel registered here.
            log.warning("subscribing %s failed (%s); the listener will retry", name, err)
            (self._pubsub.shard_channels if self._sharded else self._pubsub.channels)[name.encode()] = None

    def _unsubscribe(self, game_id: str) -> None:
        name = channel(game_id)
        if isinstance(self._pubsub, _ClusterSubscriptions):
            self._pubsub.unsubscribe(name)
            return
        try:
            if self._sharded:
                self._pubsub.sunsubscribe(name)
            else:
                self._pubsub.unsubscribe(name)
        except Exception:
            (self._pubsub.shard_channels if self._sharded else self._pubsub.channels).pop(name.encode(), None)

    def _sweep(self, now: float) -> None:
        """(lock held) unsubscribe games whose last waiter left more than `linger` ago: the
        idle games in the order they became idle, so a sweep costs O(1) when nothing expires
        (it runs at every wait)."""
        while self._idle:
            game_id, since = next(iter(self._idle.items()))
            if now - since < self._linger:
                return
            del self._idle[game_id]
            game = self._games.get(game_id)
            if game is not None and game.waiters == 0:
                del self._games[game_id]
                self._unsubscribe(game_id)

    def _enter(self, game_id: str) -> _Game:
        with self._lock:
            if self._closed:
                raise RuntimeError("notifier closed")
            self._start()
            self._sweep(time.monotonic())
            game = self._games.get(game_id)
            if game is None:
                game = self._games[game_id] = _Game()
                self._subscribe(game_id)
            elif game.waiters == 0:
                self._idle.pop(game_id, None)
            game.waiters += 1
            return game

    def _leave(self, game_id: str, game: _Game) -> None:
        with self._lock:
            game.waiters -= 1
            now = time.monotonic()
            if game.waiters == 0 and self._games.get(game_id) is game:
                if self._linger <= 0:
                    del self._games[game_id]
                    self._unsubscribe(game_id)
                else:
                    self._idle[game_id] = now
            self._sweep(now)

    # --- waiting --------------------------------------------------------------------------
    def wait(self, game_id: str, after_version: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        game = self._enter(game_id)
        try:
            while True:
                with self._lock:
                    if game.known > after_version:
                        return True
                    check = game.confirmed and game.checked != game.gen and not game.checking
                    if check:
                        game.checking, gen = True, game.gen
                    event = game.event
                if check:
                    self._check_head(game_id, game, gen)
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                event.wait(remaining)
        finally:
            self._leave(game_id, game)

    def _check_head(self, game_id: str, game: _Game, gen: int) -> None:
        """The one head read that closes the race of a (re)subscription."""
        try:
            version = self._head(game_id)[0]
        except Exception as err:
            log.warning("reading the head of %s failed: %s", game_id, err)
            version = None
        with self._lock:
            game.checking = False
            if version is not None:
                game.known = max(game.known, version)
                if game.gen == gen and game.confirmed:
                    game.checked = gen
            self._wake(game)

    # --- the listener ---------------------------------------------------------------------
    def _listen(self) -> None:
        import redis

        pubsub = self._pubsub
        backoff = 0.05
        while not self._closed:
            try:
                # a long timeout, not None: redis-py's get_message cannot wait "forever" for a
                # first subscription; the loop wakes every few minutes, no command sent
                message = pubsub.get_message(timeout=300)
            except redis.TimeoutError:
                continue   # a client with a socket timeout: nothing came, nothing lost
            except Exception as err:
                if self._closed or pubsub is not self._pubsub:
                    return
                self._dropped(err, quiet=backoff > 0.05)
                time.sleep(backoff)
                backoff = min(2.0, backoff * 2)
                continue
            backoff = 0.05
            if message:
                if message["type"] in ("smessage", "message"):
                    _after_requests()
                self._handle(message)

    def _unconfirm(self, names) -> None:
        """The connection that held these channels failed: each is unconfirmed until Redis
        confirms its subscription again (its head is then read once more)."""
        with self._lock:
            for name in names:
                game = self._games.get(game_of(name))
                if game is not None:
                    game.confirmed = False

    def _dropped(self, err: Exception, quiet: bool = False) -> None:
        """The connection failed: nothing is known to be subscribed until Redis confirms it
        again (redis-py re-subscribes every channel when the listener reconnects)."""
        if not quiet:   # once per outage, not once per retry
            log.warning("append notifications: connection lost (%s); reconnecting", err)
            self.reconnects += 1
        with self._lock:
            for game in self._games.values():
                game.confirmed = False

    def _handle(self, message: dict) -> None:
        kind = message["type"]
        if kind in ("smessage", "message"):
            try:
                version = int(message["data"])
            except (TypeError, ValueError):
                return
            with self._lock:
                game = self._games.get(game_of(message["channel"]))
                if game is not None and version > game.known:
                    game.known = version
                    self._wake(game)
        elif kind in ("ssubscribe", "subscribe"):
            with self._lock:
                game = self._games.get(game_of(message["channel"]))
                if game is not None:
                    # (re)subscribed: the head must be read once more, by one of its waiters
                    game.confirmed = True
                    game.gen += 1
                    self._wake(game)
        elif kind in ("sunsubscribe", "unsubscribe"):
            with self._lock:
                game = self._games.get(game_of(message["channel"]))
                if game is not None:
                    # an unsubscribe sent before this game's latest subscribe: the server is
                    # unsubscribed until that subscribe's confirmation arrives
                    game.confirmed = False

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pubsub, self._pubsub = self._pubsub, None
            for game in self._games.values():
                self._wake(game)
        if isinstance(pubsub, _ClusterSubscriptions):
            pubsub.close()
            return
        if pubsub is not None:
            try:
                pubsub.subscribed_event.set()   # a listener waiting for a first subscription
                # A listener blocked reading the socket is not woken by close(): shut the socket
                # down first, so its read ends at once and it sees `_closed` (close() alone left
                # it to the 2 s join below, on every shutdown).
                sock = getattr(getattr(pubsub, "connection", None), "_sock", None)
                if sock is not None:
                    sock.shutdown(socket.SHUT_RDWR)
            except Exception:
                pass
            try:
                pubsub.close()
            except Exception:
                pass
        if self._listener is not None and self._listener is not threading.current_thread():
            self._listener.join(2)


def _is_cluster(client) -> bool:
    from redis.cluster import RedisCluster

    return isinstance(client, RedisCluster)


def _shut(pubsub) -> None:
    """Close a pub/sub whose listener may be blocked reading its socket (see `close`)."""
    try:
        pubsub.subscribed_event.set()
        sock = getattr(getattr(pubsub, "connection", None), "_sock", None)
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except Exception:
        pass
    try:
        pubsub.close()
    except Exception:
        pass


class _ClusterSubscriptions:
    """A notifier's subscriptions on a Redis Cluster: a plain pub/sub connection to each primary
    that serves a subscribed channel's slot, each with a listener thread (redis-py's cluster
    pub/sub reads its shards by polling them in turn; this blocks on each socket, so an idle
    process sends and reads nothing). A listener whose connection fails unconfirms its
    channels, reads the topology again and moves those whose slot has a new primary there;
    the rest are subscribed again by redis-py when their node answers again."""

    def __init__(self, notifier: "RedisNotifier", client, sharded: bool):
        self.notifier, self.client, self.sharded = notifier, client, sharded
        self.lock = threading.Lock()
        self.pubsubs: dict[str, object] = {}     # node name -> its pub/sub
        self.where: dict[str, str] = {}          # channel -> node name
        self.threads: list[threading.Thread] = []
        self.closed = False

    def _pubsub_of(self, node):
        """(lock held) the pub/sub connection of `node`, its listener started with it."""
        pubsub = self.pubsubs.get(node.name)
        if pubsub is None:
            pubsub = self.pubsubs[node.name] = self.client.get_redis_connection(node).pubsub()
            thread = threading.Thread(target=self._listen, args=(node.name, pubsub),
                                      name=f"append-notifier-{node.name}", daemon=True)
            self.threads.append(thread)
            thread.start()
        return pubsub

    def _send(self, pubsub, command: str, name: str) -> None:
        """SSUBSCRIBE/SUBSCRIBE or their undoing; when it cannot be sent, the channel is left
        registered (or not) for redis-py to subscribe again on the reconnect."""
        registered = pubsub.shard_channels if self.sharded else pubsub.channels
        try:
            getattr(pubsub, ("s" if self.sharded else "") + command)(name)
        except Exception as err:
            log.warning("%s %s failed (%s); the listener will retry", command, name, err)
            if command == "subscribe":
                registered[name.encode()] = None
            else:
                registered.pop(name.encode(), None)

    def subscribe(self, name: str) -> None:
        with self.lock:
            if self.closed:
                return
            node = self.client.get_node_from_key(name)
            self.where[name] = node.name
            pubsub = self._pubsub_of(node)
        self._send(pubsub, "subscribe", name)

    def unsubscribe(self, name: str) -> None:
        with self.lock:
            pubsub = self.pubsubs.get(self.where.pop(name, ""))
        if pubsub is not None:
            self._send(pubsub, "unsubscribe", name)

    def _listen(self, node_name: str, pubsub) -> None:
        import redis

        backoff = 0.05
        while not self.closed:
            try:
                message = pubsub.get_message(timeout=300)
            except redis.TimeoutError:
                continue
            except Exception as err:
                if self.closed:
                    return
                if backoff == 0.05:
                    log.warning("append notifications: connection to %s lost (%s)", node_name, err)
                    self.notifier.reconnects += 1
                with self.lock:
                    names = [c for c, n in self.where.items() if n == node_name]
                self.notifier._unconfirm(names)
                time.sleep(backoff)
                backoff = min(2.0, backoff * 2)
                if self._regroup(node_name, pubsub):
                    return
                continue
            backoff = 0.05
            if message:
                if message["type"] in ("smessage", "message"):
                    _after_requests()
                self.notifier._handle(message)

    def _regroup(self, node_name: str, pubsub) -> bool:
        """Move the lost node's channels to their slots' primaries now; True when none is left
        on it (its listener ends, its pub/sub is closed)."""
        try:
            self.client.nodes_manager.initialize()
        except Exception as err:   # the cluster itself is unreachable: try again later
            log.warning("append notifications: the cluster's topology cannot be read (%s)", err)
            return False
        moves = []
        with self.lock:
            if self.closed:
                return True
            for name, where in list(self.where.items()):
                if where != node_name:
                    continue
                node = self.client.get_node_from_key(name)
                if node.name != node_name:
                    self.where[name] = node.name
                    (pubsub.shard_channels if self.sharded else pubsub.channels).pop(name.encode(), None)
                    moves.append((self._pubsub_of(node), name))
            left = any(n == node_name for n in self.where.values())
            if not left:
                self.pubsubs.pop(node_name, None)
        for target, name in moves:
            self._send(target, "subscribe", name)
        if not left:
            _shut(pubsub)
        return not left

    def close(self) -> None:
        with self.lock:
            self.closed = True
            pubsubs, self.pubsubs = list(self.pubsubs.values()), {}
        for pubsub in pubsubs:
            _shut(pubsub)
        for thread in self.threads:
            if thread is not threading.current_thread():
                thread.join(2)
