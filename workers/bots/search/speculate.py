"""Determinizer and leaf evaluator of the search bot for `speculate`.

What a seat cannot see (projections/speculate/view.py), and how it is sampled:
- the other players' event cards (only their counts are shown) and the event deck's order
  (only its size). The deck is one fixed multiset (EVENT_CARDS_TUPLE); the seat sees its own
  hand and the discard pile, so the unseen cards are that multiset minus both. They are
  shuffled and dealt: each other seat its hand count (in seat order), the rest is the deck.
- the other players' current objectives and the objective decks. Each level's deck holds one
  card per set of share types (combinations of the types, as many as the level has targets),
  its targets dealt to those types in an order shuffled at the start, so an unseen card is
  unknown twice over: which type set it is, and which target each type got. Seen cards (the
  seat's own objective, every objective met, which are public) fix their type sets; the
  unseen type sets are dealt to the other seats at that level, the rest is the deck, and
  each card's target order is drawn uniformly (as the opening shuffle does).
The event cards are uniform among what the view cannot rule out. The objectives are not:
holdings are public, and a player keeps the types its objective names and sells the others
(at most four types may be held), so a type set naming a type the seat holds none of is
dealt to it with weight UNHELD_WEIGHT per such type (`_likely_slot`). Everybody starts with
every type, so at first the deal is uniform. Only the view is read: the history (trades,
who declined what) could narrow it further; the view does not carry it.
At game over the view shows every hand and objective; only the decks' orders are sampled.

Public state the view does not carry, reconstructed:
- `turns` (turns started per seat; the rules read it only as "is this seat's first turn"):
  every live seat has started one turn in each earlier round and one in this round if it
  sits between the start player and the active seat. Exact for live seats; for eliminated
  seats (who never start another turn) the same formula is used, it is not read again.
- `rules_version`: versions 1 and 2 differ only in the objective targets at 5 and 6
  players. The version whose targets fit every objective in view is used (RULES_VERSION
  when both fit: then nothing seen tells them apart, and a new game is RULES_VERSION).
- hand order: the view sorts hands; the seat's own hand is kept sorted (order only shows
  when a bankrupt seat's hand goes to the discard).

evaluate: each live seat's expected final score = money + share value at current prices +
the reward for its current objective (25 from each other live seat + the bank's reward)
times its progress (the mean fraction of each target reached, as the heuristic bot
measures it); a softmax of those scores, whose temperature grows with the square root of
the rounds left, gives the win chances. Eliminated seats get 0 (they rank last); a
finished game gets its exact win shares.
"""

from __future__ import annotations

import math
import random
from itertools import combinations, permutations

from projections.speculate import (
    EVENT_CARDS_TUPLE,
    LEVELS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NT,
    REWARD_EACH,
    RULES_VERSION,
    RULES_VERSIONS,
    SHARE_INDEX,
    SHARES,
    Offer,
    State,
    economy,
    objective_id,
    parse_objective,
    result,
)

# The search's settings for this game (workers/bots/search/__init__.py: what each means).
SETTINGS = {"iterations": 24, "rollout_moves": 30, "confidence": 2.0,
            "own_policy": {"rival_weight": 1.0, "rival_measure": "leader"}}

# The weight, per share type the seat holds none of, of a type set as its hidden objective
# (see _likely_slot).
UNHELD_WEIGHT = 0.1

# --- fixed tables ------------------------------------------------------------------------------

def _card_table(targets: dict[int, tuple[int, ...]]) -> tuple[tuple[tuple[tuple[int, ...], tuple[str, ...]], ...], ...]:
    """Per level: (type set, every card id it can be, one per target order) for each type set.
    All orders are listed, repeats included, so a uniform choice matches the opening shuffle."""
    out = []
    for level in range(1, LEVELS + 1):
        row = targets[level]
        out.append(tuple((combo, tuple(objective_id(level, dict(zip(combo, order))) for order in permutations(row)))
                         for combo in combinations(range(NT), len(row))))
    return tuple(out)


