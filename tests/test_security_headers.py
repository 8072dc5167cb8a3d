"""The browser-facing headers (service/security.py): a Content-Security-Policy with
frame-ancestors, base-uri and form-action on every answer, nosniff, X-Frame-Options and
Referrer-Policy; /docs and the web pages under their policies, checked in a real Chromium with
the CSP enforced (no violation reported, Swagger UI drawn, the lobby working)."""

from __future__ import annotations

import re
import time

import pytest

import web_kit
from ops.drills import _kit
from service import docs_ui, security

PAGES = ["/web/", "/web/games/0123456789abcdef", "/web/games/0123456789abcdef/replay", "/web/sign-in", "/web/sign-up",
         "/web/my-games", "/web/account", "/web/leaderboard", "/web/players/x", "/web/profile", "/docs"]
OTHERS = ["/v1/games", "/v1/game-types", "/openapi.json", "/docs/start.js", "/docs/assets/swagger-ui.css",
          "/web/static/js/api.js", "/no/such/page", "/healthz", "/swagger"]


def directives(policy: str) -> dict[str, str]:
    return {part.strip().split(" ", 1)[0]: part.strip().partition(" ")[2]
            for part in policy.split(";") if part.strip()}


@pytest.fixture(scope="module")
def http():
    return _kit.make_app(_kit.fake_client()).test_client()


@pytest.mark.parametrize("path", PAGES + OTHERS)
def test_every_answer_carries_the_headers(http, path):
    response = http.get(path)
    policy = directives(response.headers["Content-Security-Policy"])
    assert policy["frame-ancestors"] == "'none'" and policy["base-uri"] == "'none'"
    assert policy["form-action"] == "'none'" and "default-src" in policy
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "no-referrer"


@pytest.mark.parametrize("path", PAGES)
def test_pages_run_only_their_own_scripts(http, path):
    response = http.get(path)
    assert response.status_code == 200 and response.mimetype == "text/html"
    policy = directives(response.headers["Content-Security-Policy"])
    assert policy["script-src"] == "'self'" and "'unsafe-inline'" not in response.headers["Content-Security-Policy"]
    assert "'unsafe-eval'" not in response.headers["Content-Security-Policy"]
    body = response.get_data(as_text=True)
    assert not re.search(r"<script(?![^>]*\bsrc=)", body), "an inline script"
    assert not re.search(r"\son[a-z]+\s*=", body) and "style=" not in body, "an inline handler or style"


def test_json_and_errors_allow_nothing(http):
    for path in ("/v1/games", "/no/such/page"):
        assert http.get(path).headers["Content-Security-Policy"] == security.POLICY


def test_the_docs_page_starts_swagger_ui_from_a_file(http):
    page = http.get("/docs").get_data(as_text=True)
    assert f'<script src="{docs_ui.START_URL}"></script>' in page
    start = http.get(docs_ui.START_URL)
    assert start.mimetype == "text/javascript" and '"url": "/openapi.json"' in start.get_data(as_text=True)


def test_a_route_policy_keeps_its_own_directives():
    assert security.with_required("default-src 'self'; frame-ancestors 'self'") == (
        "default-src 'self'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'")
    assert security.with_required(security.POLICY) == security.POLICY


# --- in a browser, the CSP enforced ---------------------------------------------------------
browser_only = pytest.mark.skipif(web_kit.chromium_path() is None,
                                  reason="chromium is not installed (apt-get install chromium): browser tests skipped")

WATCH = """() => { window.__violations = [];
  document.addEventListener('securitypolicyviolation',
    e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI)); }"""


def until(page, expression: str, timeout: float = 15.0) -> None:
    """Poll `expression` from here: playwright's wait_for_function evaluates a string inside the
    page, which the policy forbids (no 'unsafe-eval'); page.evaluate goes through the debugger."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"not true within {timeout} s: {expression}"
        page.wait_for_timeout(50)


server = web_kit.live_server   # the whole service on a free port, for this module


@browser_only
def test_docs_and_lobby_work_under_their_policy(server):
    with web_kit.browser() as chromium:
        context = chromium.new_context(viewport={"width": 1280, "height": 900})   # CSP enforced
        context.add_init_script(WATCH.join(["(", ")()"]))
        page = context.new_page()
        errors, console = [], []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: console.append(m.text) if "Content Security Policy" in m.text else None)

        page.goto(server.url + "/docs")
        page.wait_for_selector(".opblock", timeout=30_000)
        page.click(".opblock-post:has([data-path='/v1/games']) .opblock-summary")
        page.wait_for_selector(".opblock.is-open .responses-table")
        assert page.evaluate("window.__violations") == [] and console == [] and errors == []

        page.goto(server.url + "/web/")
        page.wait_for_selector("#create")
        until(page, "document.querySelectorAll('#new-type option').length > 0")
        assert page.evaluate("window.__violations") == [] and console == [] and errors == []
        # a game made through the lobby's form, its table drawn and a few moves played through
        # the template forms (form-action 'none': the pages submit with fetch), then its replay
        page.select_option("#new-type", "big-shot")
        page.fill("#your-name", "alice")
        page.click("#create-button")
        page.wait_for_url(re.compile(r".*/web/games/\w+\?seat=0"))
        web_kit.wait_status(page, ["active", "ended", "scored"])
        for _ in range(3):
            control = page.locator("#actions .controls > button.action, #actions .controls form.template button").first
            if not control.count():
                break
            version = page.evaluate("document.body.dataset.version")
            control.click()
            until(page, f"document.body.dataset.version !== '{version}'")
        assert page.evaluate("window.__violations") == [] and console == [] and errors == []
        page.goto(page.url.split("?")[0] + "/replay")
        until(page, "document.body.dataset.at !== undefined")
        assert page.evaluate("window.__violations") == [] and console == [] and errors == []
        # the watch sees what the policy blocks: an inline script is reported, and does not run
        page.evaluate("() => { const s = document.createElement('script'); s.textContent = 'window.__ran = 1';"
                      " document.body.appendChild(s); }")
        until(page, "window.__violations.length > 0")
        assert page.evaluate("window.__ran") is None
        context.close()
