"""The accessibility probe: axe-core run in headless Chromium over the lobby, a table of each
game in progress (as its seat 0), the replay of a finished game and the account pages, at
desktop (1280x800) and phone (390x844) sizes. A page passes with no violation of a rule tagged
wcag2a, wcag2aa, wcag21a or wcag21aa (among them color-contrast, the aria-* rules, button-name,
image-alt, label, list, listitem, role-img-alt, scrollable-region-focusable); a failure prints
each violation with its selector and axe's message, so it says what to fix. Then the phone
layout of every page: nothing wider than 390 px, no table cut off by its card, and on a table
the part of the board being decided on drawn right above the actions panel.

axe-core comes bundled in axe-playwright-python (its axe.min.js, MPL-2.0; the wrapper MIT): no
network at test time. It is evaluated into the page through the DevTools protocol; the pages'
CSP allows no eval, so the contexts here bypass it (the test only). Screenshots of the window go
to a pytest tmp folder; WEB_SHOTS=DIR takes whole pages there instead."""

import json
import os
import random

import pytest

import web_kit

pytestmark = pytest.mark.skipif(web_kit.chromium_path() is None,
                                reason="chromium is not installed (apt-get install chromium): browser tests skipped")

RULE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
GAMES = ["speculation", "spekulation", "speculate", "big-shot"]
PASSWORD = "a long passphrase 42"
# the board's cards that say what is being decided (draw/*.js), or hold a move played on the
# board (draw/play.js): on a phone one of them sits right above the actions panel (app.css,
# "the phone's table")
DECISION = ".auction, .turn-box, .pot-box, .trump-box, .hand, .decision, .card:has(button.playable, .has-move)"
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


@pytest.fixture(scope="module")
def axe():
    sync = pytest.importorskip("axe_playwright_python.sync_playwright",
                               reason="axe-playwright-python is not installed (pip install -e '.[test]')")
    return sync.Axe()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return os.environ.get("WEB_SHOTS") or str(tmp_path_factory.mktemp("a11y"))


def _random_moves(service, game_id, rng, at_least, until=lambda session: False):
    """Random legal moves by whoever is to act (every seat is a person's: nothing moves on its
    own while axe looks) until `at_least` were made and `until` holds, or the game is over."""
    from projections import disclosure
    from projections.templates import fill_template

    made = 0
    while True:
        session = service.load(game_id)
        if session.status != "active" or (made >= at_least and until(session)):
            return session
        seat = rng.choice(session.to_act())
        legal = disclosure.view_for(session, seat)["legal_actions"]
        service.act(game_id, seat, fill_template(rng.choice(legal), rng), expected_version=session.version,
                    idempotency_key=f"a11y-{game_id}-{session.version}")
        made += 1


def _new_game(service, game_type):
    """A game of three people's seats at its shortest options. Returns (id, seat 0's token)."""
    from ops.drills._kit import short_options

    session = service.create(game_type, short_options(game_type), [{}, {}, {}])
    tokens = [service.claim(session.game_id, s, name)[1] for s, name in enumerate(["alice", "bob", "carol"])]
    return session.game_id, tokens[0]


# the moment each table is probed at: seat 0 offered one of these, the busiest part of its board
# (an auction with its pot and offer; spekulation's trades, a column of moves in the companies'
# table; speculate's trading under the prices)
BUSY = {"speculation": {"bid"}, "spekulation": {"buy", "sell"}, "speculate": {"buy"}, "big-shot": {"bid"}}


def _seat_0_offered(session, types):
    from projections import disclosure

    return 0 in session.to_act() and any(a["type"] in types for a in disclosure.view_for(session, 0)["legal_actions"])


