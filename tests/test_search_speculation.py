"""The search bot's Speculation determinizer and evaluator (workers/bots/search/speculation.py):
sampled worlds match the seat's view exactly, play on to the end, sample only unseen cards
and nothing the seat cannot know; the evaluator's win chances are shares that rank a leader
first."""

from __future__ import annotations

import dataclasses
import json
import random
import time
from collections import Counter
from functools import cache

import pytest

from events.randomness import Draws
from projections.registry import get_game
from projections.templates import fill_template, matches
from workers.bots import policy
from workers.bots import speculation as heuristic_bot
from workers.bots.search import speculation as search_game
from workers.bots.search.speculation import determinize, evaluate

G = get_game("speculation")

# players, options: every hand size, the dead hand (a face-down pile nobody owns), blind
# exchanges (face-down cards sold unseen), the bonus (chips moved by a reveal), a price cap
CONFIGS = [
    (3, {}),
    (4, {"dead_hand": True, "jack_five_bonus": True}),
    (6, {"blind_exchanges": True}),
    (4, {"hand_size": 5, "price_cap": 2, "dead_hand": True, "blind_exchanges": True}),
    (5, {"hand_size": 4, "blind_exchanges": True, "jack_five_bonus": True}),
]
SEEDS_PER_CONFIG = 2
LEVELS = ("heuristic", "random")


def _seed(n: int) -> str:
    return f"{n:064x}"


def _play(players: int, options: dict, seed_n: int) -> list:
    """Every state of one seeded session (heuristic and random seats alternating), the first
    one at the first decision, the last one over."""
    choose = {level: policy(G.NAME, level) for level in LEVELS}
    seed = _seed(seed_n)
    state = G.new_state(G.OptionsSchema().load(dict(options, deals=3)), players)
    for event in G.start(state, Draws(seed, "v1")):
        state = G.evolve(state, event)
    rng = random.Random(seed_n)
    states, version = [state], 1
    while not G.is_over(state):
        seat = G.to_act(state)[0]
        legal = G.legal_actions(state, seat)
        action = choose[LEVELS[seat % 2]](G.view(state, seat), legal, seat, rng)
        version += 1
        for event in G.decide(state, seat, action, Draws(seed, f"v{version}")):
            state = G.evolve(state, event)
        states.append(state)
    return states


@cache
def _played() -> tuple:
    out = []
    for i, (players, options) in enumerate(CONFIGS):
        for k in range(SEEDS_PER_CONFIG):
            out.extend(_play(players, options, 100 * i + k))
    return tuple(out)


def _live() -> list:
    return [s for s in _played() if not G.is_over(s)]


def _seats_to_check(state) -> list[int]:
    """The seat to act and its left neighbour (a seat not to act)."""
    actor = G.to_act(state)[0] if G.to_act(state) else 0
    return [actor, (actor + 1) % state.cfg.n]


def _face_down(state) -> list[int]:
    return [card for pile in state.piles for card in pile]


def _chips_total(state) -> int:
    return sum(state.chips) + state.pot + state.house


# --------------------------------------------------------------------------- consistency

def test_every_phase_and_variant_is_covered():
    states = _played()
    assert {s.phase for s in states} >= set(G.PLAYER_PHASES) | {G.OVER}
    assert any(s.phase == G.BIDDING and s.kind == G.KIND_BLIND for s in states)
    assert any(s.phase == G.CLOSE and s.kind == G.KIND_BLIND for s in states)
    assert any(s.piles and s.piles[s.cfg.n] for s in states)           # a dead hand still face down
    assert any(s.holder == s.cfg.n for s in states if s.table)          # the dead hand holding
    assert {s.cfg.n for s in states} == {3, 4, 5, 6}
    assert {s.cfg.hand_size for s in states} == {3, 4, 5}


def test_sampled_world_shows_the_same_view_and_legal_actions():
    for i, state in enumerate(_played()):
        for seat in _seats_to_check(state):
            view = G.view(state, seat)
            sampled = determinize(view, seat, random.Random(i))
            assert G.view(sampled, seat) == view
            for other in range(state.cfg.n):
                assert G.legal_actions(sampled, other) == G.legal_actions(state, other)


def test_a_view_through_json_samples_the_same_world():
    """A remote bot's view has lists for tuples: the same world from it."""
    for i, state in enumerate(_live()[::5]):
        view = G.view(state, 0)
        wire = json.loads(json.dumps(view))
        assert determinize(wire, 0, random.Random(i)) == determinize(view, 0, random.Random(i))


