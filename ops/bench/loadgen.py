"""A small HTTP/1.1 load generator: asyncio, keep-alive connections, loopback only, bounded
in requests and in time. Each connection sends its own list of requests one after another
(a client waits for its answer before its next action) and records each latency.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field


@dataclass
class Request:
    method: str
    path: str
    headers: dict
    body: bytes = b""

    def encode(self, host: str) -> bytes:
        lines = [f"{self.method} {self.path} HTTP/1.1", f"Host: {host}",
                 f"Content-Length: {len(self.body)}"]
        lines += [f"{k}: {v}" for k, v in self.headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + self.body


@dataclass
class LoadResult:
    requests: int = 0
    errors: int = 0
    seconds: float = 0.0
    latencies: list = field(default_factory=list)   # seconds, successful requests only
    statuses: dict = field(default_factory=dict)

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


async def _read_response(reader) -> tuple[int, bool]:
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionError("connection closed")
    status = int(status_line.split()[1])
    length, close = 0, False
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "connection" and value.strip().lower() == "close":
            close = True
    if length:
        await reader.readexactly(length)
    return status, close


class Source:
    """Request lists shared by the connections. A list cut off by the deadline is given back
    with its position kept, so the next run goes on where this one stopped (a game's actions
    must be sent in order, each once)."""

    def __init__(self, lists, cycle: bool = False):
        self._lists = list(lists)
        self._cycle = cycle
        self._next = 0
        self._returned = []

    def take(self):
        if self._returned:
            return self._returned.pop()
        if self._next >= len(self._lists):
            if not self._cycle or not self._lists:
                return None
            self._next = 0
        self._next += 1
        return iter(self._lists[self._next - 1])

    def give_back(self, requests) -> None:
        self._returned.append(requests)

    def left(self) -> int:
        return len(self._lists) - self._next + len(self._returned)


async def _connection(host: str, port: int, source: Source, deadline: float, result: LoadResult) -> None:
    """Send request lists taken from `source` in turn (a list is abandoned at its first error)."""
    reader = writer = None
    try:
        while time.perf_counter() < deadline:
            requests = source.take()
            if requests is None:
                return
            for request in requests:
                if time.perf_counter() >= deadline:
                    source.give_back(itertools.chain([request], requests))
                    return
                if writer is None:
                    reader, writer = await asyncio.open_connection(host, port)
                start = time.perf_counter()
                writer.write(request.encode(f"{host}:{port}"))
                status, close = await _read_response(reader)
                elapsed = time.perf_counter() - start
                result.requests += 1
                result.statuses[status] = result.statuses.get(status, 0) + 1
                if close:
                    writer.close()
                    reader = writer = None
                if status != 200:
                    result.errors += 1
                    break
                result.latencies.append(elapsed)
    finally:
        if writer:
            writer.close()


def run_load(host: str, port: int, source: Source, connections: int, seconds: float) -> LoadResult:
    """`connections` keep-alive connections send requests from `source` until it runs dry or
    `seconds` have passed."""
    assert host in ("127.0.0.1", "localhost", "::1"), "load goes to loopback only"

    async def main() -> LoadResult:
        result = LoadResult()
        start = time.perf_counter()
        deadline = start + seconds
        await asyncio.gather(*(_connection(host, port, source, deadline, result)
                               for _ in range(connections)))
        result.seconds = time.perf_counter() - start
        return result

    return asyncio.run(main())