@pytest.fixture(scope="module")
def games(server):
    """A game of each type in progress at its busy moment with seat 0 to act (its token), and a
    finished one."""
    service, rng = server.service, random.Random(42)
    tables = {}
    for game_type in GAMES:
        for _ in range(20):   # a short game may end before that moment: another deal
            game_id, token = _new_game(service, game_type)
            if _random_moves(service, game_id, rng, 4, lambda s: _seat_0_offered(s, BUSY[game_type])).status == "active":
                tables[game_type] = (game_id, token)
                break
        else:
            raise AssertionError(f"no {game_type} game reached seat 0 offered {BUSY[game_type]}")
    finished, _ = _new_game(service, "speculation")
    assert _random_moves(service, finished, rng, 10 ** 6).status in ("ended", "scored")
    return {"tables": tables, "finished": finished}


@pytest.fixture(scope="module")
def guest(chromium, server, games):
    """A browser context holding the seats' tokens, as the table keeps them on a device."""
    context = chromium.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    page = context.new_page()
    page.goto(server.url + "/web/")
    page.evaluate("s => localStorage.setItem('speculation.seats', s)",
                  json.dumps({game_id: {"0": token} for game_id, token in games["tables"].values()}))
    page.close()
    yield context
    context.close()


@pytest.fixture(scope="module")
def signed_in(chromium, server):
    """A browser context signed in as ann through the sign-in page."""
    context = chromium.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    page = context.new_page()
    page.goto(server.url + "/web/sign-in?next=/web/my-games")
    page.fill("#si-username", "ann")
    page.fill("#si-password", PASSWORD)
    page.click("#sign-in-button")
    page.wait_for_selector("body[data-games]", state="attached", timeout=20000)   # My games, signed in
    page.close()
    yield context
    context.close()


# name: (context, path, what shows the page is drawn)
PAGES = {
    "lobby": ("guest", "/web/", "#create"),
    **{f"table-{g}": ("guest", f"/web/games/{{{g}}}?seat=0", "#actions .controls button") for g in GAMES},
    "replay": ("guest", "/web/games/{finished}/replay", "body[data-at]"),
    "sign-in": ("guest", "/web/sign-in", "#sign-in"),
    "sign-up": ("guest", "/web/sign-up", "#sign-up"),
    "my-games": ("signed_in", "/web/my-games", "body[data-games]"),
    "account": ("signed_in", "/web/account", "#sessions-h"),
    "leaderboard": ("signed_in", "/web/leaderboard", "body[data-rows]"),
    "player": ("signed_in", "/web/players/ann", "body[data-player]"),
}


def _open(request, server, games, name):
    context_name, path, ready = PAGES[name]
    context = request.getfixturevalue(context_name)
    ids = {g: game_id for g, (game_id, _) in games["tables"].items()}
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(server.url + path.format(finished=games["finished"], **ids))
    try:
        page.wait_for_selector(ready, state="attached", timeout=20000)
    except Exception:
        raise AssertionError(f"{name} never showed {ready}: {page.inner_text('body')[:600]!r} {page.errors}") from None
    return page


def _report(violations):
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']} -- {v['helpUrl']}")
        for node in v["nodes"][:8]:
            checks = node.get("any") or node.get("all") or node.get("none") or [{}]
            lines.append(f"    {' '.join(map(str, node['target']))}: {node['html'][:160]}")
            lines.append(f"        {checks[0].get('message', '')}")
        if len(v["nodes"]) > 8:
            lines.append(f"    ... and {len(v['nodes']) - 8} more")
    return "\n".join(lines)


