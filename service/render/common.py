"""What every game's rendering shares: seat names, numbers in words, template ranges."""

from __future__ import annotations

from typing import Optional


def seat_label(seats: list, seat: Optional[int], viewer: Optional[int] = None) -> str:
    """A seat as a person reads it: the player's name, or "Bot 2"; "(you)" for the viewer.
    People count seats from 1 (the API's seat 0 is "Seat 1")."""
    if seat is None:
        return "nobody"
    if not isinstance(seat, int) or not 0 <= seat < len(seats or []):
        return f"Seat {seat + 1}" if isinstance(seat, int) else f"Seat {seat}"
    info = seats[seat] or {}
    if info.get("kind") == "player" and info.get("name"):
        label = f"{info['name']}"
    elif info.get("kind") == "bot" and info.get("left") and info.get("name"):
        label = f"Bot {seat + 1} ({info['name']} left)"
    elif info.get("kind") == "bot":
        label = f"Bot {seat + 1}"
    else:
        label = f"Seat {seat + 1}"
    return label + (" (you)" if viewer is not None and seat == viewer else "")


def seat_title(seats: list, seat: int, viewer: Optional[int] = None) -> str:
    """A longer label for a table: "Seat 1 · Bot (heuristic)" (the API's seat 0)."""
    info = (seats or [])[seat] if seats and 0 <= seat < len(seats) else {}
    kind = info.get("kind")
    who = info.get("name") if kind == "player" else (f"bot, {info.get('level')}" if kind == "bot" else "open")
    if kind == "bot" and info.get("left") and info.get("name"):
        who += f", for {info['name']} who left"
    return f"Seat {seat + 1} · {who}" + (" (you)" if viewer is not None and seat == viewer else "")


def plural(n, word: str, many: Optional[str] = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def is_template(value) -> bool:
    return isinstance(value, dict) and set(value) == {"min", "max"}


def span(value) -> str:
    """A template range "3-36" (an en dash), or the value itself."""
    if is_template(value):
        return f"{value['min']}–{value['max']}"
    return str(value)


def listing(items) -> str:
    items = [str(i) for i in items]
    if not items:
        return "nothing"
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def game_ended(scores, who) -> str:
    """The end of a game that scores points per seat, in words."""
    return "The game ends. Scores: " + "; ".join(f"{who(s)} {v}" for s, v in enumerate(scores or [])) + "."
