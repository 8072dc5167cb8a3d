"""/docs in a real headless browser (Debian's Chromium driven by playwright, as
tests/test_web_browser.py does): the page renders every operation of the OpenAPI document with
no request leaving the service (its scripts and styles are served by the service itself)."""

from urllib.parse import urlparse

import pytest

import web_kit

pytestmark = pytest.mark.skipif(web_kit.chromium_path() is None,
                                reason="chromium is not installed (apt-get install chromium): browser tests skipped")


server = web_kit.live_server   # the whole service on a free port, for this module


def test_docs_render_every_operation_offline(server):
    spec = server.app.test_client().get("/openapi.json").json
    operations = [(m.upper(), path, op) for path, ops in spec["paths"].items() for m, op in ops.items()
                  if m in ("get", "post", "put", "delete")]
    with web_kit.browser() as chromium:
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        outside, errors = [], []

        def only_the_service(route):
            if urlparse(route.request.url).netloc == f"127.0.0.1:{server.port}":
                route.continue_()
            else:  # the firewall: anything else fails, as it would behind one
                outside.append(route.request.url)
                route.abort()

        context.route("**/*", only_the_service)
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/docs")
        page.wait_for_selector(".opblock", timeout=30_000)
        shown = page.eval_on_selector_all(
            ".opblock", "els => els.map(e => [e.querySelector('.opblock-summary-method').textContent,"
            " e.querySelector('.opblock-summary-path').getAttribute('data-path')])")
        assert sorted(map(tuple, shown)) == sorted((m, p) for m, p, _ in operations)
        # one operation opened: its error statuses and the typed action union are on the page
        page.click(".opblock-post:has([data-path='/v1/games/{game_id}/actions']) .opblock-summary")
        page.wait_for_selector(".opblock.is-open .responses-table")
        statuses = page.eval_on_selector_all(".opblock.is-open .responses-table .response-col_status",
                                             "els => els.map(e => e.textContent.trim())")
        for status in ("200", "400", "401", "403", "404", "409", "413", "422", "429", "503"):
            assert any(s.startswith(status) for s in statuses), (status, statuses)
        assert page.locator(".models, section.models").count() >= 1
        assert page.locator("text=Action").count() > 0
        assert page.title() == spec["info"]["title"]
        context.close()
    assert outside == [], f"/docs reached beyond the service: {outside}"
    assert errors == []