def test_public_fields_are_rebuilt_exactly():
    """Every field but the face-down cards equals the real one, except a beaten turn-up's
    owner (not in the view, never read again by the rules: the dealer stands in)."""
    for i, state in enumerate(_played()):
        sampled = determinize(G.view(state, 0), 0, random.Random(i))
        for f in dataclasses.fields(state):
            real, mine = getattr(state, f.name), getattr(sampled, f.name)
            if f.name == "piles":
                real, mine = [len(p) for p in real], [len(p) for p in mine]
            if f.name == "table" and real and state.best_idx != 0:
                assert mine[0] == real[0][:2] + (state.dealer,)
                real, mine = real[1:], mine[1:]
            assert mine == real, (f.name, state.phase)


def test_a_new_game_round_trips():
    for players, options in CONFIGS:
        state = G.new_state(G.OptionsSchema().load(options), players)
        sampled = determinize(G.view(state, 1), 1, random.Random(0))
        assert sampled == state


def test_a_state_between_deal_and_turn_up_plays_on():
    """No view rests there, but the determinizer still fills the pending turn-up."""
    state = G.new_state(G.OptionsSchema().load({"dead_hand": True}), 4)
    cfg = state.cfg
    for event in ({"type": "session_started", "players": 4, "first_dealer": 0,
                   "starting_chips": cfg.starting_chips},
                  {"type": "antes", "deal": 1, "dealer": 0, "amounts": [cfg.dealer_ante] + [cfg.ante] * 3},
                  {"type": "deal", "deal": 1, "dealer": 0, "deck": list(G.CODES), "piles": [3] * 4,
                   "dead_hand": 3, "stock": 35}):
        state = G.evolve(state, event)
    assert state.phase == G.TURNUP
    sampled = determinize(G.view(state, 0), 0, random.Random(1))
    assert G.view(sampled, 0) == G.view(state, 0)
    cards = _face_down(sampled) + [sampled.pending_turn_up]
    assert len(set(cards)) == len(cards) == 16
    G.evolve(sampled, {"type": "turn_up", "deal": 1, "dealer": 0, "card": G.CODES[sampled.pending_turn_up]})


# --------------------------------------------------------------------------- playable

def test_sampled_worlds_play_to_the_end_conserving_chips_and_cards():
    for i, state in enumerate(_live()[::15]):
        seat = G.to_act(state)[0]
        world = determinize(G.view(state, seat), seat, random.Random(i))
        total = _chips_total(state)
        rng, version = random.Random(i), 0
        while not G.is_over(world):
            actor = G.to_act(world)[0]
            action = fill_template(rng.choice(G.legal_actions(world, actor)), rng)
            version += 1
            for event in G.decide(world, actor, action, Draws(_seed(i), f"v{version}")):
                world = G.evolve(world, event)
            cards = _face_down(world) + [row[0] for row in world.table]
            assert len(set(cards)) == len(cards)
            assert _chips_total(world) == total
        assert G.result(world)["winners"]


# --------------------------------------------------------------------------- variety

def test_sampled_cards_are_unseen_distinct_and_fill_every_pile():
    for i, state in enumerate(_live()):
        sampled = determinize(G.view(state, 0), 0, random.Random(i))
        cards = _face_down(sampled)
        seen = {row[0] for row in state.table}
        assert len(set(cards)) == len(cards)
        assert not seen & set(cards)
        assert [len(p) for p in sampled.piles] == [len(p) for p in state.piles]


def test_different_seeds_sample_different_piles():
    for state in _live()[::3]:
        if len(_face_down(state)) < 2:
            continue
        view = G.view(state, 0)
        worlds = {determinize(view, 0, random.Random(k)).piles for k in range(6)}
        assert len(worlds) > 1


def test_every_unseen_card_is_sampled_about_equally_often():
    """Uniform among the unseen cards: each lands on the first pile's top about 1/unseen of
    the time, and every unseen card turns up somewhere."""
    state = next(s for s in _live() if s.cfg.n == 3 and len(s.table) == 2)
    view = G.view(state, 0)
    seen = {row[0] for row in state.table}
    unseen = [c for c in G.ALL_CARDS if c not in seen]
    draws = 5000
    tops, anywhere = Counter(), set()
    for k in range(draws):
        sampled = determinize(view, 0, random.Random(k))
        tops[sampled.piles[0][0]] += 1
        anywhere.update(_face_down(sampled))
    assert anywhere == set(unseen)
    expected = draws / len(unseen)
    assert set(tops) == set(unseen)
    assert all(0.5 * expected < count < 1.6 * expected for count in tops.values())