# Pieces filled with a colour (an inline --c: cubes, markers, chips) stand out 3:1 from what is behind
# them (WCAG 1.4.11, which axe does not check), by their fill or by an edge (a border or a ring):
# yellow (1.8:1 on the page) needs a dark edge. Returns the ones that do not.
FAINT_PIECES = """() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const opaque = (c) => { const v = rgb(c); return v.length === 3 || (v.length === 4 && v[3] === 1); };
  const behind = (el) => { for (let e = el.parentElement; e; e = e.parentElement) {
    const bg = getComputedStyle(e).backgroundColor; if (opaque(bg)) return rgb(bg); } return [255, 255, 255]; };
  const faint = [];
  for (const el of document.querySelectorAll('#main [style*="--c"]')) {
    const css = getComputedStyle(el), r = el.getBoundingClientRect(), hex = css.getPropertyValue('--c').trim();
    const own = /^#[0-9a-f]{6}$/i.test(hex) ? [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) : null;
    // a piece filled with its colour (a card only edged in it names its company in text)
    if (!r.width || !own || rgb(css.backgroundColor).slice(0, 3).join() !== own.join()) continue;
    const back = behind(el), fill = rgb(css.backgroundColor);
    const edges = [];
    if (parseFloat(css.borderTopWidth) >= 1) edges.push(rgb(css.borderTopColor));
    for (const m of css.boxShadow.matchAll(/rgba?\\([^)]*\\)/g)) if (opaque(m[0])) edges.push(rgb(m[0]));
    const best = Math.max(ratio(fill, back), ...edges.map((e) => Math.max(ratio(e, back), ratio(e, fill))));
    if (best < 3) faint.push(`${el.className} ${el.title || el.textContent.trim().slice(0, 20)}: ${best.toFixed(2)}:1`);
  }
  return faint;
}"""


def _phone_layout_problems(page, name):
    """At 390 px: the page no wider, no table wider than its card (a wide one reflows or fits),
    and on a table the card drawn nearest above the actions panel says what is being decided."""
    problems = []
    width = page.evaluate("document.documentElement.scrollWidth")
    if width > 390:
        problems.append(f"the page is {width} px wide at 390")
    cut = page.evaluate("""() => [...document.querySelectorAll('#main table')].filter((t) => {
        const box = (t.closest('.card') || document.body).getBoundingClientRect();
        const r = t.getBoundingClientRect();
        return r.width > 0 && (r.right > box.right + 0.5 || r.left < box.left - 0.5); }).map((t) => t.outerHTML.slice(0, 120))""")
    problems += [f"a table wider than its card at 390 px: {t}" for t in cut]
    if name.startswith("table-"):
        above = page.evaluate("""(decision) => {
            const actions = document.querySelector('#actions'), top = actions.getBoundingClientRect().top;
            let best = null, bottom = -Infinity;
            for (const el of document.querySelectorAll('#main .card, #main > *')) {
              const r = el.getBoundingClientRect();
              if (r.height > 0 && r.bottom <= top + 0.5 && r.bottom > bottom && !el.contains(actions)) { best = el; bottom = r.bottom; }
            }
            return best ? [best.matches(decision), best.className, (best.querySelector('h2, summary') || best).textContent.slice(0, 40)] : null;
        }""", DECISION)
        if not (above and above[0]):
            problems.append(f"on a phone the card right above the actions is {above}, not what is being decided ({DECISION})")
    return problems


@pytest.mark.parametrize("name", list(PAGES))
def test_axe_finds_no_contrast_or_role_violation_and_the_phone_layout_fits(request, server, games, axe, shots, name):
    page = _open(request, server, games, name)
    try:
        found, layout = {}, []
        for size, (width, height) in SIZES.items():
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(100)
            page.screenshot(path=f"{shots}/a11y-{name}-{size}.png", full_page="WEB_SHOTS" in os.environ)
            if size == "phone":
                layout += _phone_layout_problems(page, name)
            layout += [f"at {size}, a piece that does not stand out 3:1: {p}" for p in page.evaluate(FAINT_PIECES)]
            result = axe.run(page, options={"runOnly": {"type": "tag", "values": RULE_TAGS}, "resultTypes": ["violations"]})
            if result.response["violations"]:
                found[size] = result.response["violations"]
        report = "\n".join(f"--- {name} at {size}:\n{_report(v)}" for size, v in found.items())
        if report or layout:
            print(report, *layout, sep="\n")
        assert not layout, f"the layout of {name}: " + "; ".join(layout)
        assert not found, f"axe-core found violations on {name}:\n{report}"
        assert page.errors == [], page.errors
    finally:
        page.close()
