"""The account's web pages in a real headless browser (Debian's Chromium driven by playwright):
sign up (the recovery codes shown once, downloadable), sign out, a wrong password said plainly,
sign in; a game made in the lobby and its seats taken as the account (no name, no seat token:
the session cookie, the seat named when the account holds two), the game in My games with
its "Your turn" badge (live, over the account's event stream); a personal token made and
revoked in the account's settings, the password changed. Every state-changing request the
pages make with the session cookie sends X-CSRF-Token."""

import re
from urllib.parse import urlparse

import pytest

import web_kit

pytestmark = pytest.mark.skipif(web_kit.chromium_path() is None,
                                reason="chromium is not installed (apt-get install chromium): browser tests skipped")

USERNAME, PASSWORD, NEW_PASSWORD = "carol", "a long passphrase 42", "another long passphrase 43"
# Requests that change something for the account: with the cookie they must carry X-CSRF-Token.
ACCOUNT_CHANGES = [r"/v1/account/.+", r"/v1/session", r"/v1/games/\w+/seats/\d+", r"/v1/games/\w+/actions",
                   r"/web/api/words"]


server = web_kit.cheap_live_server   # the service on a free port, cheap Argon2id


chromium = web_kit.module_chromium   # one Chromium for the module


@pytest.fixture
def page(chromium):
    context = chromium.new_context(viewport={"width": 375, "height": 800}, bypass_csp=True, accept_downloads=True)
    p = context.new_page()
    p.errors, p.requests = [], []
    p.on("pageerror", lambda e: p.errors.append(str(e)))
    p.on("request", lambda r: p.requests.append((r.method, r.url, r.headers)))
    yield p
    context.close()


api = web_kit.api


