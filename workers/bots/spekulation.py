"""The `heuristic` level for spekulation: decides from the seat's view only.

- Values each company by an estimated final price: its marker is shifted forward by most of
  the distance the leader still has to the END (the race ends when the leader arrives), and
  its rank is pulled toward the middle in proportion to the race still left, never past
  it (early in the race rank says little about the finish: ranks regress to the middle, so
  early in the race every company is valued by its position at a middle rank; the old
  pull, 1.5 x the race left, went past the middle and reversed the early ranking, valuing an
  early leader below the laggards). Companies on its own hand cards get a rank bonus (it can
  push them). The forward move is scaled per company by card counting (`card_pace`: a
  company whose card is still unplayed in more seats will be pushed more; issue 47's league
  found that a player who counts cards won twice its share against a heuristic that did not).
- Trade: buys the share with the best expected gain (estimate - price) it can afford,
  or sells a held share whose estimate is below its price (a loser), whichever gains more.
- +1 / -1: the candidate that raises its own portfolio most against the others'.
- Movement card: the card whose move raises its own portfolio most (against the others'),
  the bank holiday when every company card would hurt it.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from typing import Optional

from projections.spekulation import (COMPANIES, COMPANY_INDEX, HOLIDAY, N_COMPANIES, START,
                                     START_PRICE, TABLES, State, forward, minus_one_target,
                                     plus_one_target)
from projections.templates import fill_template

MID_RANK = (1 + N_COMPANIES) / 2


@dataclass(frozen=True)
class Tuning:
    """The heuristic's constants. Since issue 47 they are the ones ops/tournament/harden.py
    found against the league (docs/bots.md, League): card counting (`count_weight`) above all,
    the rest moved with it (the values before it in the comments)."""
    hand_rank_bonus: float = 0.7763  # was 1.5
    opponent_weight: float = 0.4699  # the best rival's portfolio against its own, for card moves (was 0.7)
    rank_pull: float = 1.5682        # the pull reaches the middle when 64% of the race is left (was 1.5)
    forward: float = 0.4837          # the share of the leader's remaining distance a marker covers (was 0.85)
    buy_gain: float = -2.3453        # a buy must gain more than this, estimate - price (was 4)
    sell_gain: float = -3.7335       # a sale must gain more than this, price - estimate (was 4)
    holiday: float = 6.227           # the bank holiday's bonus over the board as it stands (was 1)
    count_weight: float = 2.2113     # card counting: how much a company's unplayed cards speed it up (was 0)


DEFAULT = Tuning()
HAND_RANK_BONUS = DEFAULT.hand_rank_bonus
OPPONENT_WEIGHT = DEFAULT.opponent_weight
RANK_PULL = DEFAULT.rank_pull
FORWARD = DEFAULT.forward


def _ranks(positions: list[int], arrivals: list[int], end: int) -> list[float]:
    """Ranks as the view would give them, but start markers get the mean of their shared ranks."""
    out = [0.0] * N_COMPANIES
    for i, c in enumerate(arrivals):
        out[c] = i + 1
    track = sorted(((p, c) for c, p in enumerate(positions) if START < p < end), reverse=True)
    ahead = len(arrivals)
    for k, (_, c) in enumerate(track):
        out[c] = ahead + k + 1
    off = ahead + len(track)
    mean = (off + 1 + N_COMPANIES) / 2
    for c, p in enumerate(positions):
        if p == START:
            out[c] = mean
    return out


def _table_price(board: str, position: int, rank: float, end: int) -> float:
    sections, end_list = TABLES[board]
    rank = min(max(rank, 1.0), float(N_COMPANIES))
    lo = int(rank)
    frac = rank - lo
    row = end_list if position >= end else sections[min(max(position, 1) - 1, 59) // 10]
    a = row[lo - 1]
    b = row[min(lo, N_COMPANIES - 1)]
    return a + (b - a) * frac


def estimates(positions: list[int], arrivals: list[int], end: int, board: str,
              hand: tuple = (), tuning: Tuning = DEFAULT, pace: tuple = ()) -> list[float]:
    """Estimated final price per company (`pace`: per company, how fast it moves against the
    mean, from card counting; none: all alike)."""
    return list(_estimates(tuple(positions), tuple(arrivals), end, board, tuple(hand), tuning, tuple(pace)))


def card_pace(view: dict, weight: float) -> tuple:
    """Card counting. Every seat's deck holds each company's card once, and it plays the deck
    through before it is shuffled again; the discards are public. So a company whose card is
    still unplayed in more seats (in a hand or a deck) will be moved more in the turns to come.
    Its pace is 1 + `weight` x (seats with its card unplayed / the mean over companies - 1)."""
    if not weight:
        return ()
    unplayed = [sum(1 for row in view["seats"] if name not in row["discard"]) for name in COMPANIES]
    mean = sum(unplayed) / N_COMPANIES or 1.0
    return tuple(max(0.0, 1 + weight * (u / mean - 1)) for u in unplayed)


# A move's choice weighs every candidate's board, and the search asks again in every world it
# samples: the same few boards, so they are remembered (bounded: a long-lived worker).
@functools.lru_cache(maxsize=50_000)
def _estimates(positions: tuple, arrivals: tuple, end: int, board: str, hand: tuple,
               tuning: Tuning = DEFAULT, pace: tuple = ()) -> tuple:
    track = [p for p in positions if START < p < end]
    left = 0 if arrivals else end - (max(track) if track else 0)
    fraction = min(1.0, left / end)
    rk = _ranks(positions, arrivals, end)
    out = []
    for c, p in enumerate(positions):
        if p >= end:
            out.append(float(TABLES[board][1][arrivals.index(c)]))
            continue
        rank = rk[c]
        if COMPANIES[c] in hand and rank > 1:
            rank -= tuning.hand_rank_bonus
        rank += (MID_RANK - rank) * min(1.0, tuning.rank_pull * fraction)
        if left == 0:
            # somebody arrived: the race stops at the end of this turn/round
            out.append(float(START_PRICE) if p == START else _table_price(board, p, rank, end))
            continue
        est_pos = min(end - 1, p + int(left * tuning.forward * (pace[c] if pace else 1.0)))
        if rank <= 1.0 + 1e-9:
            est_pos = end
            out.append(float(TABLES[board][1][len(arrivals)]))
            continue
        out.append(_table_price(board, max(est_pos, 1), rank, end))
    return tuple(out)


def _portfolio(shares: list[list[int]], est: list[float]) -> list[float]:
    return [sum(k * est[c] for c, k in enumerate(row)) for row in shares]


def _relative(seat: int, values: list[float], tuning: Tuning = DEFAULT) -> float:
    others = [v for s, v in enumerate(values) if s != seat]
    return values[seat] - tuning.opponent_weight * (max(others) if others else 0)


def _pick(legal: list[dict], wanted: dict) -> Optional[dict]:
    for action in legal:
        if action == wanted:
            return action
    return None


def heuristic(view: dict, legal_actions: list[dict], seat: int, rng: random.Random,
              tuning: Tuning = DEFAULT) -> dict:
    if not legal_actions:
        raise ValueError("no legal action")
    kinds = {a["type"] for a in legal_actions}
    try:
        companies = view["companies"]
        end = view["end_space"]
        board = view["board"]
        positions = [companies[name]["position"] for name in COMPANIES]
        arrivals = [COMPANY_INDEX[name] for name in view["arrivals"]]
        shares = [[row["shares"][name] for name in COMPANIES] for row in view["seats"]]
        hand = tuple(view.get("hand") or ())
        prices = [companies[name]["price"] for name in COMPANIES]
        pace = card_pace(view, tuning.count_weight)
    except (KeyError, TypeError, ValueError):
        return fill_template(rng.choice(legal_actions), rng)

    if kinds & {"buy", "sell", "pass"}:
        est = estimates(positions, arrivals, end, board, hand, tuning, pace)
        best, gain = {"type": "pass"}, 0.0
        for action in legal_actions:
            if action["type"] == "buy":
                c = COMPANY_INDEX[action["company"]]
                g = est[c] - prices[c] - tuning.buy_gain
            elif action["type"] == "sell":
                c = COMPANY_INDEX[action["company"]]
                g = prices[c] - est[c] - tuning.sell_gain
            else:
                continue
            if g > gain:
                best, gain = action, g
        return _pick(legal_actions, best) or legal_actions[0]

    if "rank_move" in kinds:
        direction = view.get("action")
        base = State(edition=view["edition"], board=board, players=view["players"], end=end,
                     positions=tuple(positions), arrivals=tuple(arrivals))
        best, score = legal_actions[0], None
        for action in legal_actions:
            c = COMPANY_INDEX[action["company"]]
            target = plus_one_target(base, c) if direction == "+1" else minus_one_target(base, c)
            if target is None:
                continue
            pos = list(positions)
            pos[c] = target
            arr = arrivals + [c] if target >= end and positions[c] < end else arrivals
            s = _relative(seat, _portfolio(shares, estimates(pos, arr, end, board, hand, tuning, pace)), tuning)
            if score is None or s > score:
                best, score = action, s
        return best

    if "play" in kinds:
        number = view.get("number") or 0
        best, score = None, None
        baseline = _relative(seat, _portfolio(shares, estimates(positions, arrivals, end, board, hand, tuning, pace)), tuning)
        for action in legal_actions:
            card = action["card"]
            if card == HOLIDAY:
                s = baseline + tuning.holiday
            else:
                c = COMPANY_INDEX[card]
                pos = list(positions)
                to = forward(tuple(pos), c, number, end)
                arr = arrivals + [c] if to >= end and pos[c] < end else arrivals
                pos[c] = to
                s = _relative(seat, _portfolio(shares, estimates(pos, arr, end, board, hand, tuning, pace)), tuning)
            if score is None or s > score:
                best, score = action, s
        return best or legal_actions[0]

    if "choose_share" in kinds:
        return rng.choice(legal_actions)
    return fill_template(rng.choice(legal_actions), rng)