_CARDS_BY_ECONOMY = {(n, v): _card_table(economy(n, v).targets)
                     for n in range(MIN_PLAYERS, MAX_PLAYERS + 1) for v in RULES_VERSIONS}
# every card id a game of this size and version can hold
_IDS_BY_ECONOMY = {key: frozenset(i for level in table for _, ids in level for i in ids)
                   for key, table in _CARDS_BY_ECONOMY.items()}
# the player counts at which the versions' cards differ (elsewhere the version cannot matter)
_VERSIONS_DIFFER = {n for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)
                    if len({_CARDS_BY_ECONOMY[(n, v)] for v in RULES_VERSIONS}) > 1}

_SLOTS: dict[str, tuple[int, ...]] = {}


def _slot(oid: str) -> tuple[int, ...]:
    """An objective card's level followed by the share types it names (cached)."""
    slot = _SLOTS.get(oid)
    if slot is None:
        level, values = parse_objective(oid)
        slot = _SLOTS[oid] = (level,) + tuple(t for t, v in enumerate(values) if v)
    return slot


def _pick(ids: tuple[str, ...], rng: random.Random) -> str:
    """One of `ids`, uniformly (to within 2**-53: random() is faster than choice)."""
    return ids[int(rng.random() * len(ids))]


# --- determinize -------------------------------------------------------------------------------

def determinize(view: dict, seat: int, rng: random.Random) -> State:
    if "you" not in view:
        raise ValueError("speculate: nothing to determinize before the deal")
    n = view["players"]
    over = view["over"]
    levels = tuple(LEVELS + 1 if lv is None else lv for lv in view["objective_levels"])
    met = tuple(tuple(o["id"] for o in row) for row in view["objectives_met"])
    known = _known_objectives(view, seat)
    seen = [o for o in known.values() if o is not None] + [o for row in met for o in row]
    version = _rules_version(n, seen)
    hands, event_deck = _deal_event_cards(view, seat, rng)
    objectives, objective_decks = _deal_objectives(view, seat, rng, known, seen, levels, version)
    turn, ann, reward = view["turn"], view["announcement"], view["reward"]
    return State(
        players=n, rounds=view["rounds"], phase=view["phase"], round=view["round"],
        start_player=view["start_player"], active=view["active"],
        prices=tuple(view["prices"][s] for s in SHARES), money=tuple(view["money"]),
        shares=tuple(tuple(h[s] for s in SHARES) for h in view["shares"]),
        bank_money=view["bank"]["money"], bank_shares=tuple(view["bank"]["shares"][s] for s in SHARES),
        hands=hands, event_deck=event_deck, discard=tuple(view["discard"]),
        objective_decks=objective_decks, objectives=objectives, met=met, levels=levels,
        alive=tuple(view["alive"]), eliminated=tuple(view["eliminated"]), turns=_turns(view),
        first_turn=turn["first_turn"], owes=turn["late_fee_due"], announcements=turn["announcements"],
        traded_types=tuple(SHARE_INDEX[s] for s in turn["types_announced"]),
        offer=None if ann is None else Offer(ann["side"], SHARE_INDEX[ann["share"]], ann["count"],
                                             ann["remaining"], ann["seat"], ann["responder"]),
        reward_to=None if reward is None else reward["to"],
        reward_queue=() if reward is None else tuple(reward["payers_left"]),
        pay_prefix=None if reward is None or reward["decided"] is None else
        tuple(reward["decided"][SHARES[t]] for t in range(len(reward["decided"]))),
        end_reason=view.get("end_reason") if over else None,
        rules_version=version)


