"""Spekulation (Dirk Henn, 1992): the stock race, both editions and both board sides.

Rules as implemented: docs/games/spekulation.md.

Eight company markers race along a track of 60 spaces. A company's share price is read
from the table of the section its marker stands in, at the company's rank. Each turn the
active player rolls the symbol die (``dice`` edition) or draws an action tile (``tiles``
edition): a trade round, a +1 / -1 rank move, or nothing; then the number die / a move tile
gives a distance, every player secretly commits one of their two hand cards and the
companies on the revealed cards move (unless a bank holiday card stops them).

Positions are ints: 0 is the start, ``END_SPACE[edition]`` is the END (61 with dice, 60
with tiles); the spaces in between hold at most one marker each.

The price tables are data (projections/data/spekulation.json, RECONSTRUCTED, replaceable).

The package: `board` (companies, cards, price tables, ranks, prices, marker moves),
`rules` (options, state, evolve, decide, legal actions, result), `view` (views and
redaction), `ledger` (transfers). This module is the game's interface for the registry,
the bots and the tests.
"""

from .board import (ACTION_PHASE, ACTION_TILES, BOARDS, BOX, CARDS, COMPANIES, COMPANY_INDEX, DATA_PATH,
                    DECK_SIZE, EDITIONS, END_SPACE, FACE_ACTION, HAND_SIZE, HOLIDAY, MOVE_TILES,
                    N_COMPANIES, SECTION_SIZE, START, START_MONEY, START_PRICE, SUPPLY, SYMBOL_FACES,
                    TABLES, forward, load_tables, minus_one_target, plus_one_target, price, price_at,
                    prices, rank_move_candidates, rank_move_target, ranks)
from .ledger import transfers
from .rules import (ACTION_SCHEMAS, ACTIONS, HIDDEN_INFORMATION, MAX_PLAYERS, MIN_PLAYERS, NAME,
                    RULES_VERSION, RULES_VERSIONS, OptionsSchema, State, decide, dice_rolled_together, evolve,
                    is_over, legal_actions, new_state, result, scores, start, to_act)
from .view import redact, view

__all__ = [
    "ACTION_PHASE", "ACTION_TILES", "BOARDS", "BOX", "CARDS", "COMPANIES", "COMPANY_INDEX", "DATA_PATH",
    "DECK_SIZE", "EDITIONS", "END_SPACE", "FACE_ACTION", "HAND_SIZE", "HOLIDAY", "MOVE_TILES",
    "N_COMPANIES", "SECTION_SIZE", "START", "START_MONEY", "START_PRICE", "SUPPLY", "SYMBOL_FACES",
    "TABLES", "forward", "load_tables", "minus_one_target", "plus_one_target", "price", "price_at",
    "prices", "rank_move_candidates", "rank_move_target", "ranks",
    "transfers",
    "ACTION_SCHEMAS", "ACTIONS", "HIDDEN_INFORMATION", "MAX_PLAYERS", "MIN_PLAYERS", "NAME",
    "RULES_VERSION", "RULES_VERSIONS", "OptionsSchema", "State", "decide", "dice_rolled_together", "evolve",
    "is_over", "legal_actions",
    "new_state", "result", "scores", "start", "to_act",
    "redact", "view",
]


# --- the game, declared once (projections/game_type.py): every layer finds its parts here ------

from projections.game_type import GameType  # noqa: E402  (the declaration closes the module)

GAME_TYPE = GameType(
    name=NAME, title="Spekulation — the stock race", rules="projections.spekulation",
    docs="docs/games/spekulation.md", drawer="spekulation.js", payloads="payloads.json",
    render="service.render.spekulation", bots="workers.bots.spekulation", search="workers.bots.search.spekulation")
