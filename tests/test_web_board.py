"""Playing on the board, in a real browser: a game of each type played to its end by clicks on
the board's pieces only (never the button list), three at desktop size and one at phone size,
each move through its confirm step; the pieces named in the accessibility tree (buttons for the
moves, images for Big Shot's cubes and Spekulation's markers), letters beside the colours and
text on a coloured piece at 4.5:1 at least; Speculate's cost preview checked against the prices
the view shows; the button list's number fields saying their range once. Screenshots go to
pytest's tmp folder (WEB_SHOTS=DIR for another)."""

import os
import random
import re
import time

import pytest

import web_kit

# Games played by clicks against the clock of a live table: under the full suite's load they
# missed their waits (four failures in one fresh-clone run), so they run while nothing else does.
pytestmark = [pytest.mark.timing,
              pytest.mark.skipif(web_kit.chromium_path() is None,
                                 reason="chromium is not installed (apt-get install chromium): browser tests skipped")]

server = web_kit.live_server
chromium = web_kit.module_chromium
api = web_kit.api

DESKTOP = (1280, 800)
PHONE = (390, 844)
MOVES = "#board button.playable.move:not([disabled])"
PICKS = "#board button.playable.pick:not([aria-pressed='true']):not([aria-checked='true'])"


@pytest.fixture
def shots(tmp_path):
    return os.environ.get("WEB_SHOTS") or str(tmp_path)


def _table(server, chromium, game_type, players, options, size):
    """A game with seat 0 this browser's guest and random bots in the others, its table open."""
    seats = [{}] + [{"bot": "random"}] * (players - 1)
    made = api(server, "POST", "/v1/games", json={"type": game_type, "seats": seats, "options": options})
    assert made.status_code == 201, made.json
    game_id = made.json["game_id"]
    token = api(server, "POST", f"/v1/games/{game_id}/seats/0", json={"name": "alice"}).json["token"]
    context = chromium.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    # a piece found a moment ago may be gone (the table moved on): a short wait, then look again
    page.set_default_timeout(4000)
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(server.url + "/web/")
    page.evaluate("([g, t]) => localStorage.setItem('speculation.seats', JSON.stringify({[g]: {'0': t}}))", [game_id, token])
    page.goto(f"{server.url}/web/games/{game_id}?seat=0")
    web_kit.wait_status(page, ["active", "ended", "scored"])
    return game_id, token, page


def _status(page):
    return page.evaluate("document.body.dataset.status || ''")


def _confirm(page, seen):
    """The confirm step of the move just chosen: its question read, then Confirm."""
    bar = page.locator("#board-confirm")
    bar.wait_for(timeout=3000)
    question = page.locator("#board-confirm-q").inner_text()
    assert "?" in question, question
    assert "cannot be taken back" in bar.inner_text()
    seen.append(question)
    page.click("#board-confirm-yes", timeout=3000)
    try:
        bar.wait_for(state="detached", timeout=5000)
    except Exception:
        pass   # the game moved on meanwhile: the next round looks again


def step(page, rng, seen):
    """One move on the board, if one is offered: a random piece that is a move (else a piece that
    chooses, such as a cube to place), then Confirm. Returns whether something was clicked."""
    if page.locator("#actions[aria-busy]").count():
        return False
    moves = page.locator(MOVES)
    n = moves.count()
    try:
        if n:
            piece = moves.nth(rng.randrange(n))
            # the fallback list of plain buttons is never needed: every move is on a piece
            assert not piece.evaluate("el => Boolean(el.closest('#board-moves'))"), piece.inner_text()
            piece.click(timeout=1500)
            _confirm(page, seen)
            return True
        picks = page.locator(PICKS)
        if picks.count():
            picks.first.click(timeout=1500)
            return True
    except AssertionError:
        raise
    except Exception:
        return False   # the piece was drawn again under the click (the table moved on): look again
    return False


def play_on_the_board(page, rng, timeout=60.0, before_move=None):
    """Clicks on the board until the game ends. Returns the confirm questions seen."""
    seen = []
    deadline = time.monotonic() + timeout
    while _status(page) not in ("ended", "scored"):
        if time.monotonic() > deadline:
            raise AssertionError(f"the game did not end in {timeout} s ({len(seen)} moves): {seen[-5:]}")
        if before_move and before_move(page):
            continue
        if not step(page, rng, seen):
            page.wait_for_timeout(50)
    return seen


