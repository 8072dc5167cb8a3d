"""A game for people: the one rendering shared by the web pages and the terminal.

Cards and companies by name, every event described in words as the viewer may see it (the
events given are already redacted for that viewer: this module only puts what it is given
into words, it never reads the store), labels for the legal actions, the table drawn as
text for the terminal, and after the end every hand revealed.

    describe_event("speculation", event, seats, viewer)  -> "Bot 2 bids 5 chips."
    describe_action("big-shot", {"type": "bid", "amount": {"min": 3, "max": 9}}) -> "Bid 3–9"
    draw_view(view)  -> the table as lines of text
    glossary("spekulation") -> names and colours the pages draw with
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Optional

from projections.registry import UnknownGame, get_game_type

from .common import listing, seat_label, seat_title

__all__ = ["describe_event", "describe_action", "draw_view", "glossary", "revealed_hands",
           "seat_label", "seat_title", "result_words", "standings", "words"]


def words(game_type: str) -> Optional[ModuleType]:
    """The game's words module, the one its declaration names (GameType.render); None for a
    game that is not hosted or is registered with its rules alone (the tests' toy game)."""
    try:
        return importlib.import_module(get_game_type(game_type).render)
    except UnknownGame:
        return None


def _who(seats, viewer):
    return lambda seat: seat_label(seats, seat, viewer)


def _person_seat(seat):
    """A seat number as people count (from 1); the API's seats are 0-based."""
    return seat + 1 if isinstance(seat, int) else seat


def describe_event(game_type: str, event: dict, seats: Optional[list] = None, viewer: Optional[int] = None) -> str:
    """One event (as the API shows it: type, data, cmd) in words."""
    t = event.get("type", "")
    d = event.get("data") or {}
    who = _who(seats or [], viewer)
    if t == "game.created":
        n = len(d.get("seats") or [])
        bots = sum(1 for s in d.get("seats") or [] if s.get("kind") == "bot")
        return (f"A game of {game_type} is created for {n} players ({bots} bots); "
                f"the seed's commitment is published ({str(d.get('commitment', ''))[:12]}…).")
    if t == "seat.claimed":
        name = d.get("name")
        if name is None and isinstance(d.get("seat"), int) and 0 <= d["seat"] < len(seats or []):
            name = seats[d["seat"]].get("name")   # an account's seat: its name is the seat's, not the event's
        return f"{name} takes seat {_person_seat(d.get('seat'))}."
    if t == "seat.left":
        seat = d.get("seat")
        info = seats[seat] if isinstance(seat, int) and 0 <= seat < len(seats or []) else {}
        shown = _person_seat(seat)
        return f"{info.get('name') or f'Seat {shown}'} leaves the game: a {d.get('level')} bot plays seat {shown} from now on."
    if t == "game.started":
        return "Every seat is filled: the game starts."
    if t == "game.expired":
        why = {"declined": "the invitation was declined", "cancelled": "the invitation was cancelled",
               "expired": "not every invited player came in time"}.get(d.get("reason"), "it expired")
        return f"The game never starts: {why}."
    if t == "game.abandoned":
        idle = max(0, (event.get("at") or 0) - (d.get("idle_since") or 0)) // 1000
        span = (f"{idle // 86400} d" if idle >= 86400 else f"{idle // 3600} h" if idle >= 3600
                else f"{idle // 60} min" if idle >= 60 else f"{idle} s")
        whom = " and ".join(who(s) for s in d.get("to_act") or []) or "a person"
        return (f"Nobody moved for {span} while {whom} was to act: the game is abandoned. "
                "It ends here, unscored and unrated.")
    if t == "game.scored":
        return "The game is scored: " + result_words(d.get("result") or {}, seats, viewer) + \
            " The seed is revealed, so anyone can check every draw."
    game = words(game_type)
    text = game.describe(t, d, who) if game else ""
    if not text:
        acted = (event.get("cmd") or {}).get("seat")
        text = f"{t.replace('_', ' ')}" + (f" ({who(acted)})" if acted is not None else "")
        text = text[0].upper() + text[1:] + "."
    return text


def result_words(result: dict, seats=None, viewer=None) -> str:
    who = _who(seats or [], viewer)
    winners = result.get("winners") or []
    scores = result.get("scores") or []
    text = f"{listing(who(w) for w in winners)} {'wins' if len(winners) == 1 else 'share the win'}"
    if scores:
        text += " (scores: " + "; ".join(f"{who(s)} {v}" for s, v in enumerate(scores)) + ")"
    return text + "."


def describe_action(game_type: str, action: dict) -> str:
    game = words(game_type)
    return game.action(action) if game else action.get("type", "?")


def glossary(game_type: str) -> dict:
    game = words(game_type)
    return game.glossary() if game else {}


def revealed_hands(game_type: str, full_state, players: int) -> list[dict]:
    """After the end: every hand, pile and objective, by name (from the full rules state)."""
    game = words(game_type)
    if not game or not isinstance(full_state, dict):
        return []
    return game.hands(full_state, players)


def standings(game_type: str, state: dict, events: list, result: dict, seats=None, viewer=None) -> list[dict]:
    """The end of a game as a table: each seat's place, score and what made it (the game's
    `breakdown` from the public final view `state` and the public `events`), best first.
    `adds_up` says whether the parts sum to the score the rules computed; the page shows a
    breakdown that does not, saying so, rather than hiding it."""
    game = words(game_type)
    scores = list(result.get("scores") or [])
    ranks = list(result.get("ranks") or [1 + sum(1 for o in scores if o > v) for v in scores])
    winners = set(result.get("winners") or [])
    made = game.breakdown(state or {}, events, result) if game and hasattr(game, "breakdown") else []
    rows = []
    for s, score in enumerate(scores):
        part = made[s] if s < len(made) else {"parts": [], "notes": []}
        rows.append({"seat": s, "label": seat_label(seats or [], s, viewer), "place": ranks[s] if s < len(ranks) else None,
                     "score": score, "winner": s in winners, "parts": part["parts"], "notes": part["notes"],
                     "adds_up": bool(part["parts"]) and sum(p["amount"] for p in part["parts"]) == score})
    return sorted(rows, key=lambda r: (r["place"] if r["place"] is not None else len(scores) + 1, r["seat"]))


def draw_view(view: dict) -> str:
    """A view (GET /view, the summary's view, or one of a replay) as text for a terminal."""
    game_type = view.get("type", "")
    seats = view.get("seats") or []
    viewer = view.get("seat")
    who = _who(seats, viewer)
    head = f"{game_type} · game {view.get('game_id')} · version {view.get('version')} · {view.get('status')}"
    lines = [head, "=" * min(len(head), 78)]
    game = words(game_type)
    if game:
        lines += game.draw(view.get("state") or {}, who, viewer)
    to_act = view.get("to_act") or []
    if to_act:
        lines.append("To act: " + listing(who(s) for s in to_act))
    if view.get("result"):
        lines.append("Result: " + result_words(view["result"], seats, viewer))
    return "\n".join(lines)
