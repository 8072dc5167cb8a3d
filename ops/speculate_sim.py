"""Speculate's economy, measured: heuristic bots in every seat, per player count.

    python -m ops.speculate_sim [--players 5 6] [--games 1000] [--rules-version 2] [--seed S]
                                [--jobs 2] [--markdown] [--json out.json]
    python -m ops.speculate_sim --players 6 --games 300 --try '{"rounds": 6, "reward_from_bank": 100}'

Each game is played in process through the pure game interface, the way the service plays
an all-bot game created with a chosen (test) seed (the draws labelled as in
workers/bots/study.py), with the `heuristic` level (workers/bots/speculate.py) in every seat,
each bot seeing only its seat's view. Per player count it reports, with 95% Wilson
intervals for the rates (the rules version 2 targets of the brief, ../shared/games/speculate.md,
are judged on those bounds):

- objectives met per player: the mean over games of (objective_met events / players), with
  the 95% normal interval of that mean (target: between 2.0 and 3.0);
- bank paid in full: games in which every bank reward (`reward_paid` by the bank) was the
  whole reward and every dividend payment (`dividends_paid`) was its whole `due`
  (target: lower bound >= 98%);
- bankruptcy: games with at least one `bankrupt` event (target: upper bound <= 2%);
- early finish: games in which some player met a level-4 objective before the last round
  (target: at most 10%);
- the economy used (rounds, targets, bank money per player, bank reward), from the data or
  from `--try` (a candidate substituted for the data's in this process only, to tune).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Optional

from events.randomness import Draws
from projections import speculate as game
from projections.speculate import data as speculate_data
from workers.bots import policy as bot_policy
from workers.jobs import bot_rng

Z95 = 1.959963984540054
MAX_ACTIONS = 50_000


def wilson(successes: int, n: int) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + Z95 ** 2 / n
    centre = (p + Z95 ** 2 / (2 * n)) / denom
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def apply_candidate(players: int, rules_version: int, candidate: Optional[dict]) -> game.Economy:
    """The economy for this size and version: the data's, or the candidate put in its place
    (in this process only; the keys are those a rules version may set in the data)."""
    if candidate:
        unknown = set(candidate) - set(speculate_data.ECONOMY_KEYS)
        if unknown:
            raise SystemExit(f"--try: unknown keys {sorted(unknown)} (allowed: {speculate_data.ECONOMY_KEYS})")
        base = speculate_data.economy(players, rules_version)._asdict()
        base.update(candidate)
        if "targets" in candidate:
            base["targets"] = {int(k): tuple(v) for k, v in candidate["targets"].items()}
        speculate_data._ECONOMIES[(players, rules_version)] = game.Economy(**base)
    return speculate_data.economy(players, rules_version)


def play(players: int, rules_version: int, seed: str, game_id: str) -> dict:
    """One all-heuristic game; the facts the table counts."""
    choose = bot_policy(game.NAME, "heuristic")
    state = game.new_state(game.OptionsSchema().load({}), players, rules_version=rules_version)
    eco = speculate_data.economy(players, rules_version)
    events = game.start(state, Draws(seed, "v2"))
    for event in events:
        state = game.evolve(state, event)
    version = 2 + len(events)
    log = list(events)
    actions = 0
    while not game.is_over(state):
        if actions >= MAX_ACTIONS:
            raise RuntimeError(f"{game_id}: did not end within {MAX_ACTIONS} actions")
        seat = min(game.to_act(state))
        legal = game.legal_actions(state, seat)
        action = choose(game.view(state, seat), legal, seat, bot_rng(game_id, seat, version))
        new_events = game.decide(state, seat, action, Draws(seed, f"v{version + 1}"))
        for event in new_events:
            state = game.evolve(state, event)
            if event["type"] == "objective_met":
                event = dict(event, round=state.round)
            log.append(event)
        version += len(new_events)
        actions += 1
    met = [e for e in log if e["type"] == "objective_met"]
    short_reward = any(e["type"] == "reward_paid" and e["payer"] is None and e["money"] < eco.reward_from_bank
                       for e in log)
    short_dividend = any(p["amount"] < p["due"] for e in log if e["type"] == "dividends_paid" for p in e["payments"])
    return {"met": len(met),
            "bank_full": not (short_reward or short_dividend),
            "short_reward": short_reward, "short_dividend": short_dividend,
            "bankrupt": any(e["type"] == "bankrupt" for e in log),
            "early_finish": any(e["level"] == game.LEVELS and e["round"] < state.rounds for e in met),
            "rounds": state.rounds}


def _chunk(args: tuple) -> list[dict]:
    players, rules_version, candidate, study_seed, indexes = args
    apply_candidate(players, rules_version, candidate)
    out = []
    for i in indexes:
        seed = hashlib.sha256(f"speculate-sim/{study_seed}/{players}/{i}".encode()).hexdigest()
        out.append(play(players, rules_version, seed, f"sim-{study_seed}-{players}p-{i}"))
    return out


def measure(players: int, games: int, rules_version: int, seed: str = "0", jobs: int = 1,
            candidate: Optional[dict] = None) -> dict:
    eco = apply_candidate(players, rules_version, candidate)
    started = time.time()
    indexes = list(range(games))
    chunks = [(players, rules_version, candidate, seed, indexes[k::jobs]) for k in range(jobs)]
    if jobs == 1:
        rows = _chunk(chunks[0])
    else:
        with ProcessPoolExecutor(jobs) as pool:
            rows = [row for part in pool.map(_chunk, chunks) for row in part]
    per_player = [r["met"] / players for r in rows]
    mean = sum(per_player) / games
    sd = math.sqrt(sum((x - mean) ** 2 for x in per_player) / (games - 1)) if games > 1 else 0.0
    half = Z95 * sd / math.sqrt(games)

    def rate(key: str) -> dict:
        k = sum(1 for r in rows if r[key])
        low, high = wilson(k, games)
        return {"count": k, "rate": k / games, "wilson95": [low, high]}

    out = {"players": players, "games": games, "rules_version": rules_version, "seed": seed,
           "economy": {"rounds": eco.rounds, "targets": {str(k): list(v) for k, v in eco.targets.items()},
                       "bank_money_per_player": eco.bank_money_per_player,
                       "reward_from_bank": eco.reward_from_bank},
           "objectives_per_player": {"mean": mean, "normal95": [mean - half, mean + half]},
           "bank_full": rate("bank_full"), "short_reward": rate("short_reward"),
           "short_dividend": rate("short_dividend"), "bankrupt": rate("bankrupt"),
           "early_finish": rate("early_finish"), "seconds": round(time.time() - started, 1)}
    out["meets_targets"] = meets_targets(out)
    return out


def meets_targets(m: dict) -> bool:
    return (2.0 <= m["objectives_per_player"]["mean"] <= 3.0 and m["bank_full"]["wilson95"][0] >= 0.98
            and m["bankrupt"]["wilson95"][1] <= 0.02 and m["early_finish"]["rate"] <= 0.10)


def _pct(r: dict) -> str:
    low, high = r["wilson95"]
    return f"{100 * r['rate']:.1f}% ({100 * low:.1f}–{100 * high:.1f})"


def markdown(rows: list[dict]) -> str:
    lines = ["| players | rounds | targets (level 1 … 4) | bank per player | bank reward | games | "
             "objectives met per player | bank pays in full | bankruptcy | all four levels before the last round | targets met |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in rows:
        e = m["economy"]
        targets = " · ".join("/".join(str(x) for x in e["targets"][str(k)]) for k in sorted(map(int, e["targets"])))
        o = m["objectives_per_player"]
        lines.append(f"| {m['players']} | {e['rounds']} | {targets} | {e['bank_money_per_player']} | "
                     f"{e['reward_from_bank']} | {m['games']} | {o['mean']:.2f} ({o['normal95'][0]:.2f}–"
                     f"{o['normal95'][1]:.2f}) | {_pct(m['bank_full'])} | {_pct(m['bankrupt'])} | "
                     f"{_pct(m['early_finish'])} | {'yes' if m['meets_targets'] else 'no'} |")
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[5, 6])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--rules-version", type=int, default=game.RULES_VERSION)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--jobs", type=int, default=1, help="processes (this machine is shared: keep it low)")
    parser.add_argument("--try", dest="candidate", help="a candidate economy (JSON) in place of the data's")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    if args.rules_version not in game.RULES_VERSIONS:
        parser.error(f"--rules-version: one of {list(game.RULES_VERSIONS)}")
    if any(not game.MIN_PLAYERS <= p <= game.MAX_PLAYERS for p in args.players):
        parser.error(f"--players: {game.MIN_PLAYERS} to {game.MAX_PLAYERS}")
    candidate = json.loads(args.candidate) if args.candidate else None
    rows = []
    for players in args.players:
        m = measure(players, args.games, args.rules_version, args.seed, args.jobs, candidate)
        rows.append(m)
        print(json.dumps(m), file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"python": sys.version.split()[0], "cpus": os.cpu_count(), "results": rows}, f, indent=1)
    print(markdown(rows))
    return 0 if all(m["meets_targets"] for m in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
