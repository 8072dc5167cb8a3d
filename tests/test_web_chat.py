"""The table chat in a real browser: a message with markup shows as text on the table and the
replay pages (no element made of it, no script run), a seat says something and sends a
preset, mutes and unmutes another seat, a spectator on a phone reads the spectators' channel
only, and the replay shows each line at the step it was said. Screenshots go to /tmp
(chat-*.png; WEB_SHOTS=DIR for another folder)."""

import json
import os
import time

import pytest

import web_kit

pytestmark = pytest.mark.skipif(web_kit.chromium_path() is None,
                                reason="chromium is not installed (apt-get install chromium): browser tests skipped")

SHOTS = os.environ.get("WEB_SHOTS") or "/tmp"
api = web_kit.api
MARKUP = "<img src=x onerror=alert(1)> and <b>bold</b> & <script>alert(2)</script>"


server = web_kit.cheap_live_server   # the service on a free port, cheap Argon2id


chromium = web_kit.module_chromium   # one Chromium for the module


def _page(chromium, width, height):
    context = chromium.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.errors, page.dialogs = [], []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    return page


def _until(page, predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not page.evaluate(predicate):
        assert time.monotonic() < deadline, f"never true: {predicate}"
        time.sleep(0.05)


def _table(server):
    game_id = api(server, "POST", "/v1/games", json={"type": "big-shot", "seats": [{}, {}]}).json["game_id"]
    tokens = [api(server, "POST", f"/v1/games/{game_id}/seats/{s}", json={"name": f"p{s}"}).json["token"] for s in (0, 1)]
    return game_id, tokens


def _say(server, game_id, token, text=None, preset=None):
    said = api(server, "POST", f"/v1/games/{game_id}/chat", token,
               json={"channel": "players", **({"text": text} if text else {"preset": preset})})
    assert said.status_code == 201, said.json
    return said.json


def _move(server, game_id, tokens):
    """The seat to act plays its first legal action (a template at its minimum)."""
    game = api(server, "GET", f"/v1/games/{game_id}").json
    seat = game["to_act"][0]
    view = api(server, "GET", f"/v1/games/{game_id}/view", tokens[seat]).json
    action = {k: v["min"] if isinstance(v, dict) else v for k, v in view["legal_actions"][0].items()}
    done = api(server, "POST", f"/v1/games/{game_id}/actions", tokens[seat], json={"action": action})
    assert done.status_code == 200, done.json


def _as_seat(page, server, game_id, seat, token):
    page.goto(server.url + "/web/")
    page.evaluate(f"localStorage.setItem('speculation.seats', {json.dumps(json.dumps({game_id: {str(seat): token}}))})")
    page.goto(server.url + f"/web/games/{game_id}?seat={seat}")


def _no_markup_made(page):
    """Nothing of the messages became an element: no img, b, script or i inside the chat."""
    assert page.locator("#chat img, #chat b, #chat script, #chat i, #chat-lines a").count() == 0
    assert page.dialogs == [] and page.errors == []


def test_a_seat_talks_at_the_table_markup_stays_text_and_mutes_work(server, chromium):
    game_id, tokens = _table(server)
    _say(server, game_id, tokens[1], MARKUP)
    page = _page(chromium, 1280, 800)
    try:
        _as_seat(page, server, game_id, 0, tokens[0])
        page.wait_for_selector("#chat-lines li.chat-line")
        line = page.locator("#chat-lines li.chat-line").first
        assert line.locator(".chat-text").inner_text() == MARKUP
        assert line.locator(".chat-author").inner_text() == "p1 (guest)"
        _no_markup_made(page)
        assert page.locator("#chat-tab-players").get_attribute("aria-selected") == "true"
        assert page.locator("#chat-text").get_attribute("maxlength") == "280"
        page.fill("#chat-text", "<i>mine</i>")
        page.press("#chat-text", "Enter")
        _until(page, "document.querySelectorAll('#chat-lines li.chat-line').length === 2")
        assert page.locator("#chat-lines li.chat-line").nth(1).inner_text().endswith("p0 (guest) (you): <i>mine</i>")
        assert page.locator("#chat-text").input_value() == ""
        page.click("#chat-preset-good-luck")
        _until(page, "document.querySelectorAll('#chat-lines li.chat-line').length === 3")
        assert page.locator("#chat-lines li.chat-line").nth(2).locator(".chat-text").inner_text() == "Good luck!"
        _say(server, game_id, tokens[1], "a new line")            # the other seat, seen within a poll
        _until(page, "document.querySelectorAll('#chat-lines li.chat-line').length === 4", 8.0)
        page.locator("#chat").screenshot(path=f"{SHOTS}/chat-table.png")
        page.click("#chat-mute-1")                                  # p1's lines leave p0's screen
        _until(page, "document.querySelectorAll('#chat-lines li.chat-line').length === 2")
        assert "muted" in page.locator("#chat-mute-1").inner_text()
        assert api(server, "GET", f"/v1/games/{game_id}/chat", tokens[0]).json["muted"] == [1]
        page.click("#chat-mute-1")
        _until(page, "document.querySelectorAll('#chat-lines li.chat-line').length === 4")
        for n in range(6):                       # a flood from p0's seat: its rate is spent
            flood = api(server, "POST", f"/v1/games/{game_id}/chat", tokens[0], json={"channel": "players", "text": "!"})
            if flood.status_code == 429:
                break
        assert flood.status_code == 429
        count = len(api(server, "GET", f"/v1/games/{game_id}/chat", tokens[0]).json["items"])
        page.click("#chat-preset-thanks")        # the page is told to slow down, and nothing is said
        _until(page, "document.querySelector('#chat-note').textContent.includes('Slow down')")
        assert page.locator("#chat-send").is_disabled() and page.locator("#chat-preset-thanks").is_disabled()
        page.locator("#chat").screenshot(path=f"{SHOTS}/chat-slow-down.png")
        assert len(api(server, "GET", f"/v1/games/{game_id}/chat", tokens[0]).json["items"]) == count
        _no_markup_made(page)
    finally:
        page.context.close()


def test_a_spectator_on_a_phone_reads_the_spectators_channel_only(server, chromium):
    game_id, tokens = _table(server)
    _say(server, game_id, tokens[0], "players only: " + MARKUP)
    page = _page(chromium, 390, 844)
    try:
        page.goto(server.url + f"/web/games/{game_id}")
        page.wait_for_selector("#chat-tab-spectators")
        assert page.locator("#chat-tab-players").count() == 0 and page.locator("#chat-lines li.chat-line").count() == 0
        assert page.locator("#chat-form").is_hidden()
        assert "Sign in to write" in page.locator("#chat-note").inner_text()
        box = page.locator("#chat").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        page.locator("#chat").scroll_into_view_if_needed()
        page.screenshot(path=f"{SHOTS}/chat-spectator-phone.png")
        _no_markup_made(page)
    finally:
        page.context.close()


def test_the_replay_shows_each_line_at_its_step_as_text(server, chromium):
    game_id, tokens = _table(server)
    first = _say(server, game_id, tokens[1], MARKUP)
    _move(server, game_id, tokens)
    _move(server, game_id, tokens)
    _say(server, game_id, tokens[0], preset="oops")
    last = api(server, "GET", f"/v1/games/{game_id}").json["version"]
    page = _page(chromium, 1280, 800)
    try:
        page.goto(server.url + "/web/")
        page.evaluate(f"localStorage.setItem('speculation.seats', {json.dumps(json.dumps({game_id: {'0': tokens[0]}}))})")
        page.goto(server.url + f"/web/games/{game_id}/replay?at={first['version']}")
        page.wait_for_selector("#chat-lines li.chat-line")
        _until(page, f"document.body.dataset.at === '{first['version']}'")
        lines = page.locator("#chat-lines li.chat-line")
        assert lines.count() == 1 and lines.first.locator(".chat-text").inner_text() == MARKUP
        assert lines.first.locator(".chat-time").inner_text() == f"#{first['version']}"
        assert page.locator("#chat-form").is_hidden()
        page.click("text=Last »")
        _until(page, f"document.body.dataset.at === '{last}'")
        _until(page, "document.querySelectorAll('#chat-lines li.chat-line').length === 2")
        assert page.locator("#chat-lines li.latest .chat-text").inner_text() == "Oops!"
        page.locator("#chat").scroll_into_view_if_needed()
        page.screenshot(path=f"{SHOTS}/chat-replay.png")
        _no_markup_made(page)
    finally:
        page.context.close()
