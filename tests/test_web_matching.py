"""Finding a game on the web pages, in a real headless browser (Debian's Chromium driven by
playwright), two accounts in two browser contexts: ann challenges ben from ben's player page and
waits at the table ("waiting for ben to accept", the seat reserved for ben); ben sees the
invitation live in the lobby and accepts; both tables play; the game is played to the end (the
moves sent through the API with the players' own session tokens, to keep it short), then
"Rematch" on ann's finished table makes the new game and ben's finished table shows ann's
offer live and accepts it: one game for both. ben declines a second challenge and ann's table
says so at once; ann cancels a third, and ben's lobby says so; ben refuses challenges in his
settings and ann's form says so. "Play now": a table with bots right away, two accounts
paired with each other (the one waiting told on its stream), a search cancelled. At 375 px
without horizontal scroll; every change made with the cookie sends X-CSRF-Token.

WEB_SHOTS=DIR takes the screenshots of docs/web.md's "Finding a game on the web" into DIR, each
at 1100 and 375 px."""

import os
import re
import time
from urllib.parse import urlparse

import pytest

import web_kit

pytestmark = pytest.mark.skipif(web_kit.chromium_path() is None,
                                reason="chromium is not installed (apt-get install chromium): browser tests skipped")

PASSWORD = "a long passphrase 42"
ANN, BEN = "ann", "ben"
SHOTS = os.environ.get("WEB_SHOTS")
# Requests that change something for the account: with the cookie they must carry X-CSRF-Token.
CHANGES = [r"/v1/challenges(/\w+/(accept|decline|cancel))?", r"/v1/games/\w+/rematch", r"/v1/seeks(/\w+)?",
           r"/v1/account/.+", r"/v1/games/\w+/(seats/\d+|actions)"]


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
    # cheap Argon2id parameters: the pages, not the hashing, are under test
    live = web_kit.LiveServer(web_kit.CHEAP_ARGON2).start()
    for name in (ANN, BEN):
        made = live.app.test_client().post("/v1/accounts", json={"username": name, "password": PASSWORD})
        assert made.status_code == 201, made.json
    yield live
    live.stop()


chromium = web_kit.module_chromium   # one Chromium for the module


api = web_kit.api


def token_of(server, name):
    """A session token of the account (an API client's sign-in, beside the browser's cookie)."""
    signed = api(server, "POST", "/v1/sessions", json={"username": name, "password": PASSWORD})
    assert signed.status_code == 201, signed.json
    return signed.json["token"]


def signed_in(chromium, server, name, width):
    context = chromium.new_context(viewport={"width": width, "height": 900}, bypass_csp=True)
    page = context.new_page()
    page.errors, page.requests = [], []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("request", lambda r: page.requests.append((r.method, r.url, r.headers)))
    page.goto(server.url + "/web/sign-in?next=/web/")
    page.fill("#si-username", name)
    page.fill("#si-password", PASSWORD)
    page.click("#sign-in-button")
    page.wait_for_url(re.compile(r".*/web/$"))
    page.wait_for_selector("#play-now-form")
    return page


@pytest.fixture(scope="module")
def ann(chromium, server):
    page = signed_in(chromium, server, ANN, 1100)
    yield page
    page.context.close()


@pytest.fixture(scope="module")
def ben(chromium, server):
    page = signed_in(chromium, server, BEN, 375)
    yield page
    page.context.close()


def game_of(page):
    return urlparse(page.url).path.split("/")[3]


def no_horizontal_scroll(page):
    return page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


def shot(page, name):
    """With WEB_SHOTS: the page at 1100 and at 375 px (name.png, name-phone.png); its own width back."""
    if not SHOTS:
        return
    os.makedirs(SHOTS, exist_ok=True)
    size = page.viewport_size
    page.evaluate("document.getElementById('toast').className = ''")      # a passing toast: not in the picture
    for width, suffix in ((1100, ""), (375, "-phone")):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(150)
        page.screenshot(path=os.path.join(SHOTS, f"{name}{suffix}.png"), full_page=True)
    page.set_viewport_size(size)


def live(page):
    page.wait_for_function("document.body.dataset.live === 'true'")


