"""Spekulation (the stock race) for people: companies by name, the track, prices, shares."""

from __future__ import annotations

from .common import game_ended, listing, plural

COMPANIES = ("red", "yellow", "dark-blue", "light-blue", "green", "orange", "brown", "grey")
COLOURS = {"red": "#c62828", "yellow": "#f9a825", "dark-blue": "#1a3f8f", "light-blue": "#4fa3e0",
           "green": "#2e7d32", "orange": "#ef6c00", "brown": "#6d4c41", "grey": "#757575"}
FACES = {"H": "trade", "+1": "+1", "-1": "−1", "blank": "blank (nothing)"}
TILES = {"trade": "trade", "+1": "+1", "-1": "−1", "none": "none (nothing)"}


def name(card) -> str:
    if card == "holiday":
        return "Bank holiday"
    if card in (None, "card"):
        return "a card"
    return str(card).replace("-", " ").capitalize()


def price_tables() -> dict:
    """The board's price tables (the rules' data file: section x rank, and the END list)."""
    import json
    from pathlib import Path

    import projections

    try:
        data = json.loads((Path(projections.__file__).parent / "data" / "spekulation.json").read_text())
        return {"boards": data["boards"], "start_price": data.get("start_price"),
                "reconstructed": bool(data.get("reconstructed"))}
    except (OSError, ValueError, KeyError):
        return {}


def glossary() -> dict:
    return {"price_tables": price_tables(), "companies": {c: {"name": name(c), "colour": COLOURS[c]} for c in COMPANIES},
            "cards": {c: {"name": name(c)} for c in COMPANIES + ("holiday",)},
            "actions": {"trade": "Trade round", "+1": "+1: move a company up", "-1": "−1: move a company down",
                        "none": "Nothing this turn"}}


def _pos(p, end=None) -> str:
    if p == 0:
        return "the start"
    if end is not None and p >= end:
        return "the END"
    return f"space {p}"


def describe(t: str, d: dict, who) -> str:
    seat = d.get("seat")
    if t == "start_player_drawn":
        return f"{who(seat)} is drawn as the start player."
    if t == "supply_filled":
        return f"The supply is filled with {plural(d.get('count'), 'share')} of each company."
    if t == "money_dealt":
        return f"Everyone gets {d.get('amount')} money."
    if t == "shares_drawn":
        return "Shares drawn from the bag: " + "; ".join(
            f"{who(s)} {name(c)}" for s, c in enumerate(d.get("shares") or [])) + "."
    if t == "share_chosen":
        return f"{who(seat)} chooses a share of {name(d.get('company'))}."
    if t == "deck_shuffled":
        text = f"{who(seat)}'s deck is shuffled"
        if d.get("order"):
            text += " (order: " + ", ".join(name(c) for c in d["order"]) + ")"
        return text + "."
    if t == "cards_drawn":
        if "cards" in d:
            return f"{who(seat)} draws {listing(name(c) for c in d['cards'])}."
        return f"{who(seat)} draws {plural(d.get('count'), 'card')}."
    if t == "turn_started":
        return f"Turn {d.get('turn')}: {who(seat)} is the active player."
    if t == "first_turn_trade":
        return "The first turn is a trade round."
    if t == "symbol_rolled":
        return f"The symbol die shows {FACES.get(d.get('face'), d.get('face'))}."
    if t == "action_tile_drawn":
        return f"Action tile drawn: {TILES.get(d.get('tile'), d.get('tile'))}."
    if t == "share_bought":
        return f"{who(seat)} buys a share of {name(d.get('company'))} for {d.get('price')}."
    if t == "share_sold":
        return f"{who(seat)} sells a share of {name(d.get('company'))} for {d.get('price')}."
    if t == "trade_passed":
        return f"{who(seat)} passes."
    if t == "rank_moved":
        sign = "up" if d.get("direction") == "+1" else "down"
        return (f"{who(seat)} moves {name(d.get('company'))} {sign}: from {_pos(d.get('from'))} "
                f"to {_pos(d.get('to'), 60)}.")
    if t == "rank_move_skipped":
        return f"No company may move {d.get('direction')}: skipped."
    if t in ("number_rolled", "move_tile_drawn"):
        return f"The movement number is {d.get('number')}." if t == "move_tile_drawn" else \
            f"The number die shows {d.get('number')}."
    if t == "card_committed":
        if "card" in d:
            return f"{who(seat)} commits {name(d['card'])}, face down."
        return f"{who(seat)} commits a card, face down."
    if t == "cards_revealed":
        return "Cards revealed: " + "; ".join(f"{who(s)} {name(c)}" for s, c in enumerate(d.get("cards") or [])) + "."
    if t == "marker_moved":
        if d.get("from") == d.get("to"):
            return f"{name(d.get('company'))} ({who(seat)}'s card) is on the END already: it stays."
        return (f"{name(d.get('company'))} ({who(seat)}'s card) moves {plural(d.get('steps'), 'step')}: "
                f"from {_pos(d.get('from'))} to {_pos(d.get('to'), 60)}.")
    if t == "no_movement":
        return f"Bank holiday ({plural(d.get('holidays'), 'holiday card')}): nothing moves."
    if t == "tiles_returned":
        return "Every tile goes back into its bag."
    if t == "game_ended":
        return game_ended(d.get("scores"), who)
    return ""


