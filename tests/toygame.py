"""A tiny test-only game that exercises every path of the interface: per-seat secrets and a
simultaneous secret choice. It is the worked example of docs/architecture.md ("Adding a game").

Each round every seat is dealt one secret card (1-9) that only it sees; then all seats bet
0-3 at once, in secret; when all have bet, cards and bets are shown, the highest card + bet
wins and every other seat pays its own bet to the winner (a tie at the top pays nothing).
"""

from __future__ import annotations

from dataclasses import dataclass

from marshmallow import RAISE, Schema, fields, validate

from projections.game import BANK, IllegalAction, Transfer, check_rules_version, replace, seat_account
from projections.kernel import Action, Actions, Batch, Int, evolver, ledger

# --- constants -------------------------------------------------------------------------------

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


# --- state -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class State:
    seats: int
    rounds: int
    round: int = 0
    cards: tuple = ()      # this round's card per seat (secret: each seat sees its own)
    bets: tuple = ()       # this round's bet per seat, None until it bets (secret until shown)
    chips: tuple = ()
    over: bool = False


def new_state(options: dict, seats: int, rules_version: int = RULES_VERSION) -> State:
    check_rules_version(rules_version, (1,), NAME)     # one version only: the state need not keep it
    return State(seats=seats, rounds=options["rounds"], chips=(0,) * seats)


def to_act(state: State) -> list[int]:
    if state.over or not state.bets:
        return []
    return [s for s, b in enumerate(state.bets) if b is None]


def is_over(state: State) -> bool:
    return state.over


# --- evolve: one small function per event ----------------------------------------------------

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


evolve = evolver({"staked": _on_staked, "dealt": _on_dealt, "bet": _on_bet, "shown": _on_shown})


# --- start and decide: one function per action -----------------------------------------------

def _deal(rng, label: str, seats: int) -> dict:
    return {"type": "dealt", "cards": rng.shuffle(label, list(range(1, 10)))[:seats]}


def start(state: State, rng) -> list[dict]:
    return [{"type": "staked", "chips": STARTING_CHIPS}, _deal(rng, "deal", state.seats)]


def _has_bet(state: State, seat: int) -> bool:
    """The one statement of who may bet: a seat that has not bet this round. The decider and
    the legal actions both read it."""
    return state.bets[seat] is not None


def _bet(batch: Batch, seat: int, action: dict, rng) -> None:
    if _has_bet(batch.state, seat):
        raise IllegalAction("this seat has already bet this round", code="not_your_turn")
    batch.emit({"type": "bet", "seat": seat, "amount": action["amount"]})


def _legal(state: State, seat: int) -> list[dict]:
    return [] if _has_bet(state, seat) else [{"type": "bet", "amount": {"min": 0, "max": MAX_BET}}]


def _show(batch: Batch, rng) -> None:
    """Every seat has bet: the cards and bets are shown, then the next round is dealt."""
    state = batch.state
    totals = [c + b for c, b in zip(state.cards, state.bets)]
    best = max(totals)
    winners = [s for s, t in enumerate(totals) if t == best]
    batch.emit({"type": "shown", "cards": list(state.cards), "bets": list(state.bets),
                "winner": winners[0] if len(winners) == 1 else None})
    if not batch.state.over:
        batch.emit(_deal(rng, "deal", state.seats))


def _automatic_step(state: State):
    """The show is due once every seat has bet (the kernel runs it after the last bet)."""
    return _show if state.bets and all(b is not None for b in state.bets) else None


def _betting(state: State) -> list[int]:
    """Who may send a bet: every seat of a round being bet, so that a seat that has bet
    already is told so by `_bet` (the kernel would say "not your turn")."""
    return [] if state.over or not state.bets else list(range(state.seats))


ACTIONS = Actions(NAME, [
    Action("bet", _bet, {"amount": Int(min=0, max=MAX_BET)}, schema_name="BetSchema"),
], players=lambda s: s.seats, to_act=_betting, is_over=is_over, phase=lambda s: "betting", evolve=evolve,
   legal=_legal, automatic=_automatic_step)

decide = ACTIONS.decide
ACTION_SCHEMAS = ACTIONS.schemas
legal_actions = ACTIONS.legal_actions


# --- view, redact, result --------------------------------------------------------------------

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


def result(state: State) -> dict:
    best = max(state.chips)
    ranks = [1 + sum(1 for other in state.chips if other > mine) for mine in state.chips]
    return {"winners": [s for s, c in enumerate(state.chips) if c == best], "ranks": ranks,
            "scores": list(state.chips)}


# --- the ledger ------------------------------------------------------------------------------

def _staked(state, event) -> list[Transfer]:
    return [Transfer(BANK, seat_account(s), "chips", event["chips"]) for s in range(state.seats)]


def _shown(state, event) -> list[Transfer]:
    winner = event["winner"]
    if winner is None:
        return []
    return [Transfer(seat_account(s), seat_account(winner), "chips", bet)
            for s, bet in enumerate(event["bets"]) if s != winner and bet]


transfers = ledger({"staked": _staked, "shown": _shown})
