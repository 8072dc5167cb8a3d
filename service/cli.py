"""The command line: `speculation serve | worker | games | view | replay | export | verify | play | demo | archive`.

`serve` runs the API (embedded store and worker with no REDIS_URL); `worker` runs an RQ
worker for REDIS_URL. The other commands are clients of a running API (--api, default
$SPECULATION_API or http://127.0.0.1:5000, over HTTP with httpx), except `verify FILE`,
which checks an exported log offline, and `play`/`demo`, which run the service in process.
Built with click (Flask's own command-line library). Exit codes: 0 done; 1 the log does not
verify, or `serve` stopped on an error; 2 a usage error (a bad option, a missing file);
3 the API answered with an error (its code and message on stderr); 4 the API cannot be reached.
"""

from __future__ import annotations

import json
import os
import re
import sys

import click

DEFAULT_API = os.environ.get("SPECULATION_API", "http://127.0.0.1:5000")
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_API_ERROR, EXIT_UNREACHABLE = 0, 1, 2, 3, 4
GAME_ID = re.compile(r"^[0-9a-f]{16}$")


def _fail(message: str, code: int):
    click.echo(message, err=True)
    raise SystemExit(code)


def _get(api: str, path: str, accept: str = "application/json", headers=None):
    """GET from the API: the JSON answer (or the text, for another Accept). An error answer
    exits 3 with its code and message, an unreachable API exits 4."""
    import httpx

    try:
        response = httpx.get(api.rstrip("/") + path, headers={"Accept": accept, **(headers or {})}, timeout=30)
    except httpx.HTTPError as err:
        _fail(f"cannot reach the API at {api}: {err} (is `make serve` running?)", EXIT_UNREACHABLE)
    if response.status_code >= 400:
        try:
            error = response.json()["error"]
            _fail(f"error {response.status_code} {error['code']}: {error['message']}", EXIT_API_ERROR)
        except (ValueError, KeyError, TypeError):
            _fail(f"error {response.status_code}: {response.text[:200]}", EXIT_API_ERROR)
    return response.json() if accept == "application/json" else response.text


def _print(obj) -> None:
    print(json.dumps(obj, indent=2, sort_keys=True))


API_OPTION = click.option("--api", default=DEFAULT_API, show_default=True, envvar="SPECULATION_API",
                          help="the API's base URL")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
def cli() -> None:
    """An event-sourced game service for the Speculation family of trading games.

    Exit codes: 0 done; 1 the log does not verify, or serve stopped on an error; 2 a usage
    error; 3 the API answered with an error; 4 the API cannot be reached."""


@cli.command()
@click.option("--host", help="address to listen on  [default: SPECULATION_HOST or 127.0.0.1]")
@click.option("--port", type=click.IntRange(1, 65535), help="API port  [default: SPECULATION_PORT or 5000]")
@click.option("--data", type=click.Path(file_okay=False),
              help="data folder of the embedded Redis  [default: SPECULATION_DATA_DIR or ./var]")
def serve(host, port, data) -> None:
    """Run the whole stack on this machine (service/stack.py): with no REDIS_URL an embedded
    Redis with AOF in the data folder, the API under gunicorn, the worker process(es)."""
    from service.config import from_env
    from service.settings import SettingsError, unknown_variables
    from service.stack import StackError, serve as run_stack

    try:
        config = from_env()
    except SettingsError as err:
        _fail(f"speculation serve: {err}", EXIT_USAGE)
    for name in unknown_variables():
        print(f"[stack] warning: {name} names no setting (see docs/operations.md)", file=sys.stderr)
    try:
        code = run_stack(host=host or config["HOST"], port=port or config["PORT"],
                         data_dir=data or config["DATA_DIR"], redis_url=config["REDIS_URL"],
                         redis_port=config["REDIS_PORT"], workers=config["WORKERS"])
    except StackError as err:
        _fail(f"speculation serve: {err}", EXIT_FAILED)
    raise SystemExit(code)


