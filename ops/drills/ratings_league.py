"""Ratings league drill: rated games of bots alone, played by real RQ worker processes on a
private redis-server, with workers killed -9 while games are being scored.

`--size` rated games of mixed types and sizes (each type from its MIN_PLAYERS to at most 5
seats, its shortest options), every seat a bot of a random level (random, baseline,
heuristic; a `search` seat in a small share of the games, its moves are slow), created a few
at a time as the games before end, and played by `--workers` `speculation worker` processes.
Each runs with two drill hooks (`killable`, below): when the drill arms them, the next scoring
job of any of them stops inside a window and tells the drill, which kills that worker's
process group -9 there and starts it again, `--kills` times spread over the league. The
windows alternate:

- `before`: the game is scored (`game.scored` appended) but its `rating.applied` is not;
- `after`: the rating is appended (and the kept ratings with it) but the leaderboard and the
  histories are not written.

The other workers' abandoned-job sweep and reconciler ask again (`core.repair`). Judged:

(a) `core.ratings.rebuild(type)` for every type raises nothing and reports kept_differing 0;
(b) each rated game is rated exactly once: every type's ratings log holds one event per
    scored rated game with at least two distinct rated players (a bot level in several seats
    is one player), no game twice, none missing; each killed game's rating is there once and
    its players' histories hold it; the leaderboard's scores equal the kept ratings;
(c) reported, not judged: the bot accounts' ratings (ordinal, mu - 3 sigma) per type, and
    whether they come in the order heuristic (and search) > baseline > random.

    python -m ops.drills.ratings_league --size 1000 --kills 6        # the full drill (make ratings-league)
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from typing import Optional

from . import _kit

LEVELS = ("random", "baseline", "heuristic")
STRONGER = ("search", "heuristic", "baseline", "random")   # the order (c) looks for
MAX_SEATS = 5
TURN_TIMEOUT = 600          # a rated game needs a clock; bots never wait on it
ARM_KEY = "drill:ratings-league:arm"
SIGNAL_KEY = "drill:ratings-league:in-window"
WINDOWS = ("before", "after")
WINDOW_SECONDS = 20         # how long an armed scoring job waits in its window (below RQ's job timeout)
# The games' creators (whose bot time their turns are, workers/queue.py): a few clients, so
# the fair scheduling's bound per creator (2 turns at once) does not make the league a queue.
CREATORS = 12


# --- the killable worker (its own process: `python -m ops.drills.ratings_league killable worker ...`) ---
def install_windows(redis_url: str) -> None:
    """Hooks of the killable worker: a scoring job (in its work horse) that finds the drill's
    arm key set to its window takes it (once), tells the drill and waits there."""
    import redis

    from projections.session import SCORED
    from service.ratings import service as ratings
    from workers import jobs

    state = {"scoring": False, "pid": None, "client": None}

    def client():
        if state["pid"] != os.getpid():     # a work horse: a connection of its own
            state["client"], state["pid"] = redis.Redis.from_url(redis_url), os.getpid()
        return state["client"]

    def take(window: str, game_id: str, **extra) -> None:
        c = client()
        if c.get(ARM_KEY) == window.encode() and c.delete(ARM_KEY):
            # the work horse's parent is the worker process the drill started; the horse is in a
            # process group of its own (RQ's fork_work_horse calls setpgrp): both are killed
            c.rpush(SIGNAL_KEY, json.dumps({"worker": os.getppid(), "horse": os.getpid(), "game": game_id,
                                            "window": window, **extra}))
            time.sleep(WINDOW_SECONDS)

    original_score = jobs.score

    def score(service, game_id):
        state["scoring"] = True
        try:
            return original_score(service, game_id)
        finally:
            state["scoring"] = False

    original_record = ratings.Ratings.record

    def record(self, session):
        if (state["scoring"] and session.status == SCORED and session.platform.get("rated")
                and len(ratings.table_of(session)) >= 2
                and self.store.get_idempotent(ratings.log_of(session.game_type), f"game:{session.game_id}") is None):
            take("before", session.game_id, rated_in_window=False)   # the log has no rating: checked above
        return original_record(self, session)

    original_project = ratings.Ratings._project

    def project(self, stored):
        if state["scoring"] and stored:
            take("after", stored[0].data["game_id"], version=stored[0].version,
                 rated_in_window=True)     # `stored` is the rating, appended
        return original_project(self, stored)

    jobs.score = score
    ratings.Ratings.record = record
    ratings.Ratings._project = project


def start_killable(redis_url: str) -> "_kit.ChildProcess":
    """`speculation worker` (the real CLI) with the drill's hooks, on the private Redis."""
    return _kit.ChildProcess([sys.executable, "-m", "ops.drills.ratings_league", "killable", "worker",
                              "--reconcile-every", "2", "--abandoned-after", "3"],
                             {"REDIS_URL": redis_url}, name="killable-worker")


