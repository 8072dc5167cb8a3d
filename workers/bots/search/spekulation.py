"""Determinizer and leaf evaluator for the `search` bot in spekulation (Dirk Henn's stock race).

What a seat cannot see (projections/spekulation/view.py, docs/games/spekulation.md):

- every deck's order, its own included: each seat's 9-card deck holds one card of each
  company plus the holiday; `drawn` cards have left it (into the hand, then onto the public
  discard pile), so the cards still to draw are the 9 minus the hand minus the discards;
- the other seats' hands (only their size is public);
- the other seats' committed cards during the commit (only that they committed).

How it is sampled (uniformly among what the seat cannot rule out): an opponent's hand is a
uniform subset of the right size of the cards not on its discard pile (the deck was shuffled
uniformly and nothing of it was shown since); every deck's rest is a uniform permutation of
the cards neither in that hand nor discarded; an opponent who has committed committed a
uniform card of its sampled hand. The seat's own hand and committed card are copied.
Tiles, dice and later reshuffles are future randomness: `decide` draws them itself.

Public state the view does not carry, rebuilt so the rules play on exactly:
- `rules_version` is not in the view. In the dice edition's trade and +1/-1 steps it shows
  (version 2 has the number already rolled, version 1 has none); elsewhere the current
  `RULES_VERSION` is assumed (new games get it; it only changes the dice edition's roll order
  and whether +1 may move a start marker straight onto the END).
- `number` is hidden in a finished game (version 1 / tiles): 0, nothing reads it then.
- counters the view drops (`chooser`, `chosen`, `trades_done` outside a trade, the bags'
  order, `drawn`, the deck prefix already drawn) follow from the view; see `_counters` and
  `_seat_cards`.

The evaluator: each seat's estimated final worth (money + shares at the heuristic bot's
estimated final prices) turned into win chances by a softmax whose temperature shrinks with
the race left (the leader's distance to the END), fitted on heuristic self-play (see
`TEMPERATURE_*`). A finished game gets exactly its win shares.
"""

from __future__ import annotations

import math
import random

from projections.spekulation import (ACTION_TILES, CARDS, COMPANIES, COMPANY_INDEX, MOVE_TILES,
                                     RULES_VERSION, START, State, result)
from workers.bots.spekulation import estimates

# The search's settings for this game (workers/bots/search/__init__.py: what each means).
SETTINGS = {"iterations": 60, "rollout_moves": 12, "confidence": 1.0, "root": "halving"}

# The softmax temperature (money units) of worth differences: TEMPERATURE_END when the race is
# over, plus TEMPERATURE_RACE times the fraction of the track the leader still has to run.
# Fitted (log-loss of the actual winner) on 4-player heuristic self-play, both editions.
TEMPERATURE_END = 90.0
TEMPERATURE_RACE = 200.0


# ---------------------------------------------------------------------------------------
# Determinize

def determinize(view: dict, seat: int, rng: random.Random) -> State:
    """A full state consistent with `view` (seat's view), the unseen cards sampled with `rng`."""
    n = view["players"]
    phase = view["phase"]
    companies = [view["companies"][name] for name in COMPANIES]
    seats = view["seats"]
    decks, drawn, hands, commits = _cards(view, seat, rng)
    edition = view["edition"]
    return State(
        edition=edition, board=view["board"], players=n, end=view["end_space"], phase=phase,
        start_player=view["start_player"], active=view["active"], turn=view["turn"],
        **_counters(view),
        positions=tuple(c["position"] for c in companies),
        arrivals=tuple(COMPANY_INDEX[name] for name in view["arrivals"]),
        money=tuple(row["money"] for row in seats),
        shares=tuple(tuple(row["shares"][name] for name in COMPANIES) for row in seats),
        supply=tuple(c["supply"] for c in companies),
        decks=decks, drawn=drawn, hands=hands, discards=tuple(tuple(row["discard"]) for row in seats),
        action=view["action"],
        number=view["number"] or 0,
        commits=commits,
        revealed=tuple(view["last_reveal"]) if view["last_reveal"] is not None else None,
        action_bag=_bag(ACTION_TILES, view.get("action_tiles_out")),
        move_bag=_bag(MOVE_TILES, view.get("move_tiles_out")),
        final_scores=tuple(view["result"]["scores"]) if phase == "over" else None,
        rules_version=_rules_version(view),
    )


