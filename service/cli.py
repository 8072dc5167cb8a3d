"""The command line: `speculation serve | worker | games | replay | verify | export | demo`.

`serve` runs the API (embedded store and worker with no REDIS_URL); `worker` runs an RQ
worker for REDIS_URL. The other commands are clients of a running API (--api, default
http://127.0.0.1:5000), except `verify FILE`, which checks an exported log offline.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request

DEFAULT_API = os.environ.get("SPECULATION_API", "http://127.0.0.1:5000")


def _get(api: str, path: str, accept: str = "application/json", headers=None):
    request = urllib.request.Request(api.rstrip("/") + path, headers={"Accept": accept, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read().decode()
    except urllib.error.HTTPError as err:
        body = err.read().decode()
        try:
            error = json.loads(body)["error"]
            raise SystemExit(f"error {err.code} {error['code']}: {error['message']}")
        except (ValueError, KeyError):
            raise SystemExit(f"error {err.code}: {body[:200]}")
    except urllib.error.URLError as err:
        raise SystemExit(f"cannot reach the API at {api}: {err.reason} (is `make serve` running?)")
    return json.loads(body) if accept == "application/json" else body


def _print(obj) -> None:
    print(json.dumps(obj, indent=2, sort_keys=True))


def cmd_serve(args) -> None:
    """The production stack on this machine (service/stack.py): with no REDIS_URL an embedded
    Redis with AOF in the data folder, the API under gunicorn, the worker process(es)."""
    from service.config import from_env
    from service.settings import SettingsError, unknown_variables
    from service.stack import StackError, serve

    try:
        config = from_env()
    except SettingsError as err:
        raise SystemExit(f"speculation serve: {err}")
    for name in unknown_variables():
        print(f"[stack] warning: {name} names no setting (see docs/operations.md)", file=sys.stderr)
    try:
        code = serve(host=args.host or config["HOST"], port=args.port or config["PORT"],
                     data_dir=args.data or config["DATA_DIR"], redis_url=config["REDIS_URL"],
                     redis_port=config["REDIS_PORT"], workers=config["WORKERS"])
    except StackError as err:
        raise SystemExit(f"speculation serve: {err}")
    raise SystemExit(code)


def cmd_worker(args) -> None:
    import redis
    from rq import Worker

    from service.bootstrap import build_worker_core
    from workers import jobs, tasks
    from workers.queue import RQJobs, worker_queues
    from workers.supervisor import Supervisor

    from service.config import from_env
    from service.observability import configure_logging

    configure_logging(from_env()["LOG_LEVEL"])
    service = build_worker_core()
    tasks.bind(service)
    # The worker's own connection, for its blocking dequeue (RQ gives it a socket timeout
    # longer than its BLPOP): on the core's bounded client (REDIS_SOCKET_TIMEOUT) every idle
    # wait ended in a TimeoutError, and the worker quit every few seconds.
    config = from_env()
    connection = redis.Redis.from_url(config.get("RQ_REDIS_URL") or config["REDIS_URL"], socket_connect_timeout=1.0,
                                      health_check_interval=30) if isinstance(service.jobs, RQJobs) else None

    def new_worker():
        # A short monitoring interval keeps a running job's heartbeat fresh, so the sweep can
        # tell a job whose worker died (no beat for --abandoned-after seconds) from a slow one.
        worker = Worker(worker_queues(connection), connection=connection,
                        job_monitoring_interval=args.job_monitoring_interval)
        # RQ retries a lost connection itself, but doubling its wait up to a minute; once a
        # second keeps the worker within a second or two of Redis coming back.
        worker.max_connection_wait_time = 1.0
        return worker

    probe = redis.Redis.from_url(config.get("RQ_REDIS_URL") or config["REDIS_URL"], socket_timeout=2.0,
                                 socket_connect_timeout=1.0)
    Supervisor(new_worker, probe.ping,
               reconcile=lambda: jobs.reconcile(service), reconcile_every=args.reconcile_every,
               recover=lambda: jobs.recover_abandoned(service, args.abandoned_after),
               recover_every=min(1.0, args.abandoned_after / 3)).run()


def cmd_games(args) -> None:
    query = "&".join(f"{k}={v}" for k, v in (("type", args.type), ("status", args.status)) if v)
    listing = _get(args.api, f"/v1/games?{query}&per_page=100")
    for game in listing["games"]:
        print(f"{game['game_id']}  {game['type']:<12} {game['status']:<7} v{game['version']:<5} "
              f"seats={len(game['seats'])}")
    print(f"{listing['total']} game(s)")


def cmd_replay(args) -> None:
    replay = _get(args.api, f"/v1/games/{args.game}/replay?at={args.at}")
    if args.json:
        _print(replay)
        return
    from service.terminal import print_replay

    print_replay(replay, _get(args.api, f"/v1/games/{args.game}"))


def cmd_view(args) -> None:
    from service.terminal import main_view

    main_view(_get, args.api, args.game, args.token, args.json, args.follow)


def cmd_play(args) -> None:
    from service.terminal import play

    play(args.type, args.players, args.level, args.name, json.loads(args.options) if args.options else None)


def cmd_export(args) -> None:
    sys.stdout.write(_get(args.api, f"/v1/games/{args.game}/export", accept="application/x-ndjson"))


def parse_receipts(items) -> dict[int, str]:
    receipts = {}
    for item in items or []:
        version, _, head = item.partition(":")
        if not version.isdigit() or len(head) != 64:
            raise SystemExit(f"--receipt {item!r}: expected VERSION:HEAD (64 hex digits)")
        receipts[int(version)] = head
    return receipts


def verify_file(path: str, receipts=None) -> dict:
    from projections.verify import verify_log

    with open(path) as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    if not records or not records[0].get("complete"):
        raise SystemExit(f"{path}: not a complete export (export an ended game)")
    header, rows = records[0], records[1:]
    report = verify_log([(r["body"], r["hash"]) for r in rows], header.get("seed"), header.get("game_id", ""),
                        receipts=receipts)
    return report.as_dict()


def cmd_verify(args) -> None:
    receipts = parse_receipts(args.receipt)
    if os.path.exists(args.game_or_file):
        report = verify_file(args.game_or_file, receipts)
    else:
        query = ",".join(f"{v}:{h}" for v, h in sorted(receipts.items()))
        report = _get(args.api, f"/v1/games/{args.game_or_file}/verify" + (f"?receipts={query}" if query else ""))
    _print(report)
    if not report["ok"]:
        raise SystemExit(1)


def cmd_demo(args) -> None:
    from service.app import create_app
    from workers.demo import run_demo

    run_demo(create_app({"REDIS_URL": None, "RATE_LIMIT": None}), args.type, args.players, args.level)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="speculation", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the whole stack: Redis (embedded without REDIS_URL), API, workers",
                           description=cmd_serve.__doc__)
    serve.add_argument("--host", help="address to listen on (default: SPECULATION_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="API port (default: SPECULATION_PORT or 5000)")
    serve.add_argument("--data", help="data folder of the embedded Redis (default: SPECULATION_DATA_DIR or ./var)")
    serve.set_defaults(func=cmd_serve)

    worker = sub.add_parser("worker", help="run an RQ worker for REDIS_URL / RQ_REDIS_URL")
    worker.add_argument("--reconcile-every", type=float, default=10.0,
                        help="seconds between reconciler passes (default 10)")
    worker.add_argument("--job-monitoring-interval", type=int, default=1,
                        help="seconds between heartbeats of a running job (default 1)")
    worker.add_argument("--abandoned-after", type=float, default=3.0,
                        help="a started job with no heartbeat for this long lost its worker: run it "
                             "again (default 3)")
    worker.set_defaults(func=cmd_worker)

    for name, func, help_text in (("games", cmd_games, "list games"),
                                  ("replay", cmd_replay, "a game's view as of a version"),
                                  ("export", cmd_export, "a game's log as NDJSON"),
                                  ("verify", cmd_verify, "verify a game (by id, or an export file offline)")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--api", default=DEFAULT_API)
        if name == "games":
            p.add_argument("--type")
            p.add_argument("--status")
        elif name == "verify":
            p.add_argument("game_or_file")
            p.add_argument("--receipt", action="append", metavar="VERSION:HEAD",
                           help="a receipt you kept; it must be on the chain (repeatable)")
        else:
            p.add_argument("game")
        if name == "replay":
            p.add_argument("--at", type=int, required=True)
            p.add_argument("--json", action="store_true", help="the API's JSON, for machines")
        p.set_defaults(func=func)

    view = sub.add_parser("view", help="a game's table drawn for a person (--follow: as it goes)")
    view.add_argument("game")
    view.add_argument("--api", default=DEFAULT_API)
    view.add_argument("--token", default=os.environ.get("SPECULATION_TOKEN"), help="a seat token (else a spectator)")
    view.add_argument("--follow", action="store_true", help="draw the table again at every change")
    view.add_argument("--json", action="store_true", help="the API's JSON, for machines")
    view.set_defaults(func=cmd_view)

    play = sub.add_parser("play", help="play a game in the terminal against bots (in process)")
    play.add_argument("type", choices=["speculation", "spekulation", "speculate", "big-shot"])
    play.add_argument("--players", type=int, default=3)
    play.add_argument("--level", default="heuristic")
    play.add_argument("--name", default=os.environ.get("USER") or "you")
    play.add_argument("--options", help='the game\'s options as JSON, e.g. \'{"deals": 2}\'')
    play.set_defaults(func=cmd_play)

    demo = sub.add_parser("demo", help="bots play a whole game through the API, in process")
    demo.add_argument("--type", default="speculation")
    demo.add_argument("--players", type=int, default=4)
    demo.add_argument("--level", default="heuristic")
    demo.set_defaults(func=cmd_demo)

    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
