"""Speculate (hidden objectives) for people: share types, event cards, objectives in words."""

from __future__ import annotations

from .common import listing, plural, span

SHARES = ("stores", "mines", "properties", "railways", "shipping")


def share(s) -> str:
    return str(s).capitalize() if s else "?"


def card(c) -> str:
    """An event card: "mines:+3" → "Mines +3", "stores:dividend" → "Stores dividend"."""
    if not isinstance(c, str) or ":" not in c:
        return "a card"
    kind, _, effect = c.partition(":")
    return f"{share(kind)} {effect.replace('-', '−')}"


def objective(o) -> str:
    """An objective card (its id or the dict) in words."""
    if isinstance(o, dict):
        targets = o.get("targets") or {}
        return f"Level {o.get('level')}: " + ", ".join(f"{share(k)} {v}" for k, v in targets.items())
    if isinstance(o, str) and ":" in o:
        level, _, rest = o.partition(":")
        parts = [p.split("=") for p in rest.split(",")]
        return f"Level {level[1:]}: " + ", ".join(f"{share(k)} {v}" for k, v in parts if v)
    return "an objective"


def glossary() -> dict:
    cards = {}
    for s in SHARES:
        for effect in ("+1", "+2", "+3", "+4", "-1", "-2", "-3", "-4", "dividend"):
            cards[f"{s}:{effect}"] = {"name": card(f"{s}:{effect}")}
    return {"shares": {s: {"name": share(s)} for s in SHARES}, "cards": cards,
            "phases": {"event1": "first event card", "trade": "trading", "respond": "filling an announcement",
                       "event2": "second event card", "pay": "paying a reward in shares", "over": "over"}}


def _shares(d: dict) -> str:
    return listing(f"{n} {share(k)}" for k, n in (d or {}).items() if n)


def describe(t: str, d: dict, who) -> str:
    seat = d.get("seat")
    if t == "game_started":
        return f"The game starts: {who(d.get('start_player'))} plays first." if "start_player" in d else \
            "The game starts: decks shuffled."
    if t == "cards_dealt":
        if "cards" in d:
            return f"{who(seat)} is dealt {listing(card(c) for c in d['cards'])}."
        return f"{who(seat)} is dealt {plural(d.get('count', 3), 'event card')}."
    if t == "objective_dealt":
        if "objective" in d:
            return f"{who(seat)} draws an objective: {objective(d['objective'])}."
        return f"{who(seat)} draws a level {d.get('level')} objective, face down."
    if t == "turn_started":
        return f"Round {d.get('round')}: {who(seat)}'s turn" + (" (first turn)." if d.get("first_turn") else ".")
    if t == "fee_paid":
        return f"{who(seat)} pays the fee of {d.get('amount')}."
    if t == "fee_deferred":
        return f"{who(seat)} cannot pay the fee: {d.get('due')} will be due after trading."
    if t == "event_played":
        return f"{who(seat)} plays {card(d.get('card'))}."
    if t == "price_moved":
        delta = d.get("delta") or 0
        return f"{share(d.get('share'))} {'rises' if delta > 0 else 'falls' if delta < 0 else 'stays'}" \
               f" {abs(delta) if delta else ''} to {d.get('price')}.".replace("  ", " ")
    if t == "dividends_paid":
        paid = [p for p in d.get("payments") or [] if p.get("amount")]
        text = f"{share(d.get('share'))} pays a dividend of {d.get('per_share')} per share"
        if paid:
            text += ": " + "; ".join(f"{who(p['seat'])} {p['amount']}" for p in paid)
        return text + "."
    if t == "deck_reshuffled":
        return "The discard pile is shuffled into a new event deck."
    if t == "card_drawn":
        if "card" in d:
            return f"{who(seat)} draws {card(d['card'])}."
        return f"{who(seat)} draws an event card."
    if t == "announced":
        side = "buy" if d.get("side") == "buy" else "sell"
        return f"{who(seat)} announces: {side} {d.get('count')} {share(d.get('share'))}."
    if t == "traded":
        seller = "the bank" if d.get("seller") is None else who(d.get("seller"))
        buyer = "the bank" if d.get("buyer") is None else who(d.get("buyer"))
        return (f"{seller} sells {d.get('count')} {share(d.get('share'))} to {buyer} "
                f"at {d.get('unit_price')} each.")
    if t == "passed":
        return f"{who(seat)} passes."
    if t == "announcement_closed":
        return (f"The announcement closes: {d.get('filled')} filled"
                + (f", {d.get('unfilled')} not filled." if d.get("unfilled") else "."))
    if t == "trading_ended":
        return f"{who(seat)} ends trading."
    if t == "late_fee_paid":
        return f"{who(seat)} pays the late fee of {d.get('amount')}."
    if t == "bankrupt":
        return f"{who(seat)} cannot pay the late fee and is bankrupt: out of the game."
    if t == "objective_met":
        return f"{who(seat)} meets an objective: {objective(d.get('objective'))}."
    if t == "share_payment_due":
        return f"{who(seat)} must pay {who(d.get('to'))} shares worth at least {d.get('value')}."
    if t == "payment_chosen":
        return f"{who(seat)} gives {d.get('count')} {share(d.get('share'))}."
    if t == "reward_paid":
        payer = "The bank" if d.get("payer") is None else who(d.get("payer"))
        parts = []
        if d.get("money"):
            parts.append(str(d["money"]))
        if d.get("shares"):
            parts.append(_shares(d["shares"]))
        return f"{payer} pays {who(d.get('to'))} a reward of {listing(parts) if parts else 'nothing'}."
    if t == "game_ended":
        reason = "the last round is over" if d.get("reason") == "rounds" else "one player is left"
        return f"The game ends: {reason}."
    return ""


