"""The whole service on a free loopback port (embedded fakeredis store, embedded bot worker)
and Debian's Chromium driven by playwright's Python package (never `playwright install`):
what the screenshots (docs/tools/screenshots.py) and the browser tests take pictures of and
click through."""

from __future__ import annotations

import os
import shutil
import threading
import time
from contextlib import contextmanager

from ops.drills.redis_server import free_port

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path():
    for path in (os.environ.get("CHROMIUM"),) + CHROMIUM_CANDIDATES:
        if path and os.path.exists(path):
            return path
    return shutil.which("chromium")


class LiveServer:
    """The whole app (embedded fakeredis store, embedded bot worker) on 127.0.0.1:port."""

    def __init__(self, config=None):
        from werkzeug.serving import make_server

        from service.app import create_app
        from service.observability import request_scope
        from workers.embedded import EmbeddedWorker

        settings = {"REDIS_URL": None, "RATE_LIMIT": None, "STREAM_KEEPALIVE": 2.0}
        settings.update(config or {})
        self.app = create_app(settings)
        self.worker = EmbeddedWorker(self.app.extensions["games"], self.app.extensions["backend"].rq_client,
                                     request_scope=request_scope)
        self.port = free_port()
        self.server = make_server("127.0.0.1", self.port, self.app, threaded=True)
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> "LiveServer":
        self.worker.start()
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.worker.stop()

    @property
    def service(self):
        return self.app.extensions["games"]


@contextmanager
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def wait_status(page, statuses, timeout=60.0):
    """Wait until the page's body says the game is in one of `statuses`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if page.evaluate("document.body.dataset.status || ''") in statuses:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"the page did not reach {statuses}: {page.evaluate('document.body.dataset.status')}")
