"""Paying a reward in shares: a minimal set of shares worth at least REWARD_SHARES_VALUE (no
share can be left out), chosen share type by share type in table order.

Counts that are forced are filled in; the payer chooses only where more than one count can
still end in a minimal set.
"""

from __future__ import annotations

from typing import Optional

from .data import NT, REWARD_SHARES_VALUE


def _completable(prices, held, counts) -> bool:
    """Can the decided counts (types 0..len-1) still end as a minimal set?"""
    need = REWARD_SHARES_VALUE
    value = 0
    low = None
    for t, c in enumerate(counts):
        if c:
            if prices[t] == 0:
                return False            # a share worth 0 can always be left out
            value += c * prices[t]
            low = prices[t] if low is None else min(low, prices[t])
    if value >= need:
        return value - low < need
    rest = [(prices[t], held[t]) for t in range(len(counts), NT) if prices[t] > 0 and held[t] > 0]
    # A minimal set's total lies in [need, need + its cheapest price): try each cheapest price.
    caps = {p for p, _ in rest if low is None or p < low}
    if low is not None:
        caps.add(low)
    for cap in caps:
        mask = (1 << (need + cap)) - 1
        reach = 1 << value
        for p, h in rest:
            if p < cap:
                continue
            step, more = reach, reach
            for _ in range(h):
                step = (step << p) & mask
                if not step:
                    break
                more |= step
            reach = more
        if reach >> need:
            return True
    return False


def payment_plan(prices, held, prefix=()) -> tuple[Optional[tuple[int, ...]], int, list[int], tuple[int, ...]]:
    """Walk the share types from len(prefix) on, filling in every forced count.

    Returns (complete counts, -, -, -) when the set is determined, else
    (None, share index to choose, the counts allowed for it, the prefix so far).
    """
    counts = list(prefix)
    while len(counts) < NT:
        t = len(counts)
        options = [c for c in range(held[t] + 1) if _completable(prices, held, counts + [c])]
        if len(options) != 1:
            return None, t, options, tuple(counts)
        counts.append(options[0])
    return tuple(counts), -1, [], tuple(counts)
