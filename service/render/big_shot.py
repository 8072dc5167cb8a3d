"""Big Shot (district auctions) for people: districts, cubes, the promoter, auctions, loans."""

from __future__ import annotations

from .common import game_ended, listing, plural, span

COLOURS = {"red": "#c62828", "blue": "#1565c0", "green": "#2e7d32", "yellow": "#f9a825"}


def colour(c) -> str:
    return str(c).capitalize() if c else "no colour"


def cubes(counts) -> str:
    if isinstance(counts, list):
        return listing(colour(c) for c in counts)
    return listing(f"{n} {colour(c)}" for c, n in (counts or {}).items() if n) if counts else "no cubes"


def glossary() -> dict:
    return {"colours": {c: {"name": colour(c), "colour": v} for c, v in COLOURS.items()},
            "phases": {"choose_start": "the start player chooses the promoter's space", "auction": "auction",
                       "place": "placing the cubes won", "over": "over"}}


def describe(t: str, d: dict, who) -> str:
    seat = d.get("seat")
    if t == "cubes_shuffled":
        return f"The cubes are shuffled onto the {len(d.get('spaces') or [])} spaces of the promoter's track."
    if t == "colours_dealt":
        text = "Colours: " + "; ".join(f"{who(s)} {colour(c)}" for s, c in enumerate(d.get("colours") or []))
        if d.get("dummy"):
            text += f"; nobody plays {listing(colour(c) for c in d['dummy'])}"
        return text + "."
    if t == "capital_dealt":
        return f"Everyone gets {d.get('amount')} in capital."
    if t == "start_player_drawn":
        return f"{who(seat)} is drawn as the start player."
    if t == "start_space_chosen":
        return f"{who(seat)} puts the promoter on space {d.get('space')}."
    if t == "die_rolled":
        return (f"Auction {d.get('auction')}: {who(seat)} rolls {d.get('value')}; the promoter moves from space "
                f"{d.get('from')} to space {d.get('space')}.")
    if t == "borrowed":
        return f"{who(seat)} takes a loan of {d.get('amount')} (now {plural(d.get('loans'), 'loan')})."
    if t == "bid":
        return f"{who(seat)} bids {d.get('amount')}."
    if t == "passed":
        return f"{who(seat)} passes."
    if t == "lot_sold":
        price = "for free" if d.get("free") else f"for {d.get('price')}"
        return f"{who(seat)} wins the lot of space {d.get('space')} ({cubes(d.get('cubes'))}) {price}."
    if t == "cube_placed":
        return f"{who(seat)} places a {colour(d.get('colour'))} cube on {d.get('district')}."
    if t in ("district_sold", "district_resolved"):
        verb = "is sold" if t == "district_sold" else "is scored at the end"
        if d.get("owner") is None:
            whose = "nobody gets it" if d.get("colour") is None else f"it goes to {colour(d.get('colour'))}, which nobody plays"
        else:
            whose = f"{who(d.get('owner'))} gets it ({colour(d.get('colour'))} has the majority)"
        return f"{d.get('district')} {verb} with {cubes(d.get('counts'))}: {whose}."
    if t == "loans_repaid":
        return f"{who(seat)} repays {plural(d.get('loans'), 'loan')}: {d.get('amount')}."
    if t == "game_ended":
        return game_ended(d.get("scores"), who)
    return ""


def action(a: dict) -> str:
    t = a.get("type")
    if t == "choose_start_space":
        return f"Put the promoter on space {span(a.get('space'))}"
    if t == "borrow":
        return "Take a loan"
    if t == "bid":
        return f"Bid {span(a.get('amount'))}"
    if t == "pass":
        return "Pass"
    if t == "place":
        return f"Place {colour(a.get('colour'))} on {a.get('district')}"
    return t


