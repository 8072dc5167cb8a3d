"""How much of a session a seat's decisions can win against three heuristics, in the two
games where the search bot stays near the fair share (speculation and speculate).

`python -m ops.bot_bounds [--game speculation|speculate] [--sessions 400] [--processes 2]
[--seed 5] [--only NAME]`

The search bot's bars against three heuristics are 1.3 x the fair share in speculation and
2 x in speculate. This script measures what lies around them: one challenger seat against
three `heuristic` seats, on the same seeded sessions (the challenger takes seat i mod 4 in
session i), the challenger being the heuristic changed in one way.

speculation:
- `heuristic`: the control (the fair share, up to noise);
- `never-trade`: reveals, keeps every card, never bids, declines every bid;
- `chip-model x0.5` / `x4`: the heuristic with its chip-value model blurred half or four
  times as much (`SPREAD`);
- `auction lookahead`: the heuristic, but bidding on the best trump as the search's root does
  (`workers.bots.search.speculation.auction_lookahead`: every bid played out against the
  rivals' heuristic replies);
- `privileged trader`: the heuristic, its rivals handing it every sale at their reservation
  prices (`_privileged_rival`): it buys any card at the lowest price the holder accepts, no
  rival bidding against it, and sells to the rival who would pay most, at that rival's whole
  limit. No auction against the heuristic can do better on one sale; it bounds what
  out-trading the rivals, sale by sale, is worth to a seat that judges a card as the
  heuristic does (it does not push the rivals' prices among themselves, which the auction
  lookahead does);
- `sighted`: a seat that sees every face-down card (it reads the state, which no bot may):
  it keeps a card that the cards say will win, sells one that will be beaten for any bid,
  and bids up to the pot when buying turns the deal its way. Not a player the service could
  field: it shows what the face-down cards are worth, the one thing that could set seats
  apart when every seat reads the same exact odds off the table.

speculate:
- the heuristic with one of its constants changed (`RIVAL_WEIGHT`, `PROGRESS_WEIGHT`,
  `MET_BONUS`, `MARGIN`, `RESERVE`), to show how far its play is from a better one nearby;
  `RIVAL_WEIGHT 1, leader` is the search seat's own policy (event cards weighed by how they
  move the leading rival's score, `rival_measure="leader"`);
- `search`: the search bot (its default iterations, no time cut, so a row is reproducible),
  the control of the three rows after it;
- `search, sees the objectives` / `search, sees the event cards` / `search, sighted`: the
  same search, its sampled worlds given part of the real state (every objective and what
  the objective decks hold; every hand and the event deck in its real order; both). Not
  players the service could field: they show what each hidden part is worth to the search.
  `search, sees the hands` / `search, sees the objectives and the hands`: every hand, the
  event deck shuffled (what it holds follows from the hands; its order no play could tell).
  `search, sees the objectives and the played-over cards`: every objective, and of each
  rival's hand the cards it passed over at its last play (`_with_played_over_cards`): more
  than the seat's own history could tell it (a play shows that the rival chose another card
  over them, never which cards they were), a bound on what reading that history is worth.
  A search row takes a few seconds a session on one core, a heuristic row a few hundredths:
  without `--only`, the search rows make a run of 400 sessions take hours.

A changed heuristic is a second copy of its module, so the three rivals keep theirs (and
their caches). Each row: sessions, the challenger's win share with its Wilson 95% interval.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import random
import sys
from multiprocessing import Pool
from typing import Callable, Optional

from events.randomness import Draws
from projections import speculate, speculation
from projections.registry import get_game, get_game_type
from workers.bots import policy as bot_policy
from workers.bots import speculation as speculation_bots
from workers.bots.search.speculation import auction_lookahead
from workers.bots.study import bot_rng, wilson

# The games these bounds study, by their modules' own names (declared once, in the games).
SPECULATION, SPECULATE = speculation.NAME, speculate.NAME

PLAYERS = 4


# ----------------------------------------------------------------------------- challengers

def _never_trade(state, view: dict, legal: list[dict], seat: int, rng: random.Random) -> dict:
    types = {a["type"] for a in legal}
    for kind in ("reveal", "keep", "pass", "decline", "keep_blind"):
        if kind in types:
            return {"type": kind}
    return speculation_bots.heuristic(view, legal, seat, rng)


def _auction_lookahead(state, view: dict, legal: list[dict], seat: int, rng: random.Random) -> dict:
    return auction_lookahead(view, legal, seat, rng)


def _deal_winner(state, holder: Optional[int] = None) -> int:
    """The seat that takes the pot if nobody sells again and `holder` holds the best trump now
    (-1: the dead hand), read off the face-down piles. Without sales the order of the reveals
    does not matter: a holder who reveals a higher trump of its own stays the holder, so the
    pot goes to the pile holding the highest trump still face down, if it beats the best."""
    n = state.cfg.n
    holder = state.holder if holder is None else holder
    best, owner = state.best, holder
    for pile, cards in enumerate(state.piles):
        for card in cards:
            if card // 13 == state.trump and card > best:
                best, owner = card, pile
    return owner if owner < n else -1


def _sighted(state, view: dict, legal: list[dict], seat: int, rng: random.Random) -> dict:
    types = {a["type"] for a in legal}
    if "reveal" in types:
        return {"type": "reveal"}
    if "offer" in types:
        return {"type": "offer"}
    if state.kind != "trump":              # blind exchanges (a variant, off by default)
        return speculation_bots.heuristic(view, legal, seat, rng)
    pot = state.pot
    if "accept" in types:
        keep = pot * (_deal_winner(state) == seat)
        sell = state.high + pot * (_deal_winner(state, state.high_bidder) == seat)
        return {"type": "accept" if sell > keep else "decline"}
    if "bid" in types:
        bid = next(a for a in legal if a["type"] == "bid")
        low, high = bid["amount"]["min"], bid["amount"]["max"]
        gain = pot * ((_deal_winner(state, seat) == seat) - (_deal_winner(state) == seat))
        # keep back the next ante, the dealer's at most
        limit = min(gain - 1, high, state.chips[seat] - state.cfg.dealer_ante)
        if low > limit:
            return {"type": "pass"}
        # open where the holder's own odds say it should accept, as the heuristic does
        ask = speculation_bots._seller_ask(view, seat, limit)
        return {"type": "bid", "amount": max(low, ask if ask is not None else low)}
    return speculation_bots.heuristic(view, legal, seat, rng)


def _trader_limit(view: dict, seat: int) -> int:
    """The most `seat` would pay for the best trump now, as the heuristic reckons it (0: it
    would not buy), whoever is to bid."""
    return speculation_bots.bid_limit(view, seat, 1, view["chips"][seat])


def _privileged_rival(me: int) -> Callable:
    """A heuristic rival that gives seat `me` every sale at the rival's reservation price: in
    `me`'s sale it bids its whole limit at once (so `me` is offered the most any rival would
    pay, not one chip over the second most), and in another seller's sale it stands aside
    whenever `me` would buy at the lowest price the seller accepts (so `me` buys at that price,
    nobody bidding against it). Everything else it plays as the heuristic. Not a player: the
    rivals of the `privileged trader` row, a bound on what out-bidding them can win."""
    heuristic = bot_policy(SPECULATION, "heuristic")

    def choose(view: dict, legal: list[dict], seat: int, rng: random.Random) -> dict:
        auction = view.get("auction") or {}
        bid = next((a for a in legal if a["type"] == "bid"), None)
        if bid is None or auction.get("kind") != "trump":
            return heuristic(view, legal, seat, rng)
        low, high = bid["amount"]["min"], bid["amount"]["max"]
        if auction["seller"] == me:
            limit = speculation_bots.bid_limit(view, seat, low, high)
            return {"type": "bid", "amount": limit} if low <= limit else {"type": "pass"}
        if me in auction["bidders"]:
            limit = _trader_limit(view, me)
            if limit >= 1 and speculation_bots._seller_ask(view, me, limit) is not None:
                return {"type": "pass"}
        return heuristic(view, legal, seat, rng)

    return choose


# Rows whose rivals are not the plain heuristic: (game, challenger) -> rival policy for the
# challenger's seat.
RIVALS: dict[tuple[str, str], Callable[[int], Callable]] = {
    (SPECULATION, "privileged trader"): _privileged_rival,
}


# What a speculate search seat may be shown of the real state, beyond its view (the rest it
# samples, as the search bot does): name -> the fields taken from the real state, or
# "played_over", the cards of each rival's hand that it passed over at its last play.
SPECULATE_SIGHT = {
    "search": (),
    "search, sees the objectives": ("objectives", "objective_decks"),
    "search, sees the event cards": ("hands", "event_deck"),
    "search, sighted": ("objectives", "objective_decks", "hands", "event_deck"),
    "search, sees the hands": ("hands",),
    "search, sees the objectives and the hands": ("objectives", "objective_decks", "hands"),
    "search, sees the objectives and the played-over cards": ("objectives", "objective_decks", "played_over"),
}


def _speculate_search(sight: tuple[str, ...]) -> Callable:
    """The speculate search bot at its default iterations, with no time cut (so a row is
    reproducible), its sampled worlds given the fields `sight` of the real state
    (`shown_determinizer`). Not a player the service could field: it shows what each hidden
    part of the state is worth to the same search."""
    from workers.bots.search import default_iterations, game_search
    from workers.bots.search.budget import Budget
    from workers.bots.search.core import search

    spec = game_search(SPECULATE)
    budget = Budget(default_iterations(SPECULATE), 60_000)     # a time cap no move reaches

    def choose(state, view: dict, legal: list[dict], seat: int, rng: random.Random) -> dict:
        shown = dataclasses.replace(spec, determinize=shown_determinizer(state, sight, spec.determinize))
        return search(shown, view, legal, seat, rng, budget)[0]

    return choose


def shown_determinizer(state, sight: tuple[str, ...], sample: Callable) -> Callable:
    """A determinizer that samples a world from the view (`sample`) and then puts the real
    state's fields `sight` in it. The objective decks are shuffled: what they hold follows
    from every objective held, their order is what no seat can know. Shown with the hands,
    the event deck keeps its real order (a sighted seat knows what everyone will draw);
    shown the hands alone, a seat gets the real deck shuffled: what the deck holds follows
    from the hands, its order is what no play at the table could tell."""
    def determinize(view: dict, seat: int, rng: random.Random):
        world = sample(view, seat, rng)
        if "played_over" in sight:
            world = _with_played_over_cards(world, state, seat, rng)
        shown = {name: getattr(state, name) for name in sight if name != "played_over"}
        if "objective_decks" in shown:
            shown["objective_decks"] = tuple(tuple(rng.sample(deck, len(deck))) for deck in state.objective_decks)
        if "hands" in shown and "event_deck" not in shown:
            shown["event_deck"] = tuple(rng.sample(state.event_deck, len(state.event_deck)))
        return dataclasses.replace(world, **shown)

    return determinize


def _played_over(state, rival: int) -> tuple:
    """The cards of `rival`'s hand that were in it when it last played a card: all but the
    newest (a drawn card goes to the end of the hand), none before its first play."""
    hand = state.hands[rival]
    played = state.turns[rival] >= 1 and not (state.active == rival and state.phase == "event1")
    return hand[:-1] if played and hand else ()


def _with_played_over_cards(world, state, seat: int, rng: random.Random):
    """`world` with more of the rivals' hands than a seat's history could tell it: each
    rival's cards that it passed over when it last played (that play shows only that it chose
    another card over them), taken from the real state. Each
    rival's newest card (drawn since, never part of a play) and the whole hand of a rival
    that has not played yet are dealt again, with the deck, from the cards left."""
    kept = [hand if r == seat else _played_over(state, r) for r, hand in enumerate(state.hands)]
    pool = list(state.event_deck) + [c for r, hand in enumerate(state.hands) for c in hand[len(kept[r]):]]
    rng.shuffle(pool)
    hands = []
    for r, hand in enumerate(state.hands):
        need = len(hand) - len(kept[r])
        hands.append(tuple(kept[r]) + tuple(pool[:need]))
        pool = pool[need:]
    return dataclasses.replace(world, hands=tuple(hands), event_deck=tuple(pool))


def _heuristic_copy(game: str, options: Optional[dict] = None, **constants) -> Callable:
    """The game's heuristic from a second copy of its module, with `constants` set and called
    with the keyword arguments `options`."""
    spec = importlib.util.find_spec(get_game_type(game).bots)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, value in constants.items():
        if not hasattr(module, name):
            raise AttributeError(f"{spec.name} has no {name}")
        setattr(module, name, value)
    options = options or {}
    return lambda state, view, legal, seat, rng: module.heuristic(view, legal, seat, rng, **options)


CHALLENGERS: dict[str, dict[str, Callable[[], Callable]]] = {
    SPECULATION: {
        "heuristic": lambda: _heuristic_copy(SPECULATION),
        "never-trade": lambda: _never_trade,
        "chip-model x0.5": lambda: _heuristic_copy(SPECULATION, SPREAD=speculation_bots.SPREAD * 0.5),
        "chip-model x4": lambda: _heuristic_copy(SPECULATION, SPREAD=speculation_bots.SPREAD * 4),
        "auction lookahead": lambda: _auction_lookahead,
        "sighted": lambda: _sighted,
        "privileged trader": lambda: _heuristic_copy(SPECULATION),
    },
    SPECULATE: {
        "heuristic": lambda: _heuristic_copy(SPECULATE),
        "RIVAL_WEIGHT 0": lambda: _heuristic_copy(SPECULATE, RIVAL_WEIGHT=0.0),
        "RIVAL_WEIGHT 1": lambda: _heuristic_copy(SPECULATE, RIVAL_WEIGHT=1.0),
        "RIVAL_WEIGHT 1, leader": lambda: _heuristic_copy(SPECULATE, {"rival_measure": "leader"}, RIVAL_WEIGHT=1.0),
        "PROGRESS_WEIGHT 0": lambda: _heuristic_copy(SPECULATE, PROGRESS_WEIGHT=0),
        "PROGRESS_WEIGHT 150": lambda: _heuristic_copy(SPECULATE, PROGRESS_WEIGHT=150),
        "MET_BONUS 100": lambda: _heuristic_copy(SPECULATE, MET_BONUS=100),
        "MET_BONUS 500": lambda: _heuristic_copy(SPECULATE, MET_BONUS=500),
        "MARGIN 0": lambda: _heuristic_copy(SPECULATE, MARGIN=0),
        "MARGIN 2": lambda: _heuristic_copy(SPECULATE, MARGIN=2),
        "RESERVE 20": lambda: _heuristic_copy(SPECULATE, RESERVE=20),
        "RESERVE 120": lambda: _heuristic_copy(SPECULATE, RESERVE=120),
        **{name: (lambda sight=sight: _speculate_search(sight)) for name, sight in SPECULATE_SIGHT.items()},
    },
}



# ----------------------------------------------------------------------------- sessions

def play(game_name: str, challenger: str, index: int, seed: int) -> float:
    """The challenger's win share in session `index` (it sits at index mod 4).

    Not `workers.bots.study.play_session`: that hands a policy its seat's view and nothing
    else, by design, and the sighted seat needs the state."""
    game = get_game(game_name)
    choose = _challenger(game_name, challenger)
    me = index % PLAYERS
    rivals_for = RIVALS.get((game_name, challenger))
    rival = rivals_for(me) if rivals_for else bot_policy(game_name, "heuristic")
    draws_seed = f"{seed:04x}{index:06x}"
    state = game.new_state(game.OptionsSchema().load({}), PLAYERS)
    events = game.start(state, Draws(draws_seed, "v2"))
    for event in events:
        state = game.evolve(state, event)
    version = 2 + len(events)
    while not game.is_over(state):
        seat = min(game.to_act(state))
        legal = game.legal_actions(state, seat)
        view = game.view(state, seat)
        rng = bot_rng(f"bounds-{seed}-{index}", seat, version)
        if seat == me:
            action = choose(state, view, legal, seat, rng)
        else:
            action = rival(view, legal, seat, rng)
        new_events = game.decide(state, seat, action, Draws(draws_seed, f"v{version + 1}"))
        for event in new_events:
            state = game.evolve(state, event)
        version += len(new_events)
    winners = game.result(state)["winners"]
    return (me in winners) / len(winners)


_CHOSEN: dict[tuple[str, str], Callable] = {}


def _challenger(game_name: str, name: str) -> Callable:
    """The challenger's policy, built once a process (a module copy costs a few ms)."""
    key = (game_name, name)
    if key not in _CHOSEN:
        _CHOSEN[key] = CHALLENGERS[game_name][name]()
    return _CHOSEN[key]


def _play(args: tuple) -> float:
    return play(*args)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ops.bot_bounds", description=__doc__.split("\n")[0])
    parser.add_argument("--game", choices=sorted(CHALLENGERS), default=SPECULATION)
    parser.add_argument("--sessions", type=int, default=400)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--only", help="one challenger (default: every one of the game)")
    args = parser.parse_args(argv)
    challengers = CHALLENGERS[args.game]
    if args.only and args.only not in challengers:
        parser.error(f"--only: {args.game} has no challenger {args.only!r} (one of: {', '.join(challengers)})")
    names = [args.only] if args.only else list(challengers)
    print(f"{args.game}, seed {args.seed}\n")
    print("| challenger vs 3 heuristics | sessions | win share | Wilson 95% |")
    print("|---|---|---|---|")
    with Pool(args.processes) as pool:
        for name in names:
            shares = pool.map(_play, [(args.game, name, i, args.seed) for i in range(args.sessions)], chunksize=4)
            won = sum(shares)
            low, high = wilson(won, len(shares))
            print(f"| {name} | {len(shares)} | {won / len(shares):.1%} | [{low:.1%}, {high:.1%}] |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
