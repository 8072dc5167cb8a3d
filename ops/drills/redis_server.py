"""Start, kill and restart a private redis-server on a free port (drills, benchmarks and the
tests that run them; never the shared one)."""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from typing import Optional

# Under pytest-xdist every worker takes its ports from a block of its own, below the kernel's
# ephemeral range (32768 and up on Linux), so two workers never pick the same port and no
# outgoing connection is handed a port a test has just chosen for its server.
_PORT_BLOCK_START, _PORT_BLOCK_SIZE, _PORT_BLOCKS = 10_000, 1_500, 14
_handed_out: set[int] = set()


def _worker_block() -> Optional[range]:
    match = re.fullmatch(r"gw(\d+)", os.environ.get("PYTEST_XDIST_WORKER", ""))
    if not match:
        return None
    start = _PORT_BLOCK_START + (int(match.group(1)) % _PORT_BLOCKS) * _PORT_BLOCK_SIZE
    return range(start, start + _PORT_BLOCK_SIZE)


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port nothing listens on, never the same twice in one process."""
    block = _worker_block()
    if block is None:
        while True:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
            if port not in _handed_out:
                _handed_out.add(port)
                return port
    for port in random.SystemRandom().sample(block, len(block)):
        if port not in _handed_out and _bindable(port):
            _handed_out.add(port)
            return port
    raise RuntimeError(f"no free port left in {block}")


def redis_server_path() -> Optional[str]:
    return shutil.which("redis-server")


class RedisProcess:
    """A redis-server on a free loopback port, in its own directory.

    `durable=True` turns on AOF with appendfsync always (what the crash drills need).
    """

    def __init__(self, durable: bool = False, port: Optional[int] = None):
        self.port = port or free_port()
        self.dir = tempfile.mkdtemp(prefix="redis-test-")
        self.durable = durable
        self.proc: Optional[subprocess.Popen] = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "RedisProcess":
        args = [redis_server_path() or "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", self.dir, "--save", "", "--protected-mode", "no",
                "--maxmemory-policy", "noeviction"]
        if self.durable:
            args += ["--appendonly", "yes", "--appendfsync", "always"]
        else:
            args += ["--appendonly", "no"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def kill(self) -> None:
        """kill -9: no shutdown save, exactly a crash."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def restart(self) -> "RedisProcess":
        self.kill()
        return self.start()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