def draw(state: dict, who, viewer) -> list[str]:
    if not state:
        return ["(the game has not started)"]
    out = [f"Auction {state.get('auction_number')} of {state.get('auctions_total')} · promoter on space "
           f"{state.get('promoter')} · last roll {state.get('last_roll')} · phase {state.get('phase')}"]
    spaces = state.get("spaces") or []
    out.append("Track: " + " ".join(f"{i}:{''.join(c[0].upper() for c in lot) or '-'}" for i, lot in enumerate(spaces)))
    for dist in state.get("districts") or []:
        owner = ""
        if dist.get("sold"):
            owner = f" → {who(dist['owner'])}" if dist.get("owner") is not None else f" → {colour(dist.get('colour'))}"
        out.append(f"  {dist.get('name'):<20} {dist.get('kind'):<5} value {dist.get('value'):>3} · "
                   f"{cubes(dist.get('cubes'))}{owner}")
    for s in state.get("seats") or []:
        mark = " ← to act" if s.get("seat") in (state.get("to_act") or []) else ""
        out.append(f"  {who(s.get('seat')):<22} {colour(s.get('colour')):<7} cash {s.get('cash'):>4} · "
                   f"{plural(s.get('loans'), 'loan')} ({_loan_note(s)}) · "
                   f"{len(s.get('districts') or [])} districts{mark}")
    auction = state.get("auction")
    if auction:
        high = (f"high bid {auction.get('high_bid')} by {who(auction.get('high_bidder'))}"
                if auction.get("high_bidder") is not None else "no bid yet")
        out.append(f"Auction of space {auction.get('space')}: {cubes(auction.get('lot'))}; {high}")
    placing = state.get("placing")
    if placing:
        out.append(f"{who(placing.get('seat'))} places the cubes won: {cubes(placing.get('cubes') or [])}")
    return out


def _loan_note(seat: dict) -> str:
    """Rules version 2 shows the next loan only when the seat may borrow, else why not."""
    if seat.get("next_loan") is None and seat.get("no_loan"):
        return f"no loan: {seat['no_loan']}"
    return f"next pays {seat.get('next_loan')}"


def hands(full_state: dict, players: int) -> list[dict]:
    return []  # nothing in big-shot is ever hidden


def breakdown(state: dict, events: list, result: dict) -> list[dict]:
    """What made each seat's score at the end, from the public final view and the public
    events: the cash before the loans were repaid, the repayment, and every district owned at
    its value (doubled beside a park of the same owner; a park itself is worth nothing)."""
    seats = state.get("seats") or []
    repaid = {}
    for e in events:
        if e.get("type") == "loans_repaid":
            d = e.get("data") or {}
            loans, amount = repaid.get(d.get("seat"), (0, 0))
            repaid[d.get("seat")] = (loans + (d.get("loans") or 0), amount + (d.get("amount") or 0))
    districts = state.get("districts") or []
    owner_of = {x.get("name"): x.get("owner") for x in districts}
    out = []
    for s, info in enumerate(seats):
        loans, amount = repaid.get(s, (0, 0))
        parts = [{"label": "Cash before repaying loans" if loans else "Cash", "amount": info.get("cash", 0) + amount}]
        if loans:
            parts.append({"label": f"{plural(loans, 'loan')} repaid at 10 each", "amount": -amount})
        owned = [x for x in districts if x.get("owner") == s]
        for x in owned:
            if x.get("kind") == "park":
                parts.append({"label": f"{x['name']} (a park: worth nothing itself, doubles the districts beside it)",
                              "amount": 0})
                continue
            with_park = [p for p in x.get("parks") or [] if owner_of.get(p) == s]
            value = x.get("value") or 0
            if with_park:
                parts.append({"label": f"{x['name']}: {value} doubled beside {listing(with_park)}", "amount": 2 * value})
            else:
                parts.append({"label": f"{x['name']}: {value}", "amount": value})
        notes = []
        if len(owned) < 2:
            notes.append(f"Owns {plural(len(owned), 'district')}: a player needs two (parks count) to win, and "
                         "ranks below everyone who has two.")
        out.append({"parts": parts, "notes": notes})
    return out
