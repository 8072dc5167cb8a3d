"""Ratings on the web pages in a real headless browser (Debian's Chromium driven by playwright):
a few rated games only bots play, made through the API and played by the live server's own
worker, then the leaderboard (rank, the rounded ordinal with mu ± sigma, provisional, bots
marked, each name linking to the player's page, a type picker), a player's page (a rating
card, the SVG chart with a point a rated game, its title, desc and axis labels, the table with
the same numbers), and the lobby's "Rated" box and clock making a rated game that the table
marks "Rated" with each player's rating. At 375 px without horizontal scroll."""

import re
import time
from urllib.parse import urlparse

import pytest

import web_kit

pytestmark = pytest.mark.skipif(web_kit.chromium_path() is None,
                                reason="chromium is not installed (apt-get install chromium): browser tests skipped")

USERNAME, PASSWORD = "rita", "a long passphrase 42"
BOT_GAMES = 3           # rated big-shot games, heuristic against random (at most 4 bot-only games live an address)


server = web_kit.cheap_live_server   # the service on a free port, cheap Argon2id


chromium = web_kit.module_chromium   # one Chromium for the module


api = web_kit.api


@pytest.fixture(scope="module")
def rated_games(server):
    """BOT_GAMES rated games of big-shot, each heuristic against random, played to the end by
    the live server's worker and rated: their ids."""
    ids = []
    for _ in range(BOT_GAMES):
        made = api(server, "POST", "/v1/games", json={"type": "big-shot", "rated": True, "turn_timeout": 60,
                                                     "seats": [{"bot": "heuristic"}, {"bot": "random"}]})
        assert made.status_code == 201, made.json
        assert made.json["platform_options"]["rated"] is True
        ids.append(made.json["game_id"])
    deadline = time.monotonic() + 45
    while True:
        rows = api(server, "GET", "/v1/leaderboards/big-shot").json["rows"]
        if {r["name"]: r["games"] for r in rows} == {"heuristic": BOT_GAMES, "random": BOT_GAMES}:
            return ids
        assert time.monotonic() < deadline, f"the rated games were not rated in time: {rows}"
        time.sleep(0.1)


def new_page(chromium, width):
    context = chromium.new_context(viewport={"width": width, "height": 800}, bypass_csp=True)
    p = context.new_page()
    p.errors = []
    p.on("pageerror", lambda e: p.errors.append(str(e)))
    return p


@pytest.fixture
def page(chromium):
    p = new_page(chromium, 375)
    yield p
    p.context.close()


def no_horizontal_scroll(page):
    return page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


def test_the_leaderboard_and_a_players_page(page, server, rated_games):
    board = api(server, "GET", "/v1/leaderboards/big-shot").json["rows"]
    top = board[0]
    assert top["name"] == "heuristic" and top["bot"] and top["provisional"]

    # --- the leaderboard: linked from the lobby, a type picker, a row a rated account
    page.goto(server.url + "/web/")
    page.click("#lobby-leaderboard")
    page.wait_for_url(re.compile(r".*/web/leaderboard.*"))
    page.wait_for_selector("#board-type")
    page.select_option("#board-type", "big-shot")
    page.wait_for_function("document.body.dataset.type === 'big-shot' && document.querySelector('#board')")
    rows = page.locator("#board tbody tr")
    assert rows.count() == 2
    first = rows.nth(0)
    assert first.locator("td.rank").inner_text() == "1"
    assert first.locator("a.player").inner_text() == "heuristic"
    assert first.locator("a.player").get_attribute("href") == "/web/players/heuristic"
    assert "bot" in first.locator(".badge.bot").inner_text() and first.locator(".provisional-badge").count() == 1
    assert first.locator(".rating-value").inner_text() == str(round(top["ordinal"]))
    assert f"μ {top['mu']:.1f} ± {top['sigma']:.1f}" in first.inner_text()
    assert "μ" in first.locator(".rating-value").get_attribute("title")
    assert no_horizontal_scroll(page)
    assert "type=big-shot" in page.url
    page.select_option("#board-type", "speculation")             # no rated game of that type yet
    page.wait_for_selector("#no-rows")
    page.select_option("#board-type", "big-shot")
    page.wait_for_selector("#board a.player")

    # --- a player's page: its rating card, a chart with a point a rated game, the same numbers in a table
    page.click("#board a.player:text-is('heuristic')")
    page.wait_for_url(re.compile(r".*/web/players/heuristic$"))
    page.wait_for_selector("svg.chart")
    history = api(server, "GET", "/v1/accounts/heuristic/ratings/big-shot").json["history"]
    assert len(history) == BOT_GAMES
    assert page.inner_text("#player-name").startswith("heuristic")
    card = page.locator(".rating-card[data-type='big-shot']")
    assert card.locator(".big-number").inner_text().startswith(str(round(top["ordinal"])))
    assert f"{BOT_GAMES} rated games" in card.inner_text()
    chart = page.locator("#history-big-shot svg.chart")
    assert chart.locator("circle.point").count() == BOT_GAMES
    assert chart.get_attribute("role") == "img"
    assert "heuristic" in chart.locator("title").first.text_content()
    assert f"{BOT_GAMES} rated games" in chart.locator("desc").text_content()
    labels = chart.locator("text.label").all_text_contents()
    assert "Rating" in labels and "Rated games played" in labels
    # each point's tooltip and the table's row say the same numbers
    last = history[-1]
    assert f"rating {last['ordinal']:.1f}" in chart.locator("circle.point").last.locator("title").text_content()
    page.click("#history-big-shot details.chart-data summary")
    table = page.locator("#history-big-shot-table tbody tr")
    assert table.count() == BOT_GAMES
    newest = table.first.locator("th, td").all_inner_texts()
    assert newest[:4] == [f"#{last['games']}", f"{last['ordinal']:.1f}", f"{last['mu']:.1f}", f"{last['sigma']:.1f}"]
    assert table.first.locator("a").get_attribute("href") == f"/web/games/{last['game_id']}/replay"
    assert no_horizontal_scroll(page)
    # an unknown name said plainly; /web/profile?name= is the same page
    page.goto(server.url + "/web/players/nobody-here")
    page.wait_for_selector("#no-player")
    page.goto(server.url + "/web/profile?name=random")
    page.wait_for_selector("#history-big-shot svg.chart circle.point")
    assert page.inner_text("#player-name").startswith("random")
    assert not page.errors, page.errors


