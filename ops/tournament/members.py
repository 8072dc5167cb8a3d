"""The league's kept members (ops/tournament/league_strategies.json): named, seeded strategies of
a family with the parameters the league's search found, each playable as a tournament level
`league:NAME`. Apart from the league's search (league.py) so that the tournament's runner can
play them without importing the search that imports the runner."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .families import FAMILIES

LEAGUE_FILE = Path(__file__).resolve().parent / "league_strategies.json"
SEARCH_FAMILY = "search"          # a best response: the search level, rivals modelled as heuristics


@dataclass(frozen=True)
class Member:
    game: str
    name: str
    family: str
    params: tuple          # (name, value) pairs, in the family's order
    seed: str
    found: tuple = ()      # (key, value) pairs: what the search measured, for the record

    @property
    def level(self) -> str:
        return f"league:{self.name}"

    def policy(self):
        if self.family == SEARCH_FAMILY:
            from workers.bots import policy as bot_policy

            return bot_policy(self.game, "search")
        return FAMILIES[self.game][self.family].policy(dict(self.params))


def load_members(path: Path = LEAGUE_FILE) -> dict[str, list[Member]]:
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    out = {}
    for game, members in data.items():
        out[game] = [Member(game, m["name"], m["family"], tuple(m["params"].items()), m["seed"],
                            tuple(m.get("found", {}).items())) for m in members]
    return out


def save_member(member: Member, path: Path = LEAGUE_FILE) -> None:
    """Add (or replace, by name) a member in the league file."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    members = [m for m in data.get(member.game, []) if m["name"] != member.name]
    members.append({"name": member.name, "family": member.family, "params": dict(member.params),
                    "seed": member.seed, "found": dict(member.found)})
    data[member.game] = sorted(members, key=lambda m: m["name"])
    path.write_text(json.dumps(dict(sorted(data.items())), indent=1) + "\n", encoding="utf-8")


def member_policy(game: str, name: str, path: Path = LEAGUE_FILE):
    for m in load_members(path).get(game, []):
        if m.name == name:
            return m.policy()
    raise KeyError(f"no league member {name!r} for {game}")