def test_an_account_through_the_pages(page, server, tmp_path):
    # --- sign up: the rules shown, the API's error next to its field, then the codes once
    page.goto(server.url + "/web/sign-up")
    page.wait_for_selector("#sign-up")
    assert "3 to 24 characters" in page.inner_text("#su-username-hint")
    page.fill("#su-username", "ab")
    page.fill("#su-password", PASSWORD)
    page.click("#sign-up-button")
    page.wait_for_function("document.querySelector('#su-username-error').textContent !== ''")
    assert page.get_attribute("#su-username", "aria-invalid") == "true"
    page.fill("#su-username", USERNAME)
    page.click("#sign-up-button")
    page.wait_for_selector("#recovery-codes")
    codes = page.locator("#recovery-codes li").all_inner_texts()
    assert len(codes) == 10 and "shown only this once" in page.inner_text(".codes-box")
    with page.expect_download() as download:
        page.click("#download-codes")
    assert download.value.suggested_filename.endswith(".txt")
    saved = tmp_path / "codes.txt"
    download.value.save_as(saved)
    assert all(code in saved.read_text() for code in codes)
    page.wait_for_function("document.querySelector('#sign-in-status').textContent === 'You are signed in.'")
    page.check("#codes-saved")
    page.click("#continue")
    page.wait_for_url(re.compile(r".*/web/my-games$"))
    page.wait_for_selector("#no-games")
    assert page.inner_text("#who-username") == USERNAME
    cookie = {c["name"]: c for c in page.context.cookies()}["speculation_session"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"

    # --- sign out, a wrong password said plainly, sign in
    page.click("#sign-out")
    page.wait_for_selector("#sign-in-link")
    assert "speculation_session" not in {c["name"] for c in page.context.cookies()}
    page.goto(server.url + "/web/sign-in?next=/web/")
    page.fill("#si-username", USERNAME)
    page.fill("#si-password", "not the password")
    page.click("#sign-in-button")
    page.wait_for_function("document.querySelector('#sign-in').innerText.includes('Wrong username or password.')")
    page.fill("#si-password", PASSWORD)
    page.click("#sign-in-button")
    page.wait_for_url(re.compile(r".*/web/$"))

    # --- a game made in the lobby: seat 0 taken as the account, seat 1 from the open games
    page.wait_for_selector("#take-seat")
    assert page.locator("#your-name").count() == 0          # signed in: no name to type
    page.select_option("#new-type", "speculation")
    page.fill("#new-players", "3")
    page.press("#new-players", "Tab")                       # its change: three seats
    page.select_option("#seat-1", "open")
    page.click("#create-button")
    page.wait_for_url(re.compile(r".*/web/games/\w+\?seat=0$"))
    game_id = urlparse(page.url).path.split("/")[3]
    web_kit.wait_status(page, ["open"])
    page.goto(server.url + "/web/")
    page.click(f"#open-games li:has-text('{game_id}') button:has-text('Take seat 2')")   # API seat 1: people count from 1
    page.wait_for_url(re.compile(r".*/web/games/\w+\?seat=1$"))
    web_kit.wait_status(page, ["active", "ended", "scored"])
    assert f"You are playing {USERNAME}" in page.inner_text("#status")
    assert page.locator("#status .seat-picker a:has-text('Play seat 1')").count() == 1        # the other seat, to switch to
    assert page.evaluate(f"JSON.parse(localStorage.getItem('speculation.seats') || '{{}}')['{game_id}']") is None
    seats = api(server, "GET", f"/v1/games/{game_id}").json["seats"]
    assert [s.get("name") for s in seats[:2]] == [USERNAME, USERNAME] and not seats[0].get("guest")

    # --- My games: the game, live, with the "Your turn" badge once one of its seats is to act
    page.goto(server.url + "/web/my-games")
    row = page.locator(f"#my-games li[data-game='{game_id}']")
    row.wait_for()
    page.wait_for_selector(f"#my-games li[data-game='{game_id}'] .turn-badge", timeout=30000)
    href = row.locator("a.game-link").get_attribute("href")
    # My games left open in a tab in the background: the next turn counts in its title
    background = page.context.new_page()
    background.add_init_script("Object.defineProperty(document, 'hidden', {get: () => true})")
    background.goto(server.url + "/web/my-games")
    background.wait_for_function("document.body.dataset.live === 'true'")
    page.goto(server.url + href)
    page.wait_for_selector("#actions .controls", timeout=30000)      # the account's move, drawn as controls
    version = page.evaluate("document.body.dataset.version")
    page.locator("#actions .controls > button.action, #actions .controls form.template button").first.click()
    page.wait_for_function(f"document.body.dataset.version !== '{version}'", timeout=10000)
    background.wait_for_function("document.title.startsWith('(1) Your turn — ')", timeout=30000)
    background.close()

    # --- Account: a token made (shown once) and revoked; the password changed
    page.goto(server.url + "/web/account")
    page.wait_for_selector("#new-token")
    page.fill("#tk-label", "my bot")
    page.fill("#tk-days", "30")
    page.click("#create-token")
    page.wait_for_selector("#new-token-value")
    token = page.input_value("#new-token-value")
    assert token.startswith("spa_") and "shown only this once" in page.inner_text("#new-token-box")
    page.wait_for_selector("#token-list tr:has-text('my bot')")
    assert api(server, "GET", "/v1/account/games", token).status_code == 200
    page.click("#token-list tr:has-text('my bot') button:has-text('Revoke')")
    page.click("#token-list .confirm-yes")
    page.wait_for_selector("#no-tokens")
    assert api(server, "GET", "/v1/account/games", token).status_code == 401
    page.fill("#pw-current", PASSWORD)
    page.fill("#pw-new", NEW_PASSWORD)
    page.click("#change-password")
    page.wait_for_function("document.querySelector('#password-done').textContent.includes('password is changed')")
    signing = {"username": USERNAME, "password": PASSWORD}
    assert api(server, "POST", "/v1/sessions", json=signing).status_code == 401
    assert api(server, "POST", "/v1/sessions", json={**signing, "password": NEW_PASSWORD}).status_code == 201
    page.reload()
    page.wait_for_selector("#who-username")                          # this session goes on

    # every change made with the cookie carried X-CSRF-Token; nothing left the service
    for method, url, headers in page.requests:
        parsed = urlparse(url)
        assert parsed.netloc == f"127.0.0.1:{server.port}", f"a request left the service: {url}"
        if method in ("POST", "DELETE") and "authorization" not in headers and parsed.path != "/v1/sessions" \
                and any(re.fullmatch(p, parsed.path) for p in ACCOUNT_CHANGES):
            assert headers.get("x-csrf-token"), f"{method} {parsed.path} without X-CSRF-Token"
    assert not page.errors, page.errors


def test_the_account_pages_fit_a_phone_and_ask_to_sign_in(page, server):
    for path in ("/web/my-games", "/web/account"):
        page.goto(server.url + path)
        page.wait_for_selector("main a:has-text('Sign in')")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
    for path, form in (("/web/sign-in", "#sign-in"), ("/web/sign-up", "#sign-up")):
        page.goto(server.url + path)
        page.wait_for_selector(form)
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        # every input has a label
        assert page.evaluate("[...document.querySelectorAll('main input')].every(i => i.labels.length > 0)")
    assert not page.errors, page.errors
