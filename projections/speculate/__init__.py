"""Speculate: a stock exchange with hidden objectives (game id `speculate`).

The rules as implemented, with every decision marked: docs/games/speculate.md.

The game interface (projections/game.py), by file, in reading order:
  data.py     the numbers (projections/data/speculate.json) and the cards built from them
  state.py    the state, whose turn it is, and what a seat could trade or has met
  fold.py     evolve: one small function per event type
  rules.py    the options, start, one decider per action (the action table), legal actions
  payment.py  paying a reward in shares: the minimal sets a payer may choose from
  view.py     view, redact and result
  ledger.py   transfers: the ledger entries each event causes
"""

from __future__ import annotations

from .data import (BANK_MARKDOWN, BANK_MARKUP, CARDS, DATA, DATA_PATH, EVENT_CARDS_TUPLE, FEE, FIRST_TURN_TYPES,
                   HIDDEN_INFORMATION, LATE_FEE, LEVELS, MAX_ANNOUNCEMENTS, MAX_PLAYERS, MAX_TYPES_HELD, MIN_PLAYERS,
                   NAME, NT, PRICE_MAX, PRICE_MIN, REWARD_BANK, REWARD_EACH, REWARD_SHARES_VALUE, ROUNDS_BY_PLAYERS,
                   RULES_VERSION, RULES_VERSIONS, SHARE_INDEX, SHARES, START_PRICE, TARGETS, Economy, economy,
                   objective_id, objective_json, parse_objective)
from .fold import evolve
from .ledger import transfers
from .payment import payment_plan
from .rules import ACTION_SCHEMAS, ACTIONS, OptionsSchema, decide, legal_actions, start
from .state import Offer, State, is_over, new_state, objective_met, to_act
from .view import redact, result, score, view

__all__ = [
    "NAME", "RULES_VERSION", "RULES_VERSIONS", "Economy", "economy", "MIN_PLAYERS", "MAX_PLAYERS", "HIDDEN_INFORMATION", "OptionsSchema", "ACTION_SCHEMAS",
    "ACTIONS", "new_state", "start", "decide", "evolve", "view", "redact", "legal_actions", "to_act", "is_over",
    "result", "score", "transfers", "State", "Offer", "objective_met", "payment_plan",
    "DATA", "DATA_PATH", "SHARES", "NT", "SHARE_INDEX", "CARDS", "EVENT_CARDS_TUPLE", "TARGETS", "LEVELS",
    "START_PRICE", "PRICE_MIN", "PRICE_MAX", "FEE", "LATE_FEE", "MAX_ANNOUNCEMENTS", "FIRST_TURN_TYPES",
    "BANK_MARKUP", "BANK_MARKDOWN", "MAX_TYPES_HELD", "REWARD_EACH", "REWARD_SHARES_VALUE", "REWARD_BANK",
    "ROUNDS_BY_PLAYERS", "objective_id", "objective_json", "parse_objective",
]


# --- the game, declared once (projections/game_type.py): every layer finds its parts here ------

from projections.game_type import GameType  # noqa: E402  (the declaration closes the module)

GAME_TYPE = GameType(
    name=NAME, title="Speculate — hidden objectives", rules="projections.speculate",
    docs="docs/games/speculate.md", drawer="speculate.js", payloads="payloads.json",
    render="service.render.speculate", bots="workers.bots.speculate", search="workers.bots.search.speculate")
