"""ops/bot_bounds.py: the challengers are what they say they are."""

from __future__ import annotations

import random

import pytest

from events.randomness import Draws
from ops import bot_bounds
from projections.registry import get_game
from workers.bots import speculate as speculate_bots
from workers.bots.search.speculate import determinize as determinize_speculate


def _started(seed: str):
    game = get_game("speculation")
    state = game.new_state(game.OptionsSchema().load({}), 4)
    for event in game.start(state, Draws(seed, "v2")):
        state = game.evolve(state, event)
    return game, state


def _play_deal_without_sales(game, state, seed: str, steps: int = 10_000):
    """Every seat reveals, keeps, passes and declines until the deal is settled (or for
    `steps` decisions): the pot's winner, or the state reached."""
    deals = len(state.history)
    version = 0
    while len(state.history) == deals and not game.is_over(state):
        if version == steps:
            return state
        seat = min(game.to_act(state))
        types = {a["type"] for a in game.legal_actions(state, seat)}
        kind = next(k for k in ("reveal", "keep", "pass", "decline") if k in types)
        version += 1
        for event in game.decide(state, seat, {"type": kind}, Draws(seed, f"t{version}")):
            state = game.evolve(state, event)
    return state.history[deals][2]


@pytest.mark.parametrize("seed, into_the_deal", [(f"00aa{i:04x}", i % 9) for i in range(40)])
def test_the_sighted_seat_reads_the_deals_winner_off_the_piles(seed, into_the_deal):
    game, state = _started(seed)
    if game.is_over(state) or not state.piles:
        pytest.skip("the turn-up was an ace: the deal ended at once")
    state = _play_deal_without_sales(game, state, seed, steps=into_the_deal)
    assert not isinstance(state, int), "the deal ended before the point this test looks from"
    assert state.table, "no card turned up"
    predicted = bot_bounds._deal_winner(state)
    assert predicted == _play_deal_without_sales(game, state, seed)


def test_a_changed_heuristic_is_a_copy_and_the_rivals_keep_theirs():
    changed = bot_bounds._heuristic_copy("speculate", MARGIN=5)
    assert callable(changed) and speculate_bots.MARGIN == 1
    with pytest.raises(AttributeError):
        bot_bounds._heuristic_copy("speculate", NO_SUCH_CONSTANT=1)


def test_the_leader_row_plays_the_search_seats_own_policy():
    """`RIVAL_WEIGHT 1, leader` measures what the speculate search seat plays as its own
    policy: the same move at every decision of a game played by heuristics."""
    from workers.bots.search import game_search

    row = bot_bounds._challenger("speculate", "RIVAL_WEIGHT 1, leader")
    own = game_search("speculate").own_policy
    game = get_game("speculate")
    state = game.new_state(game.OptionsSchema().load({}), 4)
    for event in game.start(state, Draws("1ead0e", "v2")):
        state = game.evolve(state, event)
    played, differ = 0, 0
    while not game.is_over(state) and played < 400:
        seat = min(game.to_act(state))
        view, legal = game.view(state, seat), game.legal_actions(state, seat)
        move = row(state, view, legal, seat, random.Random(played))
        assert move == own(view, legal, seat, random.Random(played))
        differ += move != speculate_bots.heuristic(view, legal, seat, random.Random(played))
        for event in game.decide(state, seat, move, Draws("1ead0e", f"v{played + 3}")):
            state = game.evolve(state, event)
        played += 1
    assert played > 100 and differ > 0


def test_a_session_gives_the_challenger_a_win_share():
    share = bot_bounds.play("speculate", "MARGIN 0", 1, seed=9)
    assert 0.0 <= share <= 1.0
    assert bot_bounds.play("speculate", "MARGIN 0", 1, seed=9) == share     # seeded


def test_an_unknown_challenger_is_refused(capsys):
    with pytest.raises(SystemExit):
        bot_bounds.main(["--game", "speculate", "--only", "sighted", "--sessions", "1"])
    assert "speculate has no challenger 'sighted'" in capsys.readouterr().err


def _speculate_mid_game(seed: str = "5eed", decisions: int = 120):
    """A speculate state some rounds in, all four seats playing the heuristic."""
    game = get_game("speculate")
    state = game.new_state(game.OptionsSchema().load({}), 4)
    for event in game.start(state, Draws(seed, "v2")):
        state = game.evolve(state, event)
    for k in range(decisions):
        seat = min(game.to_act(state))
        action = speculate_bots.heuristic(game.view(state, seat), game.legal_actions(state, seat), seat,
                                          random.Random(k))
        for event in game.decide(state, seat, action, Draws(seed, f"m{k}")):
            state = game.evolve(state, event)
    return game, state


