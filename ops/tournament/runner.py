"""The tournament: cells of seeded bot-only sessions, one challenger seat against a field.

A *cell* is (game, players, challenger, field): one seat plays `challenger`, every other
seat `field`. In session `i` the challenger sits in seat `i % players`, so it holds every
seat equally often. Session `i` of a cell has the game seed
`sha256("tournament/{seed}/{cell id}/{i}")` and the game id `tournament-{seed}-{cell id}-{i}`
(which keys the bots' randomness, `workers.jobs.bot_rng`), so a figure depends only on the
seed and the code. Sessions are played by `workers.bots.study.play_session`: each bot gets
only its seat's view and legal actions, never the state.

Resumable: each finished session is appended as one JSON line to the results file (one
file per seed); a rerun with the same seed reads it and plays only the sessions still
missing (a line records the cell id and the session index; a line cut short by a killed run
is ignored and played again). After a change to a bot, start afresh (`--fresh`, or another
seed): the file does not know which code played it. The CPU budget (`budget_s`, process CPU seconds of this run, workers
included) stops the run between sessions; what is done is kept.

Figures per cell: the challenger's win share per session (1/k for a win shared by k
winners), summed over sessions; the rate and its Wilson 95% interval with the session as the
unit; the fair share 1/players; time per challenger move (p50, p95, from a log-spaced
histogram with 5% bins); for speculation, sales per deal (accepted sales / deals played,
every seat's).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from projections import speculation
from projections.registry import game_types, get_game
from workers.bots import LEVELS, policy as bot_policy
from workers.bots.study import play_session, wilson

from .strategies import OUTSIDE

HIST_BASE = 10 ** 0.02      # histogram bins: 1 us x 1.047^k (about 5% wide)
SEARCH_REDUCED_SHARE = 3          # outside 4 players the search runs a third of its iterations
OUTSIDE_SEARCH_FRACTION = 4       # search against an outside strategy: a quarter of the sessions
# Speculation is judged apart (docs/bots.md): its search need reach only 1.3 x the fair share
# against three heuristics (the others 2 x), and its heuristic by the sales per deal among
# heuristics instead of against three baselines. Keyed by the game module's own NAME.
SEARCH_FACTOR = {speculation.NAME: 1.3}
DEFAULT_SEARCH_FACTOR = 2
SALES_MEASURED = speculation.NAME


@dataclass(frozen=True)
class Cell:
    game: str
    players: int
    challenger: str
    field: str
    sessions: int

    @property
    def id(self) -> str:
        return f"{self.game}/{self.players}p/{self.challenger}-vs-{self.field}"


def level_policy(game: str, level: str):
    """A product bot level, `search@<iterations>` (the search level at a reduced budget), or
    `outside:<name>` from ops/tournament/strategies.py, or `league:<name>` from the league's
    kept members (ops/tournament/league_strategies.json)."""
    if level.startswith("outside:"):
        return OUTSIDE[game][level.split(":", 1)[1]]
    if level.startswith("league:"):
        from .members import member_policy

        return member_policy(game, level.split(":", 1)[1])
    if level.startswith("search@"):
        return bot_policy(game, "search", {"iterations": int(level.split("@", 1)[1])})
    return bot_policy(game, level)


def tournament_games() -> list[str]:
    """The declared games with a heuristic (the tournament's levels need one), by name."""
    return sorted(t.name for t in game_types() if t.bots)


def search_reduced(game: str) -> str:
    """The search level at a reduced budget: a third of the game's default iterations."""
    from workers.bots.search import default_iterations

    return f"search@{max(4, default_iterations(game) // SEARCH_REDUCED_SHARE)}"


def matrix(sessions: int = 400, speculation_sessions: int = 2000, players_extra: bool = True,
           games: Optional[Iterable[str]] = None, search: bool = True) -> list[Cell]:
    """Every fixed level against every other at 4 players (one seat against three), each
    outside strategy against the heuristic both ways, the heuristic in self-play, and the
    heuristic against baseline and random (both ways) at 3 and 6 players where the game
    allows. The search level (with `search`): one seat against three heuristics and against
    three of each outside strategy at 4 players with the default budget, and against the
    heuristic at 3 and 6 players with a reduced budget (`search_reduced`), half the sessions."""
    cells = []
    for game in games or tournament_games():
        g = get_game(game)
        n = speculation_sessions if game == SALES_MEASURED else sessions
        levels = [level for level in LEVELS if level != "search"]
        four = min(max(4, g.MIN_PLAYERS), g.MAX_PLAYERS)
        if search:
            cells.append(Cell(game, four, "search", "heuristic", n))
            for name in OUTSIDE.get(game, {}):
                cells.append(Cell(game, four, "search", f"outside:{name}", max(1, n // OUTSIDE_SEARCH_FRACTION)))
        for a in levels:
            for b in levels:
                if a != b or a == "heuristic":
                    cells.append(Cell(game, four, a, b, n))
        for name in OUTSIDE.get(game, {}):
            cells.append(Cell(game, four, f"outside:{name}", "heuristic", n))
            cells.append(Cell(game, four, "heuristic", f"outside:{name}", n))
        if players_extra:
            for p in (3, 6):
                if g.MIN_PLAYERS <= p <= g.MAX_PLAYERS and p != four:
                    for other in ("baseline", "random"):
                        cells.append(Cell(game, p, "heuristic", other, sessions))
                        cells.append(Cell(game, p, other, "heuristic", sessions))
                    if search:
                        cells.append(Cell(game, p, search_reduced(game), "heuristic", max(1, sessions // 2)))
    return cells


def session_seed(seed: str, cell: Cell, index: int) -> str:
    return hashlib.sha256(f"tournament/{seed}/{cell.id}/{index}".encode()).hexdigest()


def _bin(seconds: float) -> int:
    return max(0, int(math.log(max(seconds, 1e-6) / 1e-6, HIST_BASE)))


def play_cell_session(cell: Cell, seed: str, index: int) -> dict:
    game = get_game(cell.game)
    seat = index % cell.players
    levels = [cell.field] * cell.players
    levels[seat] = cell.challenger
    hist: dict[int, int] = {}
    counts = {"sales": 0, "deals": 0}
    timed = {}
    for level in set(levels):
        inner = level_policy(cell.game, level)
        if level == cell.challenger:
            def timed_policy(view, legal, s, rng, inner=inner):
                t0 = time.perf_counter()
                action = inner(view, legal, s, rng)
                if s == seat:
                    k = _bin(time.perf_counter() - t0)
                    hist[k] = hist.get(k, 0) + 1
                return action
            timed[level] = timed_policy
        else:
            timed[level] = inner

    def observer(state, s, view, legal, action):
        if cell.game == SALES_MEASURED:
            counts["sales"] += action["type"] == "accept"
            counts["deals"] = max(counts["deals"], view.get("deal") or 0)

    record = play_session(game, cell.players, session_seed(seed, cell, index),
                          f"tournament-{seed}-{cell.id}-{index}", levels, policies=timed,
                          observer=observer, index=index)
    out = {"cell": cell.id, "i": index, "seat": seat, "actions": record.actions, "hist": hist,
           "error": record.error, "anomalies": record.anomalies}
    if record.error is None:
        out["share"] = record.shares[seat]
        out["rank"] = record.ranks[seat]
    if cell.game == SALES_MEASURED:
        out.update(counts)
    return out


def _quantile(hist: dict[int, int], q: float) -> Optional[float]:
    total = sum(hist.values())
    if not total:
        return None
    need = q * total
    seen = 0
    for k in sorted(hist):
        seen += hist[k]
        if seen >= need:
            return 1e-6 * HIST_BASE ** (k + 0.5)
    return None


def summarise(cell: Cell, rows: list[dict]) -> dict:
    done = [r for r in rows if r.get("error") is None]
    n = len(done)
    wins = sum(r["share"] for r in done)
    low, high = wilson(wins, n) if n else (float("nan"), float("nan"))
    hist: dict[int, int] = {}
    for r in done:
        for k, v in r["hist"].items():
            hist[int(k)] = hist.get(int(k), 0) + v
    out = {"cell": cell.id, "game": cell.game, "players": cell.players, "challenger": cell.challenger,
           "field": cell.field, "sessions": n, "planned": cell.sessions, "wins": wins,
           "rate": wins / n if n else float("nan"), "ci95": [low, high], "fair_share": 1 / cell.players,
           "avg_rank": sum(r["rank"] for r in done) / n if n else float("nan"),
           "move_p50_ms": _ms(_quantile(hist, 0.5)), "move_p95_ms": _ms(_quantile(hist, 0.95)),
           "moves": sum(hist.values()),
           "errors": [r for r in rows if r.get("error")], "anomalies": [a for r in rows for a in r["anomalies"]]}
    if cell.game == SALES_MEASURED and n:
        deals = sum(r["deals"] for r in done)
        out["sales_per_deal"] = sum(r["sales"] for r in done) / deals if deals else 0.0
    return out


def _ms(seconds: Optional[float]) -> Optional[float]:
    return None if seconds is None else round(seconds * 1000, 3)


def _cpu_seconds() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def _work(args) -> tuple[dict, float]:
    """One session and the CPU seconds it took in the process that played it (a pool's
    workers are not reaped until the pool closes, so RUSAGE_CHILDREN cannot count them)."""
    cell, seed, index = args
    started = time.process_time()
    row = play_cell_session(cell, seed, index)
    return row, time.process_time() - started


def load(path: Path) -> dict[tuple[str, int], dict]:
    done = {}
    if path.exists():
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:     # a line cut short by an interrupted run
                    continue
                done[(row["cell"], row["i"])] = row
    return done


def run(cells: list[Cell], seed: str, path: Path, processes: int = 1,
        budget_s: Optional[float] = None, log=None) -> dict:
    """Play every missing session of `cells`, appending to `path`; returns the summary."""
    path.parent.mkdir(parents=True, exist_ok=True)
    done = load(path)
    todo = [(c, seed, i) for c in cells for i in range(c.sessions) if (c.id, i) not in done]
    cpu0, wall0 = _cpu_seconds(), time.perf_counter()
    in_pool = processes > 1 and len(todo) > 1
    played_cpu = 0.0   # the sessions' CPU in the pool's workers
    stopped = False
    cut_short = path.exists() and path.stat().st_size and not path.read_bytes().endswith(b"\n")
    with open(path, "a", encoding="utf-8") as out:
        if cut_short:
            out.write("\n")   # a line cut short by a killed run: the next row starts a line of its own

        def keep(result):
            nonlocal played_cpu
            row, cpu = result
            played_cpu += cpu if in_pool else 0.0
            done[(row["cell"], row["i"])] = row
            out.write(json.dumps(row, sort_keys=True) + "\n")
            out.flush()

        def spent() -> float:
            return _cpu_seconds() - cpu0 + played_cpu

        if in_pool:
            import multiprocessing

            with multiprocessing.get_context("fork").Pool(processes) as pool:
                for result in pool.imap_unordered(_work, todo, chunksize=4):
                    keep(result)
                    if budget_s is not None and spent() > budget_s:
                        stopped = True
                        pool.terminate()
                        break
        else:
            for job in todo:
                if budget_s is not None and spent() > budget_s:
                    stopped = True
                    break
                keep(_work(job))
    summaries = []
    for c in cells:
        rows = [done[(c.id, i)] for i in range(c.sessions) if (c.id, i) in done]
        summaries.append(summarise(c, rows))
    return {"seed": seed, "cells": summaries, "played_now": len(todo) if not stopped else None,
            "complete": all(s["sessions"] + len(s["errors"]) >= s["planned"] for s in summaries),
            "stopped_by_budget": stopped, "cpu_s": round(_cpu_seconds() - cpu0 + played_cpu, 1),
            "wall_s": round(time.perf_counter() - wall0, 1), "processes": processes}


# ----------------------------------------------------------------------------- the verdicts

def verdicts(summary: dict) -> list[str]:
    """The issue's criteria at 4 players, on the point estimate with the Wilson lower bound."""
    by = {(s["game"], s["players"], s["challenger"], s["field"]): s for s in summary["cells"]}
    lines = []

    def check(key, ok, text):
        s = by.get(key)
        if s is None or not s["sessions"]:
            return
        lines.append(f"{'PASS' if ok(s) else 'FAIL'} {text}: {100 * s['rate']:.1f}% "
                     f"[{100 * s['ci95'][0]:.1f}, {100 * s['ci95'][1]:.1f}] (n={s['sessions']})")

    for game in tournament_games():
        if game == SALES_MEASURED:
            continue
        check((game, 4, "heuristic", "baseline"), lambda s: s["ci95"][0] >= 2 * s["fair_share"],
              f"{game}: heuristic vs 3 baselines >= 2 x fair share (lower bound)")
        check((game, 4, "baseline", "heuristic"), lambda s: s["rate"] <= s["fair_share"] / 2,
              f"{game}: baseline vs 3 heuristics <= half the fair share")
    for game in tournament_games():
        factor = SEARCH_FACTOR.get(game, DEFAULT_SEARCH_FACTOR)
        check((game, 4, "search", "heuristic"),
              lambda s, factor=factor: s["rate"] >= factor * s["fair_share"] and s["ci95"][0] > s["fair_share"],
              f"{game}: search vs 3 heuristics >= {factor:g} x fair share (lower bound above the fair share)")
        s = by.get((game, 4, "search", "heuristic"))
        if s and s["sessions"] and s["move_p95_ms"] is not None:
            lines.append(f"{'PASS' if s['move_p95_ms'] <= 250 else 'FAIL'} {game}: search move p95 "
                         f"{s['move_p95_ms']:.0f} ms (<= 250 ms)")
    s = by.get((SALES_MEASURED, 4, "heuristic", "heuristic"))
    if s and s["sessions"]:
        spd = s.get("sales_per_deal", 0.0)
        lines.append(f"{'PASS' if spd >= 0.5 else 'FAIL'} {SALES_MEASURED}: heuristics among themselves "
                     f"{spd:.2f} sales per deal (>= 0.5, n={s['sessions']})")
    for (game, players, a, b), s in sorted(by.items()):
        if a in ("heuristic", "search") and b.startswith("outside:") and s["sessions"]:
            lines.append(f"{'PASS' if s['rate'] >= s['fair_share'] else 'FAIL'} {game}: {a} vs 3 {b} "
                         f">= fair share: {100 * s['rate']:.1f}% [{100 * s['ci95'][0]:.1f}, "
                         f"{100 * s['ci95'][1]:.1f}] (n={s['sessions']})")
    return lines


def markdown(summary: dict) -> str:
    lines = ["| game | players | one seat | vs three (field) | sessions | win rate | 95% CI | fair share "
             "| avg rank | move p50 / p95 (ms) | extra |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in summary["cells"]:
        if not s["sessions"]:
            continue
        extra = f"{s['sales_per_deal']:.2f} sales/deal" if "sales_per_deal" in s else ""
        p50, p95 = s["move_p50_ms"], s["move_p95_ms"]
        field = s["field"] if s["players"] == 4 else f"{s['field']} (x{s['players'] - 1})"
        lines.append(f"| {s['game']} | {s['players']} | {s['challenger']} | {field} | {s['sessions']} "
                     f"| {100 * s['rate']:.1f}% | [{100 * s['ci95'][0]:.1f}, {100 * s['ci95'][1]:.1f}] "
                     f"| {100 * s['fair_share']:.1f}% | {s['avg_rank']:.2f} | {p50} / {p95} | {extra} |")
    return "\n".join(lines) + "\n"


def default_results(seed: str) -> Path:
    return Path(os.environ.get("TOURNAMENT_RESULTS", Path(__file__).resolve().parent / "results")) / \
        f"tournament-{seed}.jsonl"