def action(a: dict) -> str:
    t = a.get("type")
    company = name(a.get("company"))
    return {"choose_share": f"Take a share of {company}", "buy": f"Buy {company}", "sell": f"Sell {company}",
            "pass": "Pass", "rank_move": f"Move {company}",
            "play": f"Play {name(a.get('card'))}"}.get(t, t)


def draw(state: dict, who, viewer) -> list[str]:
    if not state:
        return ["(the game has not started)"]
    companies = state.get("companies") or {}
    out = [f"Turn {state.get('turn')} · active {who(state.get('active'))} · this turn: "
           f"{state.get('action') or '—'}" + (f" · number {state['number']}" if state.get("number") else "")
           + f" · {state.get('edition')} edition, {state.get('board')} board"]
    out.append(f"  {'company':<11} {'space':>5} {'rank':>4} {'price':>5} {'supply':>6}")
    end = state.get("end_space")
    for c in sorted(companies, key=lambda c: companies[c].get("rank", 9)):
        info = companies[c]
        where = "END" if info.get("at_end") else ("start" if info.get("at_start") else str(info.get("position")))
        out.append(f"  {name(c):<11} {where:>5} {info.get('rank'):>4} {info.get('price'):>5} {info.get('supply'):>6}")
    track = ["·"] * ((end or 61) + 1)
    for c, info in companies.items():
        p = min(info.get("position", 0), len(track) - 1)
        track[p] = c[0].upper() if track[p] == "·" else "*"
    out.append("  track: " + "".join(track))
    for s in state.get("seats") or []:
        held = ", ".join(f"{name(c)}×{n}" for c, n in (s.get("shares") or {}).items() if n) or "no shares"
        mark = " ← to act" if s.get("seat") in (state.get("to_act") or []) else ""
        done = " (committed)" if s.get("committed") else ""
        out.append(f"  {who(s.get('seat')):<22} money {s.get('money'):>5} · {held} · "
                   f"{plural(s.get('hand_count'), 'card')} in hand{done}{mark}")
    if state.get("hand") is not None:
        out.append("Your hand: " + (", ".join(name(c) for c in state["hand"]) or "empty")
                   + (f" · committed: {name(state['committed_card'])}" if state.get("committed_card") else ""))
    if state.get("hands"):
        for s, hand in enumerate(state["hands"]):
            out.append(f"  {who(s)}'s hand: {', '.join(name(c) for c in hand)}")
    if state.get("last_reveal"):
        out.append("Last reveal: " + ", ".join(name(c) for c in state["last_reveal"]))
    return out


def hands(full_state: dict, players: int) -> list[dict]:
    out = []
    for s, hand in enumerate(full_state.get("hands") or []):
        out.append({"seat": s, "label": "hand", "cards": list(hand), "names": [name(c) for c in hand]})
    return out


def breakdown(state: dict, events: list, result: dict) -> list[dict]:
    """What made each seat's score at the end: its money and every share it holds at the
    company's final price (a negative price counts against it), from the public final view."""
    companies = state.get("companies") or {}
    arrivals = state.get("arrivals") or []
    out = []
    for info in state.get("seats") or []:
        parts = [{"label": "Money", "amount": info.get("money", 0)}]
        for c in sorted(companies, key=lambda c: companies[c].get("rank", 9)):
            held = (info.get("shares") or {}).get(c) or 0
            if not held:
                continue
            co = companies[c]
            where = (f"arrived {_ordinal(arrivals.index(c) + 1)} at the END" if co.get("at_end") and c in arrivals
                     else "on the start" if co.get("at_start") else f"rank {co.get('rank')} on space {co.get('position')}")
            parts.append({"label": f"{plural(held, 'share')} of {name(c)} at {co.get('price')} ({where})",
                          "amount": held * (co.get("price") or 0)})
        out.append({"parts": parts, "notes": [] if len(parts) > 1 else ["No shares held at the end."]})
    return out


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