def announcement(ann: dict, who) -> str:
    """The announcement going round, in words."""
    text = (f"{who(ann.get('seat'))} wants to {ann.get('side')} {ann.get('count')} {share(ann.get('share'))} "
            f"at {ann.get('market_price')}; {ann.get('remaining')} still to fill")
    if ann.get("responder") is not None:
        text += f"; {who(ann['responder'])} is asked"
    return text


def action(a: dict) -> str:
    t = a.get("type")
    if t == "play_event":
        return f"Play {card(a.get('card'))}"
    if t in ("buy", "sell"):
        return f"{t.capitalize()} {span(a.get('count'))} {share(a.get('share'))}"
    if t == "end_trading":
        return "End trading"
    if t == "respond":
        return f"Fill {span(a.get('count'))} of the announcement (0 = pass)"
    if t == "give_shares":
        return f"Give {a.get('count')} {share(a.get('share'))}"
    return t


def draw(state: dict, who, viewer) -> list[str]:
    if not state:
        return ["(the game has not started)"]
    prices = state.get("prices") or {}
    out = [f"Round {state.get('round')} of {state.get('rounds')} · {who(state.get('active'))} plays · "
           f"phase {state.get('phase')}"]
    out.append("Prices: " + "  ".join(f"{share(s)} {p}" for s, p in prices.items()))
    bank = state.get("bank") or {}
    out.append(f"Bank: money {bank.get('money')} · {_shares(bank.get('shares'))}")
    for s, money in enumerate(state.get("money") or []):
        held = _shares((state.get("shares") or [{}])[s])
        alive = (state.get("alive") or [True] * (s + 1))[s]
        mark = " ← to act" if s in (state.get("to_act") or []) else ""
        out.append(f"  {who(s):<22} money {money:>5} · {held or 'no shares'} · "
                   f"{plural((state.get('hand_counts') or [0] * (s + 1))[s], 'card')}"
                   f" · objective level {(state.get('objective_levels') or [0] * (s + 1))[s]}"
                   + ("" if alive else " · BANKRUPT") + mark)
    ann = state.get("announcement")
    if ann:
        out.append("Announcement: " + announcement(ann, who))
    you = state.get("you")
    if you:
        out.append("Your hand: " + ", ".join(card(c) for c in you.get("hand") or []))
        if you.get("objective"):
            out.append("Your objective: " + objective(you["objective"])
                       + (" — met right now" if you.get("objective_met_now") else ""))
    return out


def hands(full_state: dict, players: int) -> list[dict]:
    out = []
    objectives = full_state.get("objectives") or []
    for s, hand in enumerate(full_state.get("hands") or []):
        names = [card(c) for c in hand]
        entry = {"seat": s, "label": "hand", "cards": list(hand), "names": names}
        if s < len(objectives) and objectives[s] is not None:
            entry["objective"] = objective(objectives[s])
        out.append(entry)
    return out


def breakdown(state: dict, events: list, result: dict) -> list[dict]:
    """What made each seat's score at the end: its money and its shares at the final prices
    (a bankrupt seat scores nothing: its money and shares went to the bank), from the public
    final view. The objectives' rewards are in the money; the notes say how many were met."""
    prices = state.get("prices") or {}
    alive = state.get("alive") or []
    met = state.get("objectives_met") or []
    out = []
    for s, money in enumerate(state.get("money") or []):
        mine = met[s] if s < len(met) else []
        notes = [f"Met {plural(len(mine), 'objective')}" + (": " + "; ".join(objective(o) for o in mine) if mine else "")
                 + (" (each reward is in the money)." if mine else ".")]
        if s < len(alive) and not alive[s]:
            out.append({"parts": [{"label": "Bankrupt: out of the game, its money and shares went to the bank",
                                   "amount": 0}], "notes": notes})
            continue
        parts = [{"label": "Money", "amount": money}]
        held = (state.get("shares") or [{}])[s] if s < len(state.get("shares") or []) else {}
        for kind in SHARES:
            n = held.get(kind) or 0
            if n:
                parts.append({"label": f"{n} {share(kind)} at {prices.get(kind)}", "amount": n * (prices.get(kind) or 0)})
        out.append({"parts": parts, "notes": notes})
    return out