def _known_objectives(view: dict, seat: int) -> dict[int, str | None]:
    """The current objectives the seat knows, by seat: its own; none for a seat being paid its
    reward (its next objective is dealt after the payments); everybody's at game over."""
    if view["over"]:
        return {q: None if o is None else o["id"] for q, o in enumerate(view["objectives"])}
    known = {} if view["reward"] is None else {view["reward"]["to"]: None}
    own = view["you"]["objective"]
    known[seat] = None if own is None else own["id"]
    return known


def _rules_version(players: int, seen: list[str]) -> int:
    """The rules version whose objective cards include every objective in view (see docstring)."""
    if players not in _VERSIONS_DIFFER:
        return RULES_VERSION
    fitting = [v for v in RULES_VERSIONS if all(o in _IDS_BY_ECONOMY[(players, v)] for o in seen)]
    if not fitting:
        raise ValueError("speculate: the objectives in view fit no rules version")
    return RULES_VERSION if RULES_VERSION in fitting else fitting[-1]


def _turns(view: dict) -> tuple[int, ...]:
    """Turns started per seat, from the round, the start player and the active seat."""
    n, start, active, round_no = view["players"], view["start_player"], view["active"], view["round"]
    if round_no == 0:
        return (0,) * n
    reached = (active - start) % n
    return tuple(round_no - 1 + (1 if (q - start) % n <= reached else 0) for q in range(n))


def _deal_event_cards(view: dict, seat: int, rng: random.Random):
    """(hands, event deck): the unseen cards shuffled, dealt to the others, the rest the deck."""
    own = view["you"]["hand"]
    shown = own + view["discard"]
    if view["over"]:                        # every hand is shown: only the deck's order is unseen
        shown = shown + [card for q, hand in enumerate(view["hands"]) if q != seat for card in hand]
    pool = _without(EVENT_CARDS_TUPLE, shown)
    rng.shuffle(pool)
    hands = []
    at = 0
    for q, size in enumerate(view["hand_counts"]):
        if q == seat:
            hands.append(tuple(own))
        elif view["over"]:
            hands.append(tuple(view["hands"][q]))
        else:
            hands.append(tuple(pool[at:at + size]))
            at += size
    deck = tuple(pool[at:])
    if len(deck) != view["event_deck_count"]:
        raise ValueError("speculate: the unseen cards do not fill the hands and the deck")
    return tuple(hands), deck


def _without(cards: tuple[str, ...], shown: list[str]) -> list[str]:
    """The cards (a multiset) less the shown ones, in the cards' order."""
    left = {}
    for card in shown:
        left[card] = left.get(card, 0) + 1
    pool = []
    for card in cards:
        if left.get(card):
            left[card] -= 1
        else:
            pool.append(card)
    if any(left.values()):
        raise ValueError("speculate: the view shows a card more often than the deck holds it")
    return pool


def _deal_objectives(view: dict, seat: int, rng: random.Random, known: dict, seen: list[str],
                     levels: tuple, version: int):
    """(objectives, objective decks): per level, the unseen type sets shuffled and dealt to the
    other seats at that level, the rest the deck; each card's target order drawn uniformly."""
    n = view["players"]
    table = _CARDS_BY_ECONOMY[(n, version)]
    objectives = [known.get(q) for q in range(n)]
    seen_slots = {_slot(o) for o in seen}
    decks = []
    for level in range(1, LEVELS + 1):
        unseen = [(combo, ids) for combo, ids in table[level - 1] if (level,) + combo not in seen_slots]
        rng.shuffle(unseen)
        deck_size = view["objective_deck_counts"][level - 1]
        holders = _holders(view, seat, known, levels, level, len(unseen) - deck_size, rng)
        for q in holders:
            _, ids = unseen.pop(_likely_slot(unseen, view["shares"][q], rng))
            objectives[q] = _pick(ids, rng)
        decks.append(tuple(_pick(ids, rng) for _, ids in unseen))
        if len(decks[-1]) != deck_size:
            raise ValueError(f"speculate: level {level}'s unseen objectives do not fill the hands and the deck")
    return tuple(objectives), tuple(decks)


