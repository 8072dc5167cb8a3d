"""A TCP proxy between the service and Redis that loses what a network loses.

Every connection of the service's processes (the API's store and notifier clients, the
workers' queue and store clients) goes through it. On a pattern, by count of the client's
requests that contain `match` (by default `EVAL`: the append script, EVAL and EVALSHA):

- `drop_reply_every=N`: the Nth such request reaches Redis and runs, but its reply never
  comes back: the connection is cut instead (an acknowledged write whose acknowledgement was
  lost);
- `drop_request_every=M`: the Mth such request never reaches Redis: the connection is cut
  before it is forwarded;
- `freeze(seconds)`: nothing moves in either direction for that long (a frozen Redis).

Threads, one pair per connection; for drills only.
"""

from __future__ import annotations

import functools
import socket
import threading
import time
from typing import Optional


class FaultyProxy:
    def __init__(self, target_port: int, *, match: bytes = b"EVAL", drop_reply_every: int = 0,
                 drop_request_every: int = 0, host: str = "127.0.0.1"):
        self.target = (host, target_port)
        self.match = match
        self.drop_reply_every = drop_reply_every
        self.drop_request_every = drop_request_every
        self._listener = socket.create_server((host, 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._matched = 0
        self._frozen_until = 0.0
        self._closed = False
        self.replies_dropped = 0
        self.requests_dropped = 0
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True, name="proxy-accept").start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def freeze(self, seconds: float) -> None:
        self._frozen_until = time.monotonic() + seconds

    def close(self) -> None:
        self._closed = True
        try:
            self._listener.close()
        except OSError:
            pass

    # --- plumbing -------------------------------------------------------------------------
    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()   # Redis is down: the client sees a refused/cut connection
                continue
            self.connections += 1
            state = {"cut_after_request": False}
            requests = functools.partial(self._request_passes, state=state)
            replies = functools.partial(self._reply_passes, state=state)
            threading.Thread(target=self._pump, args=(client, upstream, client, upstream, requests), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, client, upstream, replies), daemon=True).start()

    def _wait_thaw(self) -> None:
        while time.monotonic() < self._frozen_until and not self._closed:
            time.sleep(0.01)

    @staticmethod
    def _cut(*sockets) -> None:
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                sock.close()
            except OSError:
                pass

    def _pump(self, source, sink, client, upstream, passes) -> None:
        """Copy source to sink until either side closes or `passes(data)` says to cut here."""
        try:
            while data := source.recv(65536):
                self._wait_thaw()
                if not passes(data):
                    break
                sink.sendall(data)
        except OSError:
            pass
        self._cut(client, upstream)

    def _request_passes(self, data: bytes, state: dict) -> bool:
        """False when this request is to be dropped; marks its reply to be lost when that one is."""
        if self.match not in data:
            return True
        with self._lock:
            self._matched += 1
            n = self._matched
        if self.drop_request_every and n % self.drop_request_every == 0:
            self.requests_dropped += 1
            return False
        if self.drop_reply_every and n % self.drop_reply_every == 0:
            state["cut_after_request"] = True
            self.replies_dropped += 1
        return True

    @staticmethod
    def _reply_passes(data: bytes, state: dict) -> bool:
        return not state["cut_after_request"]   # the write ran; its reply is lost


def start(target_port: int, **faults) -> FaultyProxy:
    return FaultyProxy(target_port, **faults)


def wait_listening(port: int, timeout: float = 5.0) -> Optional[bool]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False
