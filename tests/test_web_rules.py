"""The rules for players, in a real browser (Chromium through playwright) at desktop and phone
sizes: a page per game at /web/rules/<type> (and an index), served under the pages' CSP,
reached from the lobby, from a table's header and from the replay's; every game option of the
lobby's new-game form carries its words as a tooltip and as its accessible description; an
unknown game has no rules page. Screenshots go to a pytest tmp folder."""

import time

import pytest

import web_kit
from projections.registry import game_types, get_game

pytestmark = pytest.mark.skipif(web_kit.chromium_path() is None,
                                reason="chromium is not installed (apt-get install chromium): browser tests skipped")

server = web_kit.live_server
chromium = web_kit.module_chromium
TITLES = {"speculation": "Speculation", "spekulation": "Spekulation", "speculate": "Speculate", "big-shot": "Big Shot"}


def _page(chromium, width, height):
    context = chromium.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    return page


def test_each_game_has_a_rules_page_served_as_the_other_pages_are(server):
    client = server.app.test_client()
    assert set(TITLES) == {t.name for t in game_types()}, "a hosted game without a rules page for players"
    for game_type in TITLES:
        page = client.get(f"/web/rules/{game_type}")
        assert page.status_code == 200
        assert page.headers["Content-Security-Policy"].startswith("default-src 'self'")
        text = page.get_data(as_text=True)
        assert f"<h1>{TITLES[game_type]}" in text and "score" in text.lower()
        assert "<script>" not in text and " style=" not in text       # nothing the CSP refuses
    assert client.get("/web/rules/").status_code == 200
    assert client.get("/web/rules").status_code in (301, 302, 308)
    missing = client.get("/web/rules/chess")
    assert missing.status_code == 404 and missing.json["error"]["code"] == "not_found"


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_the_lobby_links_every_rules_page(chromium, server, size, tmp_path):
    page = _page(chromium, *size)
    page.goto(server.url + "/web/")
    page.click("#lobby-rules")
    page.wait_for_selector("ul.rules-index")
    for game_type, title in TITLES.items():
        page.click(f"#rules-{game_type}")
        page.wait_for_url(f"**/web/rules/{game_type}")
        assert page.inner_text("h1").startswith(title)
        assert page.locator("#symbols + dl.symbols dt").count() >= 2 and page.locator("#nav a").count() >= 2
        assert page.evaluate("document.documentElement.scrollWidth") <= size[0]
        page.screenshot(path=str(tmp_path / f"rules-{game_type}.png"), full_page=True)
        page.go_back()
        page.wait_for_selector("ul.rules-index")
    assert not page.errors, page.errors
    page.context.close()


def test_the_new_game_options_say_what_they_do(chromium, server):
    page = _page(chromium, 1280, 800)
    page.goto(server.url + "/web/")
    page.wait_for_selector("#create")
    page.click("details:has(fieldset.options) > summary")
    for name in (t.name for t in game_types()):
        page.select_option("#new-type", name)
        for option in get_game(name).OptionsSchema().fields:
            control = page.locator(f"#opt-{option}")
            help_id = control.get_attribute("aria-describedby")
            assert help_id, f"{name}.{option}: no accessible description"
            words = page.locator(f"#{help_id}").text_content()
            assert len(words) > 20 and control.get_attribute("title") == words
            # the accessibility tree reads the description out with the control
            described = page.evaluate(f"document.getElementById('{help_id}').textContent")
            assert described == words
    assert not page.errors, page.errors
    page.context.close()


def _scored_bot_game(server):
    session = server.service.create("big-shot", {}, [{"bot": "random"}, {"bot": "random"}, {"bot": "random"}])
    deadline = time.monotonic() + 60
    while server.service.load(session.game_id).status != "scored":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return session.game_id


def test_a_table_and_its_replay_link_the_games_rules(chromium, server):
    game_id = _scored_bot_game(server)
    page = _page(chromium, 390, 844)
    page.goto(f"{server.url}/web/games/{game_id}?spectator=1")
    page.wait_for_selector("#status #rules-link")
    assert page.get_attribute("#status #rules-link", "href") == "/web/rules/big-shot"
    page.goto(f"{server.url}/web/games/{game_id}/replay?at=5")
    page.wait_for_selector("#main h1 #rules-link")
    page.click("#main h1 #rules-link")
    page.wait_for_url("**/web/rules/big-shot")
    assert "promoter" in page.inner_text("#symbols + dl")
    assert not page.errors, page.errors
    page.context.close()