# --------------------------------------------------------------------------- no leak

def _swap_face_down(state, rng: random.Random):
    """The same table with two face-down cards exchanged (across piles where two hold cards)."""
    spots = [(p, j) for p, pile in enumerate(state.piles) for j in range(len(pile))]
    (p1, j1), (p2, j2) = rng.sample(spots, 2)
    piles = [list(p) for p in state.piles]
    piles[p1][j1], piles[p2][j2] = piles[p2][j2], piles[p1][j1]
    return dataclasses.replace(state, piles=tuple(tuple(p) for p in piles))


def _swap_with_stock(state, rng: random.Random):
    """The same table with one face-down card replaced by a card of the undealt stock."""
    used = set(_face_down(state)) | {row[0] for row in state.table}
    stock = [c for c in G.ALL_CARDS if c not in used]
    spots = [(p, j) for p, pile in enumerate(state.piles) for j in range(len(pile))]
    p, j = rng.choice(spots)
    piles = [list(pile) for pile in state.piles]
    piles[p][j] = rng.choice(stock)
    return dataclasses.replace(state, piles=tuple(tuple(pile) for pile in piles))


def test_worlds_differing_only_in_face_down_cards_look_and_sample_alike():
    rng = random.Random(7)
    checked = 0
    for i, state in enumerate(_live()[::4]):
        if len(_face_down(state)) < 2:
            continue
        for other in (_swap_face_down(state, rng), _swap_with_stock(state, rng)):
            assert other != state
            for seat in _seats_to_check(state):
                view = G.view(state, seat)
                assert G.view(other, seat) == view
                assert determinize(view, seat, random.Random(i)) == \
                    determinize(G.view(other, seat), seat, random.Random(i))
            checked += 1
    assert checked > 100


# --------------------------------------------------------------------------- evaluate

def test_evaluate_gives_shares_everywhere():
    for i, state in enumerate(_played()[::2]):
        values = evaluate(determinize(G.view(state, 0), 0, random.Random(i)))
        assert len(values) == state.cfg.n
        assert all(0.0 <= v <= 1.0 for v in values)
        assert abs(sum(values) - 1.0) < 1e-9


def test_evaluate_is_exact_at_the_end():
    finals = [s for s in _played() if G.is_over(s)]
    assert len(finals) == len(CONFIGS) * SEEDS_PER_CONFIG
    for state in finals:
        winners = G.result(state)["winners"]
        assert evaluate(state) == [1.0 / len(winners) if s in winners else 0.0 for s in range(state.cfg.n)]
    tie = dataclasses.replace(finals[0], chips=(30, 10, 30) + (0,) * (finals[0].cfg.n - 3))
    assert evaluate(tie)[:3] == [0.5, 0.0, 0.5]


def test_evaluate_ranks_the_chip_leader_first():
    for state in _live()[::10]:
        n = state.cfg.n
        rich = dataclasses.replace(state, chips=(200,) + (5,) * (n - 1))
        values = evaluate(rich)
        assert values[0] > 0.5
        assert values[0] > max(values[1:])


def test_evaluate_favours_the_ace_of_trumps_at_the_last_deal():
    """Equal chips, the last deal, a big pot: the seat holding the ace of trumps (it cannot be
    beaten) is valued far above the others."""
    state = next(s for s in _live() if s.cfg.n == 4 and s.phase == G.REVEAL
                 and s.deal_no == s.cfg.deals)
    holder = (state.actor + 1) % 4
    ace = state.trump * 13 + 12
    table = tuple(row for row in state.table if row[0] != ace) + ((ace, holder, holder),)
    piles = tuple(tuple(c for c in pile if c != ace) for pile in state.piles)
    leading = dataclasses.replace(state, chips=(20,) * 4, pot=40, table=table, piles=piles,
                                  best=ace, best_idx=len(table) - 1, holder=holder)
    values = evaluate(leading)
    assert values[holder] > 0.9
    trailing = dataclasses.replace(leading, holder=state.actor)   # the same card, another seat
    assert evaluate(trailing)[holder] < 0.1


