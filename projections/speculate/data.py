"""Speculate's numbers: projections/data/speculate.json, loaded and checked at import, and the
components built from them (the event cards, the objective cards' ids).

Every amount (money, shares, fees, the event deck, the objective targets, the rounds by
player count) is data; games record the setup amounts they used in their `game_started`
event. Internally share types are indexes into SHARES; events and views use their names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple, Optional

NAME = "speculate"
# 2: the economy at 5 and 6 players re-tuned (data: `rules_versions` in the JSON file)
RULES_VERSION = 2
RULES_VERSIONS = (1, 2)
MIN_PLAYERS = 3
MAX_PLAYERS = 6
HIDDEN_INFORMATION = True

DATA_PATH = Path(__file__).resolve().parent.parent / "data" / "speculate.json"


def _load_data(path: Path = DATA_PATH) -> dict:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    types = data["share_types"]
    if len(types) < 3 or len(set(types)) != len(types):
        raise ValueError("speculate data: share_types needs at least 3 distinct names")
    targets = data["objectives"]["targets"]
    if sorted(targets) != [str(level) for level in range(1, len(targets) + 1)]:
        raise ValueError("speculate data: objective levels must be 1..n")
    if len({len(t) for t in targets.values()}) != 1 or len(targets["1"]) > len(types):
        raise ValueError("speculate data: every level needs the same number of targets")
    rounds = data["rounds_by_players"]
    if sorted(int(k) for k in rounds) != list(range(MIN_PLAYERS, MAX_PLAYERS + 1)):
        raise ValueError("speculate data: rounds_by_players needs every player count 3..6")
    deck = len(types) * (len(data["event_deck"]["price_moves"]) + data["event_deck"]["dividend_cards_per_type"])
    if deck <= MAX_PLAYERS * data["player"]["event_cards"]:
        raise ValueError("speculate data: the event deck must outnumber the cards in hand")
    for version, changes in data.get("rules_versions", {}).items():
        if int(version) not in RULES_VERSIONS or int(version) == 1:
            raise ValueError(f"speculate data: rules_versions names unknown version {version}")
        for players, economy_ in changes["by_players"].items():
            if not MIN_PLAYERS <= int(players) <= MAX_PLAYERS or set(economy_) - set(ECONOMY_KEYS):
                raise ValueError(f"speculate data: version {version}, {players} players: "
                                 f"only {ECONOMY_KEYS} may be set")
            if "targets" in economy_ and sorted(economy_["targets"]) != sorted(targets):
                raise ValueError(f"speculate data: version {version}, {players} players: targets for every level")
            for level, row in economy_.get("targets", {}).items():
                if len(row) != len(targets[level]):
                    raise ValueError(f"speculate data: version {version}: level {level} needs {len(targets[level])} targets")
    return data


# what a rules version may set per player count (the economy), and the `Economy` field each sets
ECONOMY_KEYS = ("rounds", "targets", "bank_money_per_player", "reward_from_bank")


DATA = _load_data()
SHARES: tuple[str, ...] = tuple(DATA["share_types"])
NT = len(SHARES)
SHARE_INDEX = {name: i for i, name in enumerate(SHARES)}
START_PRICE = DATA["price"]["start"]
PRICE_MIN = DATA["price"]["min"]
PRICE_MAX = DATA["price"]["max"]
PLAYER_MONEY = DATA["player"]["money"]
PLAYER_SHARES = DATA["player"]["shares_per_type"]
HAND_SIZE = DATA["player"]["event_cards"]
BANK_MONEY_PER_PLAYER = DATA["bank_per_player"]["money"]
BANK_SHARES_PER_PLAYER = DATA["bank_per_player"]["shares_per_type"]
FEE = DATA["fee"]["turn"]
LATE_FEE = DATA["fee"]["late"]
DIVIDEND_DIVISOR = DATA["event_deck"]["dividend_price_divisor"]
MAX_TYPES_HELD = DATA["objectives"]["max_types_held"]
TARGETS: dict[int, tuple[int, ...]] = {int(k): tuple(v) for k, v in DATA["objectives"]["targets"].items()}
LEVELS = len(TARGETS)
REWARD_EACH = DATA["reward"]["from_each_player"]
REWARD_SHARES_VALUE = DATA["reward"]["in_shares_value"]
REWARD_BANK = DATA["reward"]["from_bank"]
MAX_ANNOUNCEMENTS = DATA["trading"]["max_announcements"]
FIRST_TURN_TYPES = DATA["trading"]["first_turn_types"]
BANK_MARKUP = DATA["trading"]["bank_buy_markup"]
BANK_MARKDOWN = DATA["trading"]["bank_sell_markdown"]
ROUNDS_BY_PLAYERS = {int(k): v for k, v in DATA["rounds_by_players"].items()}


class Economy(NamedTuple):
    """The numbers a rules version sets per player count."""

    rounds: int                                 # when the `rounds` option is not given
    targets: dict[int, tuple[int, ...]]         # per objective level
    bank_money_per_player: int
    reward_from_bank: int


def _economies() -> dict[tuple[int, int], Economy]:
    out = {}
    for players in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        current = {"rounds": ROUNDS_BY_PLAYERS[players], "targets": TARGETS,
                   "bank_money_per_player": BANK_MONEY_PER_PLAYER, "reward_from_bank": REWARD_BANK}
        for version in RULES_VERSIONS:           # each version changes what it names, keeps the rest
            changes = DATA.get("rules_versions", {}).get(str(version), {}).get("by_players", {}).get(str(players), {})
            current = dict(current, **changes)
            if "targets" in changes:
                current["targets"] = {int(k): tuple(v) for k, v in changes["targets"].items()}
            out[(players, version)] = Economy(**current)
    return out


_ECONOMIES = _economies()


def economy(players: int, rules_version: int = RULES_VERSION) -> Economy:
    """The rounds, objective targets, bank money and bank reward of a game of this size under
    this rules version (version 2 re-tuned 5 and 6 players; 3 and 4 are as in version 1)."""
    return _ECONOMIES[(players, rules_version)]


def _event_cards() -> tuple[dict[str, tuple[int, Optional[int]]], tuple[str, ...]]:
    cards: dict[str, tuple[int, Optional[int]]] = {}
    deck: list[str] = []
    for t, name in enumerate(SHARES):
        for move in DATA["event_deck"]["price_moves"]:
            cards[f"{name}:{move:+d}"] = (t, move)
            deck.append(f"{name}:{move:+d}")
        for _ in range(DATA["event_deck"]["dividend_cards_per_type"]):
            cards[f"{name}:dividend"] = (t, None)
            deck.append(f"{name}:dividend")
    return cards, tuple(deck)


# Event cards: id -> (share index, price move, or None for a dividend card); and the whole
# deck in canonical order (ids may repeat).
CARDS, EVENT_CARDS_TUPLE = _event_cards()


def objective_id(level: int, targets: dict[int, int]) -> str:
    """`L2:stores=200,mines=150,properties=100` (types in table order)."""
    return f"L{level}:" + ",".join(f"{SHARES[t]}={targets[t]}" for t in sorted(targets))


_OBJECTIVES: dict[str, tuple[int, tuple[int, ...]]] = {}


def parse_objective(oid: str) -> tuple[int, tuple[int, ...]]:
    """(level, target per share type, 0 where the card names no target)."""
    parsed = _OBJECTIVES.get(oid)
    if parsed is None:
        head, body = oid.split(":", 1)
        targets = [0] * NT
        for part in body.split(","):
            name, value = part.split("=")
            targets[SHARE_INDEX[name]] = int(value)
        parsed = _OBJECTIVES[oid] = (int(head[1:]), tuple(targets))
    return parsed


def objective_json(oid: Optional[str]) -> Optional[dict]:
    if oid is None:
        return None
    level, targets = parse_objective(oid)
    return {"id": oid, "level": level,
            "targets": {SHARES[t]: v for t, v in enumerate(targets) if v}}


def shares_json(counts) -> dict:
    """{share name: count} of the share types with a count."""
    return {SHARES[t]: c for t, c in enumerate(counts) if c}


def counts_from_json(shares: dict) -> list[int]:
    counts = [0] * NT
    for name, c in shares.items():
        counts[SHARE_INDEX[name]] = c
    return counts