# --- the league -----------------------------------------------------------------------------------
def plan(size: int, rng: random.Random, mix: dict[str, float], search_share: float) -> list[dict]:
    """The games: a type by the mix's weights, a size within the type's seats, a random level a seat."""
    types = sorted(mix)
    out = []
    for _ in range(size):
        game_type = rng.choices(types, [mix[t] for t in types])[0]
        game = _kit.get_game(game_type)
        players = rng.randint(game.MIN_PLAYERS, min(game.MAX_PLAYERS, MAX_SEATS))
        levels = [rng.choice(LEVELS) for _ in range(players)]
        if rng.random() < search_share:
            levels[rng.randrange(players)] = "search"
        out.append({"type": game_type, "levels": levels, "options": _kit.short_options(game_type),
                    "seed": f"{rng.getrandbits(256):064x}"})
    return out


def _kill_horse(pid: int) -> None:
    """kill -9 of a work horse and its process group (its own: RQ forks it with setpgrp)."""
    import signal

    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except (ProcessLookupError, PermissionError):
            pass


def _horses(pid: int) -> list[int]:
    """The processes whose parent is `pid` (a worker's work horses)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    if int(handle.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(entry))
            except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
                pass
    return out


def _leftovers(redis_url: str) -> list[int]:
    """This run's worker processes still alive (their REDIS_URL is the run's private Redis)."""
    out, mine = [], f"REDIS_URL={redis_url}".encode()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if b"ratings_league\0killable" not in handle.read():
                        continue
                with open(f"/proc/{entry}/environ", "rb") as handle:
                    if mine in handle.read().split(b"\0"):
                        out.append(int(entry))
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                pass
    return out


def _stop(child: "_kit.ChildProcess") -> None:
    """Stop a worker and any work horse it has running (a horse outlives its worker's group)."""
    horses = _horses(child.pid)
    child.stop()
    for pid in horses + _horses(child.pid):
        _kill_horse(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as handle:     # a zombie (killed, not yet reaped) is dead
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _status(core, game_id: str) -> Optional[str]:
    return core.store.get_meta(game_id, "status")["status"]


def _rated_once(core, kill: dict) -> bool:
    """The killed game's rating in its log and in each of its players' histories."""
    from service.ratings.service import _history_key, log_of

    found = core.store.get_idempotent(log_of(kill["type"]), f"game:{kill['game']}")
    if found is None:
        return False
    version = found[1].version
    return all(core.ratings.redis.zscore(_history_key(a, kill["type"]), str(version)) is not None
               for a in kill["players"])


def run(size: int = 1000, workers: int = 3, kills: int = 6, search_share: float = 0.08, seed: int = 1,
        mix: Optional[dict] = None, in_flight: Optional[int] = None, timeout: float = 14_400.0,
        echo=None) -> dict:
    from service.bootstrap import Backend, build_core, settings
    from service.ratings.service import table_of

    rng = random.Random(seed)
    mix = mix or {t: 1.0 for t in _kit.service_games()}
    games = plan(size, rng, mix, search_share)
    in_flight = in_flight or 3 * workers
    kill_at = [(k + 1) * size // (kills + 1) for k in range(kills)]
    started = time.monotonic()
    deadline = started + timeout
    with _kit.private_redis() as server:
        client = _kit.redis_client(server.url)
        core = build_core(settings({"REDIS_URL": server.url, "ALLOW_SEED": True}), Backend(client, client, False))
        children = [start_killable(server.url) for _ in range(workers)]
        ids: dict[str, dict] = {}
        pending: list[str] = []
        scored = 0
        done_kills: list[dict] = []
        armed_at = None
        last_echo = 0.0
        try:
            while scored < size and time.monotonic() < deadline:
                while len(pending) < in_flight and len(ids) < size:
                    spec = games[len(ids)]
                    created = core.create_game(spec["type"], spec["options"], [{"bot": lv} for lv in spec["levels"]],
                                               seed=spec["seed"], turn_timeout=TURN_TIMEOUT, rated=True,
                                               creator=f"addr:league-{len(ids) % CREATORS}")
                    ids[created.session.game_id] = spec
                    pending.append(created.session.game_id)
                for game_id in list(pending):
                    if _status(core, game_id) == "scored":
                        pending.remove(game_id)
                        scored += 1
                # the kills: arm the workers' next scoring, kill the one that takes it in its window, restart it
                if armed_at is None and len(done_kills) < len(kill_at) and scored >= kill_at[len(done_kills)]:
                    window = WINDOWS[len(done_kills) % len(WINDOWS)]
                    client.delete(SIGNAL_KEY)
                    client.set(ARM_KEY, window)
                    armed_at = time.monotonic()
                signal = client.lpop(SIGNAL_KEY) if armed_at is not None else None
                if signal:
                    told = json.loads(signal)
                    rated_before = core.store.get_idempotent(f"ratings/{ids[told['game']]['type']}",
                                                             f"game:{told['game']}") is not None
                    slot = next(i for i, c in enumerate(children) if c.pid == told["worker"])
                    for pid in {told["horse"], *_horses(children[slot].pid)}:
                        _kill_horse(pid)             # the scoring job itself, in the window
                    children[slot].kill()            # and its worker (the worker's process group)
                    killed = time.monotonic()
                    horse_dead = _kit.wait_until(lambda: not _alive(told["horse"]), 5)
                    session = core.load(told["game"])
                    done_kills.append({"game": told["game"], "type": session.game_type, "window": told["window"],
                                       "status_at_kill": session.status, "rated_in_window": told["rated_in_window"],
                                       # at the kill the rating may be there either way: another
                                       # worker's reconciler pass may have rated the game meanwhile
                                       "rated_at_kill": rated_before,
                                       "horse_killed": horse_dead,
                                       "players": [p["account"] for p in table_of(session)],
                                       "killed_at": killed, "recovered_s": None})
                    children[slot] = start_killable(server.url)      # restarted
                    armed_at = None
                elif armed_at is not None and time.monotonic() - armed_at > 300:
                    raise AssertionError("no armed worker took a scoring window in 300 s:\n"
                                         + children[0].output()[-3000:])
                for kill in done_kills:
                    if kill["recovered_s"] is None and _rated_once(core, kill):
                        kill["recovered_s"] = round(time.monotonic() - kill["killed_at"], 2)
                if echo and time.monotonic() - last_echo > 60:
                    last_echo = time.monotonic()
                    echo(f"[ratings_league] {scored}/{size} scored, {len(pending)} in play, "
                         f"{len(done_kills)} kill(s), {time.monotonic() - started:.0f} s")
                time.sleep(0.05)
            # the killed games' repairs, and the ratings that follow the scoring
            def recovered() -> bool:
                for kill in done_kills:
                    if kill["recovered_s"] is None and _rated_once(core, kill):
                        kill["recovered_s"] = round(time.monotonic() - kill["killed_at"], 2)
                return all(k["recovered_s"] is not None for k in done_kills)

            _kit.wait_until(recovered, 120, every=0.1)
            expected = _expected(core, ids)
            _kit.wait_until(lambda: all(core.store.head(f"ratings/{t}")[0] >= len(g) for t, g in expected.items()),
                            60, every=0.25)
        finally:
            client.delete(ARM_KEY)
            for child in children:
                _stop(child)
            for pid in _leftovers(server.url):   # a horse forked while its worker was stopping
                _kill_horse(pid)
        figures = judge(core, ids, done_kills, expected)
    figures.update(games=size, scored=scored, workers=workers, kills_planned=kills,
                   search_share=search_share, mix=mix, seed=seed, in_time=time.monotonic() < deadline)
    figures["ok"] = bool(figures["ok"] and scored == size and len(done_kills) == kills)
    return figures


def _expected(core, ids: dict) -> dict[str, list[str]]:
    """Per type, the scored rated games with at least two distinct rated players."""
    from service.ratings.service import table_of

    out: dict[str, list[str]] = {}
    for game_id, spec in ids.items():
        session = core.load(game_id)
        if session.status == "scored" and len(table_of(session)) >= 2:
            out.setdefault(spec["type"], []).append(game_id)
    return out


def judge(core, ids: dict, kills: list[dict], expected: dict) -> dict:
    from service.ratings.model import Rating
    from service.ratings.service import BOT_ACCOUNTS, HISTORY_KEPT, _board_key, _history_key, log_of

    types = sorted({spec["type"] for spec in ids.values()})
    logs, projections, rebuilds, order = {}, {}, {}, {}
    redis = core.ratings.redis
    for game_type in types:
        events = core.store.read(log_of(game_type))
        logged = [e.data["game_id"] for e in events]
        want = set(expected.get(game_type, []))
        logs[game_type] = {"scored_rated": sum(1 for s in ids.values() if s["type"] == game_type),
                           "expected": len(want), "logged": len(logged),
                           "duplicates": len(logged) - len(set(logged)),
                           "missing": len(want - set(logged)), "unexpected": len(set(logged) - want)}
        # the projections as the workers left them: board scores and histories from the log
        seen: dict[str, list[int]] = {}
        for e in events:
            for p in e.data["players"]:
                seen.setdefault(p["account"], []).append(e.version)
        kept = core.store.get_meta(log_of(game_type), *(f"r:{a}" for a in seen)) if seen else {}
        board = {a.decode(): s for a, s in redis.zrange(_board_key(game_type), 0, -1, withscores=True)}
        stale_board = [a for a in seen if board.get(a) != Rating.from_record(kept[f"r:{a}"]).ordinal]
        bad_history = [a for a, versions in seen.items()
                       if sorted(int(v) for v in redis.zrange(_history_key(a, game_type), 0, -1))
                       != versions[-HISTORY_KEPT:]]
        projections[game_type] = {"board_stale": len(stale_board), "history_wrong": len(bad_history),
                                  **({"board_stale_accounts": stale_board} if stale_board else {})}
        try:
            rebuilds[game_type] = core.ratings.rebuild(game_type)
        except ValueError as err:
            rebuilds[game_type] = {"error": str(err)}
        ratings = {}
        for account, level in BOT_ACCOUNTS.items():
            found = core.store.get_meta(log_of(game_type), f"r:{account}")[f"r:{account}"]
            if found:
                r = Rating.from_record(found)
                ratings[level] = {"ordinal": round(r.ordinal, 2), "mu": round(r.mu, 2), "sigma": round(r.sigma, 2),
                                  "games": r.games, "wins": r.wins}
        present = [lv for lv in STRONGER if lv in ratings]
        ranked = sorted(present, key=lambda lv: -ratings[lv]["ordinal"])
        ordinal = {lv: r["ordinal"] for lv, r in ratings.items()}
        holds = ("heuristic" in ordinal and "baseline" in ordinal and "random" in ordinal
                 and all(ordinal[lv] > ordinal["baseline"] for lv in ("search", "heuristic") if lv in ordinal)
                 and ordinal["baseline"] > ordinal["random"])
        order[game_type] = {"ratings": ratings, "ranked": ranked, "order_holds": holds,
                            "random_last": bool(ranked) and ranked[-1] == "random"}
    for kill in kills:
        kill["ratings_in_log"] = sum(1 for e in core.store.read(log_of(kill["type"]))
                                     if e.data["game_id"] == kill["game"])
        kill["rated_once"] = kill["ratings_in_log"] == 1 and _rated_once(core, kill)
        kill.pop("killed_at", None)
    log_ok = all(v["duplicates"] == 0 and v["missing"] == 0 and v["unexpected"] == 0 and v["logged"] == v["expected"]
                 for v in logs.values())
    rebuild_ok = all("error" not in r and r["kept_differing"] == 0 for r in rebuilds.values())
    projections_ok = all(p["board_stale"] == 0 and p["history_wrong"] == 0 for p in projections.values())
    kills_ok = all(k["rated_once"] and k["horse_killed"] for k in kills)
    waits = [k["recovered_s"] for k in kills if k["recovered_s"] is not None]
    return {"logs": logs, "projections": projections, "rebuilds": rebuilds, "order": order, "kills": kills,
            "rated_games": sum(v["logged"] for v in logs.values()),
            "duplicates": sum(v["duplicates"] for v in logs.values()),
            "missing": sum(v["missing"] for v in logs.values()),
            "kept_differing": sum(r.get("kept_differing", 0) for r in rebuilds.values()),
            "rebuild_errors": sum(1 for r in rebuilds.values() if "error" in r),
            "kills_rated_once": sum(1 for k in kills if k["rated_once"]),
            "slowest_recovery_s": max(waits, default=None),
            "order_holds": sorted(t for t, o in order.items() if o["order_holds"]),
            "log_ok": log_ok, "rebuild_ok": rebuild_ok, "projections_ok": projections_ok, "kills_ok": kills_ok,
            "ok": log_ok and rebuild_ok and projections_ok and kills_ok}


def order_table(order: dict) -> str:
    """The bot accounts' ratings per type, as a Markdown table."""
    lines = ["| game | level | rating (ordinal) | mu ± sigma | games | wins |", "|---|---|---|---|---|---|"]
    for game_type, found in sorted(order.items()):
        for level in found["ranked"]:
            r = found["ratings"][level]
            lines.append(f"| {game_type} | {level} | {r['ordinal']:.2f} | {r['mu']:.2f} ± {r['sigma']:.2f} | "
                         f"{r['games']} | {r['wins']} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["killable"]:
        from service.cli import main as cli_main
        from service.config import from_env

        install_windows(from_env()["REDIS_URL"])
        cli_main(argv[1:])
        return
    p = _kit.parser(__doc__, 1000, "rated games in the league")
    p.add_argument("--workers", type=int, default=3, help="worker processes")
    p.add_argument("--kills", type=int, default=6, help="kill -9 of the killable worker inside a scoring")
    p.add_argument("--search-share", type=float, default=0.08, help="share of the games with a search seat")
    p.add_argument("--mix", help='the types\' weights as JSON, e.g. \'{"speculation": 2, "big-shot": 1}\' '
                                 "(default: every type alike)")
    p.add_argument("--table", help="also write the order table (Markdown) to this file")
    args = p.parse_args(argv)
    mix = json.loads(args.mix) if args.mix else None

    def measure() -> dict:
        fig = run(args.size, args.workers, args.kills, args.search_share, args.seed, mix,
                  echo=lambda m: print(m, file=sys.stderr, flush=True))
        print(order_table(fig["order"]))
        if args.table:
            with open(args.table, "w") as handle:
                handle.write(order_table(fig["order"]) + "\n")
        return fig

    _kit.conclude("ratings_league", args, measure, lambda fig: (
        f"{fig['scored']}/{fig['games']} rated bot games scored by {fig['workers']} workers; "
        f"{fig['rated_games']} rated in the logs (duplicates {fig['duplicates']}, missing {fig['missing']}); "
        f"rebuild: kept_differing {fig['kept_differing']}, errors {fig['rebuild_errors']}; "
        f"{len(fig['kills'])} workers killed -9 inside a scoring, rated exactly once {fig['kills_rated_once']}, "
        f"slowest repair {fig['slowest_recovery_s']} s; projections ok {fig['projections_ok']}; "
        f"order heuristic>baseline>random holds in {len(fig['order_holds'])}/{len(fig['order'])} types "
        f"({', '.join(fig['order_holds']) or 'none'}) ({fig['seconds']} s)"))


if __name__ == "__main__":
    main()
