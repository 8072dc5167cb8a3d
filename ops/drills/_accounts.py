"""What the account drills share: the API under gunicorn (the shipped configuration) on a
private redis-server, a small blocking HTTP client, accounts made over HTTP or straight
through the core, and a stream reader that notes when its body ends."""

from __future__ import annotations

import http.client
import json
import signal
import threading
import time
from typing import Optional

from ops.bench.http import Gunicorn

PASSWORD = "a drill's own password"
CHEAP_ARGON2 = {"SPECULATION_ARGON2_TIME_COST": "1", "SPECULATION_ARGON2_MEMORY_KIB": "1024"}
QUIET = {"SPECULATION_LOG_LEVEL": "WARNING", "GUNICORN_WORKER_CLASS": "gevent"}


class Api:
    """gunicorn with ops/gunicorn.conf.py (gevent) on `redis_url`; `processes` API processes."""

    def __init__(self, redis_url: str, processes: int = 1, **settings):
        env = {"REDIS_URL": redis_url, "RQ_REDIS_URL": redis_url, "GUNICORN_WORKERS": str(processes), **QUIET,
               **{k: str(v) for k, v in settings.items()}}
        self.server = Gunicorn("service.app:create_app()", env)
        self.port = self.server.port

    def call(self, method: str, path: str, token: Optional[str] = None, body=None,
             headers: Optional[dict] = None, timeout: float = 30) -> "Answer":
        return call(self.port, method, path, token, body, headers, timeout)

    def cpu_seconds(self) -> float:
        return self.server.cpu_seconds()

    def stop(self) -> None:
        if self.server.proc.poll() is None:
            self.server.proc.send_signal(signal.SIGQUIT)   # a quick shutdown: open streams need no grace
        self.server.stop()


class Answer:
    def __init__(self, status: int, body, headers: dict, seconds: float):
        self.status, self.body, self.headers, self.seconds = status, body, headers, seconds

    @property
    def code(self) -> Optional[str]:
        return (self.body or {}).get("error", {}).get("code") if isinstance(self.body, dict) else None

    def __repr__(self) -> str:
        return f"Answer({self.status}, {self.code or ''})"


def call(port: int, method: str, path: str, token: Optional[str] = None, body=None,
         headers: Optional[dict] = None, timeout: float = 30) -> Answer:
    """One request on a fresh connection."""
    sent = dict(headers or {})
    if token:
        sent["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        sent["Content-Type"] = "application/json"
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        raw = response.read()
        seconds = time.perf_counter() - started
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw
        return Answer(response.status, parsed, {k.lower(): v for k, v in response.getheaders()}, seconds)
    finally:
        conn.close()


def sign_up(api: Api, username: str, password: str = PASSWORD, headers: Optional[dict] = None) -> Answer:
    return api.call("POST", "/v1/accounts", body={"username": username, "password": password}, headers=headers)


def sign_in(api: Api, username: str, password: str = PASSWORD, device: Optional[str] = None,
            headers: Optional[dict] = None) -> Answer:
    body = {"username": username, "password": password}
    if device:
        body["device"] = device
    return api.call("POST", "/v1/sessions", body=body, headers=headers)


def new_token(api: Api, credential: str, scopes=("play", "read"), label: str = "drill") -> tuple[str, str]:
    """A personal token made with `credential` (scope account): (token, its id)."""
    made = api.call("POST", "/v1/account/tokens", credential, {"label": label, "scopes": list(scopes)})
    if made.status != 201:
        raise RuntimeError(f"token: {made.status} {made.body}")
    return made.body["token"], made.body["id"]


def core_on(redis_url: str, **config):
    """The core service.bootstrap builds, on the same Redis (accounts made straight through it)."""
    from service import bootstrap

    settings = bootstrap.settings({"REDIS_URL": redis_url, "RQ_REDIS_URL": redis_url, **config})
    return bootstrap.build_core(settings, bootstrap.build_backend(settings))


class StreamEnd:
    """A stream (`GET path`, NDJSON) read in a thread of its own, noting when its body ended."""

    def __init__(self, port: int, path: str, token: str, accept: str = "application/x-ndjson"):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.conn.request("GET", path, headers={"Authorization": f"Bearer {token}", "Accept": accept})
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.opened_at = time.perf_counter()
        self.ended_at: Optional[float] = None
        self.received = b""
        self.error: Optional[str] = None
        self._thread = threading.Thread(target=self._read, daemon=True)
        if self.status == 200:
            self._thread.start()
        else:
            self.received = self.response.read()
            self.ended_at = self.opened_at

    def _read(self) -> None:
        try:
            while True:
                chunk = self.response.read1(65536)
                if not chunk:
                    break
                self.received += chunk
        except (OSError, ValueError, AttributeError, http.client.HTTPException) as exc:
            self.error = repr(exc)   # the drill closed it (AttributeError: http.client's fp gone)
        self.ended_at = time.perf_counter()

    def wait(self, seconds: float) -> bool:
        if self.ended_at is None:
            self._thread.join(seconds)
        return self.ended_at is not None

    def close(self) -> None:
        try:
            self.conn.sock and self.conn.sock.close()
        except OSError:
            pass
        self.conn.close()
