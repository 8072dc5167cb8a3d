"""The start-up check of the hosted games: every part a game's `GameType` names exists.

projections cannot import the layers above it, so a game names its words, drawer, payload
schemas, bots and search (projections/game_type.py); this imports or opens each of them once,
when the app or a worker starts, so that a game missing a part fails there, naming the game
and the part, and never halfway through a request.

    check_games()        # raises GameDeclarationError listing every missing part
"""

from __future__ import annotations

import importlib
import json
import os
from typing import Callable, Iterable, Optional

from projections.game_type import GameType
from projections.registry import game_types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRAW_DIR = os.path.join(ROOT, "service", "web", "static", "js", "draw")
CONTRACT_DIR = os.path.join(ROOT, "service", "contract")

# What each named module must define (the callers: service/render, workers/bots, workers/bots/search).
MODULE_PARTS = {
    "render": ("describe", "action", "glossary", "hands", "draw"),
    "bots": ("heuristic",),
    "search": ("determinize", "evaluate"),
}


class GameDeclarationError(RuntimeError):
    pass


def drawer_path(game_type: GameType) -> str:
    return os.path.join(DRAW_DIR, game_type.drawer)


def payloads_path(game_type: GameType) -> str:
    """The contract file of the game's payload schemas: a name in service/contract/ (a test's
    own game may give a full path)."""
    return os.path.join(CONTRACT_DIR, game_type.payloads)


def _module_problem(game_type: GameType, part: str) -> Optional[str]:
    path = getattr(game_type, part)
    try:
        module = importlib.import_module(path)
    except ImportError as err:
        return f"{part}: cannot import {path} ({err})"
    missing = [name for name in MODULE_PARTS[part] if not hasattr(module, name)]
    return f"{part}: {path} lacks {', '.join(missing)}" if missing else None


def _docs_problem(game_type: GameType) -> Optional[str]:
    return None if os.path.isfile(os.path.join(ROOT, game_type.docs)) else f"docs: no page {game_type.docs}"


def _drawer_problem(game_type: GameType) -> Optional[str]:
    return None if os.path.isfile(drawer_path(game_type)) else \
        f"drawer: no file {game_type.drawer} in service/web/static/js/draw/"


def _payloads_problem(game_type: GameType) -> Optional[str]:
    try:
        with open(payloads_path(game_type), encoding="utf-8") as handle:
            states = json.load(handle).get("states", {})
    except (OSError, ValueError) as err:
        return f"payloads: cannot read {game_type.payloads} ({type(err).__name__})"
    if game_type.name not in states:
        return (f"payloads: {game_type.payloads} has no state schema for it "
                "(python -m docs.tools.gen_payload_schemas writes it)")
    return None


def problems(game_type: GameType) -> list[str]:
    """What is missing of one game's declared parts (empty: nothing)."""
    checks: list[Callable[[], Optional[str]]] = [
        lambda: _docs_problem(game_type), lambda: _drawer_problem(game_type),
        lambda: _payloads_problem(game_type),
        *[lambda part=part: _module_problem(game_type, part)
          for part in MODULE_PARTS if getattr(game_type, part)]]
    return [found for found in (check() for check in checks) if found]


def check_games(types: Optional[Iterable[GameType]] = None) -> None:
    """Every declared game has every part it names, or GameDeclarationError names the game and
    the part. Called by the app factory and the worker at start-up."""
    report = [f"game type {t.name}: {p}" for t in (game_types() if types is None else types) for p in problems(t)]
    if report:
        raise GameDeclarationError("a hosted game lacks a part it declares:\n  " + "\n  ".join(report))
