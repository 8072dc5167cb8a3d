"""The league: exploiters of the heuristic found by search, kept, and played against the bots.

    python -m ops.tournament.league                      # search every game, then the matrix
    python -m ops.tournament.league --games spekulation --generations 12 --budget 900 --keep
    python -m ops.tournament.league --matrix-only [--search]     # the kept league's cells alone

1. *Search* (`search_family`): for each game, each family of families.py is searched by
   CMA-ES (the `cma` package) over its parameters scaled to [0, 1]: a candidate's fitness is
   its win share as one seat against three heuristics at 4 players over `sessions` seeded
   sessions, the same sessions for every candidate of a generation (common random numbers:
   candidates are told apart by play, not by deals), new sessions each generation. The best
   few candidates and the search's mean are then played on `validate` fresh sessions and the
   best of them is the family's exploiter of this seed.
2. *Keep* (`--keep`): the exploiter is written to league_strategies.json (game -> members),
   named `<family>-<seed>`, with its parameters, its seed and what it won in the search. A
   member plays exactly what its parameters say (families.py), so a kept member is
   reproducible from the file alone; `tournament` levels `league:<name>` play it.
   The league's best responses are the search level itself (`workers/bots/search`: its rivals
   are modelled as heuristics, so it is a best-response search against them); they are
   members of family `search`, judged apart.
3. *Matrix* (`league_cells`): every kept member as one seat against three heuristics, and one
   heuristic against three of it, 400 sessions (1,000 in speculation); with `--search`, one
   search seat against three of each non-search member (200 sessions).

Resumable under a CPU budget: every evaluation is one JSON line in
`ops/tournament/results/league-{seed}.jsonl` (not committed); CMA-ES is seeded, so a rerun
asks the same candidates, reads what was played and plays only what is missing. `--budget S`
stops after S CPU seconds (exit status 2; rerun to resume). After changing a heuristic, use
another seed (or `--fresh`): the file does not know which code played it.
"""

from __future__ import annotations

import argparse
import warnings
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Optional

from projections import speculation
from projections.registry import get_game
from workers.bots.study import play_session, wilson

from . import runner
from .families import FAMILIES, Family
from .members import LEAGUE_FILE, SEARCH_FAMILY, Member, load_members, member_policy, save_member  # noqa: F401

PLAYERS = 4
MATRIX_SESSIONS = {speculation.NAME: 1000}
DEFAULT_MATRIX_SESSIONS = 400
SEARCH_SESSIONS = 200
BAR_AGAINST_HEURISTICS = 0.30     # a non-search member as one seat against three heuristics: at most
BAR_HEURISTIC_AGAINST = 0.22      # one heuristic against three of a member: at least
BAR_SEARCH_FACTOR = 1.5           # one search seat against three of a member: x the fair share


# ----------------------------------------------------------------------------- playing

def _seed(*parts) -> str:
    return hashlib.sha256("/".join(str(p) for p in ("league",) + parts).encode()).hexdigest()


def play_one(game: str, policy, field: str, key: str, index: int) -> float:
    """One session: `policy` in seat index % 4, the field's level elsewhere; its win share."""
    g = get_game(game)
    seat = index % PLAYERS
    levels = [field] * PLAYERS
    levels[seat] = "challenger"
    record = play_session(g, PLAYERS, _seed(key, index), f"league-{key}-{index}", levels,
                          policies={"challenger": policy})
    if record.error is not None:
        raise RuntimeError(f"league session {key}/{index} broke: {record.error}")
    return record.shares[seat]


class Log:
    """The evaluations played so far (one JSON line each), and the CPU budget of this run."""

    def __init__(self, path: Path, budget_s: Optional[float] = None):
        self.path = path
        self.budget_s = budget_s
        self.cpu0 = time.process_time()
        self.rows: dict[str, dict] = {}
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:          # cut short by a killed run: played again
                    continue
                self.rows[row["key"]] = row

    def spent(self) -> float:
        return time.process_time() - self.cpu0

    def over_budget(self) -> bool:
        return self.budget_s is not None and self.spent() > self.budget_s

    def evaluate(self, key: str, game: str, params: dict, policy, sessions: int) -> Optional[float]:
        """The mean win share of `policy` against three heuristics over `sessions` sessions
        keyed by `key` (read from the log when played before with the same parameters); None
        when the budget is spent."""
        row = self.rows.get(key)
        if row is not None and row["params"] == params and row["sessions"] == sessions:
            return row["rate"]
        if self.over_budget():
            return None
        shares = [play_one(game, policy, "heuristic", key, i) for i in range(sessions)]
        row = {"key": key, "params": params, "sessions": sessions, "rate": sum(shares) / sessions}
        self.rows[key] = row
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(row, sort_keys=True) + "\n")
        return row["rate"]