def test_played_out_odds_average_to_the_exact_odds():
    """Above EXACT_ODDS_CARDS face-down cards the deal is played out in the sampled world:
    averaged over sampled worlds, that is the exact odds."""
    states = [s for s in _live() if 8 <= len(_face_down(s)) <= search_game.EXACT_ODDS_CARDS
              and s.holder < s.cfg.n][:: 25][:4]
    assert states
    for state in states:
        view = G.view(state, 0)
        exact = search_game._exact_pot_odds(state)
        worlds = 250
        mean = [0.0] * (state.cfg.n + 1)
        for k in range(worlds):
            for seat, p in enumerate(search_game._played_out_pot_odds(determinize(view, 0, random.Random(k)))):
                mean[seat] += p / worlds
        assert max(abs(a - b) for a, b in zip(mean, exact)) < 0.05, (mean, exact)


@pytest.mark.timing
def test_evaluate_stays_cheap_at_the_biggest_table():
    """Eight players, five cards a pile and a dead hand: 45 face-down cards, beyond what the
    exact odds can solve (seconds a call); the played-out odds take milliseconds."""
    state = G.new_state(G.OptionsSchema().load({"hand_size": 5, "dead_hand": True, "deals": 2}), 8)
    for event in G.start(state, Draws(_seed(8), "v1")):
        state = G.evolve(state, event)
    rng = random.Random(8)
    for version in range(2, 40):
        if G.is_over(state):
            break
        heuristic_bot._rotation_odds.cache_clear()
        search_game._session_chances.cache_clear()
        world = determinize(G.view(state, 0), 0, rng)
        started = time.perf_counter()
        values = evaluate(world)
        assert time.perf_counter() - started < 0.1
        assert abs(sum(values) - 1.0) < 1e-9
        seat = G.to_act(state)[0]
        action = fill_template(rng.choice(G.legal_actions(state, seat)), rng)
        for event in G.decide(state, seat, action, Draws(_seed(8), f"v{version}")):
            state = G.evolve(state, event)


def test_all_seat_session_chances_match_the_heuristic():
    rng = random.Random(2)
    for _ in range(60):
        n = rng.randint(3, 6)
        chips = tuple(rng.randint(0, 90) for _ in range(n))
        deals_left, dealer = rng.randint(0, 11), rng.randrange(n)
        mine = search_game._session_chances(chips, deals_left, dealer, 5, 8)
        theirs = [heuristic_bot._session_chance(chips, deals_left, dealer, 5, 8, s) for s in range(n)]
        assert all(abs(a - b) < 1e-12 for a, b in zip(mine, theirs))


# --------------------------------------------------------------------------- speed

@pytest.mark.timing
def test_speed_at_four_players():
    """Default options (three cards a pile), states from two sessions."""
    states = [s for k in range(2) for s in _play(4, {}, 900 + k) if not G.is_over(s)]
    views = [G.view(s, G.to_act(s)[0]) for s in states]
    rng = random.Random(0)
    started = time.perf_counter()
    worlds = [determinize(v, v["to_act"][0], rng) for v in views]
    determinize_ms = (time.perf_counter() - started) / len(views) * 1000
    heuristic_bot._rotation_odds.cache_clear()
    search_game._session_chances.cache_clear()
    started = time.perf_counter()
    for world in worlds:
        evaluate(world)
    cold_ms = (time.perf_counter() - started) / len(worlds) * 1000
    started = time.perf_counter()
    for world in worlds:
        evaluate(world)
    warm_ms = (time.perf_counter() - started) / len(worlds) * 1000
    print(f"\nspeculation at 4 players, {len(worlds)} states: determinize {determinize_ms:.3f} ms, "
          f"evaluate {cold_ms:.3f} ms (empty caches), {warm_ms:.3f} ms (warm)")
    # generous bounds: the machine is shared
    assert determinize_ms < 0.5
    assert cold_ms < 2.0


# --------------------------------------------------------------------------- the root's bid

def _trump_bids() -> list:
    """(state, seat) at every bid on the best trump of the recorded sessions."""
    out = []
    for state in _live():
        if state.phase == "bidding" and state.kind == "trump":
            out.append((state, G.to_act(state)[0]))
    return out


