"""What a game is, declared once: `GameType`, in the spirit of OpenSpiel's `GameType`.

Each game declares its `GAME_TYPE` at the end of its own rules module, and
`projections/registry.py` registers it. Every layer reads the parts it needs from here: the
API and the OpenAPI document, the words and the web drawers, the CLI, the bots and the search,
the drills, the golden tests and the tournament. No other file lists the games.

The parts above the rules are NAMED (dotted module paths, file names), never imported here:
projections sits below workers and service (docs/architecture.md, "Layers"), so it cannot
import them. `service/games.py` imports each named part at start-up and fails, naming the game
and the part, when one is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Optional


@dataclass(frozen=True)
class GameType:
    name: str          # the game's id in the API and in every record ("big-shot")
    title: str         # what people read: the lobby, the table's heading ("Big Shot — district auctions")
    rules: str         # the rules module ("projections.big_shot"): the interface of projections/game.py
    docs: str          # the rules page, from the project's root ("docs/games/big-shot.md")
    render: str        # the words module ("service.render.big_shot"): describe, action, glossary, hands, draw
    drawer: str        # the web table's drawer, a file of service/web/static/js/draw/ ("big-shot.js")
    payloads: str      # the contract file of its view's state and events, in service/contract/ ("payloads.json")
    bots: Optional[str] = None     # the heuristic module ("workers.bots.big_shot"); none: random and baseline only
    search: Optional[str] = None   # the search module ("workers.bots.search.big_shot"); needs `bots`

    def __post_init__(self):
        empty = [f.name for f in fields(self) if f.name not in ("bots", "search") and not getattr(self, f.name)]
        if empty:
            raise TypeError(f"game type {self.name or '?'}: no {', '.join(empty)} declared")
        if self.search and not self.bots:
            raise TypeError(f"game type {self.name}: a search module needs the heuristic (bots) it rolls out with")

    def parts(self) -> dict[str, str]:
        """Every part declared, by field name (the optional ones only when given)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}