# ----------------------------------------------------------------------------- the search

def search_family(family: Family, seed: str, log: Log, generations: int = 12, popsize: int = 8,
                  sessions: int = 40, validate: int = 200, finalists: int = 3,
                  echo=print, start: Optional[dict] = None, start_name: str = "") -> Optional[Member]:
    """CMA-ES over the family's parameters against three heuristics, from the middle of their
    ranges or from `start` (a kept member's parameters: the league grows from what it found);
    the validated best as a member, or None when the budget stopped it (rerun to resume)."""
    with warnings.catch_warnings():          # cma says once that it cannot plot without matplotlib
        warnings.simplefilter("ignore")
        import cma

    dim = len(family.params)
    x0 = [min(1.0, max(0.0, u)) for u in family.encode(start)] if start else [0.5] * dim
    es = cma.CMAEvolutionStrategy(x0, 0.3 if start is None else 0.2, {
        "bounds": [0, 1], "popsize": popsize, "seed": int(_seed(seed, family.game, family.name)[:7], 16) + 1,
        "verbose": -9})
    tried: list[tuple[float, dict]] = []
    for gen in range(generations):
        xs = es.ask()
        rates = []
        for k, x in enumerate(xs):
            params = family.decode(x)
            rate = log.evaluate(f"{seed}/{family.game}/{family.name}/g{gen}/{k}", family.game, params,
                                family.policy(params), sessions)
            if rate is None:
                return None
            rates.append(rate)
            tried.append((rate, params))
        es.tell(xs, [-r for r in rates])
        echo(f"{family.game}/{family.name} generation {gen}: best {max(rates):.3f}, mean {sum(rates) / len(rates):.3f}"
             f" ({log.spent():.0f} s CPU)")
    candidates = [p for _, p in sorted(tried, key=lambda t: -t[0])[:finalists]]
    candidates.append(family.decode(es.result.xfavorite))
    best = None
    for i, params in enumerate(candidates):
        rate = log.evaluate(f"{seed}/{family.game}/{family.name}/validate/{i}", family.game, params,
                            family.policy(params), validate)
        if rate is None:
            return None
        echo(f"{family.game}/{family.name} finalist {i}: {rate:.3f} over {validate} sessions {params}")
        if best is None or rate > best[0]:
            best = (rate, params)
    rate, params = best
    low, high = wilson(rate * validate, validate)
    found = (("against three heuristics", round(rate, 4)), ("sessions", validate),
             ("wilson95", [round(low, 4), round(high, 4)]), ("generations", generations),
             ("popsize", popsize), ("sessions a candidate", sessions)) + \
        ((("started from", start_name),) if start else ())
    return Member(family.game, f"{family.name}-{seed}", family.name,
                  tuple((p.name, params[p.name]) for p in family.params), seed, found)


# ----------------------------------------------------------------------------- the matrix

def league_cells(games=None, search: bool = False, path: Path = LEAGUE_FILE,
                 sessions: Optional[int] = None) -> list[runner.Cell]:
    cells = []
    for game, members in sorted(load_members(path).items()):
        if games and game not in games:
            continue
        n = sessions or MATRIX_SESSIONS.get(game, DEFAULT_MATRIX_SESSIONS)
        for m in members:
            if m.family == SEARCH_FAMILY:
                if search:
                    cells.append(runner.Cell(game, PLAYERS, "search", "heuristic", n))
                continue
            cells.append(runner.Cell(game, PLAYERS, m.level, "heuristic", n))
            cells.append(runner.Cell(game, PLAYERS, "heuristic", m.level, n))
            if search:
                cells.append(runner.Cell(game, PLAYERS, "search", m.level, sessions or SEARCH_SESSIONS))
    return cells


