"""Spekulation's board: the companies, the cards, the track, the price tables (data) and
how markers move and rank. No state of its own; every function reads a state's positions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

# The game state of rules.py (not imported: rules.py builds on this module).
State = Any

COMPANIES = ("red", "yellow", "dark-blue", "light-blue", "green", "orange", "brown", "grey")
N_COMPANIES = len(COMPANIES)
COMPANY_INDEX = {name: i for i, name in enumerate(COMPANIES)}
HOLIDAY = "holiday"
CARDS = COMPANIES + (HOLIDAY,)
DECK_SIZE = len(CARDS)                 # 9
HAND_SIZE = 2
START = 0
END_SPACE = {"dice": 61, "tiles": 60}  # the END; the track runs 1 .. END-1
SECTION_SIZE = 10
START_MONEY = 20
EDITIONS = ("dice", "tiles")
BOARDS = ("plain", "star")

SYMBOL_FACES = ("H", "H", "H", "+1", "-1", "blank")   # the dice edition's symbol die
FACE_ACTION = {"H": "trade", "+1": "+1", "-1": "-1", "blank": "none"}
ACTION_TILES = ("trade", "trade", "trade", "+1", "-1", "none")
MOVE_TILES = (1, 2, 3, 4, 5, 6)
ACTION_PHASE = {"trade": "trade", "+1": "rank_move", "-1": "rank_move", "none": "movement"}

SUPPLY = "supply"   # the share supply next to the board
BOX = "box"         # where the decks come from (the game box)

DATA_PATH = Path(__file__).parent.parent / "data" / "spekulation.json"


# ---------------------------------------------------------------------------------------
# Price tables (data file, loaded at import)

def load_tables(path: Path = DATA_PATH) -> tuple[int, dict[str, tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]]]:
    """Read and check the price tables: (start price, {board: (sections, end list)})."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    start_price = data["start_price"]
    if type(start_price) is not int:
        raise ValueError("spekulation data: start_price must be an integer")
    boards = {}
    for board in BOARDS:
        table = data["boards"][board]
        sections = tuple(tuple(row) for row in table["sections"])
        end = tuple(table["end"])
        if len(sections) != 6 or any(len(row) != N_COMPANIES for row in sections) \
                or len(end) != N_COMPANIES:
            raise ValueError(f"spekulation data: board {board} needs 6 sections x 8 ranks and 8 END prices")
        if any(type(v) is not int for row in sections + (end,) for v in row):
            raise ValueError(f"spekulation data: board {board} prices must be integers")
        boards[board] = (sections, end)
    return start_price, boards


START_PRICE, TABLES = load_tables()

# ---------------------------------------------------------------------------------------
# Prices and ranks

def ranks(state: State) -> list[int]:
    """Rank per company (1 = first): END by arrival, then the track by position, then the
    start (markers on the start share the rank after every marker off the start)."""
    end = state.end
    out = [0] * N_COMPANIES
    for i, c in enumerate(state.arrivals):
        out[c] = i + 1
    ahead = len(state.arrivals)
    track = sorted(((p, c) for c, p in enumerate(state.positions) if START < p < end), reverse=True)
    for k, (_, c) in enumerate(track):
        out[c] = ahead + k + 1
    off = ahead + len(track)
    for c, p in enumerate(state.positions):
        if p == START:
            out[c] = off + 1
    return out


def price_at(board: str, position: int, rank: int, arrival: int, end: int) -> int:
    """The table price of a marker at `position` with `rank` (arrival: 0-based, END only)."""
    if position == START:
        return START_PRICE
    sections, end_list = TABLES[board]
    if position >= end:
        return end_list[arrival]
    return sections[(position - 1) // SECTION_SIZE][rank - 1]


def prices(state: State) -> list[int]:
    rk = ranks(state)
    out = []
    for c, p in enumerate(state.positions):
        arrival = state.arrivals.index(c) if p == state.end else 0
        out.append(price_at(state.board, p, rk[c], arrival, state.end))
    return out


def price(state: State, company: int) -> int:
    return prices(state)[company]


# ---------------------------------------------------------------------------------------
# Marker movement

def _occupied(positions: tuple, mover: int, end: int) -> set:
    return {p for c, p in enumerate(positions) if c != mover and START < p < end}


def forward(positions: tuple, company: int, steps: int, end: int) -> int:
    """Where `company` lands moving `steps` spaces forward, occupied spaces not counted."""
    p = positions[company]
    if p >= end:
        return end
    occupied = _occupied(positions, company, end)
    for _ in range(steps):
        p += 1
        while p < end and p in occupied:
            p += 1
        if p >= end:
            return end
    return p


def plus_one_target(state: State, company: int) -> Optional[int]:
    """Where a +1 rank move puts `company`, or None when it is not allowed."""
    end = state.end
    p = state.positions[company]
    if p >= end:
        return None
    ahead = [q for c, q in enumerate(state.positions) if c != company and p < q < end]
    if not ahead:
        if not state.arrivals:
            return None            # first place (or everyone on the start)
        t = end                    # only END markers ahead: it joins them
    else:
        occupied = _occupied(state.positions, company, end)
        t = min(ahead) + 1
        while t < end and t in occupied:
            t += 1
        t = min(t, end)
    if t >= end and p == START and state.rules_version >= 2:
        return None                # version 2: never from the start straight onto the END
    return t


def minus_one_target(state: State, company: int) -> Optional[int]:
    """Where a -1 rank move puts `company`, or None when it is not allowed."""
    end = state.end
    p = state.positions[company]
    if p == START or p >= end:
        return None
    behind = [q for c, q in enumerate(state.positions) if c != company and START < q < p]
    if not behind:
        if START not in state.positions:
            return None            # last place
        return START               # only start markers behind: it returns to the start
    occupied = _occupied(state.positions, company, end)
    t = max(behind) - 1
    while t > START and t in occupied:
        t -= 1
    return max(t, START)


def rank_move_target(state: State, company: int, direction: str) -> Optional[int]:
    return plus_one_target(state, company) if direction == "+1" else minus_one_target(state, company)


def rank_move_candidates(state: State, direction: str) -> list[int]:
    return [c for c in range(N_COMPANIES) if rank_move_target(state, c, direction) is not None]

