"""`make screenshots`: docs/images/*.png of the lobby, each game's table (mid-game, as seat 0
at 375 px and at 1100 px) and the replay viewer, taken with Debian's Chromium."""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

from ops import live_server  # noqa: E402
from projections import speculate, speculation  # noqa: E402
from projections.registry import game_types, get_game  # noqa: E402

OUT = ROOT / "docs" / "images"
# Options that keep a game's table quick to reach, by game (a game not here: its defaults).
# Every hosted game (projections/registry.py) gets its table's screenshots.
OPTIONS = {speculation.NAME: {"deals": 2}, speculate.NAME: {"rounds": 2}}
SEATS = 3   # seat 0 and two heuristics, or the nearest count the game allows


def games() -> dict[str, tuple[dict, list[dict]]]:
    """Every hosted game, in the lobby's order: its options and its seats (seat 0 for the
    screenshot, the others its heuristic's, or random bots for a game without one)."""
    out = {}
    for t in game_types():
        game = get_game(t.name)
        seats = min(max(SEATS, game.MIN_PLAYERS), game.MAX_PLAYERS)
        out[t.name] = OPTIONS.get(t.name, {}), [{}] + [{"bot": "heuristic" if t.bots else "random"}] * (seats - 1)
    return out


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    server = live_server.LiveServer().start()
    service = server.service
    try:
        with live_server.browser() as b:
            for width, suffix in ((375, "-phone"), (1100, "")):
                ctx = b.new_context(viewport={"width": width, "height": 900}, bypass_csp=True)
                page = ctx.new_page()
                for game_type, (options, seats) in games().items():
                    session = service.create(game_type, options, seats)
                    _, token = service.claim(session.game_id, 0, "alice")
                    page.goto(server.url + "/web/")
                    page.evaluate("([g, t]) => localStorage.setItem('speculation.seats', JSON.stringify({[g]: {0: t}}))",
                                  [session.game_id, token])
                    page.goto(f"{server.url}/web/games/{session.game_id}?seat=0")
                    live_server.wait_status(page, ["active"])
                    for _ in range(6):  # a few moves in: something on the table
                        control = page.locator("#actions .controls > button.action, #actions .controls form.template button").first
                        if control.count():
                            control.click()
                        page.wait_for_timeout(400)
                    page.wait_for_selector("#actions .controls", timeout=20000)
                    page.wait_for_timeout(500)
                    page.screenshot(path=str(OUT / f"table-{game_type}{suffix}.png"), full_page=True)
                page.goto(server.url + "/web/")
                page.wait_for_selector("#live-games")
                page.screenshot(path=str(OUT / f"lobby{suffix}.png"), full_page=True)
                finished = service.create("speculation", {"deals": 1}, [{"bot": "heuristic"}] * 3)
                while service.load(finished.game_id).status != "scored":
                    time.sleep(0.05)
                page.goto(f"{server.url}/web/games/{finished.game_id}/replay?at=14")
                page.wait_for_selector("#local-result", timeout=30000)
                page.screenshot(path=str(OUT / f"replay{suffix}.png"), full_page=True)
                ctx.close()
    finally:
        server.stop()
    for path in sorted(OUT.glob("*.png")):
        print(path.relative_to(ROOT))


if __name__ == "__main__":
    main()
