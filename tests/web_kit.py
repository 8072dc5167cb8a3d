"""Browser kit for the web pages: the service on a free port (embedded store and worker) and
Debian's Chromium driven by playwright's Python package (never `playwright install`)."""

from __future__ import annotations

import time

import pytest

# The live server and the browser are the screenshots' too (docs/tools/screenshots.py).
from ops.live_server import CHROMIUM_ARGS, LiveServer, browser, chromium_path, wait_status  # noqa: F401


@pytest.fixture(scope="module")
def live_server():
    """The whole service on a free port for one test module (a browser test imports it as
    its `server` fixture)."""
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
    live = LiveServer().start()
    yield live
    live.stop()


@pytest.fixture(scope="module")
def cheap_live_server():
    """live_server with cheap Argon2id parameters (CHEAP_ARGON2): for the pages that sign in,
    where the pages, not the hashing, are under test."""
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
    live = LiveServer(CHEAP_ARGON2).start()
    yield live
    live.stop()


@pytest.fixture(scope="module")
def module_chromium(server):
    """One Chromium for a test module, after its `server` (a module imports it as `chromium`)."""
    with browser() as b:
        yield b


def play_to_end(page, timeout=150.0, pick=None) -> int:
    """Click the first legal control each time one is offered (a template at its minimum,
    as filled in) until the page says the game is over. Returns the number of moves made."""
    moves = 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = page.evaluate("document.body.dataset.status || ''")
        if status in ("ended", "scored"):
            return moves
        control = page.locator("#actions .controls > button.action, #actions .controls form.template button").first
        if control.count() and page.evaluate("!document.querySelector('#actions').hasAttribute('aria-busy')"):
            version = page.evaluate("document.body.dataset.version")
            try:
                control.click(timeout=2000)
                moves += 1
            except Exception:
                pass
            try:
                page.wait_for_function(f"document.body.dataset.version !== '{version}'", timeout=5000)
            except Exception:
                pass
        else:
            page.wait_for_timeout(60)
    raise AssertionError(f"the game did not end in {timeout} s ({moves} moves made)")


# cheap Argon2id parameters for the pages' tests: the pages, not the hashing, are under test
CHEAP_ARGON2 = {"ARGON2_TIME_COST": 1, "ARGON2_MEMORY_KIB": 1024}


def api(server, method, path, token=None, **kw):
    """A request straight to the live server's app (set-up beside the browser), with a fresh
    Idempotency-Key and, given one, the token."""
    import secrets

    headers = {"Idempotency-Key": "test-web-" + secrets.token_hex(10)}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return server.app.test_client().open(path, method=method, headers=headers, **kw)

