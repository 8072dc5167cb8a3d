"""Ratings as a pure computation: openskill's Plackett-Luce model (Weng-Lin), one free-for-all
table of 2 to 8 players rated by finishing place, ties as shared places.

The model's parameters are the library's defaults (mu 25, sigma 25/3, beta 25/6, tau 25/300):
changing one would change every rating, so they are pinned here and named in each ratings
log's first event (`rating.applied` carries `model`), and a rebuild refuses a log written
under others.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from openskill.models import PlackettLuce

MODEL = "openskill.PlackettLuce/defaults"
PROVISIONAL_GAMES = 10      # a rating is provisional until this many rated games
_MODEL = PlackettLuce()


@dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float
    games: int = 0
    wins: int = 0

    @property
    def ordinal(self) -> float:
        """What a leaderboard sorts by: mu - 3 sigma (openskill's ordinal), a rating the
        player is 99.7 % likely to be above."""
        return self.mu - 3 * self.sigma

    @property
    def provisional(self) -> bool:
        return self.games < PROVISIONAL_GAMES

    def as_record(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_record(cls, text: str) -> "Rating":
        return cls(**json.loads(text))

    def shown(self) -> dict:
        return {"ordinal": self.ordinal, "mu": self.mu, "sigma": self.sigma, "games": self.games,
                "wins": self.wins, "provisional": self.provisional}


def initial() -> Rating:
    start = _MODEL.rating()
    return Rating(start.mu, start.sigma)


def rate(before: list[Rating], places: list[int], winners: list[bool]) -> list[Rating]:
    """Each player's rating after one table: `places` 1 = first (equal places are ties),
    `winners` whether each counts a win."""
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in before]
    after = _MODEL.rate(teams, ranks=list(places))
    return [Rating(team[0].mu, team[0].sigma, r.games + 1, r.wins + int(won))
            for team, r, won in zip(after, before, winners)]