def league_verdicts(summary: dict) -> list[str]:
    lines = []
    for s in summary["cells"]:
        if not s["sessions"]:
            continue
        figure = f"{100 * s['rate']:.1f}% [{100 * s['ci95'][0]:.1f}, {100 * s['ci95'][1]:.1f}] (n={s['sessions']})"
        a, b = s["challenger"], s["field"]
        if a.startswith("league:") and b == "heuristic":
            ok = s["rate"] <= BAR_AGAINST_HEURISTICS
            lines.append(f"{'PASS' if ok else 'FAIL'} {s['game']}: {a} vs 3 heuristics <= 30%: {figure}")
        elif a == "heuristic" and b.startswith("league:"):
            ok = s["rate"] >= BAR_HEURISTIC_AGAINST
            lines.append(f"{'PASS' if ok else 'FAIL'} {s['game']}: heuristic vs 3 {b} >= 22%: {figure}")
        elif a == "search" and b.startswith("league:"):
            ok = s["rate"] >= BAR_SEARCH_FACTOR * s["fair_share"] and s["ci95"][0] > s["fair_share"]
            lines.append(f"{'PASS' if ok else 'FAIL'} {s['game']}: search vs 3 {b} >= 1.5 x fair share: {figure}")
    return lines


def default_log(seed: str) -> Path:
    return runner.default_results(seed).parent / f"league-{seed}.jsonl"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ops.tournament.league", description=__doc__.splitlines()[0])
    ap.add_argument("--seed", default="1")
    ap.add_argument("--games", default=None, help="comma-separated game names (default: every game with a family)")
    ap.add_argument("--families", default=None, help="comma-separated family names (default: every family)")
    ap.add_argument("--generations", type=int, default=12)
    ap.add_argument("--popsize", type=int, default=8)
    ap.add_argument("--sessions", type=int, default=40, help="sessions a candidate, a generation")
    ap.add_argument("--validate", type=int, default=200, help="sessions a finalist")
    ap.add_argument("--budget", type=float, default=None, help="CPU seconds for this run (then stop; resumable)")
    ap.add_argument("--warm", action="store_true",
                    help="start each family's search from its best kept member (by its validated rate)")
    ap.add_argument("--keep", action="store_true", help="write the exploiters found to league_strategies.json")
    ap.add_argument("--matrix-only", action="store_true", help="no search: play the kept league's matrix")
    ap.add_argument("--no-matrix", action="store_true", help="search only")
    ap.add_argument("--matrix-sessions", type=int, default=None, help="sessions a matrix cell (default 400, 1,000 speculation)")
    ap.add_argument("--search", action="store_true", help="the matrix's search cells too (hours of CPU)")
    ap.add_argument("--fresh", action="store_true", help="discard this seed's earlier results")
    ap.add_argument("--results", type=Path, default=None, help="the search's log (default results/league-SEED.jsonl)")
    ap.add_argument("--markdown", type=Path, default=None)
    args = ap.parse_args(argv)
    games = args.games.split(",") if args.games else sorted(FAMILIES)
    log_path = args.results or default_log(args.seed)
    matrix_path = log_path.with_name(log_path.stem + "-matrix.jsonl")
    if args.fresh:
        for p in (log_path, matrix_path):
            if p.exists():
                p.unlink()
    log = Log(log_path, args.budget)
    stopped = False
    if not args.matrix_only:
        for game in games:
            for family in FAMILIES.get(game, {}).values():
                if args.families and family.name not in args.families.split(","):
                    continue
                kept = [m for m in load_members().get(game, []) if m.family == family.name]
                best = max(kept, key=lambda m: dict(m.found).get("against three heuristics", 0)) \
                    if args.warm and kept else None
                member = search_family(family, args.seed, log, args.generations, args.popsize, args.sessions,
                                       args.validate, start=dict(best.params) if best else None,
                                       start_name=best.name if best else "")
                if member is None:
                    stopped = True
                    break
                print(f"FOUND {game}: {member.name} {dict(member.params)} {dict(member.found)}")
                if args.keep:
                    save_member(member)
            if stopped:
                break
    if not stopped and not args.no_matrix:
        cells = league_cells(games, args.search, sessions=args.matrix_sessions)
        left = None if args.budget is None else max(0.0, args.budget - log.spent())
        summary = runner.run(cells, f"league-{args.seed}", matrix_path, budget_s=left)
        stopped = summary["stopped_by_budget"]
        table = runner.markdown(summary)
        lines = league_verdicts(summary)
        print(table)
        print("\n".join(lines))
        if args.markdown:
            args.markdown.write_text(table + "\n" + "\n".join(lines) + "\n")
    print(f"this run {log.spent():.0f} s CPU; log {log_path}" + ("; STOPPED BY THE BUDGET (rerun to resume)"
                                                                if stopped else ""))
    return 2 if stopped else 0


if __name__ == "__main__":
    sys.exit(main())