def play_through_api(server, game_id, tokens, timeout=60.0):
    """The accounts' moves (the first legal one, a template at its minimum) until the game is
    scored; the bots' are the live server's worker's."""
    deadline = time.monotonic() + timeout
    while api(server, "GET", f"/v1/games/{game_id}").json["status"] != "scored":
        assert time.monotonic() < deadline, "the game did not end in time"
        moved = False
        for token in tokens:
            view = api(server, "GET", f"/v1/games/{game_id}/view", token).json
            if view.get("legal_actions"):
                first = view["legal_actions"][0]
                action = {k: v["min"] if isinstance(v, dict) and "min" in v else v for k, v in first.items()}
                api(server, "POST", f"/v1/games/{game_id}/actions", token, json={"action": action})
                moved = True
        if not moved:
            time.sleep(0.03)


def challenge_from_profile(ann, server, whom, game_type, players, others=()):
    ann.goto(server.url + f"/web/players/{whom}")
    ann.click("#challenge-open")
    ann.select_option("#ch-type", game_type)
    ann.fill("#ch-players", str(players))
    ann.dispatch_event("#ch-players", "change")
    for i, level in enumerate(others):
        ann.select_option(f"#ch-seat-{i + 2}", level)
    assert ann.evaluate("[...document.querySelectorAll('#challenge input, #challenge select')]"
                        ".every(i => i.labels.length > 0)"), "an input without its label"


