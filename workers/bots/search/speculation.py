"""Speculation (the card game) for the `search` bot: the determinizer and the leaf evaluator.

What is hidden: the face-down cards of every pile (nobody sees them, not even the pile's
owner), the dead hand's face-down cards (`dead_hand` variant) and the undealt stock. The
view is the same for every seat and shows only how many cards each pile holds. Blind sales
(`blind_exchanges` variant) move a top face-down card to the bottom of the buyer's pile
unseen, which changes nothing of that: every face-down card is still one nobody has seen.

How it is sampled: no seat's decision can depend on a face-down card, so every arrangement
of the unseen cards (the 52 minus the turn-up and the revealed cards) is equally likely. The
determinizer draws the piles' cards uniformly without replacement from the unseen cards and
deals them to the piles by their sizes; the rest is the stock, which the state does not hold
(each deal reshuffles the whole deck).

The evaluator prices a state as the heuristic bot does (`workers/bots/speculation.py`):
first each seat's chance to end the deal holding the best trump if nobody sells again, then,
for each way the pot can go, each seat's chance to finish the session with the most chips
(the heuristic's `_session_chance` model, computed for all seats in one pass), normalised to
shares. The deal's odds are the heuristic's exact `_rotation_odds` (from the public table
only, not the sampled cards: the same expectation, none of their variance) while at most
EXACT_ODDS_CARDS cards are face down; above that the exact odds cost seconds, so the rest of
the deal is played out instead in PLAYOUTS fixed rearrangements of the sampled face-down
cards (each as likely as the sample itself, so the average is unbiased).

The root's move when the seat may bid for the best trump (`auction_lookahead`): nothing is
turned during an auction, and the rivals are heuristic players deciding from the public
table alone, so the rest of the auction after any bid is not a guess: it is played out, bid
by bid, exactly as the rivals will play it. The seat weighs every bid it may make (and
passing) by where the auction then ends, who holds the card at what price, and bids the best
one. The heuristic's own bid values the card against the holder keeping it; the played-out
auction also sees who buys it otherwise: it outbids a leader about to buy cheaply, and bids a
rival up to just below what that rival will pay when the rival's paying more helps the seat.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache

from projections.speculation import (
    ALL_CARDS, BLIND, BIDDING, CARD_OF, CLOSE, DECK_SIZE, KIND_TRUMP, PLAYER_PHASES, RANKS, RULES_VERSION,
    SUITS, TURNUP, Config, State, decide, evolve, is_over, legal_actions, result, to_act, view as view_of,
)
from projections.speculation.rules import pile_at
from workers.bots.search.core import FastDraws
from workers.bots.speculation import (
    EXACT_CARDS, _deal_odds, _futures, _pick, _rotation_odds, after_antes, bid_cap, heuristic,
)

# The search's settings for this game (workers/bots/search/__init__.py: what each means).
SETTINGS = {"iterations": 24, "rollout_moves": 6, "confidence": 3.0, "min_gain": 0.03,
            "root_hint": "auction_lookahead"}

NO_CAP = 1 << 60          # Config.cap without a price cap, as new_state sets it
# The exact odds solve one subproblem per reachable (pile sizes, holder, higher trumps left):
# about 3,300 and 25 ms cold for 18 face-down cards, 10,000 and 75 ms for 24, and far more
# than the heuristic's cache of 50,000 (seconds a call) for 40. Above this many face-down
# cards, the deal is played out in the sampled world instead.
EXACT_ODDS_CARDS = 18
PLAYOUTS = 8              # rearrangements of the sampled cards played out


# ----------------------------------------------------------------------------- determinize

def determinize(view: dict, seat: int, rng: random.Random) -> State:
    """A full state consistent with `view`: the public table rebuilt, the face-down cards
    drawn uniformly from the cards nobody has seen."""
    cfg = _config(view["players"], tuple(sorted(view["options"].items())))
    in_deal = view["turn_up"] is not None
    table = _table(view, cfg) if in_deal else ()
    piles, pending_turn_up = _sample_piles(view, cfg, table, rng)
    phase = view["phase"]
    holder = _holder(view, cfg.n) if in_deal else -1
    best = CARD_OF[view["best_trump"]] if in_deal else -1
    return State(
        cfg=cfg,
        phase=phase,
        chips=tuple(view["chips"]),
        pot=view["pot"],
        house=view["house"],
        deal_no=view["deal"],
        dealer=view["dealer"],
        history=tuple((h["deal"], h["dealer"], -1 if h["winner"] is None else h["winner"], h["amount"])
                      for h in view["history"]),
        end_reason=view["end_reason"] or "",
        piles=piles,
        # the turn-up is secret only between the deal and its (automatic) turn-up, a moment
        # no view is taken at rest; sampled then too, so such a state still plays on
        pending_turn_up=pending_turn_up,
        trump=SUITS.index(view["trump"]) if in_deal else -1,
        table=table,
        best=best,
        best_idx=_index_of(table, best) if in_deal else -1,
        holder=holder,
        cursor=_cursor(view, cfg) if in_deal else 0,
        actor=_actor(view),
        **_auction(view),
        blind_k=_blind_k(view, holder) if phase in (BLIND, BIDDING, CLOSE) else 0,
        # not in the view: it only changes new_state's defaults and a count in the deal
        # event, neither of which a state already dealt reads again
        rules_version=RULES_VERSION,
    )


@lru_cache(maxsize=256)
def _config(players: int, options: tuple) -> Config:
    """The Config new_state built, from the view's options (all of them are public)."""
    o = dict(options)
    cap_antes = o["price_cap"]
    return Config(
        n=players, hand_size=o["hand_size"], ante=o["ante"], dealer_ante=o["dealer_ante"],
        starting_chips=o["starting_chips"], deals=o["deals"],
        jack_five_bonus=o["jack_five_bonus"], dead_hand=o["dead_hand"],
        blind_exchanges=o["blind_exchanges"], price_cap=cap_antes,
        cap=cap_antes * o["ante"] if cap_antes else NO_CAP,
        rotation_len=players + (1 if o["dead_hand"] else 0),
    )


