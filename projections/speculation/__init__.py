"""Speculation, the Georgian card game (game id `speculation`): the game interface of
`projections/game.py`, from the rules (`rules.py`), the view (`view.py`) and the ledger
(`ledger.py`). Rules as implemented: docs/games/speculation.md.
"""

from .ledger import transfers
from .rules import (
    ACTION_SCHEMAS, ACTIONS, ALL_CARDS, AUTO_PHASES, BIDDING, BLIND, CARD_OF, CLOSE, CODES, DEAD_REVEAL,
    DECK_SIZE, DEFAULT_ANTES, HIDDEN_INFORMATION, KIND_BLIND, KIND_TRUMP, MAX_PLAYERS, MIN_PLAYERS, NAME,
    NEW, OVER, PHASE_ACTIONS, PLAYER_PHASES, PREDEAL, RANKS, REVEAL, RULES_VERSION, RULES_VERSIONS, SALE,
    SETTLE, SHUFFLE, SUITS, TURNUP, Config, OptionsSchema, State, decide, default_stakes, evolve, is_over,
    legal_actions, new_state, result, start, stock_after_turn_up, to_act,
)
from .view import redact, view

__all__ = [
    "ACTION_SCHEMAS", "ACTIONS", "ALL_CARDS", "AUTO_PHASES", "BIDDING", "BLIND", "CARD_OF", "CLOSE",
    "CODES", "DEAD_REVEAL", "DECK_SIZE", "DEFAULT_ANTES", "HIDDEN_INFORMATION", "KIND_BLIND",
    "KIND_TRUMP", "MAX_PLAYERS", "MIN_PLAYERS", "NAME", "NEW", "OVER", "PHASE_ACTIONS", "PLAYER_PHASES",
    "PREDEAL", "RANKS", "REVEAL", "RULES_VERSION", "RULES_VERSIONS", "SALE", "SETTLE", "SHUFFLE", "SUITS",
    "TURNUP",
    "Config", "OptionsSchema", "State", "decide", "default_stakes", "stock_after_turn_up", "evolve", "is_over", "legal_actions", "new_state",
    "result", "start", "to_act", "transfers", "redact", "view",
]


# --- the game, declared once (projections/game_type.py): every layer finds its parts here ------

from projections.game_type import GameType  # noqa: E402  (the declaration closes the module)

GAME_TYPE = GameType(
    name=NAME, title="Speculation — the card game", rules="projections.speculation",
    docs="docs/games/speculation.md", drawer="speculation.js", payloads="payloads.json",
    render="service.render.speculation", bots="workers.bots.speculation", search="workers.bots.search.speculation")
