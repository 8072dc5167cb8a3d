"""The bot study: seeded bot-only sessions, win rates per level with 95% confidence intervals.

    python -m workers.bots.study --game NAME --players 4 --sessions 1000 [--seed S]
                            [--heuristic-seats 1] [--level heuristic] [--json out.json]
    python -m workers.bots.study --all [--sessions 1000] [--json out.json]

Each session is played in process through the pure game interface, the way the service and
its bot worker would play an all-bot game created with a chosen (test) seed:

- the game is started with `Draws(seed, "v2")` (version 1 is `game.created`, version 2
  `game.started`), and an action decided at stream version `n` draws from
  `Draws(seed, f"v{n + 1}")`; the version is the number of events in the stream;
- when several seats may act at once, the lowest seat acts first (what one FIFO worker does
  with the jobs the service enqueues in seat order: the later jobs turn stale and are
  enqueued again after the event);
- the acting bot gets ONLY `game.view(state, seat)` and `game.legal_actions(state, seat)`
  (never the state), picks with `workers.bots.policy(game, level)` and draws its randomness
  from `workers.jobs.bot_rng(game_id, seat, version)`.

Seating: in session `i` the challenger level (default `heuristic`) holds seats
`(i + j) % players` for `j < --heuristic-seats`; every other seat is `random`. The challenger
therefore sits in every seat equally often, so seat order cannot bias the figure.

Figures per level: a seat's win share in a session is `1/len(winners)` when it is among the
winners, else 0 (ties count as shared wins). A level's per-session value is the mean share
of its seats in that session (the session is the unit, so the seats of one session are
never counted as independent); wins = the sum of the per-session values, and the win rate =
wins / sessions. Its 95% CI is the Wilson score interval for wins out of sessions. A value
in [0, 1] with mean p has variance at most p(1 - p), so when ties or several seats make the
values fractional the Wilson interval is conservative (a little wide), never too narrow.
(--json also gives the normal interval on the mean of the per-session values, `normal95`.)
The fair share is 1/players. The average rank is the mean of `result["ranks"]` over the
level's seats (1 = best, ties share).

Per-game extras come from optional hooks in `EXTRAS` (never from editing a game): a hook
gets the final state, every event of the session and a seat, and returns named 0/1 values
(for speculate: did the seat meet at least one objective). They are reported per level as
fractions of sessions, with the same CI.

Anomalies (a bot raising, an action outside `legal_actions`, `decide` refusing a bot's
action, a game that does not end within --max-actions) are counted and listed, never hidden;
a session that breaks is left out of the figures and the exit status is 1.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from events.randomness import Draws
from projections.game import IllegalAction
from projections import speculate
from projections.registry import all_games, get_game
from projections.templates import matches
from workers.bots import policy as bot_policy
from workers.jobs import bot_rng

Z95 = 1.959963984540054
DEFAULT_PLAYERS = 4
DEFAULT_MAX_ACTIONS = 50_000
BASELINE = "random"


# ---------------------------------------------------------------------------- per-game hooks

def _speculate_extras(state, events: list[dict], seat: int) -> dict[str, int]:
    """speculate records a met objective as an `objective_met` event (seat, objective)."""
    met = sum(1 for e in events if e.get("type") == "objective_met" and e.get("seat") == seat)
    return {"met_objective": int(met > 0)}


# game NAME -> hook(final_state, events, seat) -> {name: 0 or 1}; keyed by the game module's
# own NAME, so the games are named only in their declarations
EXTRAS: dict[str, Callable[[Any, list, int], dict]] = {
    speculate.NAME: _speculate_extras,
}

EXTRA_LABELS = {"met_objective": "met >= 1 objective"}


# ---------------------------------------------------------------------------- one session

def session_seed(study_seed: str, game: str, players: int, index: int) -> str:
    """The (test) game seed of session `index`: 64 hex digits derived from the study seed."""
    return hashlib.sha256(f"bot-study/{study_seed}/{game}/{players}/{index}".encode()).hexdigest()


def session_game_id(study_seed: str, game: str, players: int, index: int) -> str:
    return f"study-{study_seed}-{game}-{players}p-{index}"


def challenger_seats(index: int, players: int, count: int) -> list[int]:
    return sorted({(index + j) % players for j in range(count)})


@dataclass
class SessionRecord:
    index: int
    seed: str
    levels: list[str]
    actions: int = 0
    shares: Optional[list[float]] = None
    ranks: Optional[list[int]] = None
    extras: Optional[list[dict]] = None
    error: Optional[str] = None           # the session broke: left out of the figures
    anomalies: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def play_session(game, players: int, seed: str, game_id: str, levels: list[str], *,
                 options: Optional[dict] = None, policies: Optional[dict] = None,
                 max_actions: int = DEFAULT_MAX_ACTIONS, observer: Optional[Callable] = None,
                 index: int = 0) -> SessionRecord:
    """Play one bot-only session. `levels[seat]` names each seat's bot level.

    `policies` maps a level to a policy (default: workers.bots.policy(game.NAME, level)).
    `observer(state, seat, view, legal, action)` is called after each bot decision (tests).
    """
    record = SessionRecord(index=index, seed=seed, levels=list(levels))
    choose = {level: (policies or {}).get(level) or bot_policy(game.NAME, level) for level in set(levels)}
    state = game.new_state(game.OptionsSchema().load(dict(options or {})), players)
    events = game.start(state, Draws(seed, "v2"))
    for event in events:
        state = game.evolve(state, event)
    version = 2 + len(events)            # game.created, game.started, the opening events
    log = list(events)
    while not game.is_over(state):
        if record.actions >= max_actions:
            record.error = f"did not end within {max_actions} actions"
            return record
        movers = game.to_act(state)
        if not movers:
            record.error = f"nobody to act in a live game at version {version}"
            return record
        seat = min(movers)
        legal = game.legal_actions(state, seat)
        if not legal:
            record.error = f"seat {seat} is to act but has no legal action at version {version}"
            return record
        view = game.view(state, seat)     # the seat's view only, never the state
        level = levels[seat]
        try:
            action = choose[level](view, legal, seat, bot_rng(game_id, seat, version))
        except Exception as err:          # a bot that raises stalls a real game: report it
            record.error = (f"{level} bot raised {type(err).__name__}: {err} (seat {seat}, "
                            f"version {version})\n{traceback.format_exc(limit=3)}")
            return record
        if observer is not None:
            observer(state, seat, view, legal, action)
        if not matches(action, legal):
            record.anomalies.append(f"{level} bot chose {action!r}, not among legal_actions "
                                    f"(seat {seat}, version {version})")
        try:
            new_events = game.decide(state, seat, action, Draws(seed, f"v{version + 1}"))
        except IllegalAction as err:
            record.error = (f"decide refused the {level} bot's action {action!r}: {err.message} "
                            f"(seat {seat}, version {version})")
            return record
        if not new_events:
            record.error = f"an action produced no event (seat {seat}, version {version})"
            return record
        for event in new_events:
            state = game.evolve(state, event)
        log.extend(new_events)
        version += len(new_events)
        record.actions += 1
    result = game.result(state)
    winners = list(result.get("winners") or [])
    record.shares = [1.0 / len(winners) if s in winners else 0.0 for s in range(players)]
    record.ranks = list(result["ranks"])
    hook = EXTRAS.get(game.NAME)
    if hook is not None:
        record.extras = [hook(state, log, s) for s in range(players)]
    if not winners:
        record.anomalies.append("the result names no winner")
    return record


# ---------------------------------------------------------------------------- statistics

def mean_ci(values: list[float]) -> tuple[float, float, float]:
    """(mean, low, high): the normal 95% interval on the mean, clipped to [0, 1]."""
    n = len(values)
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    m = sum(values) / n
    if n == 1:
        return m, 0.0, 1.0
    var = sum((v - m) ** 2 for v in values) / (n - 1)
    half = Z95 * math.sqrt(var / n)
    return m, max(0.0, m - half), min(1.0, m + half)


def wilson(successes: float, n: int) -> tuple[float, float]:
    """The Wilson score 95% interval for `successes` out of `n` (successes may be fractional)."""
    if n == 0:
        return float("nan"), float("nan")
    p = successes / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def summarise(records: list[SessionRecord], players: int) -> dict:
    done = [r for r in records if r.error is None]
    levels = sorted({lv for r in records for lv in r.levels}, key=lambda lv: (lv == BASELINE, lv))
    out: dict[str, Any] = {}
    for level in levels:
        per_session, ranks, seat_games = [], [], 0
        extras: dict[str, list[float]] = {}
        for r in done:
            seats = [s for s, lv in enumerate(r.levels) if lv == level]
            if not seats:
                continue
            per_session.append(sum(r.shares[s] for s in seats) / len(seats))
            ranks.extend(r.ranks[s] for s in seats)
            seat_games += len(seats)
            for name in (r.extras[seats[0]] if r.extras else {}):
                extras.setdefault(name, []).append(sum(r.extras[s][name] for s in seats) / len(seats))
        n = len(per_session)
        wins = sum(per_session)
        rate = wins / n if n else float("nan")
        low, high = wilson(wins, n)
        entry = {"sessions": n, "seats_per_session": seat_games / n if n else 0,
                 "wins": wins, "seat_games": seat_games,
                 "seat_wins": sum(sum(r.shares[s] for s, lv in enumerate(r.levels) if lv == level) for r in done), "win_rate": rate, "ci95": [low, high],
                 "ci_method": "Wilson score interval, wins = sum of per-session win shares, n = sessions",
                 "normal95": list(mean_ci(per_session)[1:]),
                 "fair_share": 1.0 / players,
                 "avg_rank": sum(ranks) / len(ranks) if ranks else float("nan"),
                 "extras": {}}
        for name, values in extras.items():
            lo, hi = wilson(sum(values), len(values))
            entry["extras"][name] = {"rate": sum(values) / len(values), "ci95": [lo, hi]}
        out[level] = entry
    return out


# ---------------------------------------------------------------------------- the study

def studied_games(level: str = "heuristic") -> list[str]:
    """The registered games that have a bot of this level (test-only games have none)."""
    out = []
    for name in sorted(all_games()):
        try:
            bot_policy(name, level)
        except (KeyError, AttributeError):
            continue
        out.append(name)
    return out


def default_players(game) -> int:
    return min(max(DEFAULT_PLAYERS, game.MIN_PLAYERS), game.MAX_PLAYERS)


def _run_chunk(args: tuple) -> list[SessionRecord]:
    game_name, players, study_seed, indexes, level, hseats, options, max_actions = args
    game = get_game(game_name)
    out = []
    for i in indexes:
        levels = [BASELINE] * players
        for s in challenger_seats(i, players, hseats):
            levels[s] = level
        seed = session_seed(study_seed, game_name, players, i)
        gid = session_game_id(study_seed, game_name, players, i)
        try:
            out.append(play_session(game, players, seed, gid, levels, options=options,
                                    max_actions=max_actions, index=i))
        except Exception as err:          # the game itself broke: report, do not hide
            rec = SessionRecord(index=i, seed=seed, levels=levels)
            rec.error = f"the game raised {type(err).__name__}: {err}\n{traceback.format_exc(limit=3)}"
            out.append(rec)
    return out


def run_study(game_name: str, players: Optional[int] = None, sessions: int = 1000, seed: str = "0",
              level: str = "heuristic", heuristic_seats: int = 1, options: Optional[dict] = None,
              processes: int = 1, max_actions: int = DEFAULT_MAX_ACTIONS) -> dict:
    game = get_game(game_name)
    players = players or default_players(game)
    if not game.MIN_PLAYERS <= players <= game.MAX_PLAYERS:
        raise SystemExit(f"{game_name} takes {game.MIN_PLAYERS} to {game.MAX_PLAYERS} players, not {players}")
    if not 1 <= heuristic_seats < players:
        raise SystemExit(f"--heuristic-seats must be between 1 and {players - 1}")
    try:
        game.OptionsSchema().load(dict(options or {}))
    except Exception as err:
        raise SystemExit(f"{game_name}: invalid --options: {err}") from None
    started = time.perf_counter()
    indexes = list(range(sessions))
    chunks = max(1, processes) * 8
    parts = [indexes[k::chunks] for k in range(chunks) if indexes[k::chunks]]
    jobs = [(game_name, players, seed, part, level, heuristic_seats, options, max_actions) for part in parts]
    if processes > 1 and len(parts) > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(processes) as pool:
            chunks_out = pool.map(_run_chunk, jobs)
    else:
        chunks_out = [_run_chunk(job) for job in jobs]
    records = sorted((r for part in chunks_out for r in part), key=lambda r: r.index)
    elapsed = time.perf_counter() - started
    done = [r for r in records if r.error is None]
    return {
        "game": game_name, "players": players, "sessions": sessions, "seed": seed,
        "challenger": level, "challenger_seats": heuristic_seats, "options": options or {},
        "completed": len(done), "errors": [{"session": r.index, "seed": r.seed, "error": r.error}
                                            for r in records if r.error],
        "anomalies": [{"session": r.index, "seed": r.seed, "anomaly": a} for r in records for a in r.anomalies],
        "actions_per_session": (sum(r.actions for r in done) / len(done)) if done else 0,
        "levels": summarise(records, players),
        "elapsed_s": round(elapsed, 2), "processes": processes,
    }


# ---------------------------------------------------------------------------- output

def _pct(x: float) -> str:
    return "n/a" if x != x else f"{100 * x:.1f}%"


def _num(x: float) -> str:
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.2f}"


def markdown_table(studies: list[dict]) -> str:
    lines = ["| game | players | level | seats/session | sessions | wins / seat-games | win rate | 95% CI "
             "| fair share | avg rank | extra |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for st in studies:
        for level, e in st["levels"].items():
            extra = "; ".join(f"{EXTRA_LABELS.get(k, k)}: {_pct(v['rate'])} "
                              f"[{_pct(v['ci95'][0])}, {_pct(v['ci95'][1])}]" for k, v in e["extras"].items())
            lines.append(f"| {st['game']} | {st['players']} | {level} | {e['seats_per_session']:g} | {e['sessions']} "
                         f"| {_num(e['seat_wins'])} / {e['seat_games']} | {_pct(e['win_rate'])} | [{_pct(e['ci95'][0])}, {_pct(e['ci95'][1])}] "
                         f"| {_pct(e['fair_share'])} | {e['avg_rank']:.2f} | {extra or '-'} |")
    return "\n".join(lines)


def verdict(study: dict) -> str:
    lv = study["levels"].get(study["challenger"])
    if not lv or not lv["sessions"]:
        return f"{study['game']}: no completed session"
    low = lv["ci95"][0]
    beats = low > lv["fair_share"]
    word = "beats" if beats else "does NOT clearly beat"
    return (f"{study['game']}: {study['challenger']} {word} {BASELINE} "
            f"(win rate {_pct(lv['win_rate'])}, CI low {_pct(low)} vs fair share {_pct(lv['fair_share'])})")


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m workers.bots.study", description=__doc__.split("\n\n")[0])
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--game", help="a registered game: " + ", ".join(sorted(all_games())))
    which.add_argument("--all", action="store_true", help="every registered game")
    p.add_argument("--players", type=int, help="default: 4, or the nearest count the game allows")
    p.add_argument("--sessions", type=int, default=1000)
    p.add_argument("--seed", default="0", help="the study seed (every session's game seed derives from it)")
    p.add_argument("--level", default="heuristic", help="the challenger level (the others are random)")
    p.add_argument("--heuristic-seats", type=int, default=1, help="challenger seats per session")
    p.add_argument("--options", default="{}", help="game options as JSON (defaults otherwise)")
    p.add_argument("--processes", type=int, default=min(2, os.cpu_count() or 1))
    p.add_argument("--max-actions", type=int, default=DEFAULT_MAX_ACTIONS)
    p.add_argument("--json", dest="json_out", help="write the figures to this file")
    args = p.parse_args(argv)

    names = studied_games(args.level) if args.all else [args.game]
    if args.all:
        for name in sorted(set(all_games()) - set(names)):
            print(f"# {name}: skipped, it has no {args.level} bot", file=sys.stderr)
    options = json.loads(args.options) or None
    studies = []
    for name in names:
        if name not in all_games():
            raise SystemExit(f"unknown game {name!r}; registered: {', '.join(sorted(all_games()))}")
        study = run_study(name, args.players if not args.all else None, args.sessions, args.seed,
                          args.level, args.heuristic_seats, options, args.processes, args.max_actions)
        studies.append(study)
        print(f"# {name}: {study['completed']}/{study['sessions']} sessions in {study['elapsed_s']} s "
              f"({study['actions_per_session']:.0f} actions per session)", file=sys.stderr)
    print(markdown_table(studies))
    print()
    for st in studies:
        print("- " + verdict(st))
        for err in st["errors"][:5]:
            print(f"  - session {err['session']} broke: {err['error'].splitlines()[0]}")
        if len(st["errors"]) > 5:
            print(f"  - ... {len(st['errors']) - 5} more broken sessions")
        for an in st["anomalies"][:5]:
            print(f"  - session {an['session']}: {an['anomaly']}")
        if len(st["anomalies"]) > 5:
            print(f"  - ... {len(st['anomalies']) - 5} more anomalies")
    if args.json_out:
        meta = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                            "platform": platform.platform()},
                "argv": sys.argv[1:] if argv is None else argv}
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump({"meta": meta, "studies": studies}, fh, indent=2)
    return 1 if any(st["errors"] for st in studies) else 0


if __name__ == "__main__":
    sys.exit(main())