def _seat_or_dead(who, n: int) -> int:
    """The view writes the dead hand as None; the state as index n."""
    return n if who is None else who


def _table(view: dict, cfg: Config) -> tuple:
    """The revealed cards as the state keeps them: (card, revealed_by, owner), the turn-up first
    (revealed by -1)."""
    n = cfg.n
    turn_up = CARD_OF[view["turn_up"]]
    # The turn-up's owner is public only while it is the best trump (then it is the holder,
    # the dealer or whoever bought it). Once beaten, the view drops it; the rules never read
    # a beaten card's owner again, so the dealer (its owner unless it was sold) stands in.
    owner = _holder(view, n) if view["best_trump"] == view["turn_up"] else view["dealer"]
    rows = [(turn_up, -1, owner)]
    for r in view["revealed"]:
        rows.append((CARD_OF[r["card"]], _seat_or_dead(r["by"], n), _seat_or_dead(r["owner"], n)))
    return tuple(rows)


def _holder(view: dict, n: int) -> int:
    return n if view["best_in_dead_hand"] else view["holder"]


def _index_of(table: tuple, card: int) -> int:
    for i, row in enumerate(table):
        if row[0] == card:
            return i
    raise ValueError("the best trump is not on the table")


def _sample_piles(view: dict, cfg: Config, table: tuple, rng: random.Random) -> tuple:
    """(the face-down piles, the pending turn-up): the piles (index n: the dead hand, empty
    without one) drawn uniformly without replacement from the cards nobody has seen; () and
    -1 between deals."""
    sizes = list(view["piles"]) + [view["dead_hand"] or 0]
    pending = view["phase"] == TURNUP
    if view["turn_up"] is None and not any(sizes) and not pending:
        return (), -1
    seen = {row[0] for row in table}
    unseen = [c for c in ALL_CARDS if c not in seen]
    drawn = rng.sample(unseen, sum(sizes) + (1 if pending else 0))
    piles, start = [], 0
    for size in sizes:
        piles.append(tuple(drawn[start:start + size]))
        start += size
    return tuple(piles), (drawn[start] if pending else -1)