def test_challenge_accept_rematch_decline_cancel(ann, ben, server):
    ben.goto(server.url + "/web/")
    live(ben)                                                         # ben's lobby listens to his stream

    # --- ann challenges ben from his page: her seat is taken, the table waits for ben
    challenge_from_profile(ann, server, BEN, "speculation", 3, ["random"])
    assert ann.input_value("#ch-expires") == "600"
    shot(ann, "matching-challenge")
    ann.click("#challenge-button")
    ann.wait_for_url(re.compile(r".*/web/games/\w+\?seat=0$"))
    game_id = game_of(ann)
    ann.wait_for_selector("#invite-wait")
    assert "Waiting for ben to accept your challenge." in ann.inner_text("#invite-wait")
    assert "reserved for ben" in ann.inner_text("#players")
    assert ann.locator("#cancel-invitation").count() == 1
    summary = api(server, "GET", f"/v1/games/{game_id}").json
    assert summary["seats"][0]["name"] == ANN and summary["seats"][1].get("invited") == BEN
    assert summary["seats"][2] == {"kind": "bot", "level": "random"}
    assert summary["platform_options"]["challenger"] == summary["seats"][0]["account"]
    shot(ann, "matching-waiting")

    # --- ben sees it in his lobby, live, and accepts: both tables play
    row = ben.locator(f"#invitations li.invitation[data-game='{game_id}'][data-dir='in']")
    row.wait_for(timeout=10000)
    assert "ann challenges you" in row.inner_text()
    ben.wait_for_selector(f"#open-games li[data-game='{game_id}'] button.accept")   # the lobby's row: Accept, no Take seat
    assert "seat 2 reserved for ben (you)" in ben.inner_text(f"#open-games li[data-game='{game_id}']")
    assert no_horizontal_scroll(ben)
    shot(ben, "matching-invitations")
    row.locator("button.accept").click()
    ben.wait_for_url(re.compile(rf".*/web/games/{game_id}\?seat=1$"))
    web_kit.wait_status(ben, ["active", "ended", "scored"])
    web_kit.wait_status(ann, ["active", "ended", "scored"])
    assert ann.locator("#invitation").is_hidden()
    ann.wait_for_function("document.querySelector('#log').innerText.includes('ben takes seat 2.')")

    # --- played to the end; ann asks a rematch, ben's finished table shows her offer live
    play_through_api(server, game_id, [token_of(server, ANN), token_of(server, BEN)])
    web_kit.wait_status(ann, ["scored"])
    web_kit.wait_status(ben, ["scored"])
    ben.wait_for_selector("#rematch-button")
    ben.wait_for_function("document.body.dataset.live === 'true'")   # the finished table listens for an offer
    ann.click("#rematch-button")
    ann.wait_for_url(re.compile(rf".*/web/games/(?!{game_id})\w+\?seat=\d$"))
    rematch_id = game_of(ann)
    assert rematch_id != game_id
    ann.wait_for_selector("#invite-wait")
    assert "to accept your rematch offer" in ann.inner_text("#invite-wait")
    ben.wait_for_selector("#rematch-offer", timeout=15000)
    assert "ann offers a rematch" in ben.inner_text("#rematch-offer")
    shot(ben, "matching-rematch-offer")
    ben.click("#accept-rematch")
    ben.wait_for_url(re.compile(rf".*/web/games/{rematch_id}\?seat=\d$"))
    web_kit.wait_status(ann, ["active", "ended", "scored"])
    web_kit.wait_status(ben, ["active", "ended", "scored"])
    rematch = api(server, "GET", f"/v1/games/{rematch_id}").json
    assert rematch["platform_options"]["rematch_of"] == game_id
    assert [s.get("name") or s.get("level") for s in rematch["seats"]] == ["random", ANN, BEN]   # rotated by one
    # asking again (ben's side) lands on the same game
    again = api(server, "POST", f"/v1/games/{game_id}/rematch", token_of(server, BEN), json={})
    assert again.status_code == 201 and again.json["game_id"] == rematch_id

    # --- ben declines a second challenge in his lobby: ann's waiting table says so at once
    ben.goto(server.url + "/web/")
    live(ben)
    challenge_from_profile(ann, server, BEN, "big-shot", 2)
    ann.select_option("#ch-order", "them")                            # ben sits first
    ann.click("#challenge-button")
    ann.wait_for_url(re.compile(r".*/web/games/\w+\?seat=1$"))
    declined_id = game_of(ann)
    ann.wait_for_selector("#invite-wait")
    row = ben.locator(f"#invitations li.invitation[data-game='{declined_id}'][data-dir='in']")
    row.wait_for(timeout=10000)
    row.locator("button.decline").click()
    ben.wait_for_selector(f"#invitations li.invitation[data-game='{declined_id}'].expired")
    assert "You declined the challenge." in row.inner_text()
    ann.wait_for_selector("#expired-reason", timeout=10000)
    assert ann.inner_text("#expired-reason") == "ben declined the challenge."
    web_kit.wait_status(ann, ["expired"])
    assert "This game never started." in ann.inner_text("#status")
    ann.wait_for_function("document.querySelector('#log').innerText.includes('The game never starts: the invitation was declined.')")
    shot(ann, "matching-expired")
    assert api(server, "GET", f"/v1/games/{declined_id}").json["status"] == "expired"

    # --- ann cancels a third from her table; ben's lobby says so
    challenge_from_profile(ann, server, BEN, "big-shot", 2)
    ann.click("#challenge-button")
    ann.wait_for_url(re.compile(r".*/web/games/\w+\?seat=0$"))
    cancelled_id = game_of(ann)
    ben.locator(f"#invitations li.invitation[data-game='{cancelled_id}']").wait_for(timeout=10000)
    ann.click("#cancel-invitation")
    ann.wait_for_selector("#expired-reason")
    assert ann.inner_text("#expired-reason") == "You cancelled the challenge."
    ben.wait_for_selector(f"#invitations li.invitation[data-game='{cancelled_id}'].expired", timeout=10000)
    assert "ann cancelled the challenge." in ben.inner_text(f"#invitations li[data-game='{cancelled_id}']")

    # --- My games lists ben's invitation too; he declines it on its table
    challenge_from_profile(ann, server, BEN, "big-shot", 2)
    ann.click("#challenge-button")
    ann.wait_for_url(re.compile(r".*/web/games/\w+\?seat=0$"))
    pending_id = game_of(ann)
    ben.goto(server.url + "/web/my-games")
    ben.locator(f"#invitations li.invitation[data-game='{pending_id}'][data-dir='in'] button.accept").wait_for()
    assert ben.locator(f"#my-games li[data-game='{pending_id}']").count() == 1
    assert no_horizontal_scroll(ben)
    shot(ben, "matching-my-games")
    # its table, as the invited account sees it: Accept / Decline there too
    ben.click(f"#invitations li.invitation[data-game='{pending_id}'] a:has-text('See the table')")
    ben.wait_for_selector("#invite-ask")
    assert ben.inner_text("#invite-ask") == "ann challenges you to this game."
    assert "reserved for ben (you)" in ben.inner_text("#players")
    ben.click("#decline-invitation")
    ben.wait_for_selector("#expired-reason:has-text('You declined the challenge.')")
    ann.wait_for_selector("#expired-reason:has-text('ben declined the challenge.')", timeout=10000)

    # --- ben takes no challenges any more (his settings): ann's form says so
    ben.goto(server.url + "/web/account")
    ben.wait_for_function("document.querySelector('#pref-anyone')?.checked")
    ben.check("#pref-none")
    ben.click("#save-preferences")
    ben.wait_for_selector("#preferences-done:has-text('nobody may challenge you')")
    assert api(server, "GET", "/v1/account/preferences", token_of(server, BEN)).json == {"challenges": "none"}
    assert no_horizontal_scroll(ben)
    shot(ben, "matching-settings")
    challenge_from_profile(ann, server, BEN, "big-shot", 2)
    ann.click("#challenge-button")
    ann.wait_for_selector("#challenge-error:has-text('ben does not take challenges.')")
    ben.check("#pref-anyone")
    ben.click("#save-preferences")
    ben.wait_for_selector("#preferences-done:has-text('anyone may challenge you')")

    for page in (ann, ben):
        for method, url, headers in page.requests:
            parsed = urlparse(url)
            assert parsed.netloc == f"127.0.0.1:{server.port}", f"a request left the service: {url}"
            if method in ("POST", "PUT", "DELETE") and "authorization" not in headers and parsed.path != "/v1/sessions" \
                    and any(re.fullmatch(p, parsed.path) for p in CHANGES):
                assert headers.get("x-csrf-token"), f"{method} {parsed.path} without X-CSRF-Token"
        assert not page.errors, page.errors