def _assert_contrast(page):
    """Every piece's text against its own colour: 4.5:1 at least (WCAG 2 relative luminance)."""
    pairs = page.evaluate("""() => [...document.querySelectorAll('#board .inked')].map((el) => [
        getComputedStyle(el).color, getComputedStyle(el).backgroundColor, el.textContent])""")
    assert pairs, "no coloured piece drawn"

    def lum(rgb):
        vals = [int(x) / 255 for x in re.findall(r"[\d.]+", rgb)[:3]]
        lin = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in vals]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    for fg, bg, text in pairs:
        hi, lo = sorted([lum(fg), lum(bg)], reverse=True)
        assert (hi + 0.05) / (lo + 0.05) >= 4.5, f"{text!r}: {fg} on {bg}"


def _finish(page, server, game_id, shots, name):
    web_kit.wait_status(page, ["scored"], timeout=30)
    page.wait_for_selector("#result", timeout=30000)
    assert re.search(r"wins|share the win", page.inner_text("#result"))
    assert server.service.load(game_id).status == "scored"
    page.screenshot(path=f"{shots}/board-{name}-end.png", full_page=True)
    assert not page.errors, page.errors


def test_big_shot_played_on_the_board(server, chromium, shots):
    game_id, _, page = _table(server, chromium, "big-shot", 2, {}, DESKTOP)
    try:
        page.wait_for_selector(MOVES, timeout=10000)
        # cubes are images named by count and colour, with their colour's letter on them
        cube = page.get_by_role("img", name=re.compile(r"^1 (Red|Blue|Green|Yellow) cube$")).first
        assert cube.count() and re.fullmatch(r"[RBGY]", cube.inner_text().strip())
        _assert_contrast(page)
        placed = []

        def look_at_placing(page):
            if not placed and page.locator("#districts button.cover").count():
                # a district that is a move is a button named by the move's words
                names = page.locator("#districts button.cover").evaluate_all("els => els.map((el) => el.getAttribute('aria-label'))")
                assert all(re.fullmatch(r"Place (Red|Blue|Green|Yellow) on [\w ]+", n) for n in names), names
                assert page.locator("#board").get_by_role("button", name=names[0], exact=True).count() == 1
                page.screenshot(path=f"{shots}/board-big-shot-placing.png")
                placed.append(names[0])
            return False

        seen = play_on_the_board(page, random.Random(1), timeout=180, before_move=look_at_placing)
        assert placed, "seat 0 never placed a cube"
        assert any(q.startswith("Place ") for q in seen) and any(q.startswith(("Bid ", "Pass?")) for q in seen)
        _finish(page, server, game_id, shots, "big-shot")
    finally:
        page.context.close()


def test_speculate_played_on_the_board_with_a_cost_preview(server, chromium, shots):
    game_id, token, page = _table(server, chromium, "speculate", 3, {"rounds": 1}, DESKTOP)
    checked = []

    def check_preview(page):
        """At the first trading choice: a company picked, Buy, an amount, the preview's figures
        against the price the view shows; then Cancel leaves the move unsent."""
        if checked or not page.locator("#prices button.playable.pick").count():
            return False
        view = api(server, "GET", f"/v1/games/{game_id}/view", token).json
        buys = [a for a in view["legal_actions"] if a["type"] == "buy" and a["count"]["max"] >= 2]
        if not buys:
            return False
        share = buys[0]["share"]
        price = view["state"]["prices"][share]
        markup = view["state"]["rules"]["bank_buy_markup"]
        name = page.locator(f"#prices button.playable.pick[aria-label^='Trade {share.capitalize()}']")
        name.click()
        page.get_by_role("radio", name="Buy").click()
        amount = page.locator("#board").get_by_role("spinbutton", name=re.compile(r"^How many to buy \(1 to \d+\)$"))
        amount.fill("2")
        preview = page.locator("#cost-preview").inner_text()
        assert f"2 × {price} = {2 * price}" in preview and f"2 × {price + markup} = {2 * (price + markup)}" in preview, preview
        assert preview.startswith("You pay")
        page.click("#board-announce")
        assert page.locator("#board-confirm-q").inner_text() == f"Announce: buy 2 {share.capitalize()}?"
        assert str(2 * (price + markup)) in page.locator("#board-confirm-detail").inner_text()
        page.screenshot(path=f"{shots}/board-speculate-preview.png")
        version = view["version"]
        page.click("#board-confirm-no")
        page.locator("#board-confirm").wait_for(state="detached")
        assert api(server, "GET", f"/v1/games/{game_id}/view", token).json["version"] == version   # Cancel sent nothing
        checked.append(share)
        return True

    try:
        seen = play_on_the_board(page, random.Random(2), timeout=180, before_move=check_preview)
        assert checked, "seat 0 never had a trade to preview"
        assert any(q.startswith("Play ") for q in seen)
        _finish(page, server, game_id, shots, "speculate")
    finally:
        page.context.close()