def _cursor(view: dict, cfg: Config) -> int:
    """The rotation index of the last revealer: the turn-up sets it to the last index."""
    if not view["revealed"]:
        return cfg.rotation_len - 1
    who = _seat_or_dead(view["revealed"][-1]["by"], cfg.n)
    return cfg.n if who == cfg.n else (who - view["dealer"] - 1) % cfg.n


def _actor(view: dict) -> int:
    """The seat to act in a player phase; -1 otherwise (the rules' value at rest)."""
    if view["phase"] in PLAYER_PHASES:
        return view["to_act"][0]
    return -1


def _auction(view: dict) -> dict:
    """The auction fields: the view's auction while one runs, else the rules' cleared values."""
    auction = view["auction"]
    if auction is None:
        return {"kind": "", "seller": -1, "high": 0, "high_bidder": -1, "active": ()}
    return {"kind": auction["kind"], "seller": auction["seller"], "high": auction["high_bid"],
            "high_bidder": -1 if auction["high_bidder"] is None else auction["high_bidder"],
            "active": tuple(auction["bidders"])}


def _blind_k(view: dict, holder: int) -> int:
    """The blind round's offset (1..n) of the current offerer from its base seat (the holder,
    or the dealer when the dead hand holds); 0 outside a blind round, as the rules clear it."""
    n = view["players"]
    if view["phase"] == BLIND:
        offerer = view["blind_offerer"]
    elif view["auction"]["kind"] == "blind":
        offerer = view["auction"]["seller"]
    else:
        return 0
    base = holder if holder < n else view["dealer"]
    return (offerer - base) % n or n


# ----------------------------------------------------------------------------- the root's bid

LOOKAHEAD_MIN_GAIN = 0.002    # win chance a bid must add over the heuristic's to replace it
LOOKAHEAD_MAX_PLAYERS = 6     # above: the heuristic's bid (the lookahead's worst bid at 6: about 0.1 s)
_AUCTION = frozenset((BIDDING, CLOSE))


def auction_lookahead(view: dict, legal: list[dict], seat: int, rng: random.Random) -> dict:
    """The heuristic's move, but for a bid on the best trump: the bid (or pass) whose auction,
    played out with the rivals' heuristic replies, leaves the seat the best chance to win the
    session (the heuristic's own bid unless another gains LOOKAHEAD_MIN_GAIN). At the biggest
    tables (more than LOOKAHEAD_MAX_PLAYERS players, or more than the heuristic's EXACT_CARDS
    cards face down) the heuristic's bid."""
    base = heuristic(view, legal, seat, rng)
    template = _pick(legal, "bid")
    if template is None or (view.get("auction") or {}).get("kind") != KIND_TRUMP:
        return base
    if view["players"] > LOOKAHEAD_MAX_PLAYERS or sum(view["piles"]) + (view["dead_hand"] or 0) > EXACT_CARDS:
        # more rivals to reply, each from sampled walks past EXACT_CARDS: the bids would take
        # hundreds of milliseconds (up to 0.5 s at 8 players), past the time cap
        return base
    low, high = template["amount"]["min"], template["amount"]["max"]
    cap = bid_cap(view, seat, high)
    # no card is turned in an auction, so which cards the sample holds is never read
    world = determinize(view, seat, random.Random(0))
    base_bid = base["amount"] if base["type"] == "bid" else None
    values = {amount: table_chance(played_out_auction(world, seat, amount), seat)
              for amount in {base_bid, None, *range(low, cap + 1)}}
    # the best bid (the lowest of equals, passing first), if it beats the heuristic's by enough
    amount = max(values, key=lambda a: (values[a], a is None, -(a or 0)))
    if values[amount] <= values[base_bid] + LOOKAHEAD_MIN_GAIN:
        return base
    return {"type": "pass"} if amount is None else {"type": "bid", "amount": amount}


