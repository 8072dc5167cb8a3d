"""Parametrised families of strategies, one or two per game, for the league (league.py).

Each family is a policy built from a handful of numbers (weights and thresholds): its
members are what a parameter search (CMA-ES) explores for an exploiter of the product's
heuristic. Like strategies.py, every family is written from the rules and the seat's view
alone and never calls a product bot, so a flaw of the heuristic cannot hide in it: it may use
the rules' own public functions (prices, marker moves), which any player reads off the board.

A family's parameters each have a range; the search works in [0, 1] per parameter
(`Family.decode`) so CMA-ES sees one scale.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable

from projections import big_shot, speculate, speculation, spekulation
from projections.big_shot import COLOURS, SALE_SIZE, majority
from projections.spekulation.board import (COMPANIES, COMPANY_INDEX, HOLIDAY, N_COMPANIES, START, START_PRICE,
                                           TABLES, forward)
from projections.templates import fill_template

Policy = Callable[[dict, list, int, random.Random], dict]


@dataclass(frozen=True)
class Param:
    name: str
    low: float
    high: float


@dataclass(frozen=True)
class Family:
    game: str
    name: str
    params: tuple[Param, ...]
    build: Callable[[dict], Policy]

    def decode(self, unit: list[float]) -> dict:
        """Parameters from a point of [0, 1]^d (clipped), rounded to 4 decimals so that what is
        kept in the repository plays exactly what was measured."""
        out = {}
        for p, u in zip(self.params, unit):
            u = min(1.0, max(0.0, float(u)))
            out[p.name] = round(p.low + u * (p.high - p.low), 4)
        return out

    def encode(self, values: dict) -> list[float]:
        return [(values[p.name] - p.low) / (p.high - p.low) for p in self.params]

    def policy(self, values: dict) -> Policy:
        missing = {p.name for p in self.params} - set(values)
        if missing:
            raise ValueError(f"{self.game}/{self.name}: parameters missing: {sorted(missing)}")
        return self.build(dict(values))


def _first(legal: list[dict], kind: str):
    return next((a for a in legal if a["type"] == kind), None)


# ----------------------------------------------------------------------------- spekulation

def _spek_table(board: str, position: float, rank: float, end: int) -> float:
    """The price table read at a (fractional) position and rank, END prices at the end."""
    sections, end_list = TABLES[board]
    rank = min(max(rank, 1.0), float(N_COMPANIES))
    lo = int(rank)
    frac = rank - lo
    row = end_list if position >= end else sections[min(max(int(position), 1) - 1, 59) // 10]
    return row[lo - 1] + (row[min(lo, N_COMPANIES - 1)] - row[lo - 1]) * frac


def _spek_values(view: dict, p: dict, positions: list[int], arrivals: list[int]) -> list[float]:
    """A company's worth at the end: each marker moved on by `forward` x the distance the
    leader still has to the END, ranked by those projected places and the rank pulled toward
    the middle by `pull` x the share of the race left; blended with the price now by `blend`."""
    end, board = view["end_space"], view["board"]
    track = [q for q in positions if START < q < end]
    left = 0 if arrivals else end - (max(track) if track else 0)
    share_left = min(1.0, left / end)
    pace = _spek_pace(view, p.get("count", 0.0))
    projected = [q if q >= end else q + p["forward"] * left * pace[c] for c, q in enumerate(positions)]
    order = sorted(range(N_COMPANIES), key=lambda c: (-(N_COMPANIES + 1 - arrivals.index(c)) * 1000
                                                      if c in arrivals else -projected[c], c))
    rank = {c: i + 1 for i, c in enumerate(order)}
    mid = (1 + N_COMPANIES) / 2
    out = []
    for c, q in enumerate(positions):
        if q >= end:
            out.append(float(TABLES[board][1][arrivals.index(c)]))
            continue
        r = rank[c] + (mid - rank[c]) * min(1.0, p["pull"] * share_left)
        pos = min(end - 1, projected[c]) if left else q
        final = START_PRICE if pos <= START else _spek_table(board, max(pos, 1), r, end)
        now = START_PRICE if q == START else _spek_table(board, q, rank[c], end)
        out.append(p["blend"] * final + (1 - p["blend"]) * now)
    return out


def _spek_pace(view: dict, weight: float) -> list[float]:
    """Card counting: every seat plays each company's card once a cycle of its deck, and the
    discards are public, so a company whose cards are still unplayed in more seats will move
    more soon. Its pace is 1 + `weight` x (its unplayed cards / the mean - 1)."""
    if not weight:
        return [1.0] * N_COMPANIES
    unplayed = [sum(1 for row in view["seats"] if name not in row["discard"]) for name in COMPANIES]
    mean = sum(unplayed) / N_COMPANIES or 1.0
    return [max(0.0, 1 + weight * (u / mean - 1)) for u in unplayed]


def _spek_read(view: dict):
    companies = view["companies"]
    positions = [companies[n]["position"] for n in COMPANIES]
    arrivals = [COMPANY_INDEX[n] for n in view["arrivals"]]
    shares = [[row["shares"][n] for n in COMPANIES] for row in view["seats"]]
    prices = [companies[n]["price"] for n in COMPANIES]
    return positions, arrivals, shares, prices


def _spek_relative(view, p, seat, positions, arrivals, shares) -> float:
    values = _spek_values(view, p, positions, arrivals)
    worth = [view["seats"][s]["money"] + sum(k * values[c] for c, k in enumerate(row))
             for s, row in enumerate(shares)]
    rivals = [w for s, w in enumerate(worth) if s != seat]
    return worth[seat] - p["rival"] * max(rivals)


def _spek_after_rank_move(view, positions, arrivals, company, direction):
    from projections.spekulation.board import rank_move_target

    state = spekulation.State(edition=view["edition"], board=view["board"], players=view["players"],
                              end=view["end_space"], positions=tuple(positions), arrivals=tuple(arrivals))
    return rank_move_target(state, company, direction)


def spekulation_race_count(p: dict) -> Policy:
    """race-value with card counting (`count`, _spek_pace) and its starting share chosen by
    the same valuation (the dice edition's set-up choice)."""
    inner = spekulation_race_value(p)

    def policy(view, legal, seat, rng):
        if legal[0]["type"] == "choose_share":
            positions, arrivals, _, _ = _spek_read(view)
            values = _spek_values(view, p, positions, arrivals)
            return max(legal, key=lambda a: (values[COMPANY_INDEX[a["company"]]], a["company"]))
        return inner(view, legal, seat, rng)
    return policy


def spekulation_race_value(p: dict) -> Policy:
    """Trades by a projected end price (buys the best gain above `buy`, sells a holding whose
    price is above its projected worth by `sell`), moves markers for its portfolio against
    the best rival's (`rival`)."""
    def policy(view, legal, seat, rng):
        kinds = {a["type"] for a in legal}
        positions, arrivals, shares, prices = _spek_read(view)
        if kinds & {"buy", "sell", "pass"}:
            values = _spek_values(view, p, positions, arrivals)
            best, gain = {"type": "pass"}, 0.0
            for a in legal:
                if a["type"] == "buy":
                    c = COMPANY_INDEX[a["company"]]
                    g = values[c] - prices[c] - p["buy"]
                elif a["type"] == "sell":
                    c = COMPANY_INDEX[a["company"]]
                    g = prices[c] - values[c] - p["sell"]
                else:
                    continue
                if g > gain:
                    best, gain = a, g
            return best
        end = view["end_space"]
        if "rank_move" in kinds:
            direction = view.get("action")
            scored = []
            for a in legal:
                c = COMPANY_INDEX[a["company"]]
                target = _spek_after_rank_move(view, positions, arrivals, c, direction)
                if target is None:
                    continue
                pos = list(positions)
                pos[c] = target
                arr = arrivals + [c] if target >= end > positions[c] else arrivals
                scored.append((_spek_relative(view, p, seat, pos, arr, shares), a["company"], a))
            return max(scored, key=lambda t: t[:2])[2] if scored else legal[0]
        if "play" in kinds:
            number = view.get("number") or 0
            scored = []
            for a in legal:
                if a["card"] == HOLIDAY:
                    s = _spek_relative(view, p, seat, positions, arrivals, shares) + p["holiday"]
                else:
                    c = COMPANY_INDEX[a["card"]]
                    to = forward(tuple(positions), c, number, end)
                    pos = list(positions)
                    arr = arrivals + [c] if to >= end > pos[c] else arrivals
                    pos[c] = to
                    s = _spek_relative(view, p, seat, pos, arr, shares)
                scored.append((s, a["card"], a))
            return max(scored, key=lambda t: t[:2])[2]
        return fill_template(rng.choice(legal), rng)
    return policy


# ----------------------------------------------------------------------------- big-shot

class _Board:
    """Big-shot's districts as a seat sees them, valued by a lead's chance to hold."""

    def __init__(self, view: dict, seat: int, p: dict):
        ds = view["districts"]
        self.p = p
        self.names = [d["name"] for d in ds]
        index = {n: i for i, n in enumerate(self.names)}
        self.values = [d["value"] for d in ds]
        self.parks = [[index[x] for x in d["parks"]] for d in ds]
        self.sold = [d["sold"] for d in ds]
        self.owner = [COLOURS.index(d["colour"]) if d["sold"] and d["colour"] else None for d in ds]
        self.counts = [[d["cubes"].get(c, 0) for c in COLOURS] for d in ds]
        colours = [s["colour"] for s in view["seats"]]
        self.me = COLOURS.index(colours[seat])
        self.rivals = [COLOURS.index(c) for i, c in enumerate(colours) if i != seat]
        total = view.get("auctions_total") or 18
        self.done = min(1.0, (view.get("auction_number") or 0) / total)
        self.final = (view.get("auction_number") or 0) >= total

    def hold(self, d: int, counts) -> tuple:
        if self.sold[d]:
            return self.owner[d], 1.0
        w = majority(counts)
        if w is None:
            return None, 0.0
        if sum(counts) >= SALE_SIZE or self.final:
            return w, 1.0
        margin = counts[w] - max(c for i, c in enumerate(counts) if i != w)
        x = self.p["slope"] * margin * (1 + self.p["late"] * self.done) - self.p["slope"]
        return w, 1 / (1 + math.exp(-x))

    def utility(self, leads) -> float:
        worth = {c: 0.0 for c in [self.me] + self.rivals}
        count = dict.fromkeys(worth, 0.0)
        for d, (w, q) in enumerate(leads):
            if w not in worth or q <= 0:
                continue
            mult = 1.0
            for park in self.parks[d]:
                if leads[park][0] == w:
                    mult = max(mult, 1 + leads[park][1])
            worth[w] += self.values[d] * q * mult
            count[w] += q
        score = {c: worth[c] + self.p["two"] * min(2.0, count[c]) for c in worth}
        rivals = [score[r] for r in self.rivals]
        return score[self.me] - self.p["rival"] * (sum(rivals) / len(rivals) if rivals else 0)

    def leads(self):
        return [self.hold(d, self.counts[d]) for d in range(len(self.names))]

    def best_cube(self, cubes: list[str]) -> tuple:
        base = self.leads()
        best = None
        for colour in sorted(set(cubes), key=COLOURS.index):
            ci = COLOURS.index(colour)
            for d in range(len(self.names)):
                if self.sold[d]:
                    continue
                counts = list(self.counts[d])
                counts[ci] += 1
                trial = list(base)
                trial[d] = self.hold(d, counts)
                u = self.utility(trial)
                if best is None or u > best[0]:
                    best = (u, colour, d)
        return best

    def place(self, colour: str, d: int) -> None:
        self.counts[d][COLOURS.index(colour)] += 1
        if sum(self.counts[d]) >= SALE_SIZE:
            self.sold[d] = True
            self.owner[d] = majority(self.counts[d])

    def lot_worth(self, lot: list[str]) -> float:
        start = self.utility(self.leads())
        cubes = list(lot)
        while cubes:
            _, colour, d = self.best_cube(cubes)
            self.place(colour, d)
            cubes.remove(colour)
        return self.utility(self.leads()) - start


def big_shot_district_value(p: dict) -> Policy:
    """Bids 1 over while the bid is below `frac` x the lot's worth + `add` (the worth: its
    cubes placed greedily, districts valued by a logistic chance that a lead holds), borrows
    when the loan's cost x `loan` is below the surplus, places for its own worth less
    `rival` x the rivals' mean."""
    def policy(view, legal, seat, rng):
        kind = legal[0]["type"]
        if kind == "choose_start_space":
            mine = view["seats"][seat]["colour"]
            spaces = view["spaces"]
            n = len(spaces)
            best = max(range(n), key=lambda s: (sum(spaces[(s + k) % n].count(mine) for k in range(1, 7)), -s))
            t = legal[0]["space"]
            return {"type": "choose_start_space", "space": min(t["max"], max(t["min"], best))}
        if kind == "place":
            board = _Board(view, seat, p)
            _, colour, d = board.best_cube(view["placing"]["cubes"])
            action = {"type": "place", "colour": colour, "district": board.names[d]}
            return action if action in legal else legal[0]
        auction = view.get("auction")
        pass_action = _first(legal, "pass") or fill_template(legal[0], rng)
        if not auction:
            return pass_action
        others = [s for s, out in enumerate(auction["passed"]) if s != seat and not out]
        if auction["high_bid"] == 0 and not others and view.get("active") == seat:
            return pass_action
        limit = p["frac"] * _Board(view, seat, p).lot_worth(auction["lot"]) + p["add"]
        want = auction["high_bid"] + 1
        if want > limit:
            return pass_action
        bid = _first(legal, "bid")
        if bid is not None and bid["amount"]["max"] >= want:
            return {"type": "bid", "amount": max(bid["amount"]["min"], want)}
        me = view["seats"][seat]
        if _first(legal, "borrow") and me.get("next_loan") and me["cash"] + me["next_loan"] >= want \
                and limit - want > p["loan"] * (1 + me["loans"]):
            return {"type": "borrow"}
        return pass_action
    return policy


# ----------------------------------------------------------------------------- speculate

def _spc_targets(view: dict) -> dict:
    objective = (view.get("you") or {}).get("objective") or {}
    return objective.get("targets") or {}


def _spc_card_value(view, seat, card, p) -> float:
    share, move = card.split(":")
    rules = view["rules"]
    price = view["prices"][share]
    if move == "dividend":
        per = price // rules["dividend_divisor"]
    else:
        per = min(rules["price_max"], max(rules["price_min"], price + int(move))) - price
    gains = [row[share] * per for row in view["shares"]]
    mine = gains[seat]
    rivals = [g for q, g in enumerate(gains) if q != seat and view["alive"][q]]
    targets = _spc_targets(view)
    progress = 0.0
    if share in targets and move != "dividend":
        held = view["shares"][seat][share]
        before = min(held * price, targets[share])
        after = min(held * (price + per), targets[share])
        progress = (after - before) / targets[share]
    return mine + p["progress"] * 100 * progress - p["rival"] * max(rivals or [0])


def speculate_objective_trader(p: dict) -> Policy:
    """Chases its objective: sells the types it does not target, buys each target type up to
    `cover` x the target's value keeping `reserve` cash, sells its spare shares to buyers and
    buys lacking ones from sellers up to `answer` x the lack; plays the card best for itself
    with `progress` on its targets, less `rival` x the best rival's gain."""
    def policy(view, legal, seat, rng):
        kind = legal[0]["type"]
        if kind == "play_event":
            return max(legal, key=lambda a: (_spc_card_value(view, seat, a["card"], p), a["card"]))
        targets = _spc_targets(view)
        holding, prices = view["shares"][seat], view["prices"]
        money = view["money"][seat]

        def lack(share):
            price = prices[share]
            return 0 if price <= 0 else max(0, math.ceil(p["cover"] * targets[share] / price) - holding[share])
        if kind == "respond":
            ann = view["announcement"]
            cap, share = legal[0]["count"]["max"], ann["share"]
            if ann["side"] == "buy":
                keep = 0 if share not in targets or prices[share] <= 0 else \
                    math.ceil(p["cover"] * targets[share] / prices[share])
                count = max(0, holding[share] - keep)
            else:
                afford = cap if prices[share] <= 0 else int(max(0, money - p["reserve"]) // prices[share])
                count = min(int(p["answer"] * lack(share)), afford) if share in targets else 0
            return {"type": "respond", "count": max(0, min(cap, count))}
        if kind == "give_shares":
            pick = min if legal[0].get("share") in targets else max
            return pick(legal, key=lambda a: a["count"])
        if view.get("phase") != "trade":
            return fill_template(rng.choice(legal), rng)
        turn = view["turn"]
        due = turn["late_fee_due"]
        sells = [a for a in legal if a["type"] == "sell"]
        if due and money < due and sells:
            sells.sort(key=lambda a: (a["share"] in targets, -holding[a["share"]] * prices[a["share"]]))
            return {**sells[0], "count": sells[0]["count"]["max"]}
        for a in sells:
            if a["share"] not in targets and (not turn["first_turn"] or a["share"] in turn["types_announced"]
                                              or len(turn["types_announced"]) + 1 < turn["first_turn_types"]):
                return {**a, "count": a["count"]["max"]}
        for share in sorted(targets, key=lambda t: -lack(t) * prices[t]):
            a = next((x for x in legal if x["type"] == "buy" and x["share"] == share), None)
            if a is None or share in turn["types_announced"] and view["bank"]["shares"][share] == 0:
                continue
            afford = int(max(0, money - p["reserve"] - due) // (prices[share] + view["rules"]["bank_buy_markup"]))
            count = min(lack(share), a["count"]["max"], afford)
            if count >= 1:
                return {**a, "count": count}
        return _first(legal, "end_trading") or fill_template(rng.choice(legal), rng)
    return policy


# ----------------------------------------------------------------------------- speculation

RANKS = "23456789TJQKA"


def _spn_keep_chance(view: dict) -> float:
    """The chance that the best trump now showing is never beaten: every unseen card is a
    uniform draw, and `to turn` of them are still turned (hypergeometric: none of the higher
    trumps among them)."""
    best = view.get("best_trump")
    if not best:
        return 0.0
    seen = {view["turn_up"]} | {r["card"] for r in view["revealed"]}
    higher = sum(1 for r in RANKS[RANKS.index(best[0]) + 1:] if r + view["trump"] not in seen)
    unseen = max(1, 52 - len(seen))
    to_turn = min(unseen, sum(view["piles"]) + (view.get("dead_hand") or 0))
    chance = 1.0
    for k in range(to_turn):
        chance *= max(0, unseen - higher - k) / (unseen - k)
    return chance


def speculation_equity_trader(p: dict) -> Policy:
    """Prices the showing best trump at its keep chance x the pot, scaled by how far its chips
    trail the table's mean (`behind`); bids up to `bid` x that, jumping `jump` of the way at
    once; sells at `ask` x it; offers whenever it holds (an offer commits to nothing)."""
    def value(view, seat):
        chips = view["chips"]
        mean = sum(chips) / len(chips) or 1
        lean = 1 + p["behind"] * (mean - chips[seat]) / mean
        return max(0.0, _spn_keep_chance(view) * view["pot"] * lean)

    def policy(view, legal, seat, rng):
        kinds = {a["type"] for a in legal}
        if "reveal" in kinds:
            return {"type": "reveal"}
        if "offer" in kinds:
            return {"type": "offer"}
        if "accept" in kinds:
            return {"type": "accept"} if view["auction"]["high_bid"] >= p["ask"] * value(view, seat) \
                else {"type": "decline"}
        if "bid" in kinds:
            t = _first(legal, "bid")["amount"]
            top = min(t["max"], int(p["bid"] * value(view, seat)))
            if t["min"] > top:
                return _first(legal, "pass") or {"type": "pass"}
            return {"type": "bid", "amount": max(t["min"], int(t["min"] + p["jump"] * (top - t["min"])))}
        for kind in ("keep_blind", "pass", "keep", "decline"):
            if kind in kinds:
                return {"type": kind}
        return fill_template(rng.choice(legal), rng)
    return policy


FAMILIES: dict[str, dict[str, Family]] = {
    spekulation.NAME: {"race-value": Family(spekulation.NAME, "race-value", (
        Param("forward", 0.0, 1.2), Param("pull", 0.0, 2.0), Param("blend", 0.0, 1.0),
        Param("buy", -10.0, 60.0), Param("sell", -10.0, 60.0), Param("rival", 0.0, 1.5),
        Param("holiday", -20.0, 20.0)), spekulation_race_value),
        "race-count": Family(spekulation.NAME, "race-count", (
            Param("forward", 0.0, 1.2), Param("pull", 0.0, 2.0), Param("blend", 0.0, 1.0),
            Param("buy", -10.0, 60.0), Param("sell", -10.0, 60.0), Param("rival", 0.0, 1.5),
            Param("holiday", -20.0, 20.0), Param("count", 0.0, 6.0)), spekulation_race_count)},
    big_shot.NAME: {"district-value": Family(big_shot.NAME, "district-value", (
        Param("frac", 0.0, 1.5), Param("add", -3.0, 6.0), Param("rival", 0.0, 1.5), Param("slope", 0.2, 4.0),
        Param("late", 0.0, 4.0), Param("two", 0.0, 25.0), Param("loan", 0.0, 4.0)), big_shot_district_value)},
    speculate.NAME: {"objective-trader": Family(speculate.NAME, "objective-trader", (
        Param("cover", 0.8, 3.0), Param("reserve", 0.0, 150.0), Param("answer", 0.0, 1.5),
        Param("progress", 0.0, 3.0), Param("rival", 0.0, 1.5)), speculate_objective_trader)},
    speculation.NAME: {"equity-trader": Family(speculation.NAME, "equity-trader", (
        Param("bid", 0.3, 1.6), Param("ask", 0.5, 2.0), Param("jump", 0.0, 1.0),
        Param("behind", -1.0, 1.0)), speculation_equity_trader)},
}