def _auction_by_the_rules(state, seat: int, amount):
    """The real state once its auction is over, `seat` bidding `amount` (None: passing) and
    passing after, every other seat on the heuristic: the rules step by step, no lookahead."""
    first = True
    version = 0
    while state.phase in ("bidding", "close"):
        actor = G.to_act(state)[0]
        legal = G.legal_actions(state, actor)
        if actor == seat and state.phase == "bidding":
            action = {"type": "bid", "amount": amount} if first and amount is not None else {"type": "pass"}
            first = False
        else:
            action = heuristic_bot.heuristic(G.view(state, actor), legal, actor, random.Random(actor))
        version += 1
        events = G.decide(state, actor, action, Draws(_seed(77), f"v{version}"))
        for event in events:
            state = G.evolve(state, event)
            if state.phase not in ("bidding", "close"):
                return state
    return state


def test_there_are_trump_bids_to_check():
    assert len(_trump_bids()) >= 40


def test_a_played_out_auction_is_the_real_auction():
    """The lookahead plays the auction out in a sampled world; the same bids in the real
    state, the real cards in the piles, end it the same way: every seat sees the same table
    after it (nothing in an auction reads a face-down card)."""
    rng = random.Random(5)
    for state, seat in _trump_bids():
        view = G.view(state, seat)
        world = determinize(view, seat, rng)
        low, high = state.high + 1, G.legal_actions(state, seat)[0]["amount"]["max"]
        for amount in {None, low, high, rng.randint(low, high)}:
            real = _auction_by_the_rules(state, seat, amount)
            played = search_game.played_out_auction(world, seat, amount)
            assert played.phase == real.phase
            assert all(G.view(played, s) == G.view(real, s) for s in range(state.cfg.n))


def test_the_table_chance_is_the_evaluators_where_its_odds_are_exact():
    """`table_chance` folds the heuristic's deal odds as `evaluate` folds its own: the same
    where `evaluate`'s odds are exact, and the same for every sample of the face-down cards."""
    rng = random.Random(8)
    checked = 0
    for state in _live()[::2]:
        if not state.table:
            continue
        seat = G.to_act(state)[0]
        chance = search_game.table_chance(state, seat)
        assert chance == search_game.table_chance(determinize(G.view(state, seat), seat, rng), seat)
        if len(_face_down(state)) <= search_game.EXACT_ODDS_CARDS:
            assert abs(chance - evaluate(state)[seat]) < 1e-9
            checked += 1
    assert checked >= 100


def test_the_lookahead_is_the_heuristic_except_on_trump_bids():
    rng = random.Random(6)
    for state in _live()[::3]:
        seat = G.to_act(state)[0]
        if state.phase == "bidding" and state.kind == "trump":
            continue
        view, legal = G.view(state, seat), G.legal_actions(state, seat)
        assert search_game.auction_lookahead(view, legal, seat, rng) == heuristic_bot.heuristic(view, legal, seat, rng)


def test_the_lookahead_bids_what_plays_out_best():
    """Its bid is legal, never worse played out than the heuristic's, and it differs from the
    heuristic's somewhere in the recorded sessions (else it would be the heuristic)."""
    differs = 0
    for state, seat in _trump_bids():
        view, legal = G.view(state, seat), G.legal_actions(state, seat)
        chosen = search_game.auction_lookahead(view, legal, seat, random.Random(0))
        plain = heuristic_bot.heuristic(view, legal, seat, random.Random(0))
        assert matches(chosen, legal)
        world = determinize(view, seat, random.Random(1))

        def worth(move):
            return search_game.table_chance(search_game.played_out_auction(world, seat, move.get("amount")), seat)

        assert worth(chosen) >= worth(plain)
        if chosen != plain:
            differs += 1
            assert worth(chosen) > worth(plain) + search_game.LOOKAHEAD_MIN_GAIN
    assert differs >= 1


def test_the_lookahead_leaves_the_biggest_tables_to_the_heuristic():
    """At 8 players the played-out auctions would take past the time cap: the heuristic bids."""
    states = [s for k in range(2) for s in _play(8, {}, 950 + k)
              if not G.is_over(s) and s.phase == "bidding" and s.kind == "trump"]
    assert states
    for state in states:
        seat = G.to_act(state)[0]
        view, legal = G.view(state, seat), G.legal_actions(state, seat)
        assert search_game.auction_lookahead(view, legal, seat, random.Random(0)) == \
            heuristic_bot.heuristic(view, legal, seat, random.Random(0))