def rq_worker(connection, job_monitoring_interval: int):
    """The RQ worker the `worker` command supervises: RQ's forking worker (a job's timeout
    and a crash stay in its work horse) whose command listener survives a Redis restart and
    whose horses' metrics files are archived once they end (workers/supervisor.py)."""
    from service.observability import WORKER_HEARTBEAT_MAX_AGE
    from workers.queue import worker_queues
    from workers.supervisor import SupervisedWorker as Worker

    # A short monitoring interval keeps a running job's heartbeat fresh, so the sweep can tell
    # a job whose worker died (no beat for --abandoned-after seconds) from a slow one. An idle
    # worker beats once per blocking dequeue, worker_ttl - 15 s (RQ's default: 405 s): within
    # half of /readyz's heartbeat age, an idle stack stays ready.
    worker = Worker(worker_queues(connection), connection=connection, job_monitoring_interval=job_monitoring_interval,
                    worker_ttl=WORKER_HEARTBEAT_MAX_AGE // 2 + 15)
    # RQ retries a lost connection itself, but doubling its wait up to a minute; once a second
    # keeps the worker within a second or two of Redis coming back.
    worker.max_connection_wait_time = 1.0
    return worker


@cli.command()
@click.option("--reconcile-every", type=float, default=10.0, show_default=True,
              help="seconds between passes of the reconciler (lost writes and jobs re-derived)")
@click.option("--job-monitoring-interval", type=int, default=1, show_default=True,
              help="seconds between heartbeats of a running job")
@click.option("--abandoned-after", type=float, default=3.0, show_default=True,
              help="a started job with no heartbeat for this long lost its worker: run it again")
def worker(reconcile_every, job_monitoring_interval, abandoned_after) -> None:
    """Run an RQ worker (bot turns, scoring, turn timeouts) for REDIS_URL / RQ_REDIS_URL,
    supervised: restarted after Redis comes back, with the reconciler and the abandoned-job
    sweep beside it (workers/supervisor.py)."""
    import redis

    from service.bootstrap import build_worker_core
    from service.config import from_env
    from service.observability import configure_logging, request_scope
    from workers import jobs, tasks
    from workers.queue import RQJobs
    from workers.supervisor import Supervisor

    config = from_env()
    configure_logging(config["LOG_LEVEL"])
    service = build_worker_core()
    tasks.bind(service, request_scope)   # before RQ runs a job (its work horses inherit it)
    if not isinstance(service.jobs, RQJobs):
        _fail("speculation worker: REDIS_URL (or RQ_REDIS_URL) must name the job queue's Redis", EXIT_USAGE)
    url = config.get("RQ_REDIS_URL") or config["REDIS_URL"]
    # The worker's own connection, for its blocking dequeue (RQ gives it a socket timeout
    # longer than its BLPOP): on the core's bounded client (REDIS_SOCKET_TIMEOUT) every idle
    # wait ended in a TimeoutError, and the worker quit every few seconds.
    connection = redis.Redis.from_url(url, socket_connect_timeout=1.0, health_check_interval=30)
    probe = redis.Redis.from_url(url, socket_timeout=2.0, socket_connect_timeout=1.0)

    Supervisor(lambda: rq_worker(connection, job_monitoring_interval), probe.ping,
               reconcile=lambda: jobs.reconcile(service), reconcile_every=reconcile_every,
               recover=lambda: jobs.recover_abandoned(service, abandoned_after),
               recover_every=min(1.0, abandoned_after / 3)).run()


@cli.command()
@API_OPTION
@click.option("--type", "game_type", help="only games of this type (see /v1/game-types)")
@click.option("--status", type=click.Choice(["open", "active", "ended", "scored"]), help="only games in this status")
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def games(api, game_type, status, as_json) -> None:
    """List games, newest first (at most 100)."""
    query = "&".join(f"{k}={v}" for k, v in (("type", game_type), ("status", status)) if v)
    listing = _get(api, f"/v1/games?{query}&per_page=100")
    if as_json:
        _print(listing)
        return
    for game in listing["games"]:
        print(f"{game['game_id']}  {game['type']:<12} {game['status']:<7} v{game['version']:<5} "
              f"seats={len(game['seats'])}")
    print(f"{listing['total']} game(s)")


@cli.command()
@click.argument("game")
@API_OPTION
@click.option("--at", type=click.IntRange(min=1), required=True, help="the version to show")
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def replay(game, api, at, as_json) -> None:
    """A game's view as of version AT (every seat's, in full, once the game has ended)."""
    shown = _get(api, f"/v1/games/{game}/replay?at={at}")
    if as_json:
        _print(shown)
        return
    from service.terminal import print_replay

    print_replay(shown, _get(api, f"/v1/games/{game}"))


@cli.command()
@click.argument("game")
@API_OPTION
@click.option("--token", envvar="SPECULATION_TOKEN", help="a seat token (else a spectator's view)  "
              "[default: SPECULATION_TOKEN]")
@click.option("--follow", is_flag=True, help="draw the table again at every change, until the game is scored")
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def view(game, api, token, follow, as_json) -> None:
    """A game's table drawn for a person (a seat's with --token, else the spectator's)."""
    from service.terminal import main_view

    main_view(_get, api, game, token, as_json, follow)


LEVEL_HELP = "the bots' level: random, baseline, heuristic or search"
ITERATIONS_OPTION = click.option("--iterations", type=click.IntRange(min=1), metavar="N",
                                 help="with --level search: the bots' search iterations per move "
                                      "[default: 1000; at most SPECULATION_SEARCH_MAX_ITERATIONS]")
TIME_MS_OPTION = click.option("--time-ms", "time_ms", type=click.FloatRange(min=0, min_open=True), metavar="MS",
                              help="with --level search: the most milliseconds a bot thinks per move "
                                   "[default: 200; at most SPECULATION_SEARCH_MAX_TIME_MS]")


def search_budget(level: str, iterations, time_ms):
    """The budget of the bots' seats from --iterations and --time-ms (None: neither given);
    a usage error with any level but search, which alone takes one."""
    budget = {k: v for k, v in (("iterations", iterations), ("time_ms", time_ms)) if v is not None}
    if not budget:
        return None
    if level != "search":
        raise click.UsageError(f"--iterations and --time-ms are a search bot's budget, not a {level} bot's "
                               "(use --level search)")
    if "time_ms" in budget and float(budget["time_ms"]).is_integer():
        budget["time_ms"] = int(budget["time_ms"])
    return budget


class GameTypeChoice(click.Choice):
    """The hosted games, read from their declarations when the command line is parsed (so a
    game registered after this module is imported is a choice too)."""

    def __init__(self):
        super().__init__(())

    @property
    def choices(self):
        from projections.registry import game_types

        return tuple(t.name for t in game_types())

    @choices.setter
    def choices(self, _):
        pass  # click.Choice sets its list once; this one reads the registry instead


@cli.command()
@click.argument("game_type", metavar="TYPE", type=GameTypeChoice())
@click.option("--players", type=click.IntRange(2, 16), default=3, show_default=True, help="seats at the table, yours included")
@click.option("--level", default="heuristic", show_default=True, help=LEVEL_HELP)
@ITERATIONS_OPTION
@TIME_MS_OPTION
@click.option("--name", default=os.environ.get("USER") or "you", show_default="$USER", help="your name at the table")
@click.option("--options", help='the game\'s options as JSON, e.g. \'{"deals": 2}\'')
@click.option("--seed", help="the game's secret seed (64 hex digits), to play the same deal again; "
                             "by default a fresh one (shown when the game is scored)")
def play(game_type, players, level, iterations, time_ms, name, options, seed) -> None:
    """Play a game of TYPE in the terminal against bots (the service runs in process)."""
    from service.terminal import play as play_in_terminal

    budget = search_budget(level, iterations, time_ms)
    try:
        parsed = json.loads(options) if options else None
    except ValueError as err:
        raise click.BadParameter(f"not JSON: {err}", param_hint="--options")
    play_in_terminal(game_type, players, level, name, parsed, seed=seed, budget=budget)


@cli.command()
@click.argument("game")
@API_OPTION
def export(game, api) -> None:
    """A game's log as NDJSON on stdout (complete once the game has ended, redacted before)."""
    sys.stdout.write(_get(api, f"/v1/games/{game}/export", accept="application/x-ndjson"))


# --- the archive (an operator's commands: they reach Redis and the archive directly) -----------
ARCHIVE_OPTION = click.option("--archive", "archive_url", envvar="SPECULATION_ARCHIVE_URL", required=True,
                              help="the archive's fsspec URL (a folder, file://..., s3://...)  "
                                   "[default: SPECULATION_ARCHIVE_URL]")


@cli.group()
def archive() -> None:
    """Finished games in the archive: move, restore, list, verify (docs/operations.md)."""


def _archiving_core(archive_url: str):
    from service.bootstrap import build_backend, build_core, settings

    config = settings({"ARCHIVE_URL": archive_url})
    if not config.get("REDIS_URL"):
        _fail("speculation archive: REDIS_URL must name the game store's Redis", EXIT_USAGE)
    return build_core(config, build_backend(config))


@archive.command("move")
@click.argument("games", nargs=-1, metavar="[GAME]...")
@ARCHIVE_OPTION
@click.option("--due", is_flag=True, help="every scored game past SPECULATION_ARCHIVE_AFTER (what the workers do)")
@click.option("--all-scored", is_flag=True, help="every scored game in the lobby, whatever its age")
def archive_move(games, archive_url, due, all_scored) -> None:
    """Move scored games out of Redis into the archive; prints what became of each."""
    service = _archiving_core(archive_url)
    if all_scored:
        page = 0
        while True:
            ids, total = service.index.list(None, "scored", page * 500, 500)
            games += tuple(ids)
            page += 1
            if page * 500 >= total or not ids:
                break
    outcomes = {game: service.archive_game(game) for game in games}
    if due:
        outcomes["due"] = service.archive_due(limit=10_000)
    _print(outcomes)


@archive.command("restore")
@click.argument("games", nargs=-1, required=True, metavar="GAME...")
@ARCHIVE_OPTION
def archive_restore(games, archive_url) -> None:
    """Bring archived games back into Redis (their archive files stay)."""
    service = _archiving_core(archive_url)
    _print({game: service.restore_game(game) for game in games})


@archive.command("list")
@ARCHIVE_OPTION
@click.option("--json", "as_json", is_flag=True, help="JSON, for machines")
def archive_list(archive_url, as_json) -> None:
    """The archive's files: game id, digest, path (no Redis needed)."""
    from events.archive import Archive

    files = [{"game_id": g, "digest": d, "path": p} for g, d, p in Archive(archive_url).files()]
    if as_json:
        _print(files)
    else:
        for f in files:
            print(f"{f['game_id']}  {f['digest']}  {f['path']}")


@archive.command("verify")
@ARCHIVE_OPTION
def archive_verify(archive_url) -> None:
    """Check every archive file offline: its content against its name, its log re-run with its
    revealed seed. Prints the report as JSON; exits 1 when a file fails."""
    from events.archive import Archive
    from service.core.archiving import verify_archive

    report = verify_archive(Archive(archive_url))
    _print(report)
    if not report["ok"]:
        raise SystemExit(EXIT_FAILED)


def parse_receipts(items) -> dict[int, str]:
    receipts = {}
    for item in items or []:
        version, _, head = item.partition(":")
        if not version.isdigit() or len(head) != 64:
            raise click.BadParameter(f"{item!r}: expected VERSION:HEAD (64 hex digits)", param_hint="--receipt")
        receipts[int(version)] = head
    return receipts


def verify_file(path: str, receipts=None) -> dict:
    from projections.verify import verify_log

    with open(path) as handle:
        try:
            records = [json.loads(line) for line in handle if line.strip()]
        except ValueError:
            raise click.UsageError(f"{path}: not an export (each line must be JSON)")
    if not records or not records[0].get("complete"):
        raise click.UsageError(f"{path}: not a complete export (export an ended game)")
    header, rows = records[0], records[1:]
    report = verify_log([(r["body"], r["hash"]) for r in rows], header.get("seed"), header.get("game_id", ""),
                        receipts=receipts)
    return report.as_dict()


@cli.command()
@click.argument("game_or_file", metavar="GAME_OR_FILE")
@API_OPTION
@click.option("--receipt", "receipts", multiple=True, metavar="VERSION:HEAD",
              help="a receipt you kept; it must be on the chain (repeatable)")
def verify(game_or_file, api, receipts) -> None:
    """Verify a game: by its id (the server re-runs it) or an exported file, offline.

    GAME_OR_FILE is a file when it exists; a name that is not a game id (16 hex digits), such
    as a path or a name ending in .ndjson, is taken as a file and must exist. Prints the
    report as JSON; exits 1 when the log does not verify."""
    kept = parse_receipts(receipts)
    if os.path.exists(game_or_file):
        report = verify_file(game_or_file, kept)
    elif not GAME_ID.match(game_or_file):
        raise click.UsageError(f"{game_or_file}: no such file (and not a game id: 16 hex digits)")
    else:
        query = ",".join(f"{v}:{h}" for v, h in sorted(kept.items()))
        report = _get(api, f"/v1/games/{game_or_file}/verify" + (f"?receipts={query}" if query else ""))
    _print(report)
    if not report["ok"]:
        raise SystemExit(EXIT_FAILED)


@cli.command()
@click.option("--type", "game_type", default="speculation", show_default=True, help="the game type")
@click.option("--players", type=click.IntRange(2, 16), default=4, show_default=True, help="seats at the table")
@click.option("--level", default="heuristic", show_default=True, help=LEVEL_HELP + " (every other seat: random)")
@ITERATIONS_OPTION
@TIME_MS_OPTION
def demo(game_type, players, level, iterations, time_ms) -> None:
    """Bots play a whole game through the API, in process."""
    from service.app import create_app
    from workers.demo import run_demo

    budget = search_budget(level, iterations, time_ms)
    run_demo(create_app({"REDIS_URL": None, "RATE_LIMIT": None}), game_type, players, level, budget=budget)


def main(argv=None) -> None:
    """The `speculation` entry point. Returns normally when a command is done (tests call it);
    exits with the codes above otherwise."""
    try:
        cli.main(args=argv, prog_name="speculation", standalone_mode=False)
    except click.exceptions.Exit as done:
        if done.exit_code:
            raise SystemExit(done.exit_code)
    except click.ClickException as err:
        err.show()
        raise SystemExit(EXIT_USAGE if isinstance(err, click.UsageError) else err.exit_code)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        raise SystemExit(EXIT_FAILED)


if __name__ == "__main__":
    main()