def test_a_rated_game_made_in_the_lobby(chromium, server, rated_games):
    assert api(server, "POST", "/v1/accounts", json={"username": USERNAME, "password": PASSWORD}).status_code == 201
    page = new_page(chromium, 1100)
    page.goto(server.url + "/web/sign-in?next=/web/")
    page.fill("#si-username", USERNAME)
    page.fill("#si-password", PASSWORD)
    page.click("#sign-in-button")
    page.wait_for_url(re.compile(r".*/web/$"))
    page.wait_for_selector("#new-rated")
    assert page.get_attribute("#new-rated", "aria-describedby") == "new-rated-hint"
    assert "one seat each" in page.inner_text("#new-rated-hint")
    assert page.input_value("#new-clock") == ""                          # no clock by default
    page.select_option("#new-type", "big-shot")
    page.fill("#new-players", "3")
    page.press("#new-players", "Tab")
    page.select_option("#seat-1", "heuristic")
    page.select_option("#seat-2", "search")
    page.fill("#seat-2-ms", "50")                                          # dropped: a rated bot plays its default
    page.check("#new-rated")
    assert page.input_value("#new-clock") == "300"                       # rated needs a clock: 5 minutes
    assert page.is_disabled("#no-clock") and page.is_hidden("#seat-2-ms")
    page.select_option("#new-clock", "3600")
    page.click("#create-button")
    page.wait_for_url(re.compile(r".*/web/games/\w+\?seat=0$"))
    game_id = urlparse(page.url).path.split("/")[3]
    summary = api(server, "GET", f"/v1/games/{game_id}").json
    assert summary["platform_options"] == {"rated": True, "turn_timeout": 3600}
    assert summary["seats"][0]["name"] == USERNAME and summary["seats"][0].get("account")
    assert summary["seats"][2] == {"kind": "bot", "level": "search"}

    # --- the table: "Rated", each player's rating of big-shot (none yet for the new account)
    page.wait_for_selector("#rated-badge")
    page.wait_for_selector("#players .seat-player[data-seat='0'] .rating")
    players = page.locator("#players")
    assert players.locator(f"a.player:text-is('{USERNAME}')").get_attribute("href") == f"/web/players/{USERNAME}"
    assert players.locator(".seat-player[data-seat='0'] .rating").inner_text() == "unrated"
    page.wait_for_selector("#players .seat-player[data-seat='1'] .rating.provisional")
    heuristic = api(server, "GET", "/v1/accounts/heuristic").json["ratings"]["big-shot"]
    assert players.locator(".seat-player[data-seat='1'] .rating").inner_text().startswith(
        f"{round(heuristic['ordinal'])}?")
    assert "clock: 1 hour a move" in page.inner_text("#status")

    # --- the lobby lists it "rated", the account's name linking to its page; a guest is asked to sign in
    page.goto(server.url + "/web/")
    row = page.locator(f"li.game[data-game='{game_id}']")
    row.wait_for()
    assert row.locator(".badge.rated").inner_text() == "rated"
    assert row.locator(f"a.player:text-is('{USERNAME}')").count() == 1
    open_game = api(server, "POST", "/v1/games", json={"type": "big-shot", "rated": True, "turn_timeout": 60,
                                                      "seats": [{}, {"bot": "random"}]}).json["game_id"]
    guest = new_page(chromium, 375)
    guest.goto(server.url + "/web/")
    guest.wait_for_selector("#new-clock")
    assert guest.locator("#new-rated").count() == 0                     # rated: signed in only
    guest_row = guest.locator(f"#open-games li.game[data-game='{open_game}']")
    guest_row.wait_for()
    assert guest_row.locator("a:has-text('Sign in to take a seat')").count() == 1
    assert guest_row.locator("button:has-text('Take seat')").count() == 0
    assert no_horizontal_scroll(guest)
    assert not guest.errors, guest.errors
    guest.context.close()

    # --- the player's page: joined, no rating yet, the game among its recent ones; My games links it
    page.goto(server.url + f"/web/players/{USERNAME}")
    page.wait_for_selector("#joined")
    assert page.locator("#no-ratings").count() == 1 and page.locator(".badge.you").count() == 1
    recent = page.locator(f"#recent-games li[data-game='{game_id}']")
    assert recent.locator(".badge.rated").count() == 1
    assert recent.locator("a:has-text('Replay')").get_attribute("href") == f"/web/games/{game_id}/replay"
    page.goto(server.url + "/web/my-games")
    page.wait_for_selector(f"#my-games li[data-game='{game_id}'] a.player")
    assert not page.errors, page.errors
    page.context.close()
