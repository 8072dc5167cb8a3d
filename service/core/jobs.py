"""The follow-up work the core asks for after a command (bot turns, scoring, turn timeouts).
The worker package implements it on RQ; the core only knows this protocol."""

from __future__ import annotations

from typing import Protocol


class Jobs(Protocol):
    # background: the game has no player seat (its jobs wait behind every other game's);
    # creator: whose bot time the turn is ("" when the game recorded none), for fair scheduling
    def bot_turn(self, game_id: str, seat: int, version: int, background: bool = False,
                 creator: str = "") -> None: ...
    def score(self, game_id: str, background: bool = False) -> None: ...
    def turn_timeout(self, game_id: str, seat: int, version: int, seconds: float) -> None: ...
    # an invitation's expiry (a challenge, a rematch): after `seconds`, expire it if still open
    def expire(self, game_id: str, seconds: float) -> None: ...
    # a pass of the matchmaker over one pool after `seconds` (a seek's bots_after)
    def match_seeks(self, game_type: str, players: int, rated: bool, seconds: float) -> None: ...


class NoJobs:
    """For tools that only read (the CLI's replay, verify and export)."""

    def bot_turn(self, game_id, seat, version, background=False, creator=""): pass
    def score(self, game_id, background=False): pass
    def turn_timeout(self, game_id, seat, version, seconds): pass
    def expire(self, game_id, seconds): pass
    def match_seeks(self, game_type, players, rated, seconds): pass