@pytest.mark.parametrize("name", list(bot_bounds.SPECULATE_SIGHT))
def test_a_speculate_search_seat_is_shown_what_its_row_says_and_samples_the_rest(name):
    game, real = _speculate_mid_game()
    seat = min(game.to_act(real))
    view = game.view(real, seat)
    sight = bot_bounds.SPECULATE_SIGHT[name]
    determinize = bot_bounds.shown_determinizer(real, sight, determinize_speculate)
    worlds = [determinize(view, seat, random.Random(k)) for k in range(30)]
    for world in worlds:
        assert game.view(world, seat) == view           # every world is one the seat cannot tell apart
        for field in ("objectives", "hands", "event_deck"):
            if field in sight:
                assert getattr(world, field) == getattr(real, field)
        if "played_over" in sight:                      # the cards passed over at the last play, exactly
            for rival in range(4):
                kept = bot_bounds._played_over(real, rival)
                assert world.hands[rival][:len(kept)] == kept
                assert len(world.hands[rival]) == len(real.hands[rival])
            assert sorted(world.event_deck + sum(world.hands, ())) == sorted(real.event_deck + sum(real.hands, ()))
        if "hands" in sight:                            # the deck holds what the hands leave
            assert sorted(world.event_deck) == sorted(real.event_deck)
        if "objective_decks" in sight:                  # what the decks hold, not their order
            assert [sorted(d) for d in world.objective_decks] == [sorted(d) for d in real.objective_decks]
    for field in ("objectives", "hands", "event_deck"):
        if field not in sight:                          # sampled: the real one is not handed over
            assert any(getattr(w, field) != getattr(real, field) for w in worlds), field
    if not sight:                                       # the plain search row is the search bot's own sampler
        assert worlds[0] == determinize_speculate(view, seat, random.Random(0))


def _auction_openings(seed: str, wanted: int = 12):
    """Speculation states where an auction of the best trump has just opened, from a session
    played by four heuristics."""
    from workers.bots import speculation as speculation_bots

    game, state = _started(seed)
    found, step = [], 0
    while not game.is_over(state) and len(found) < wanted:
        seat = min(game.to_act(state))
        view = game.view(state, seat)
        auction = view.get("auction") or {}
        if auction.get("kind") == "trump" and auction["high_bid"] == 0 and view["phase"] == "bidding":
            found.append(state)
        action = speculation_bots.heuristic(view, game.legal_actions(state, seat), seat, random.Random(step))
        step += 1
        for event in game.decide(state, seat, action, Draws(seed, f"o{step}")):
            state = game.evolve(state, event)
    return game, found


def _run_auction(game, state, me: int, seed: str):
    """The auction of `state` to its end, `me` playing the heuristic and the others the
    privileged trader's rivals: (buyer or None, price)."""
    from workers.bots import speculation as speculation_bots

    rival = bot_bounds._privileged_rival(me)
    step = 0
    while True:
        seat = min(game.to_act(state))
        view = game.view(state, seat)
        if view["phase"] not in ("bidding", "close"):
            return None, 0
        legal = game.legal_actions(state, seat)
        policy = speculation_bots.heuristic if seat == me else rival
        action = policy(view, legal, seat, random.Random(step))
        for event in game.decide(state, seat, action, Draws(seed, f"a{step}")):
            if event["type"] == "sale":
                return event["buyer"], event["price"]
            state = game.evolve(state, event)
        step += 1


def test_the_privileged_traders_rivals_give_it_each_sale_at_their_reservation_price():
    from workers.bots import speculation as speculation_bots

    sold, bought = 0, 0
    for seed in ("7a0001", "7a0002", "7a0003"):
        game, openings = _auction_openings(seed)
        for state in openings:
            view = game.view(state, state.seller)
            rivals = [s for s in range(4) if s != state.seller]
            # the seller is `me`: offered the most any rival would pay, at once
            best = max(bot_bounds._trader_limit(view, s) for s in rivals)
            buyer, price = _run_auction(game, state, state.seller, seed)
            if buyer is not None:
                assert price == best and bot_bounds._trader_limit(view, buyer) == best
                sold += 1
            # a bidder is `me`: it buys at the seller's ask whenever it would buy at all
            for me in rivals:
                limit = bot_bounds._trader_limit(view, me)
                ask = speculation_bots._seller_ask(view, me, limit) if limit >= 1 else None
                if ask is not None and me in view["auction"]["bidders"]:
                    assert _run_auction(game, state, me, seed) == (me, ask)
                    bought += 1
    assert sold > 0 and bought > 0


def test_the_privileged_trader_row_is_seeded():
    share = bot_bounds.play("speculation", "privileged trader", 3, seed=9)
    assert bot_bounds.play("speculation", "privileged trader", 3, seed=9) == share