def played_out_auction(world: State, seat: int, amount) -> State:
    """`world` once its auction is over, `seat` bidding `amount` now (None: passing) and
    passing after, every other seat and the seller playing the heuristic."""
    state, first = world, True
    # an auction draws nothing (the heuristic's bids neither); a sale that ends the deal makes
    # the rules go on to the next deal's shuffle, whose events are not kept
    rng = random.Random(0)
    draws = FastDraws(rng)
    while state.phase in _AUCTION:
        actor = to_act(state)[0]
        if actor == seat and state.phase == BIDDING:
            move = {"type": "bid", "amount": amount} if first and amount is not None else {"type": "pass"}
            first = False
        else:
            move = heuristic(view_of(state, actor), legal_actions(state, actor), actor, rng)
        for event in decide(state, actor, move, draws):
            state = evolve(state, event)
            if state.phase not in _AUCTION:     # the auction is over: not the deal's end or the next deal
                break
    return state


def table_chance(state: State, seat: int) -> float:
    """`seat`'s win chance as `evaluate` gives it, but from the public table alone at every
    size: the deal's odds are the heuristic's `_deal_odds` (exact, or fixed samples of the
    rotation at the biggest tables), where `evaluate` plays the biggest tables out in the
    sampled cards."""
    view = view_of(state, seat)
    return _fold(state, _deal_odds(view, None if view["best_in_dead_hand"] else view["holder"]))[seat]


# ----------------------------------------------------------------------------- evaluate

def evaluate(state: State) -> list[float]:
    """Each seat's chance to win the session: exact shares at the end, else the deal's odds
    (nobody selling again) folded into each seat's chance to finish with the most chips."""
    n = state.cfg.n
    if is_over(state):
        winners = result(state)["winners"]
        return [1.0 / len(winners) if s in winners else 0.0 for s in range(n)]
    if not state.table:   # between deals (no view rests here): the pot is settled
        return _fold(state, [0.0] * n + [1.0])
    return _fold(state, _pot_odds(state))


def _fold(state: State, outcomes: list[float]) -> list[float]:
    """Each seat's win chance, `outcomes` being each seat's chance to take this deal's pot
    (last: the dead hand's, the pot staying in the pot), normalised to shares."""
    n, cfg = state.cfg.n, state.cfg
    deals_left = cfg.deals - state.deal_no
    # between deals the dealer has already moved on
    next_dealer = (state.dealer + 1) % n if state.table else state.dealer
    chances = [0.0] * n
    for winner, p in enumerate(outcomes):
        if p <= 0.0:
            continue
        chips = state.chips
        if winner < n:  # the dead hand's pot stays in the pot
            chips = chips[:winner] + (chips[winner] + state.pot,) + chips[winner + 1:]
        low = min(chips)   # only the differences count: shifted, more leaves share a cache entry
        for seat, chance in enumerate(_session_chances(tuple(c - low for c in chips), deals_left,
                                                       next_dealer, cfg.ante, cfg.dealer_ante)):
            chances[seat] += p * chance
    total = sum(chances)
    if total <= 0.0:
        return [1.0 / n] * n
    return [c / total for c in chances]


@lru_cache(maxsize=100_000)
def _session_chances(chips: tuple, deals_left: int, next_dealer: int, ante: int,
                     dealer_ante: int) -> tuple:
    """Every seat's chance to finish with the most chips from `chips` at the end of this deal:
    the heuristic's `_session_chance` for all seats in one pass. Its chance that seat s ends
    above seat o, 1 / (1 + exp((f_o - f_s) / scale)), is e_s / (e_s + e_o) with
    e = exp((f - f_max) / scale): n exponentials per future instead of n squared."""
    n = len(chips)
    base, pot, scale = after_antes(chips, deals_left, next_dealer, ante, dealer_ante)
    chances = [0.0] * n
    seats = range(n)
    for won, p in _futures(n, deals_left):
        final = [base[s] + pot * won[s] for s in seats]
        top = max(final)
        e = [math.exp((f - top) / scale) for f in final]
        for s in seats:
            mine = e[s]
            if mine == 0.0:   # far behind the leader: no chance (and e_o may be 0 too)
                continue
            beats = 1.0
            for o in seats:
                if o != s:
                    beats *= mine / (mine + e[o])
            chances[s] += p * beats
    return tuple(chances)


