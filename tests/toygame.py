"""A tiny test-only game that exercises every path of the interface: per-seat secrets and a
simultaneous secret choice.

Each round every seat is dealt one secret card (1-9) that only it sees; then all seats bet
0-3 at once, in secret; when all have bet, cards and bets are shown, the highest card + bet
wins and every other seat pays its own bet to the winner (a tie at the top pays nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from marshmallow import RAISE, Schema, fields, validate

from projections.game import BANK, IllegalAction, Transfer, seat_account

NAME = "secret-duel"
RULES_VERSION = 1
MIN_PLAYERS, MAX_PLAYERS = 2, 4
HIDDEN_INFORMATION = True
STARTING_CHIPS = 10
MAX_BET = 3


class OptionsSchema(Schema):
    class Meta:
        unknown = RAISE

    rounds = fields.Integer(strict=True, load_default=2, validate=validate.Range(1, 5))


class BetSchema(Schema):
    type = fields.String(required=True, validate=validate.OneOf(["bet"]))
    amount = fields.Integer(required=True, strict=True, validate=validate.Range(0, MAX_BET))


ACTION_SCHEMAS = {"bet": BetSchema}


@dataclass(frozen=True)
class State:
    seats: int
    rounds: int
    round: int = 0
    cards: tuple = ()
    bets: tuple = ()
    chips: tuple = ()
    over: bool = False


def new_state(options: dict, seats: int) -> State:
    return State(seats=seats, rounds=options["rounds"], chips=(0,) * seats)


def _deal(rng, label: str, seats: int) -> dict:
    return {"type": "dealt", "cards": rng.shuffle(label, list(range(1, 10)))[:seats]}


def start(state: State, rng) -> list[dict]:
    return [{"type": "staked", "chips": STARTING_CHIPS}, _deal(rng, "deal", state.seats)]


def decide(state: State, seat: int, action: dict, rng) -> list[dict]:
    if state.over:
        raise IllegalAction("the game is over")
    if action.get("type") != "bet":
        raise IllegalAction(f"unknown action type {action.get('type')!r}", field="type")
    amount = action.get("amount")
    if type(amount) is not int or not 0 <= amount <= MAX_BET:
        raise IllegalAction(f"amount must be an integer from 0 to {MAX_BET}", field="amount")
    if state.bets[seat] is not None:
        raise IllegalAction("this seat has already bet this round", code="not_your_turn")
    events = [{"type": "bet", "seat": seat, "amount": amount}]
    bets = list(state.bets)
    bets[seat] = amount
    if all(b is not None for b in bets):
        totals = [c + b for c, b in zip(state.cards, bets)]
        best = max(totals)
        winners = [s for s, t in enumerate(totals) if t == best]
        events.append({"type": "shown", "cards": list(state.cards), "bets": bets,
                       "winner": winners[0] if len(winners) == 1 else None})
        if state.round + 1 < state.rounds:
            events.append(_deal(rng, "deal", state.seats))
    return events


def _on_staked(state, event):
    return replace(state, chips=(event["chips"],) * state.seats)


def _on_dealt(state, event):
    return replace(state, cards=tuple(event["cards"]), bets=(None,) * state.seats)


def _on_bet(state, event):
    bets = list(state.bets)
    bets[event["seat"]] = event["amount"]
    return replace(state, bets=tuple(bets))


def _on_shown(state, event):
    chips = list(state.chips)
    winner = event["winner"]
    if winner is not None:
        for s, bet in enumerate(event["bets"]):
            if s != winner:
                chips[s] -= bet
                chips[winner] += bet
    rnd = state.round + 1
    return replace(state, chips=tuple(chips), round=rnd, over=rnd >= state.rounds)


_EVOLVE = {"staked": _on_staked, "dealt": _on_dealt, "bet": _on_bet, "shown": _on_shown}


def evolve(state: State, event: dict) -> State:
    return _EVOLVE[event["type"]](state, event)


def view(state: State, seat) -> dict:
    out = {"round": state.round, "chips": list(state.chips),
           "has_bet": [b is not None for b in state.bets]}
    if seat is not None and state.cards and not state.over:
        out["my_card"] = state.cards[seat]
        out["my_bet"] = state.bets[seat]
    return out


def redact(state: State, event: dict, seat):
    if event["type"] == "dealt":
        return {"type": "dealt", "my_card": event["cards"][seat] if seat is not None else None}
    if event["type"] == "bet" and event["seat"] != seat:
        return {"type": "bet", "seat": event["seat"]}
    return event


def to_act(state: State) -> list[int]:
    if state.over or not state.bets:
        return []
    return [s for s, b in enumerate(state.bets) if b is None]


def legal_actions(state: State, seat: int) -> list[dict]:
    return [{"type": "bet", "amount": {"min": 0, "max": MAX_BET}}] if seat in to_act(state) else []


def is_over(state: State) -> bool:
    return state.over


def result(state: State) -> dict:
    best = max(state.chips)
    ranks = [1 + sum(1 for other in state.chips if other > mine) for mine in state.chips]
    return {"winners": [s for s, c in enumerate(state.chips) if c == best], "ranks": ranks,
            "scores": list(state.chips)}


def transfers(state: State, event: dict) -> list[Transfer]:
    kind = event["type"]
    if kind == "staked":
        return [Transfer(BANK, seat_account(s), "chips", event["chips"]) for s in range(state.seats)]
    if kind == "shown" and event["winner"] is not None:
        return [Transfer(seat_account(s), seat_account(event["winner"]), "chips", bet)
                for s, bet in enumerate(event["bets"]) if s != event["winner"] and bet]
    return []
