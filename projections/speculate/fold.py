"""evolve: the state after each event, one small pure function per event type."""

from __future__ import annotations

from projections.game import replace
from projections.kernel import evolver

from .data import NT, SHARE_INDEX, SHARES, counts_from_json
from .state import Offer, State, _set, next_responder, others


def _remove_one(hand: tuple[str, ...], card: str) -> tuple[str, ...]:
    i = hand.index(card)
    return hand[:i] + hand[i + 1:]


def _ev_game_started(s: State, e: dict) -> State:
    n = s.players
    setup = e["setup"]
    return replace(
        s, phase="started", start_player=e["start_player"], rounds=e["rounds"],
        prices=(setup["start_price"],) * NT,
        money=(setup["player_money"],) * n, shares=((setup["player_shares"],) * NT,) * n,
        bank_money=setup["bank_money"], bank_shares=(setup["bank_shares"],) * NT,
        hands=((),) * n, event_deck=tuple(e["event_deck"]), discard=(),
        objective_decks=tuple(tuple(d) for d in e["objective_decks"]),
        objectives=(None,) * n, met=((),) * n, levels=(1,) * n, alive=(True,) * n, turns=(0,) * n)


def _ev_cards_dealt(s: State, e: dict) -> State:
    seat, cards = e["seat"], tuple(e["cards"])
    return replace(s, hands=_set(s.hands, seat, s.hands[seat] + cards), event_deck=s.event_deck[len(cards):])


def _ev_objective_dealt(s: State, e: dict) -> State:
    seat, level = e["seat"], e["level"]
    deck = s.objective_decks[level - 1]
    return replace(s, objectives=_set(s.objectives, seat, e["objective"]),
                   objective_decks=_set(s.objective_decks, level - 1, deck[1:]))


def _ev_turn_started(s: State, e: dict) -> State:
    seat = e["seat"]
    return replace(s, phase="event1", active=seat, round=e["round"], first_turn=e["first_turn"],
                   turns=_set(s.turns, seat, s.turns[seat] + 1), owes=0, announcements=0,
                   traded_types=(), offer=None, reward_to=None, reward_queue=(), pay_prefix=None)


def _ev_fee_paid(s: State, e: dict) -> State:
    seat, amount = e["seat"], e["amount"]
    return replace(s, money=_set(s.money, seat, s.money[seat] - amount), bank_money=s.bank_money + amount)


def _ev_fee_deferred(s: State, e: dict) -> State:
    return replace(s, owes=e["due"])


def _ev_late_fee_paid(s: State, e: dict) -> State:
    return replace(_ev_fee_paid(s, e), owes=0)


def _ev_event_played(s: State, e: dict) -> State:
    seat = e["seat"]
    return replace(s, hands=_set(s.hands, seat, _remove_one(s.hands[seat], e["card"])),
                   discard=s.discard + (e["card"],),
                   phase="trade" if s.phase == "event1" else "check")


def _ev_price_moved(s: State, e: dict) -> State:
    return replace(s, prices=_set(s.prices, SHARE_INDEX[e["share"]], e["price"]))


def _ev_dividends_paid(s: State, e: dict) -> State:
    money = list(s.money)
    paid = 0
    for p in e["payments"]:
        money[p["seat"]] += p["amount"]
        paid += p["amount"]
    return replace(s, money=tuple(money), bank_money=s.bank_money - paid)


def _ev_deck_reshuffled(s: State, e: dict) -> State:
    return replace(s, event_deck=s.event_deck + tuple(e["order"]), discard=())


def _ev_card_drawn(s: State, e: dict) -> State:
    seat = e["seat"]
    return replace(s, hands=_set(s.hands, seat, s.hands[seat] + (e["card"],)), event_deck=s.event_deck[1:])


def _ev_announced(s: State, e: dict) -> State:
    share = SHARE_INDEX[e["share"]]
    offer = Offer(e["side"], share, e["count"], e["count"], e["seat"], None)
    s = replace(s, phase="respond", announcements=s.announcements + 1,
                traded_types=s.traded_types if share in s.traded_types else s.traded_types + (share,))
    return replace(s, offer=replace(offer, responder=next_responder(s, offer, e["seat"])))


