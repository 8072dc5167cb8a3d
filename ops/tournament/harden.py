"""Harden a heuristic against the league: CMA-ES over the heuristic's constants (its `Tuning`).

    python -m ops.tournament.harden --game spekulation --generations 6 --sessions 24 --seed 1

A candidate tuning is played against every opponent the issue judges the heuristic by: each
non-search league member of the game (league_strategies.json) and each outside strategy
(strategies.py), both ways at 4 players (the opponent as one seat against three candidates,
one candidate against three of the opponent), and one candidate against three heuristics as
they are now (so a tuning that only beats the league and loses to the old bot is not kept).
Its fitness is what the bars ask, with a margin for the noise of a few sessions:

    - sum over opponents of max(0, opponent's rate - 0.22)      (the bar: at most 0.30)
    - sum over opponents of max(0, 0.27 - the candidate's rate) (the bar: at least 0.22)
    + 0.5 x (the candidate's rate against three current heuristics - 0.25)

The sessions are common to every candidate of a generation (seeded by the generation), new
each generation. It prints the best tuning found (the search's mean and the best candidates
played again on fresh sessions); writing it into the bot is a change of the code, reviewed
like any other, and the league is then searched again against the new heuristic.
Every evaluation is a line of `results/harden-{game}-{seed}.jsonl`: a rerun resumes.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import json
import sys
import time
import warnings
from pathlib import Path

from projections import big_shot, spekulation
from projections.registry import get_game
from workers.bots import big_shot as big_shot_bot
from workers.bots import spekulation as spekulation_bot
from workers.bots.study import play_session

from . import runner
from .league import SEARCH_FAMILY, load_members
from .strategies import OUTSIDE

# game -> (the heuristic module, {Tuning field: (low, high)})
SPACES = {
    spekulation.NAME: (spekulation_bot, {
        "hand_rank_bonus": (0.0, 3.0), "opponent_weight": (0.0, 1.5), "rank_pull": (0.0, 3.0),
        "forward": (0.2, 1.1), "buy_gain": (-5.0, 30.0), "sell_gain": (-5.0, 40.0), "holiday": (-10.0, 10.0),
        "count_weight": (0.0, 6.0)}),
    big_shot.NAME: (big_shot_bot, {
        "rival_weight": (0.0, 1.5), "two_district_bonus": (0.0, 25.0), "worth_factor": (0.1, 1.0),
        "bid_margin": (-2.0, 4.0)}),
}
PLAYERS = 4


def opponents(game: str) -> dict:
    """The league's non-search members and the outside strategies, by level name."""
    out = {m.level: m.policy() for m in load_members().get(game, []) if m.family != SEARCH_FAMILY}
    out.update({f"outside:{n}": p for n, p in OUTSIDE.get(game, {}).items()})
    return out


def _rate(game: str, one, field, key: str, sessions: int) -> float:
    g = get_game(game)
    total = 0.0
    for i in range(sessions):
        seat = i % PLAYERS
        levels = ["field"] * PLAYERS
        levels[seat] = "one"
        seed = hashlib.sha256(f"harden/{key}/{i}".encode()).hexdigest()
        record = play_session(g, PLAYERS, seed, f"harden-{key}-{i}", levels, policies={"one": one, "field": field})
        if record.error is not None:
            raise RuntimeError(f"{key}/{i}: {record.error}")
        total += record.shares[seat]
    return total / sessions


def fitness(game: str, tuning, sessions: int, key: str, rivals: dict) -> tuple[float, dict]:
    module = SPACES[game][0]
    candidate = functools.partial(module.heuristic, tuning=tuning)
    rates = {"vs current": _rate(game, candidate, module.heuristic, f"{key}/current", sessions)}
    score = 0.5 * (rates["vs current"] - 0.25)
    for name, policy in sorted(rivals.items()):
        against = _rate(game, policy, candidate, f"{key}/{name}/one", sessions)
        held = _rate(game, candidate, policy, f"{key}/{name}/field", sessions)
        rates[f"{name} vs 3"] = against
        rates[f"vs 3 {name}"] = held
        score -= max(0.0, against - 0.22) + max(0.0, 0.27 - held)
    return score, rates


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ops.tournament.harden", description=__doc__.splitlines()[0])
    ap.add_argument("--game", required=True, choices=sorted(SPACES))
    ap.add_argument("--seed", default="1")
    ap.add_argument("--generations", type=int, default=6)
    ap.add_argument("--popsize", type=int, default=8)
    ap.add_argument("--sessions", type=int, default=24)
    ap.add_argument("--validate", type=int, default=100)
    ap.add_argument("--opponents", default=None,
                    help="comma-separated levels to harden against (default: every non-search member and outside strategy)")
    args = ap.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import cma
    module, space = SPACES[args.game]
    names = list(space)
    default = module.DEFAULT
    x0 = [(getattr(default, n) - space[n][0]) / (space[n][1] - space[n][0]) for n in names]
    path = runner.default_results(args.seed).parent / f"harden-{args.game}-{args.seed}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            done[row["key"]] = row
    rivals = opponents(args.game)
    if args.opponents:
        rivals = {k: v for k, v in rivals.items() if k in args.opponents.split(",")}

    def decode(x):
        return dataclasses.replace(default, **{n: round(space[n][0] + min(1, max(0, u)) * (space[n][1] - space[n][0]), 4)
                                               for n, u in zip(names, x)})

    def evaluate(key, tuning, sessions):
        values = dataclasses.asdict(tuning)
        row = done.get(key)
        if row is None or row["tuning"] != values or row["sessions"] != sessions:
            score, rates = fitness(args.game, tuning, sessions, key, rivals)
            row = done[key] = {"key": key, "tuning": values, "sessions": sessions, "score": score, "rates": rates}
            with open(path, "a") as out:
                out.write(json.dumps(row) + "\n")
        return row

    cpu0 = time.process_time()
    es = cma.CMAEvolutionStrategy(x0, 0.25, {"bounds": [0, 1], "popsize": args.popsize, "seed": 7, "verbose": -9})
    tried = []
    for gen in range(args.generations):
        xs = es.ask()
        rows = [evaluate(f"{args.seed}/g{gen}/{k}", decode(x), args.sessions) for k, x in enumerate(xs)]
        es.tell(xs, [-r["score"] for r in rows])
        tried += rows
        print(f"generation {gen}: best {max(r['score'] for r in rows):.3f} ({time.process_time() - cpu0:.0f} s CPU)",
              flush=True)
    finalists = [dataclasses.asdict(default), dataclasses.asdict(decode(es.result.xfavorite))]
    finalists += [r["tuning"] for r in sorted(tried, key=lambda r: -r["score"])[:2]]
    for i, values in enumerate(finalists):
        row = evaluate(f"{args.seed}/validate/{i}", type(default)(**values), args.validate)
        print(f"finalist {i} ({'the current tuning' if i == 0 else 'found'}): score {row['score']:.3f} "
              f"{json.dumps(values)}\n    " + ", ".join(f"{k} {v:.3f}" for k, v in row["rates"].items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