def test_spekulation_played_on_the_board(server, chromium, shots):
    game_id, token, page = _table(server, chromium, "spekulation", 3, {}, DESKTOP)
    seen_here = []
    try:
        page.wait_for_selector(MOVES, timeout=10000)
        # the first move: a share taken from its company's row, a button named by the move, one
        # for each company nobody has chosen yet (the bots before this seat may have taken some)
        view = api(server, "GET", f"/v1/games/{game_id}/view", token).json
        takes = [a["company"] for a in view["legal_actions"] if a["type"] == "choose_share"]
        assert takes, view["legal_actions"]
        shown = page.locator("#board").get_by_role("button", name=re.compile(r"^Take a share of "))
        names = sorted(n.removeprefix("Take a share of ").lower().replace(" ", "-")
                       for n in shown.evaluate_all("els => els.map((el) => el.getAttribute('aria-label') || el.textContent)"))
        assert names == sorted(c.lower() for c in takes), (names, takes)
        _assert_contrast(page)
        markers = []

        def look_at_markers(page):
            """The markers' letters once; then, when a card is to be played, the leader's card (a
            race played to its end sooner)."""
            cards = page.locator("#hand button.card-move")
            if cards.count() and not page.locator("#board-confirm").count():
                state = api(server, "GET", f"/v1/games/{game_id}/view", token).json["state"]
                running = {c: i for c, i in state["companies"].items() if not i.get("at_end")}
                names = cards.evaluate_all("els => els.map((el) => el.getAttribute('aria-label'))")
                leader = max(running, key=lambda c: running[c]["position"], default=None)
                wanted = f"Play {leader.replace('-', ' ').capitalize()}" if leader else None
                if wanted in names:
                    try:
                        cards.nth(names.index(wanted)).click(timeout=1500)
                        _confirm(page, seen_here)
                    except Exception:
                        pass
                    return True
            if not markers:
                found = page.get_by_role("img", name=re.compile(r" on space \d+$"))
                if found.count():
                    letter = found.first.inner_text().strip()
                    assert re.fullmatch(r"[A-Z][a-z]?", letter), letter   # a letter beside the colour
                    markers.append(found.first.get_attribute("aria-label"))
                    page.screenshot(path=f"{shots}/board-spekulation.png")
            return False

        seen = play_on_the_board(page, random.Random(3), timeout=180, before_move=look_at_markers)
        assert markers
        assert any(q.startswith("Play ") for q in seen + seen_here), (seen + seen_here)[:10]
        _finish(page, server, game_id, shots, "spekulation")
    finally:
        page.context.close()


def test_speculation_played_on_the_board_at_phone_size(server, chromium, shots):
    game_id, _, page = _table(server, chromium, "speculation", 3, {"deals": 2}, PHONE)
    try:
        seen = play_on_the_board(page, random.Random(4), timeout=180)
        assert seen, "seat 0 never moved"
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE[0]
        _finish(page, server, game_id, shots, "speculation-phone")
    finally:
        page.context.close()


def test_the_button_list_says_a_range_once(server, chromium):
    game_id, _, page = _table(server, chromium, "big-shot", 2, {}, DESKTOP)
    try:
        rng, seen = random.Random(5), []
        for _ in range(300):   # moves on the board until seat 0 may bid
            if page.locator("#actions form.template").count():
                break
            if not step(page, rng, seen):
                page.wait_for_timeout(50)
        form = page.locator("#actions form.template").first
        label = form.locator("label").inner_text().strip()
        assert re.fullmatch(r"(Bid|Put the promoter on space) \(\d+ to \d+\)", label), label
        assert len(re.findall(r"\d+", form.inner_text())) == 2          # the range once, nowhere else
        assert page.locator("#actions").get_by_role("spinbutton", name=label, exact=True).count() == 1
    finally:
        page.context.close()