def _counters(view: dict) -> dict:
    """The turn-step counters the view shows only in their own step, or not at all."""
    phase, n = view["phase"], view["players"]
    dice = view["edition"] == "dice"
    if phase == "setup":
        # dice setup: the seat choosing now; every share held so far was chosen in it
        chooser = view["to_act"][0] if view["to_act"] else -1
        chosen = sum(k for row in view["seats"] for k in row["shares"].values())
    else:
        chooser = -1
        chosen = n if dice and phase != "new" else 0   # the dice setup leaves it at `players`
    if phase == "trade":
        trade_seat, trades_done = view["trade_seat"], view["trades_done"]
    else:
        # a finished trade round leaves `players` until the next turn starts
        trade_seat, trades_done = -1, (n if view["action"] == "trade" else 0)
    return {"chooser": chooser, "chosen": chosen, "trade_seat": trade_seat, "trades_done": trades_done}


def _rules_version(view: dict) -> int:
    """Version 2's dice edition rolls the number with the symbol: it shows while trading and
    during +1/-1, where version 1 has none. Elsewhere the view cannot tell: the current one."""
    if view["edition"] == "dice" and view["phase"] in ("trade", "rank_move"):
        return 2 if view["number"] else 1
    return RULES_VERSION


def _bag(full: tuple, out) -> tuple:
    """A tile bag: the full set minus the tiles out, in the full set's order (drawing removes
    a tile and keeps the rest in order, so this is the real bag exactly)."""
    if not out:
        return full
    left = list(out)
    bag = []
    for tile in full:
        if tile in left:
            left.remove(tile)
        else:
            bag.append(tile)
    return tuple(bag)


def _cards(view: dict, seat: int, rng: random.Random) -> tuple:
    """(decks, drawn, hands, commits) for every seat."""
    phase = view["phase"]
    hands_seen = view.get("hands") if phase == "over" else None
    decks, drawn, hands, commits = [], [], [], []
    for row in view["seats"]:
        s = row["seat"]
        if hands_seen is not None:
            hand = tuple(hands_seen[s])
        elif s == seat:
            hand = tuple(view["hand"])
        else:
            hand = None
        deck, hand = _seat_cards(phase, row, hand, rng)
        decks.append(deck)
        hands.append(hand)
        drawn.append(len(hand) + len(row["discard"]) if deck else 0)
        commits.append(_commit(view, row, s == seat, hand, rng))
    return tuple(decks), tuple(drawn), tuple(hands), tuple(commits)


def _seat_cards(phase: str, row: dict, hand, rng: random.Random) -> tuple:
    """(deck order, hand) of one seat; `hand` None when the observer cannot see it."""
    if phase in ("new", "setup"):
        return (), ()            # the decks are first shuffled after the share setup
    discard = row["discard"]
    unseen = [card for card in CARDS if card not in discard]
    if hand is None:
        hand = tuple(rng.sample(unseen, row["hand_count"]))
    rest = [card for card in unseen if card not in hand]
    rng.shuffle(rest)
    # Only the cards from `drawn` on are ever read; the drawn prefix is one order that could
    # have been dealt (the discards in play order, then the hand).
    return tuple(discard) + hand + tuple(rest), hand


def _commit(view: dict, row: dict, own: bool, hand: tuple, rng: random.Random):
    if view["phase"] != "commit" or not row["committed"]:
        return None
    if own:
        return view["committed_card"]
    return hand[rng.randrange(len(hand))]


# ---------------------------------------------------------------------------------------
# Evaluate

def evaluate(state: State) -> list[float]:
    """Each seat's chance to win: a softmax over estimated final worths (exact when over)."""
    if state.phase == "over":
        winners = result(state)["winners"]
        return [1.0 / len(winners) if s in winners else 0.0 for s in range(state.players)]
    est = estimates(state.positions, state.arrivals, state.end, state.board)
    worth = [state.money[s] + sum(k * est[c] for c, k in enumerate(state.shares[s]))
             for s in range(state.players)]
    return _softmax(worth, _temperature(state))


def _temperature(state: State) -> float:
    """Worth estimates sharpen as the race nears its end."""
    end = state.end
    if state.arrivals:
        return TEMPERATURE_END
    lead = max(p for p in state.positions if p < end)
    return TEMPERATURE_END + TEMPERATURE_RACE * (end - max(lead, START)) / end


def _softmax(values: list[float], temperature: float) -> list[float]:
    top = max(values)
    weights = [math.exp((v - top) / temperature) for v in values]
    total = sum(weights)
    return [w / total for w in weights]

