"""Leaving a game at the web table, in a real browser: a guest's seat at desktop size and an
account's at phone size. Leave the game asks first (Stay keeps the seat), then a bot of the
game's leave_level takes the seat over, the page watches as a spectator ("You left this
game"), the players' line shows the seat as the bot's for the person who left, the device
forgets the seat's token, and the game plays on to its end; My games marks the game "You
left". Screenshots go to /tmp (leave-*.png; WEB_SHOTS=DIR for another folder)."""

import json
import os
import re
import time

import pytest

import web_kit

pytestmark = pytest.mark.skipif(web_kit.chromium_path() is None,
                                reason="chromium is not installed (apt-get install chromium): browser tests skipped")

PASSWORD = "a long passphrase 43"
SHOTS = os.environ.get("WEB_SHOTS") or "/tmp"
api = web_kit.api


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
    live = web_kit.LiveServer(web_kit.CHEAP_ARGON2).start()
    made = live.app.test_client().post("/v1/accounts", json={"username": "ann", "password": PASSWORD})
    assert made.status_code == 201, made.json
    yield live
    live.stop()


chromium = web_kit.module_chromium   # one Chromium for the module


def _game(server, seats):
    made = api(server, "POST", "/v1/games", json={"type": "big-shot", "seats": seats, "leave_level": "random"})
    assert made.status_code == 201, made.json
    return made.json["game_id"]


def _page(chromium, width, height):
    context = chromium.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    return page


def _until(page, predicate, timeout=10.0):
    """Poll a predicate from here (the page's CSP allows no eval: no in-page wait for a function)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(predicate):
        assert time.monotonic() < deadline, f"never true: {predicate}"
        time.sleep(0.05)


def _leave_through_the_page(page, shot):
    page.wait_for_selector("#leave-game")
    page.screenshot(path=f"{SHOTS}/leave-{shot}-seated.png")
    page.click("#leave-game")
    question = page.locator("#leave-question").inner_text()
    assert "A random bot takes your seat over" in question and "cannot come back" in question
    page.click("#leave-cancel")                  # Stay: nothing is sent
    page.wait_for_selector("#leave-game")
    page.click("#leave-game")
    page.screenshot(path=f"{SHOTS}/leave-{shot}-confirm.png")
    page.click("#leave-confirm-yes")
    page.wait_for_selector("#spectator-note")
    _until(page, "document.querySelector('#spectator-note').textContent.startsWith('You left this game')")


def test_a_guest_leaves_at_the_table_and_the_bot_plays_the_game_to_its_end(server, chromium):
    page = _page(chromium, 1280, 800)
    try:
        page.goto(server.url + "/web/")          # the lobby's form: a game against a bot, the leave level chosen
        page.wait_for_selector("#create")
        page.select_option("#new-type", "big-shot")
        page.fill("#new-players", "2")
        page.dispatch_event("#new-players", "change")
        page.fill("#your-name", "alice")
        page.select_option("#seat-1", "random")
        assert page.locator("#new-leave-level").input_value() == "heuristic"   # the service's default
        page.select_option("#new-leave-level", "random")
        page.click("#create-button")
        page.wait_for_url(re.compile(r".*/web/games/\w+\?seat=0"))
        game_id = page.url.split("/web/games/")[1].split("?")[0]
        assert server.service.load(game_id).leave_level == "random"
        token = json.loads(page.evaluate("localStorage.getItem('speculation.seats')"))[game_id]["0"]
        version = server.service.load(game_id).version
        _leave_through_the_page(page, "guest-desktop")
        session = server.service.load(game_id)
        assert session.seats[0].left and session.seats[0].level == "random" and session.version > version
        assert "You are watching as a spectator." in page.locator("#status").inner_text()
        assert page.locator("#leave-game").count() == 0
        assert "Bot 1 (random) for alice, who left" in page.locator("#players").inner_text()
        kept = json.loads(page.evaluate("localStorage.getItem('speculation.seats')"))
        assert str(0) not in kept.get(game_id, {})
        assert api(server, "GET", f"/v1/games/{game_id}/view", token).json["error"]["code"] == "seat_left"
        _until(page, "document.body.dataset.status === 'scored'", 60.0)
        assert page.locator("#result").inner_text()
        assert "leaves the game: a random bot plays seat 1 from now on." in page.locator("#log").inner_text()
        page.screenshot(path=f"{SHOTS}/leave-guest-desktop-after.png", full_page=True)
        page.reload()                            # a reload watches too: the token is gone
        _until(page, "document.body.dataset.status === 'scored'")
        assert "You are watching as a spectator." in page.locator("#status").inner_text()
        assert page.errors == []
    finally:
        page.context.close()


def test_an_account_leaves_on_a_phone_and_stays_a_spectator(server, chromium):
    game_id = _game(server, [{}, {}])
    session = api(server, "POST", "/v1/sessions", json={"username": "ann", "password": PASSWORD}).json["token"]
    assert api(server, "POST", f"/v1/games/{game_id}/seats/0", session, json={}).status_code == 201
    other = api(server, "POST", f"/v1/games/{game_id}/seats/1", json={"name": "bob"}).json["token"]
    page = _page(chromium, 390, 844)
    try:
        page.goto(server.url + "/web/sign-in?next=/web/")
        page.fill("#si-username", "ann")
        page.fill("#si-password", PASSWORD)
        page.click("#sign-in-button")
        page.wait_for_url(re.compile(r".*/web/$"))
        page.wait_for_selector("#play-now-form")   # signed in, the lobby drawn: no navigation under way
        page.goto(server.url + f"/web/games/{game_id}")
        page.wait_for_selector("#leave-game")
        box = None
        for _ in range(50):    # the status card is drawn again at each refresh: measure a drawn one
            box = page.locator("#leave-game").bounding_box()
            if box is not None:
                break
            page.wait_for_timeout(100)
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390   # on the phone's screen, not past its edge
        _leave_through_the_page(page, "account-phone")
        assert server.service.load(game_id).seats[0].left
        page.screenshot(path=f"{SHOTS}/leave-account-phone-after.png", full_page=True)
        page.reload()                            # the account's seat is no longer its own: a spectator's page
        page.wait_for_selector("#spectator-note")
        assert page.locator("#spectator-note").inner_text().startswith("You left this game")
        assert page.locator("#leave-game").count() == 0
        page.goto(server.url + "/web/my-games")     # ann's games say she left this one
        row = page.locator(f"li.game[data-game='{game_id}']")
        row.wait_for()
        assert "You left" in row.inner_text() and "Bot 1 for ann (you left)" in row.inner_text()
        assert "Your turn" not in row.inner_text()
        page.screenshot(path=f"{SHOTS}/leave-account-phone-my-games.png")
        # bob plays on against the bot that took ann's seat
        assert api(server, "GET", f"/v1/games/{game_id}/view", other).status_code == 200
        assert page.errors == []
    finally:
        page.context.close()