def test_play_now(ann, ben, server):
    # --- a table with bots right away
    ann.goto(server.url + "/web/")
    ann.wait_for_selector("#play-now button.play-type")
    ann.select_option("#pn-players", "3")
    ann.select_option("#pn-bots", "0")
    assert ann.is_disabled("#play-now button.play-type[data-type='speculation']") is False
    ann.click("#play-now button.play-type[data-type='big-shot']")
    ann.wait_for_url(re.compile(r".*/web/games/\w+\?seat=\d$"))
    web_kit.wait_status(ann, ["active", "ended", "scored"])
    seats = api(server, "GET", f"/v1/games/{game_of(ann)}").json["seats"]
    assert [s["kind"] for s in seats].count("bot") == 2 and [s.get("name") for s in seats].count(ANN) == 1

    # --- people only: ann waits ("Looking for players…"), ben asks the same, both land on one table
    ann.goto(server.url + "/web/")
    ann.wait_for_selector("#play-now button.play-type")
    ann.select_option("#pn-players", "2")
    assert ann.is_disabled("#play-now button.play-type[data-type='speculation']")     # 3 to 8 players
    ann.select_option("#pn-bots", "")
    ann.check("#pn-rated")
    assert ann.input_value("#pn-clock") == "300"                      # rated needs a clock
    ann.click("#play-now button.play-type[data-type='big-shot']")
    ann.wait_for_selector("#seeking li.seek")
    assert "Looking for players…" in ann.inner_text("#seeking")
    assert "Big Shot · 2 players · rated · 5 minutes a move · people only" in ann.inner_text("#seeking li.seek")
    assert no_horizontal_scroll(ann)
    shot(ann, "matching-play-now")
    ben.goto(server.url + "/web/")
    ben.wait_for_selector("#play-now button.play-type")
    ben.select_option("#pn-players", "2")
    ben.select_option("#pn-bots", "")
    ben.check("#pn-rated")
    ben.click("#play-now button.play-type[data-type='big-shot']")
    ben.wait_for_url(re.compile(r".*/web/games/\w+\?seat=\d$"))
    ann.wait_for_url(re.compile(r".*/web/games/\w+\?seat=\d$"), timeout=10000)    # told on her stream
    assert game_of(ann) == game_of(ben)
    summary = api(server, "GET", f"/v1/games/{game_of(ann)}").json
    assert sorted(s["name"] for s in summary["seats"]) == [ANN, BEN] and summary["platform_options"]["rated"]

    # --- a search cancelled
    ann.goto(server.url + "/web/")
    ann.wait_for_selector("#play-now button.play-type")
    ann.select_option("#pn-bots", "")
    ann.click("#play-now button.play-type[data-type='speculate']")
    ann.wait_for_selector("#seeking li.seek button.cancel-seek")
    ann.click("#seeking li.seek button.cancel-seek")
    ann.wait_for_selector("#play-now-form:not([hidden])")
    assert not [s for s in api(server, "GET", "/v1/seeks", token_of(server, ANN)).json["seeks"] if s["status"] == "open"]
    assert not ann.errors and not ben.errors, ann.errors + ben.errors


def test_signed_out_pages_offer_to_sign_in(chromium, server):
    context = chromium.new_context(viewport={"width": 375, "height": 800}, bypass_csp=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url + "/web/")
    page.wait_for_selector("#play-now-sign-in")
    assert page.locator("#invitations").count() == 0
    page.goto(server.url + f"/web/players/{BEN}")
    page.wait_for_selector("#challenge-sign-in a:has-text('Sign in')")
    assert page.locator("#challenge").count() == 0 and no_horizontal_scroll(page)
    assert not errors, errors
    context.close()