def _ev_traded(s: State, e: dict) -> State:
    share, count, unit = SHARE_INDEX[e["share"]], e["count"], e["unit_price"]
    total = count * unit
    money, shares = list(s.money), list(s.shares)
    bank_money, bank_shares = s.bank_money, s.bank_shares
    seller, buyer = e["seller"], e["buyer"]
    if seller is None:
        bank_money += total
        bank_shares = _set(bank_shares, share, bank_shares[share] - count)
    else:
        money[seller] += total
        shares[seller] = _set(shares[seller], share, shares[seller][share] - count)
    if buyer is None:
        bank_money -= total
        bank_shares = _set(bank_shares, share, bank_shares[share] + count)
    else:
        money[buyer] -= total
        shares[buyer] = _set(shares[buyer], share, shares[buyer][share] + count)
    s = replace(s, money=tuple(money), shares=tuple(shares), bank_money=bank_money, bank_shares=bank_shares)
    offer = s.offer
    if offer is not None:
        offer = replace(offer, remaining=offer.remaining - count)
        if offer.responder is not None:
            offer = replace(offer, responder=next_responder(s, offer, offer.responder))
        s = replace(s, offer=offer)
    return s


def _ev_passed(s: State, e: dict) -> State:
    return replace(s, offer=replace(s.offer, responder=next_responder(s, s.offer, e["seat"])))


def _ev_announcement_closed(s: State, e: dict) -> State:
    return replace(s, phase="trade", offer=None)


def _ev_trading_ended(s: State, e: dict) -> State:
    return replace(s, phase="event2")


def _ev_bankrupt(s: State, e: dict) -> State:
    seat = e["seat"]
    holding = s.shares[seat]
    return replace(
        s, phase="turn_over", alive=_set(s.alive, seat, False), eliminated=s.eliminated + (seat,),
        bank_money=s.bank_money + s.money[seat], money=_set(s.money, seat, 0),
        bank_shares=tuple(b + c for b, c in zip(s.bank_shares, holding)),
        shares=_set(s.shares, seat, (0,) * NT),
        discard=s.discard + s.hands[seat], hands=_set(s.hands, seat, ()), owes=0)


def _ev_objective_met(s: State, e: dict) -> State:
    seat = e["seat"]
    return replace(s, phase="reward", objectives=_set(s.objectives, seat, None),
                   met=_set(s.met, seat, s.met[seat] + (e["objective"],)),
                   levels=_set(s.levels, seat, s.levels[seat] + 1),
                   reward_to=seat, reward_queue=tuple(others(s, seat)))


def _ev_share_payment_due(s: State, e: dict) -> State:
    return replace(s, phase="pay", pay_prefix=())


def _ev_payment_chosen(s: State, e: dict) -> State:
    decided = e["decided"]
    return replace(s, pay_prefix=tuple(decided[SHARES[t]] for t in range(len(decided))))


def _ev_reward_paid(s: State, e: dict) -> State:
    payer, to, amount = e["payer"], e["to"], e["money"]
    counts = counts_from_json(e["shares"])
    money = list(s.money)
    shares = list(s.shares)
    money[to] += amount
    shares[to] = tuple(a + c for a, c in zip(shares[to], counts))
    if payer is None:
        return replace(s, phase="turn_over", money=tuple(money), shares=tuple(shares),
                       bank_money=s.bank_money - amount, reward_to=None)
    money[payer] -= amount
    shares[payer] = tuple(a - c for a, c in zip(shares[payer], counts))
    return replace(s, phase="reward", money=tuple(money), shares=tuple(shares),
                   reward_queue=s.reward_queue[1:], pay_prefix=None)


def _ev_game_ended(s: State, e: dict) -> State:
    return replace(s, phase="over", end_reason=e["reason"], offer=None)


evolve = evolver({
    "game_started": _ev_game_started,
    "cards_dealt": _ev_cards_dealt,
    "objective_dealt": _ev_objective_dealt,
    "turn_started": _ev_turn_started,
    "fee_paid": _ev_fee_paid,
    "fee_deferred": _ev_fee_deferred,
    "event_played": _ev_event_played,
    "price_moved": _ev_price_moved,
    "dividends_paid": _ev_dividends_paid,
    "deck_reshuffled": _ev_deck_reshuffled,
    "card_drawn": _ev_card_drawn,
    "announced": _ev_announced,
    "traded": _ev_traded,
    "passed": _ev_passed,
    "announcement_closed": _ev_announcement_closed,
    "trading_ended": _ev_trading_ended,
    "late_fee_paid": _ev_late_fee_paid,
    "bankrupt": _ev_bankrupt,
    "objective_met": _ev_objective_met,
    "share_payment_due": _ev_share_payment_due,
    "payment_chosen": _ev_payment_chosen,
    "reward_paid": _ev_reward_paid,
    "game_ended": _ev_game_ended,
})
