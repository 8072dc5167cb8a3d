"""The parts of the tests' toy game (tests/toygame.py) above its rules, for
tests/test_game_declaration.py to declare it as a hosted game: its words (what
service/render/<game>.py gives) and its heuristic (what workers/bots/<game>.py gives). Its
payload schemas are tests/toygame_payloads.json; it is drawn by the generic drawer.
"""

from __future__ import annotations

import os

PAYLOADS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "toygame_payloads.json")


# --- words (service/render) ------------------------------------------------------------------

def describe(kind: str, data: dict, who) -> str:
    if kind == "bet":
        return f"{who(data['seat'])} bets" + (f" {data['amount']}." if "amount" in data else ".")
    if kind == "shown":
        return "The cards are shown: " + ("a tie." if data["winner"] is None else f"{who(data['winner'])} wins.")
    return ""


def action(act: dict) -> str:
    amount = act.get("amount")
    return f"Bet {amount['min']}–{amount['max']}" if isinstance(amount, dict) else f"Bet {amount}"


def glossary() -> dict:
    return {}


def hands(full_state: dict, players: int) -> list[dict]:
    return []


def draw(state: dict, who, viewer) -> list[str]:
    return [f"Round {state.get('round', 0) + 1}; chips: {state.get('chips')}"]


# --- the heuristic (workers/bots) ------------------------------------------------------------

def heuristic(view: dict, legal_actions: list, seat: int, rng) -> dict:
    """Bets high on a high card, nothing on a low one."""
    amount = legal_actions[0]["amount"]
    return {"type": "bet", "amount": amount["max"] if (view.get("my_card") or 0) >= 5 else amount["min"]}