def _likely_slot(unseen: list, holding: dict, rng: random.Random) -> int:
    """The index of the type set dealt to a seat holding `holding`: drawn with weight
    UNHELD_WEIGHT per named type the seat holds none of. Holdings are public, and a player
    keeps the types its objective names and sells the others (four types at most may be
    held; the cash buys the targets), so a type set naming types the seat has sold is
    unlikely. Soft, not a filter: a player that has just met an objective still holds the
    last one's types."""
    held = [holding[name] > 0 for name in SHARES]
    weights = [UNHELD_WEIGHT ** sum(1 for t in combo if not held[t]) for combo, _ in unseen]
    return rng.choices(range(len(unseen)), weights)[0]


def _holders(view: dict, seat: int, known: dict, levels: tuple, level: int, cards: int, rng) -> list[int]:
    """The seats holding an unseen objective of this level: every seat at the level whose
    objective the seat does not know, unless the deck ran dry (then `cards` of them, chosen
    uniformly: the view does not say who came too late)."""
    at_level = [q for q in range(view["players"]) if levels[q] == level and q not in known]
    if cards < len(at_level):
        at_level = sorted(rng.sample(at_level, max(cards, 0)))
    return at_level


# --- evaluate ----------------------------------------------------------------------------------

# Fitted by a grid search for the least log loss of the final win shares, over 43,000 states
# of 2,700 seeded sessions at 3, 4 and 6 players (all-heuristic, and heuristic mixed with
# random): the softmax temperature in money, its growth with the square root of the rounds
# left, and the weight of the objective reward. Log loss 0.97 a state, against 1.43 for
# even chances (0.73 / 0.89 / 1.15 at 3 / 4 / 6 players, against ln 3, ln 4, ln 6).
TEMPERATURE = 30.0
TEMPERATURE_PER_SQRT_ROUND = 40.0
PROGRESS_WEIGHT = 1.0


def evaluate(state: State) -> list[float]:
    if state.phase == "over":
        winners = result(state)["winners"]
        return [1.0 / len(winners) if q in winners else 0.0 for q in range(state.players)]
    alive = [q for q in range(state.players) if state.alive[q]]
    rounds_left = _rounds_left(state)
    reward = REWARD_EACH * (len(alive) - 1) + economy(state.players, state.rules_version).reward_from_bank
    temperature = TEMPERATURE + TEMPERATURE_PER_SQRT_ROUND * math.sqrt(rounds_left)
    scores = {q: _expected_score(state, q, reward) / temperature for q in alive}
    top = max(scores.values())
    weights = {q: math.exp(s - top) for q, s in scores.items()}
    total = sum(weights.values())
    return [weights[q] / total if q in weights else 0.0 for q in range(state.players)]


def _rounds_left(state: State) -> float:
    """Rounds still to play: the rounds after this one, plus the part of this one not yet played."""
    n = state.players
    into_round = ((state.active - state.start_player) % n) / n
    return max(0.0, state.rounds - state.round + 1 - into_round)


_TARGETS: dict[str, tuple[tuple[int, int], ...]] = {}


def _targets(oid: str) -> tuple[tuple[int, int], ...]:
    """(share type, target) of each type the objective names (cached: called at every leaf)."""
    found = _TARGETS.get(oid)
    if found is None:
        found = _TARGETS[oid] = tuple((t, v) for t, v in enumerate(parse_objective(oid)[1]) if v)
    return found


def _expected_score(state: State, seat: int, reward: int) -> float:
    prices = state.prices
    holding = state.shares[seat]
    worth = state.money[seat] + sum(c * p for c, p in zip(holding, prices))
    oid = state.objectives[seat]
    if oid is None:
        return worth
    targets = _targets(oid)
    progress = sum(min(holding[t] * prices[t], v) / v for t, v in targets) / len(targets)
    return worth + PROGRESS_WEIGHT * reward * progress
