"""Speculation (the card game) for people: cards by name, the table, every event in words."""

from __future__ import annotations

from .common import listing, plural, span

RANKS = "23456789TJQKA"
SUITS = "CDHS"
RANK_NAMES = {"2": "Two", "3": "Three", "4": "Four", "5": "Five", "6": "Six", "7": "Seven", "8": "Eight",
              "9": "Nine", "T": "Ten", "J": "Jack", "Q": "Queen", "K": "King", "A": "Ace"}
RANK_SHORT = {"T": "10"}
SUIT_NAMES = {"C": "Clubs", "D": "Diamonds", "H": "Hearts", "S": "Spades"}
SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
CODES = tuple(r + s for s in SUITS for r in RANKS)  # the rules' card numbers, as in a full state


def code(card) -> str:
    """A card code from a code or the rules' integer (full states after the end)."""
    if isinstance(card, int) and 0 <= card < len(CODES):
        return CODES[card]
    return str(card)


def short(card) -> str:
    c = code(card)
    if len(c) != 2 or c[0] not in RANK_NAMES:
        return c
    return RANK_SHORT.get(c[0], c[0]) + SUIT_SYMBOLS.get(c[1], c[1])


def name(card) -> str:
    c = code(card)
    if len(c) != 2 or c[0] not in RANK_NAMES:
        return "a face-down card" if c == "card" else c
    return f"the {RANK_NAMES[c[0]]} of {SUIT_NAMES[c[1]]}"


def glossary() -> dict:
    cards = {c: {"short": short(c), "name": name(c)[4:], "suit": SUIT_NAMES[c[1]].lower(),
                 "red": c[1] in "DH"} for c in CODES}
    return {"cards": cards, "suits": {s: {"name": SUIT_NAMES[s], "symbol": SUIT_SYMBOLS[s]} for s in SUITS},
            "phases": {"reveal": "a pile reveals", "sale": "the holder may sell the best trump",
                       "bidding": "auction", "close": "the seller accepts or declines",
                       "blind": "blind exchanges", "over": "the session is over"}}


REASONS = {"ace": "an ace was turned up", "reveal": "the piles ran out", "dead_hand": "the dead hand holds it"}


def describe(t: str, d: dict, who) -> str:
    seat = d.get("seat")
    if t == "session_started":
        return (f"The session starts: {d.get('players')} players get {d.get('starting_chips')} chips each; "
                f"{who(d.get('first_dealer'))} deals first.")
    if t == "antes":
        amounts = d.get("amounts") or []
        return (f"Deal {d.get('deal')}: antes paid into the pot ({sum(amounts)} chips; the dealer, "
                f"{who(d.get('dealer'))}, pays {amounts[d['dealer']] if amounts and d.get('dealer') is not None else '?'}).")
    if t == "deal":
        piles = d.get("piles")
        size = piles[0] if isinstance(piles, list) and piles else piles
        text = f"Deal {d.get('deal')}: {who(d.get('dealer'))} deals"
        if size is not None:
            text += f" {plural(size, 'face-down card')} to each pile"
        if d.get("dead_hand"):
            text += " and to the dead hand"
        if "deck" in d:
            text += f"; the shuffled deck was {' '.join(short(c) for c in d['deck'])}"
        return text + "."
    if t == "turn_up":
        c = d.get("card", "")
        return f"{who(d.get('dealer'))} turns up {name(c)} ({short(c)}): {SUIT_NAMES.get(c[-1:], '?')} are trumps."
    if t == "reveal":
        by = "The dead hand" if seat is None else who(seat)
        text = f"{by} reveals {name(d.get('card'))} ({short(d.get('card'))})"
        if d.get("bonus"):
            text += f" and pays a bonus of {plural(d['bonus'], 'chip')} into the pot"
        return text + "."
    if t == "keep":
        return f"{who(seat)} keeps the best trump."
    if t == "offer":
        return f"{who(seat)} offers the best trump, {name(d.get('card'))}, for sale."
    if t == "offer_blind":
        return f"{who(seat)} offers the top face-down card of their pile, unseen."
    if t == "keep_blind":
        return f"{who(seat)} keeps their face-down card."
    if t == "bid":
        return f"{who(seat)} bids {plural(d.get('amount'), 'chip')}."
    if t == "pass":
        return f"{who(seat)} passes."
    if t == "decline":
        return f"{who(seat)} declines the bid: no sale."
    if t == "accept":
        return f"{who(seat)} accepts the bid."
    if t == "sale":
        what = name(d.get("card")) if d.get("kind") == "trump" else "a face-down card"
        return f"{who(seat)} sells {what} to {who(d.get('buyer'))} for {plural(d.get('price'), 'chip')}."
    if t == "deal_end":
        reason = REASONS.get(d.get("reason"), d.get("reason"))
        if d.get("winner") is None:
            return (f"Deal {d.get('deal')} ends ({reason}): nobody wins; the pot of "
                    f"{plural(d.get('amount'), 'chip')} carries over.")
        return (f"Deal {d.get('deal')} ends ({reason}): {who(d.get('winner'))} wins the pot of "
                f"{plural(d.get('amount'), 'chip')} with {name(d.get('card'))}.")
    if t == "session_end":
        why = "every deal was played" if d.get("reason") == "deals" else (
            f"{listing(who(s) for s in d.get('short') or [])} cannot pay the ante")
        text = f"The session ends: {why}."
        if d.get("house"):
            text += f" The {plural(d['house'], 'chip')} left in the pot go to the house."
        return text
    return ""