def _pot_odds(state: State) -> list[float]:
    """Each seat's chance to take this deal's pot if nobody sells again (last entry: the dead
    hand): exact while few cards are face down, else read off the sampled world."""
    if sum(len(pile) for pile in state.piles) <= EXACT_ODDS_CARDS:
        return _exact_pot_odds(state)
    return _played_out_pot_odds(state)


def _exact_pot_odds(state: State) -> list[float]:
    """The heuristic's exact rotation odds, from the public table only (the sampled cards
    are not read: the same expectation, none of their variance)."""
    cfg = state.cfg
    n, dealer = cfg.n, state.dealer
    sizes = tuple(len(state.piles[n if i == n else (dealer + 1 + i) % n]) for i in range(cfg.rotation_len))
    seen = {row[0] for row in state.table}
    trump = state.trump
    higher = sum(1 for r in range(state.best % 13 + 1, len(RANKS)) if trump * 13 + r not in seen)
    holder = state.holder
    odds = _rotation_odds(n if cfg.dead_hand else -1, state.cursor, sizes,
                          n if holder == n else (holder - dealer - 1) % n, higher, DECK_SIZE - len(seen))
    by_seat = [0.0] * (n + 1)
    for i, p in enumerate(odds):
        by_seat[n if i == n else (dealer + 1 + i) % n] += p
    return by_seat


@lru_cache(maxsize=64)
def _rearrangements(count: int) -> tuple:
    """PLAYOUTS fixed orders of `count` face-down places, the sampled one first. Each
    rearranged world is as likely as the sampled one (the sample is uniform), so their
    average is still unbiased, with less variance, and evaluate stays a pure function."""
    rng = random.Random(count)
    places = list(range(count))
    return (tuple(places),) + tuple(tuple(rng.sample(places, count)) for _ in range(PLAYOUTS - 1))


def _played_out_pot_odds(state: State) -> list[float]:
    """The share of PLAYOUTS rearrangements of the sampled face-down cards in which each seat
    (last: the dead hand) ends the deal holding the best trump, nobody selling again."""
    cfg = state.cfg
    n = cfg.n
    cards = [card for pile in state.piles for card in pile]
    starts, at = [], 0
    for pile in state.piles:
        starts.append(at)
        at += len(pile)
    ends = starts[1:] + [at]
    rotation = [pile_at(state, i) for i in range(cfg.rotation_len)]
    odds = [0.0] * (n + 1)
    share = 1.0 / PLAYOUTS
    for order in _rearrangements(len(cards)):
        world = [cards[j] for j in order]
        odds[_holder_at_end(state, rotation, world, list(starts), ends)] += share
    return odds


def _holder_at_end(state: State, rotation: list, cards: list, next_card: list, ends: list) -> int:
    """Who holds the best trump once every pile is turned in rotation (the rules' order: the
    holder's pile skipped, empty piles skipped, the dead hand never skipped)."""
    n = state.cfg.n
    length = len(rotation)
    holder, best, trump, cursor = state.holder, state.best, state.trump, state.cursor
    while True:
        skip = holder if holder < n else -1
        for step in range(1, length + 1):
            idx = (cursor + step) % length
            pile = rotation[idx]
            if pile != skip and next_card[pile] < ends[pile]:
                break
        else:
            return holder
        card = cards[next_card[pile]]
        next_card[pile] += 1
        cursor = idx
        if card // 13 == trump and card > best:
            best, holder = card, pile