def action(a: dict) -> str:
    t = a.get("type")
    return {
        "reveal": "Reveal your top card",
        "keep": "Keep the best trump",
        "offer": "Offer the best trump for sale",
        "pass": "Pass",
        "accept": "Accept the bid (sell)",
        "decline": "Decline the bid (keep it)",
        "keep_blind": "Keep your face-down card",
        "offer_blind": "Offer your top face-down card, unseen",
    }.get(t) or (f"Bid {span(a.get('amount'))} chips" if t == "bid" else t)


def draw(state: dict, who, viewer) -> list[str]:
    """The table in lines of text."""
    if not state:
        return ["(the game has not started)"]
    out = []
    trump = state.get("trump")
    out.append(f"Deal {state.get('deal')} of {state.get('deals')} · dealer {who(state.get('dealer'))} · "
               f"pot {state.get('pot')} chips" + (f" · house {state['house']}" if state.get("house") else ""))
    if trump:
        out.append(f"Trumps: {SUIT_NAMES[trump]} {SUIT_SYMBOLS[trump]} · turn-up {short(state.get('turn_up'))} · "
                   f"best trump {short(state.get('best_trump'))} held by "
                   + ("the dead hand" if state.get("best_in_dead_hand") else who(state.get("holder"))))
    revealed = state.get("revealed") or []
    if revealed:
        out.append("Revealed: " + "  ".join(f"{short(r['card'])}" + ("" if r.get("by") is None else f"·{r['by']}")
                                            for r in revealed))
    for s, chips in enumerate(state.get("chips") or []):
        pile = (state.get("piles") or [0] * (s + 1))[s]
        mark = " ← to act" if s in (state.get("to_act") or []) else ""
        out.append(f"  {who(s):<22} {plural(chips, 'chip'):>9}   pile: {'▮' * pile or '—'}{mark}")
    if state.get("dead_hand") is not None:
        out.append(f"  {'dead hand':<22}             pile: {'▮' * (state.get('dead_hand') or 0) or '—'}")
    auction = state.get("auction")
    if auction:
        what = f"the best trump {short(auction.get('card'))}" if auction.get("kind") == "trump" else "a face-down card"
        high = (f"high bid {auction.get('high_bid')} by {who(auction.get('high_bidder'))}"
                if auction.get("high_bidder") is not None else "no bid yet")
        out.append(f"Auction: {who(auction.get('seller'))} sells {what}; {high}")
    return out


def hands(full_state: dict, players: int) -> list[dict]:
    """Every face-down pile after the end (the rules' full state), by name."""
    piles = full_state.get("piles") or []
    out = []
    for i, pile in enumerate(piles):
        if i >= players and not pile:
            continue  # no dead hand (or an empty one)
        out.append({"seat": i if i < players else None, "label": "pile" if i < players else "dead hand",
                    "cards": [short(c) for c in pile], "names": [name(c) for c in pile]})
    turn_up = full_state.get("pending_turn_up")
    if isinstance(turn_up, int) and turn_up >= 0:
        out.append({"seat": None, "label": "card under the piles", "cards": [short(turn_up)], "names": [name(turn_up)]})
    return out


def breakdown(state: dict, events: list, result: dict) -> list[dict]:
    """Where each seat's chips came from over the session, from the public events: the
    starting stack, the antes paid, the pots won, the cards sold and bought, the jack and
    five bonuses paid into the pot."""
    players = len(state.get("chips") or [])
    start = 0
    antes, bonuses, sold, bought = [0] * players, [0] * players, [0] * players, [0] * players
    won = [[] for _ in range(players)]
    ok = range(players).__contains__
    for e in events:
        t, d = e.get("type"), e.get("data") or {}
        if t == "session_started":
            start = d.get("starting_chips") or 0
        elif t == "antes":
            for s, amount in enumerate(d.get("amounts") or []):
                if ok(s):
                    antes[s] += amount
        elif t == "reveal" and ok(d.get("seat")):
            bonuses[d["seat"]] += d.get("bonus") or 0
        elif t == "sale" and ok(d.get("seat")) and ok(d.get("buyer")):
            sold[d["seat"]] += d.get("price") or 0
            bought[d["buyer"]] += d.get("price") or 0
        elif t == "deal_end" and ok(d.get("winner")):
            won[d["winner"]].append((d.get("deal"), d.get("amount") or 0))
    out = []
    for s in range(players):
        parts = [{"label": "Starting chips", "amount": start},
                 {"label": "Antes paid", "amount": -antes[s]}]
        if won[s]:
            deals = listing(str(deal) for deal, _ in won[s])
            parts.append({"label": f"{plural(len(won[s]), 'pot')} won (deal{'s' if len(won[s]) > 1 else ''} {deals})",
                          "amount": sum(a for _, a in won[s])})
        if sold[s]:
            parts.append({"label": "Cards sold to other players", "amount": sold[s]})
        if bought[s]:
            parts.append({"label": "Cards bought from other players", "amount": -bought[s]})
        if bonuses[s]:
            parts.append({"label": "Jack and five bonuses paid into the pot", "amount": -bonuses[s]})
        out.append({"parts": parts, "notes": [] if won[s] else ["Won no pot."]})
    return out
