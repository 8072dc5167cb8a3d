"""The command line: `speculation serve | worker | games | view | replay | export | bundle | verify | play | demo | archive
| login | logout | whoami | my-games | challenge | invitations | accept | decline | cancel | leave | seek | rematch
| preferences | ratings | profile | accounts | ratings-rebuild | keys show | keys rotate | audit
| chat show | chat say | chat remove`.

`serve` runs the API (embedded store and worker with no REDIS_URL); `worker` runs an RQ worker
for the game store (REDIS_URL, or REDIS_CLUSTER_NODES with the queue on RQ_REDIS_URL). The other
commands are clients of a running API (--api, default
$SPECULATION_API or http://127.0.0.1:5000, over HTTP with httpx), except `verify FILE`,
which checks an exported log or a dispute bundle offline, `play`/`demo`, which run the service in process
(`play --api URL`, or with SPECULATION_API set, plays on that server as the signed-in account),
and the operator's `archive`, `accounts`, `ratings-rebuild` and `chat remove`, which run on the game store
(REDIS_URL or REDIS_CLUSTER_NODES, built as the API builds it: service/bootstrap.py).
`login` keeps a personal token per API in $XDG_CONFIG_HOME/speculation/credentials.json
(service/client_config.py); SPECULATION_TOKEN, when set, is used instead of it.
Built with click (Flask's own command-line library). Exit codes: 0 done; 1 the log does not
verify, `serve` stopped on an error, signing in failed (not signed in, a wrong password, a
lock), a rating differs on `ratings-rebuild`, or a challenge, rematch or seek waited for ended
without a game (declined, cancelled, expired, Ctrl-C); 2 a usage error (a bad option, a missing
file); 3 the API answered with an error (its code and message on stderr); 4 the API cannot be
reached.
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
TOKEN_OPTION = click.option("--token", envvar="SPECULATION_TOKEN", metavar="TOKEN",
                            help="an account token (spa_...) to use instead of the one `login` stored  "
                                 "[default: SPECULATION_TOKEN]")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
def cli() -> None:
    """An event-sourced game service for the Speculation family of trading games.

    Exit codes: 0 done; 1 the log does not verify, serve stopped on an error, or signing in
    failed; 2 a usage error; 3 the API answered with an error; 4 the API cannot be reached."""


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
    if config.get("REDIS_CLUSTER_NODES"):   # the stack would start a Redis of its own beside it
        _fail("speculation serve: the stack runs on one machine and its own Redis; with REDIS_CLUSTER_NODES run "
              "the API under gunicorn and `speculation worker` on each machine (docs/operations.md)", EXIT_USAGE)
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
@click.option("--burst", is_flag=True,
              help="run the jobs due now (and those they enqueue) until the queues are empty, then exit")
def worker(reconcile_every, job_monitoring_interval, abandoned_after, burst) -> None:
    """Run an RQ worker (bot turns, scoring, turn timeouts) on the game store (REDIS_URL, or
    REDIS_CLUSTER_NODES) with its queue on RQ_REDIS_URL (default REDIS_URL), supervised:
    restarted after Redis comes back, with the reconciler and the abandoned-job sweep beside
    it (workers/supervisor.py)."""
    import redis

    from service.bootstrap import build_core
    from service.observability import configure_logging, request_scope
    from workers import jobs, tasks
    from workers.supervisor import Supervisor

    config, backend = _store_backend("worker")
    configure_logging(config["LOG_LEVEL"])
    service = build_core(config, backend)
    tasks.bind(service, request_scope)   # before RQ runs a job (its work horses inherit it)
    # The queue's Redis as bootstrap chose it: RQ_REDIS_URL, else REDIS_URL (a cluster store
    # requires RQ_REDIS_URL: RQ does not run on a cluster).
    url = config.get("RQ_REDIS_URL") or config["REDIS_URL"]
    # The worker's own connection, for its blocking dequeue (RQ gives it a socket timeout
    # longer than its BLPOP): on the core's bounded client (REDIS_SOCKET_TIMEOUT) every idle
    # wait ended in a TimeoutError, and the worker quit every few seconds.
    connection = redis.Redis.from_url(url, socket_connect_timeout=1.0, health_check_interval=30)
    if burst:
        rq_worker(connection, job_monitoring_interval).work(burst=True, with_scheduler=True)
        return
    probe = redis.Redis.from_url(url, socket_timeout=2.0, socket_connect_timeout=1.0)

    from workers.sequencer import sequencer_pass

    Supervisor(lambda: rq_worker(connection, job_monitoring_interval), probe.ping,
               reconcile=lambda: jobs.reconcile(service), reconcile_every=reconcile_every,
               recover=lambda: jobs.recover_abandoned(service, abandoned_after),
               recover_every=min(1.0, abandoned_after / 3),
               # the transparency log's batches (docs/audit.md): every worker runs the loop, the
               # log's lease lets one sequence at a time
               sequence=sequencer_pass(service), sequence_every=service.sequence_every).run()


def _store_backend(command: str, overrides=None):
    """The settings and the Redis clients of an operator command that runs on the game store,
    built as the API builds them (service/bootstrap.py): a plain Redis (REDIS_URL) or a
    cluster (REDIS_CLUSTER_NODES, the job queue on RQ_REDIS_URL). Exit 2 without a store
    (the in-process fakeredis would hold nothing) or with settings that cannot work together."""
    from service.bootstrap import ConfigurationError, build_backend, settings, store_configured
    from service.settings import SettingsError

    try:
        config = settings(overrides)
        if not store_configured(config):
            _fail(f"speculation {command}: REDIS_URL or REDIS_CLUSTER_NODES must name the game store's Redis",
                  EXIT_USAGE)
        return config, build_backend(config)
    except (ConfigurationError, SettingsError) as err:
        _fail(f"speculation {command}: {err}", EXIT_USAGE)


@cli.command()
@API_OPTION
@click.option("--type", "game_type", help="only games of this type (see /v1/game-types)")
@click.option("--status", type=click.Choice(["open", "active", "ended", "scored", "abandoned"]),
              help="only games in this status")
@click.option("--live", is_flag=True, help="only the active games that moved lately (the lobby's live list)")
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def games(api, game_type, status, live, as_json) -> None:
    """List games, newest first (at most 100; with --live, latest move first)."""
    query = "&".join(f"{k}={v}" for k, v in (("type", game_type), ("status", status),
                                             ("live", "true" if live else None)) if v)
    listing = _get(api, f"/v1/games?{query}&per_page=100")
    if as_json:
        _print(listing)
        return
    for game in listing["games"]:
        print(f"{game['game_id']}  {game['type']:<12} {game['status']:<9} v{game['version']:<5} "
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
@click.argument("game_type", metavar="TYPE", type=GameTypeChoice(), required=False)
@click.option("--players", type=click.IntRange(2, 16), default=3, show_default=True, help="seats at the table, yours included")
@click.option("--level", default="heuristic", show_default=True, help=LEVEL_HELP)
@ITERATIONS_OPTION
@TIME_MS_OPTION
@click.option("--name", default=os.environ.get("USER") or "you", show_default="$USER",
              help="your name at the table (in process; on a server the account's username)")
@click.option("--options", help='the game\'s options as JSON, e.g. \'{"deals": 2}\'')
@click.option("--seed", help="the game's secret seed (64 hex digits), to play the same deal again; "
                             "by default a fresh one (shown when the game is scored)")
@click.option("--api", "api", envvar="SPECULATION_API", metavar="URL",
              help="play on this server as the account `speculation login` signed in (else in process)  "
                   "[default: SPECULATION_API]")
@TOKEN_OPTION
@click.option("--game", "game_id", metavar="GAME", help="with --api: play this game, where the account holds a "
                                                        "seat (see my-games), instead of a new one of TYPE")
@click.option("--seat", type=click.IntRange(min=0), help="with --game: which of the account's seats, when it "
                                                          "holds several")
def play(game_type, players, level, iterations, time_ms, name, options, seed, api, token, game_id, seat) -> None:
    """Play a game of TYPE in the terminal against bots (the service runs in process).

    With --api URL (or SPECULATION_API set) the game is played on that server as the signed-in
    account: a new game of TYPE against bots, or with --game an existing one of the account's."""
    budget = search_budget(level, iterations, time_ms)
    try:
        parsed = json.loads(options) if options else None
    except ValueError as err:
        raise click.BadParameter(f"not JSON: {err}", param_hint="--options")
    if not api:
        if game_id is not None or seat is not None:
            raise click.UsageError("--game and --seat play on a server: give --api URL (or set SPECULATION_API)")
        if game_type is None:
            raise click.UsageError("Missing argument 'TYPE'.")
        from service.terminal import play as play_in_terminal

        play_in_terminal(game_type, players, level, name, parsed, seed=seed, budget=budget)
        return
    if (game_type is None) == (game_id is None):
        raise click.UsageError("give TYPE (a new game against bots) or --game GAME (one of your games), not both"
                               if game_type else "Missing argument 'TYPE' (or --game GAME).")
    if seat is not None and game_id is None:
        raise click.UsageError("--seat chooses a seat of --game GAME")
    _play_online(api, token, game_type, players, level, budget, parsed, seed, game_id, seat)


# --- accounts: login, logout, whoami, my-games and play --api ------------------------------------
SCOPES = ("play", "read", "account")


def _error(response) -> tuple[str, str, dict]:
    """An error answer's code, message and details (the API's {"error": {...}})."""
    try:
        error = response.json()["error"]
        return str(error["code"]), str(error["message"]), error.get("details") or {}
    except (ValueError, KeyError, TypeError):
        return "", response.text[:200], {}


def _retry_after(response, details: dict) -> int:
    for value in (details.get("retry_after"), response.headers.get("Retry-After")):
        try:
            return max(0, int(float(value)))
        except (TypeError, ValueError):
            continue
    return 0


def _minutes(seconds: int) -> str:
    minutes = max(1, -(-seconds // 60))
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


class Client:
    """The API as an account (or nobody): JSON in and out over one httpx connection. An error
    answer exits 3 (a refused token: with a hint to sign in again), an unreachable API exits 4."""

    def __init__(self, api: str, token: str | None = None, stored: bool = False):
        import httpx

        self.api, self.token, self.stored = api.rstrip("/"), token, stored
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.http = httpx.Client(base_url=self.api, headers=headers, timeout=40)

    def request(self, method: str, path: str, body=None, headers=None, params=None):
        import httpx

        try:
            return self.http.request(method, path, json=body, headers=headers, params=params)
        except httpx.HTTPError as err:
            _fail(f"cannot reach the API at {self.api}: {err} (is `make serve` running?)", EXIT_UNREACHABLE)

    def fail(self, response):
        code, message, _ = _error(response)
        if response.status_code == 401 and self.token:
            where = ("the token `speculation login` stored" if self.stored else "the token SPECULATION_TOKEN or "
                     "--token gave")
            _fail(f"error 401 {code}: {message}\n{where} for {self.api} is not accepted (revoked or expired?): "
                  f"run `speculation login --api {self.api}`", EXIT_API_ERROR)
        _fail(f"error {response.status_code} {code}: {message}" if code else
              f"error {response.status_code}: {message}", EXIT_API_ERROR)

    def get(self, path: str, params=None) -> dict:
        response = self.request("GET", path, params=params)
        if response.status_code >= 400:
            self.fail(response)
        return response.json()

    def post(self, path: str, body, headers=None) -> tuple[int, dict]:
        """(status, JSON): an action's refusal is the caller's to show."""
        response = self.request("POST", path, body, headers)
        if response.status_code >= 500 or response.status_code in (401, 403):
            self.fail(response)
        return response.status_code, (response.json() if response.content else {})

    def close(self) -> None:
        self.http.close()


def _account_client(api: str, token: str | None) -> Client:
    """A client with --token / SPECULATION_TOKEN when given, else the token `login` stored for
    this API; exits 1 when there is neither."""
    from service.client_config import CredentialsError, stored

    if token:
        return Client(api, token)
    try:
        entry = stored(api)
    except CredentialsError as err:
        _fail(str(err), EXIT_FAILED)
    if entry is None:
        _fail(f"not signed in to {api.rstrip('/')}: run `speculation login --api {api.rstrip('/')}` "
              "(or set SPECULATION_TOKEN)", EXIT_FAILED)
    return Client(api, entry["token"], stored=True)


def _read_secret_line(prompt: str, hide: bool) -> str:
    """A line from the terminal (hidden for a password), or from stdin when it is not one (scripts)."""
    if sys.stdin is not None and sys.stdin.isatty():
        return click.prompt(prompt, hide_input=hide, prompt_suffix=": ")
    line = sys.stdin.readline() if sys.stdin is not None else ""
    if not line:
        raise click.UsageError(f"{prompt.lower()}: nothing on stdin")
    return line.rstrip("\r\n")


@cli.command()
@API_OPTION
@click.option("--username", help="the account's username (else asked)")
def login(api, username) -> None:
    """Sign in and keep a personal token for this API (scopes play, read, account).

    Asks the username and the password (hidden); when stdin is not a terminal, reads them from
    it, one a line (the password alone with --username). The token goes to
    $XDG_CONFIG_HOME/speculation/credentials.json (~/.config/speculation/, mode 0600), one per
    API; the sign-in's session is signed out again. The token is never printed."""
    import socket

    from service.client_config import CredentialsError, device, store, stored

    username = (username or _read_secret_line("Username", hide=False)).strip()
    if not username:
        raise click.UsageError("username: empty")
    password = _read_secret_line("Password", hide=True)
    if not password:
        raise click.UsageError("password: empty")
    anonymous = Client(api)
    try:
        try:
            known_device, previous = device(api, username), stored(api)
        except CredentialsError as err:
            _fail(str(err), EXIT_FAILED)
        body = {"username": username, "password": password, **({"device": known_device} if known_device else {})}
        response = anonymous.request("POST", "/v1/sessions", body)
        if response.status_code != 201:
            code, message, details = _error(response)
            if code == "bad_credentials":
                _fail(f"sign-in refused: wrong username or password for {anonymous.api}", EXIT_FAILED)
            if code == "sign_in_locked":
                _fail(f"sign-in to {username} is locked after too many wrong passwords: try again in "
                      f"{_minutes(_retry_after(response, details))} (a device that signed in before is not "
                      "locked out)", EXIT_FAILED)
            if code == "too_many_signins":
                _fail(f"too many sign-in attempts from this address: try again in "
                      f"{_minutes(_retry_after(response, details))}", EXIT_FAILED)
            anonymous.fail(response)
        signed = response.json()
    finally:
        anonymous.close()
    session = Client(api, signed["token"])
    try:
        label = f"speculation CLI on {socket.gethostname() or 'this computer'}"[:64]
        made = session.request("POST", "/v1/account/tokens", {"label": label, "scopes": list(SCOPES)})
        if made.status_code != 201:
            session.fail(made)
        token = made.json()
    finally:
        # Only the personal token remains: the session ends whatever became of the token.
        session.request("DELETE", "/v1/session")
        session.close()
    name = signed["account"]["username"]
    path = store(api, name, token["token"], token["id"], signed.get("device"))
    if previous and previous.get("token_id") != token["id"]:
        old = Client(api, previous["token"])   # the token this replaces: revoked, if it still works
        try:
            old.request("DELETE", f"/v1/account/tokens/{previous['token_id']}")
        finally:
            old.close()
    print(f"signed in to {anonymous.api} as {name}")
    print(f"personal token {token['id']} ({label!r}; scopes {', '.join(token['scopes'])}) kept in {path}")


@cli.command()
@API_OPTION
def logout(api) -> None:
    """Revoke the token `login` stored for this API and remove it from the credentials file."""
    from service.client_config import CredentialsError, forget, stored

    try:
        entry = stored(api)
    except CredentialsError as err:
        _fail(str(err), EXIT_FAILED)
    base = api.rstrip("/")
    if entry is None:
        print(f"not signed in to {base}: nothing to do")
        return
    client = Client(api, entry["token"], stored=True)
    try:
        response = client.request("DELETE", f"/v1/account/tokens/{entry['token_id']}")
    finally:
        client.close()
    if response.status_code not in (204, 401, 404):
        client.fail(response)   # the token stays in the file: try again
    forget(api)
    if response.status_code == 204:
        print(f"signed out of {base}: token {entry['token_id']} revoked and removed")
    else:
        print(f"signed out of {base}: the token was no longer valid; removed it")


@cli.command()
@API_OPTION
@TOKEN_OPTION
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def whoami(api, token, as_json) -> None:
    """The account this command line plays as on this API, and its credential."""
    client = _account_client(api, token)
    try:
        me = client.get("/v1/account")
    finally:
        client.close()
    if as_json:
        _print(me)
        return
    print(f"{me['username']} on {client.api}")
    print(f"  account {me['id']}; {me['kind']} token {me['token_id']}, scopes {', '.join(me['scopes'])}"
          + ("" if client.stored else " (from SPECULATION_TOKEN / --token)"))


def _when(ms) -> str:
    import datetime

    if not ms:
        return "-"
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


def _players(game: dict) -> str:
    names = []
    for i, seat in enumerate(game["seats"]):
        if i in game["my_seats"]:
            names.append("you")
        elif seat.get("kind") == "bot":
            names.append(f"{seat.get('level', '')} bot".strip())
        elif seat.get("kind") == "player":
            names.append(seat.get("name") or f"seat {i}")
        else:
            names.append("(open)")
    return ", ".join(names)


def _turn(game: dict) -> str:
    if game["status"] == "open":
        return "waiting for players"
    if game["status"] == "abandoned":
        return "abandoned: nobody moved for too long"
    if game["status"] in ("ended", "scored"):
        result = game.get("result") or {}
        winners, ranks = result.get("winners") or [], result.get("ranks") or []
        if any(s in winners for s in game["my_seats"]):
            return "you won" if len(winners) == 1 else "you shared the win"
        mine = [ranks[s] for s in game["my_seats"] if s < len(ranks)]
        return f"you ranked {min(mine)} of {len(game['seats'])}" if mine else game["status"]
    if game["my_turn"]:
        return "YOUR TURN"
    others = [("you" if s in game["my_seats"] else
               (game["seats"][s].get("name") if game["seats"][s].get("kind") == "player" else f"bot {s}"))
              for s in game["to_act"] if s < len(game["seats"])]
    return ", ".join(others) or "-"


@cli.command("my-games")
@API_OPTION
@TOKEN_OPTION
@click.option("--status", type=click.Choice(["active", "finished"]), help="only active or finished games")
@click.option("--my-turn", "my_turn", is_flag=True, help="only games waiting for your move")
@click.option("--type", "game_type", help="only games of this type")
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def my_games(api, token, status, my_turn, game_type, as_json) -> None:
    """The signed-in account's games, newest move first (at most 100)."""
    params = {"limit": 100, **({"status": status} if status else {}), **({"my_turn": "true"} if my_turn else {}),
              **({"type": game_type} if game_type else {})}
    client = _account_client(api, token)
    try:
        listing = client.get("/v1/account/games", params)
    finally:
        client.close()
    if as_json:
        _print(listing)
        return
    rows = [("GAME", "TYPE", "STATUS", "PLAYERS", "TURN", "LAST MOVE")]
    rows += [(g["game_id"], g["type"], g["status"], _players(g), _turn(g), _when(g.get("last_move_at")))
             for g in listing["games"]]
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(str(cell).ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
    shown = len(listing["games"])
    print(f"{listing['total']} game(s)" + (f", the {shown} newest shown" if shown < listing["total"] else ""))


def _play_online(api, token, game_type, players, level, budget, options, seed, game_id, seat) -> None:
    import uuid

    from service.terminal import keep_receipt, play_online

    client = _account_client(api, token)
    try:
        me = client.get("/v1/account")
        if "play" not in me["scopes"]:
            _fail(f"this token ({me['token_id']}) does not hold the scope play: run `speculation login --api "
                  f"{client.api}`", EXIT_FAILED)
        if game_id is None:
            bots = [{"bot": level, **({"budget": budget} if budget else {})}] * (players - 1)
            body = {"type": game_type, "options": options or {}, "seats": [{}] + bots,
                    **({"seed": seed} if seed is not None else {})}
            status, created = client.post("/v1/games", body, {"Idempotency-Key": f"cli-{uuid.uuid4().hex}"})
            if status != 201:
                _fail(f"could not create the game: {created['error']['message']}", EXIT_API_ERROR)
            keep_receipt(created)
            game_id = created["game_id"]
            status, claimed = client.post(f"/v1/games/{game_id}/seats/0", {},
                                          {"Idempotency-Key": f"cli-{uuid.uuid4().hex}"})
            if status != 201:
                _fail(f"could not take the seat: {claimed['error']['message']}", EXIT_API_ERROR)
            keep_receipt(claimed)
            print(f"{game_type} on {client.api}: you ({me['username']}) at seat 0 against {players - 1} {level} "
                  f"bots; game {game_id}")
        else:
            game = client.get(f"/v1/games/{game_id}")
            held = [i for i, s in enumerate(game["seats"]) if s.get("account") == me["id"]]
            if not held:
                _fail(f"{me['username']} holds no seat of game {game_id}", EXIT_FAILED)
            if seat is None and len(held) > 1:
                raise click.UsageError(f"you hold seats {', '.join(map(str, held))} of this game: choose one "
                                       "with --seat")
            if seat is not None and seat not in held:
                raise click.UsageError(f"seat {seat} of game {game_id} is not yours (yours: "
                                       f"{', '.join(map(str, held))})")
            seat = seat if len(held) > 1 else None
            print(f"{game['type']} on {client.api}: you ({me['username']}) at seat "
                  f"{seat if seat is not None else held[0]}; game {game_id}")
        try:
            play_online(client, game_id, seat)
        except (KeyboardInterrupt, EOFError):
            _fail(f"\nleft the table; the game goes on: speculation play --game {game_id} --api {client.api}",
                  EXIT_FAILED)
    finally:
        client.close()


@cli.command()
@click.argument("game")
@API_OPTION
def export(game, api) -> None:
    """A game's log as NDJSON on stdout (complete once the game has ended, redacted before)."""
    sys.stdout.write(_get(api, f"/v1/games/{game}/export", accept="application/x-ndjson"))


@cli.command()
@click.argument("game")
@API_OPTION
@click.option("--token", envvar="SPECULATION_TOKEN", metavar="TOKEN",
              help="a seat token or an account token (else the account `login` stored, else a spectator's "
                   "bundle, without receipts)  [default: SPECULATION_TOKEN]")
@click.option("--seat", type=click.IntRange(min=0), help="which of the account's seats, when it holds several")
@click.option("--known", "known_file", type=click.Path(exists=True, dir_okay=False), metavar="HEADS.json",
              help="signed tree heads seen before: the bundle carries consistency proofs from their sizes")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
              help="write the bundle to FILE (else to stdout)")
def bundle(game, api, token, seat, known_file, output) -> None:
    """A game's dispute bundle (docs/audit.md): its export, the seat's signed receipts, its
    checkpoints with their inclusion proofs, the signed tree head and the service's keys, as
    JSON; check it offline with `speculation verify FILE`. A seat's bundle holds only what the
    seat sees at the table while the game runs."""
    from service.client_config import CredentialsError, stored

    if not token:
        try:
            entry = stored(api)
        except CredentialsError as err:
            _fail(str(err), EXIT_FAILED)
        token = entry["token"] if entry else None
    params = []
    if seat is not None:
        params.append(f"seat={seat}")
    if known_file:
        sizes = sorted({h["tree_size"] for h in read_heads(known_file) if isinstance(h.get("tree_size"), int)})
        if sizes:
            params.append("known=" + ",".join(map(str, sizes)))
    path = f"/v1/games/{game}/bundle" + ("?" + "&".join(params) if params else "")
    found = _get(api, path, headers={"Authorization": f"Bearer {token}"} if token else None)
    text = json.dumps(found, indent=1, sort_keys=True) + "\n"
    if output:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
        seat_word = f"seat {found.get('seat')}" if found.get("seat") is not None else "a spectator"
        click.echo(f"{output}: the bundle of game {game} as {seat_word}, {len(found.get('receipts', []))} "
                   f"receipt(s), {len(found.get('checkpoints', []))} checkpoint(s)", err=True)
    else:
        sys.stdout.write(text)


# --- the archive (an operator's commands: they reach Redis and the archive directly) -----------
ARCHIVE_OPTION = click.option("--archive", "archive_url", envvar="SPECULATION_ARCHIVE_URL", required=True,
                              help="the archive's fsspec URL (a folder, file://..., s3://...)  "
                                   "[default: SPECULATION_ARCHIVE_URL]")


@cli.group()
def archive() -> None:
    """Finished games in the archive: move, restore, list, verify (docs/operations.md)."""


def _archiving_core(archive_url: str):
    from service.bootstrap import build_core

    return build_core(*_store_backend("archive", {"ARCHIVE_URL": archive_url}))


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


BUNDLE_FORMAT = "speculation-bundle/1"


def read_bundle(path: str):
    """The bundle in `path` (a JSON object of format speculation-bundle/1), or None when the
    file is something else (an NDJSON export)."""
    try:
        with open(path, encoding="utf-8") as handle:
            found = json.load(handle)
    except (ValueError, UnicodeDecodeError):
        return None
    return found if isinstance(found, dict) and found.get("format") == BUNDLE_FORMAT else None


def _json_file(path: str, option: str):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as err:
        raise click.BadParameter(f"{path}: not a JSON file ({err})", param_hint=option)


def read_keys(path: str) -> list:
    """A /v1/keys answer kept earlier ({"keys": [...]}), or its list."""
    found = _json_file(path, "--keys")
    keys = found.get("keys") if isinstance(found, dict) else found
    if not isinstance(keys, list) or not all(isinstance(k, dict) for k in keys):
        raise click.BadParameter(f"{path}: not a /v1/keys answer (an object with a list `keys`)", param_hint="--keys")
    return keys


def read_heads(path: str) -> list:
    """Signed tree heads seen before: one, a list of them, or {"tree_heads": [...]}."""
    found = _json_file(path, "--known")
    heads = found.get("tree_heads", [found]) if isinstance(found, dict) else found
    if not isinstance(heads, list) or not all(isinstance(h, dict) for h in heads):
        raise click.BadParameter(f"{path}: not signed tree heads (one, a list, or {{\"tree_heads\": [...]}})",
                                 param_hint="--known")
    return heads


def print_bundle_report(report: dict) -> None:
    trusted = report["trusted_keys"]
    print(f"bundle of game {report['game']}, " + (f"seat {report['seat']}" if report["seat"] is not None
                                                   else "a spectator's"))
    print("keys trusted: " + ("the ones given with --keys" if trusted["source"] == "given" else
                              "the bundle's own (they prove nothing against the service that made it: "
                              "pass --keys with a /v1/keys answer kept earlier)")
          + f": {', '.join(trusted['key_ids']) or 'none'}")
    for check in report["checks"]:
        mark = "ok " if check["ok"] else "FAILED"
        name = check["name"] if check["ok"] or check["failure"] == check["name"] else \
            f"{check['name']} ({check['failure']})"
        print(f"  {mark:6} {name}: {check['message']}")
    print("OK: every check passed" if report["ok"] else f"FAILED: {', '.join(report['failures'])}")


@cli.command()
@click.argument("game_or_file", metavar="GAME_OR_FILE")
@API_OPTION
@click.option("--receipt", "receipts", multiple=True, metavar="VERSION:HEAD",
              help="a receipt you kept; it must be on the chain (repeatable)")
@click.option("--keys", "keys_file", type=click.Path(exists=True, dir_okay=False), metavar="KEYS.json",
              help="a bundle: trust only these keys (a /v1/keys answer kept earlier), not the bundle's own")
@click.option("--known", "known_file", type=click.Path(exists=True, dir_okay=False), metavar="HEADS.json",
              help="a bundle: signed tree heads seen before; each must be a prefix of the bundle's (else: fork)")
@click.option("--kept", is_flag=True, help="a bundle: check the receipts this command line kept of the game too")
@click.option("--json", "as_json", is_flag=True, help="a bundle: the report as JSON")
def verify(game_or_file, api, receipts, keys_file, known_file, kept, as_json) -> None:
    """Verify a game: by its id (the server re-runs it), an exported file or a dispute bundle,
    offline.

    GAME_OR_FILE is a file when it exists; a name that is not a game id (16 hex digits), such
    as a path or a name ending in .ndjson, is taken as a file and must exist. A JSON file of
    format speculation-bundle/1 (`speculation bundle`) is checked as a bundle: every signature,
    the export (re-run when complete), each receipt against the log, the seed's commitment,
    each checkpoint's proof against the tree head, consistency, inclusion promises; the report
    names each check. Otherwise prints the report as JSON. Exits 1 when anything fails."""
    bundle = read_bundle(game_or_file) if os.path.isfile(game_or_file) else None
    if bundle is not None:
        from projections.audit_verify import verify_bundle
        from service.terminal import kept_receipts

        if receipts:
            raise click.UsageError("--receipt is for an export or a game id; a bundle takes --kept")
        report = verify_bundle(bundle, read_keys(keys_file) if keys_file else None,
                               read_heads(known_file) if known_file else (),
                               kept_receipts(bundle["game"]) if kept else ()).as_dict()
        _print(report) if as_json else print_bundle_report(report)
        if not report["ok"]:
            raise SystemExit(EXIT_FAILED)
        return
    if keys_file or known_file or kept:
        raise click.UsageError("--keys, --known and --kept check a bundle (speculation bundle GAME -o FILE)")
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
@API_OPTION
@click.option("--state", "state_file", required=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="the monitor's state (JSON): read, then written back after the run; created on the first run")
@click.option("--peer", "peers", multiple=True, metavar="STATE_FILE_OR_URL",
              help="another monitor's state (a file, or a URL serving one): its head must be consistent with ours "
                   "(repeatable)")
@click.option("--bundle", "bundles", multiple=True, type=click.Path(exists=True, dir_okay=False), metavar="FILE",
              help="a dispute bundle: its receipts are held to the log, its tree heads compared (repeatable)")
@click.option("--receipts", "receipt_files", multiple=True, type=click.Path(exists=True, dir_okay=False),
              metavar="FILE", help="signed receipts, one JSON a line (repeatable)")
@click.option("--kept", is_flag=True, help="also the receipts this command line kept (`speculation play --api`)")
@click.option("--sample", type=click.IntRange(min=0), default=10, show_default=True,
              help="older games checked again each run, drawn at random")
def audit(api, state_file, peers, bundles, receipt_files, kept, sample) -> None:
    """Monitor the service's transparency log (docs/audit.md, "Monitors"): keys, the signed
    tree head and its consistency with the last run's, every leaf since, the games logged since
    (and a sample of older ones) against their checkpoints, receipts' inclusion promises, and
    other monitors' heads. Prints a JSON report; exits 1 on any finding (fork, rewritten,
    deleted, missed_promise, bad_signature, key_changed)."""
    from service.audit.monitor import MonitorError, Unreachable, audit as run_audit, http_getter

    if kept:
        from service.terminal import kept_receipts
    try:
        report = run_audit(http_getter(api), state_file, peers, bundles, receipt_files,
                           kept_receipts() if kept else (), sample)
    except Unreachable as err:
        _fail(str(err), EXIT_UNREACHABLE)
    except MonitorError as err:
        _fail(f"the API answered something unusable: {err} (the state is unchanged)", EXIT_API_ERROR)
    except (OSError, ValueError) as err:
        raise click.UsageError(str(err))
    _print(report.as_dict())
    if not report.ok:
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


@cli.group()
def accounts() -> None:
    """The operator's account commands: reset a password, rebuild the accounts' projections
    (they run on the game store, REDIS_URL or REDIS_CLUSTER_NODES; docs/accounts.md)."""


def _operator_core(command: str = "accounts"):
    from service.bootstrap import build_core

    return build_core(*_store_backend(command))


@accounts.command("reset-password")
@click.argument("username")
def accounts_reset_password(username) -> None:
    """Set a new password for USERNAME (asked twice, or read from stdin); every session of
    the account ends. For an owner who lost both the password and the recovery codes."""
    from service.core.errors import CoreError

    if sys.stdin.isatty():
        password = click.prompt("new password", hide_input=True, confirmation_prompt=True)
    else:
        password = sys.stdin.readline().rstrip("\n")
    core = _operator_core()
    try:
        core.accounts.reset_password(username, password)
    except CoreError as err:
        _fail(f"speculation accounts reset-password: {err.message}", EXIT_FAILED)
    click.echo(f"the password of {username} is reset; every session of the account has ended")


@accounts.command("rebuild")
def accounts_rebuild() -> None:
    """Rebuild every account's kept state, credential records and list of games from the
    logs (the accounts' projections; the events are never changed)."""
    from service.accounts.maintenance import rebuild_accounts

    core = _operator_core()

    def every_game():
        offset = 0
        while True:
            ids, total = core.index.list(None, None, offset, 500)
            yield from ids
            offset += len(ids)
            if not ids or offset >= total:
                return

    done = rebuild_accounts(core, core.accounts.index, every_game())
    click.echo(f"rebuilt {done['accounts']} accounts ({done['accounts_fixed']} had a stale kept state) and the "
               f"accounts of {done['games']} games")


# --- ratings: the leaderboard, a profile, and the operator's rebuild ------------------------------
def _rating(row: dict) -> str:
    """A rating as shown: the rounded ordinal (mu - 3 sigma, what the leaderboard sorts by)."""
    return f"{round(row['ordinal'])}"


def _mu_sigma(row: dict) -> str:
    return f"{row['mu']:.1f} ± {row['sigma']:.1f}"


def _marks(row: dict) -> str:
    marks = (["bot"] if row.get("bot") else []) + (["provisional"] if row.get("provisional") else []) \
        + (["closed"] if row.get("closed") else [])
    return ", ".join(marks)


def _table(rows: list[tuple], right: tuple = ()) -> list[str]:
    """Aligned columns (those in `right` aligned right), the last one left ragged."""
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        cells = [str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append(("  ".join(cells) + "  " + str(row[-1])).rstrip())
    return lines


@cli.command("ratings")
@click.argument("game_type", metavar="TYPE")
@API_OPTION
@click.option("--limit", type=click.IntRange(1, 200), default=20, show_default=True, help="rows to show")
@click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True, help="rows to skip")
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def ratings(game_type, api, limit, offset, as_json) -> None:
    """The leaderboard of TYPE: the accounts' ratings in its rated games, best first (bots'
    accounts included). RATING is the rounded ordinal, mu - 3 sigma; a rating is provisional
    until 10 rated games."""
    from urllib.parse import quote

    board = _get(api, f"/v1/leaderboards/{quote(game_type, safe='')}?limit={limit}&offset={offset}")
    if as_json:
        _print(board)
        return
    if not board["rows"]:
        print(f"no rated games of {board['type']} yet" if not board["total"] else
              f"{board['total']} rated account(s) in {board['type']}; none from rank {offset + 1}")
        return
    rows = [("RANK", "NAME", "RATING", "MU ± SIGMA", "GAMES", "WINS", "")]
    rows += [(r["rank"], r["name"], _rating(r), _mu_sigma(r), r["games"], r["wins"], _marks(r)) for r in board["rows"]]
    for line in _table(rows, right=(0, 2, 3, 4, 5)):
        print(line)
    shown = len(board["rows"])
    print(f"{board['total']} rated account(s) in {board['type']}"
          + (f", ranks {offset + 1}-{offset + shown} shown" if shown < board["total"] else ""))


@cli.command("profile")
@click.argument("name")
@API_OPTION
@click.option("--last", type=click.IntRange(1, 100), default=5, show_default=True,
              help="the rated games shown per game type")
@click.option("--json", "as_json", is_flag=True, help="the API's JSON (the profile and each type's history)")
def profile(name, api, last, as_json) -> None:
    """An account's public profile: its rating in each game type, the last few of its ratings
    and rated games per type, and its recent games."""
    from urllib.parse import quote

    path = f"/v1/accounts/{quote(name, safe='')}"
    found = _get(api, path)
    history = {t: _get(api, f"{path}/ratings/{quote(t, safe='')}")["history"] for t in sorted(found["ratings"])}
    if as_json:
        _print({"profile": found, "history": history})
        return
    kind = f" (the {found['username']} bot level's account)" if found.get("bot") else ""
    print(f"{found['username']}{kind}" + (" (closed)" if found.get("closed") else ""))
    print(f"  account {found['id']}, since {_when(found.get('created_at'))}")
    if not found["ratings"]:
        print("no rated games yet")
    for game_type in sorted(found["ratings"]):
        rating, past = found["ratings"][game_type], history[game_type][-last:]
        print(f"\n{game_type}: rating {_rating(rating)} ({_mu_sigma(rating)}), {rating['games']} rated game(s), "
              f"{rating['wins']} win(s)" + (", provisional" if rating["provisional"] else ""))
        if past:
            print("  last ratings: " + " -> ".join(_rating(h) for h in past))
            rows = [("GAME", "PLACE", "RATING", "MU ± SIGMA", "WHEN")]
            rows += [(h["game_id"], f"{h['place']} of {h['players']}", _rating(h), _mu_sigma(h), _when(h["at"]))
                     for h in reversed(past)]
            for line in _table(rows, right=(2, 3)):
                print("  " + line)
    recent = found.get("recent_games") or []
    if recent:
        print("\nrecent games:")
        rows = [("GAME", "TYPE", "STATUS", "RATED", "LAST MOVE")]
        rows += [(g["game_id"], g["type"], g["status"], "rated" if g.get("rated") else "-", _when(g.get("last_move_at")))
                 for g in recent]
        for line in _table(rows):
            print("  " + line)


@cli.command("ratings-rebuild")
@click.argument("game_types", nargs=-1, metavar="[TYPE]...")
def ratings_rebuild(game_types) -> None:
    """Rebuild the ratings of each TYPE (default: every game type) from its ratings log, on the
    store (REDIS_URL or REDIS_CLUSTER_NODES): every rated game replayed from its own result, in
    the log's order; every recorded rating must come out the same to the last digit, then the kept
    ratings, the leaderboard and the histories are written again. Exit 1 when a rating
    differs (nothing of that type is written)."""
    from projections.registry import all_games

    known = sorted(all_games())
    unknown = [t for t in game_types if t not in known]
    if unknown:
        raise click.BadParameter(f"unknown game type(s) {', '.join(unknown)}; known: {', '.join(known)}",
                                 param_hint="TYPE")
    core = _operator_core("ratings-rebuild")
    failed = []
    for game_type in game_types or known:
        try:
            done = core.ratings.rebuild(game_type)
        except ValueError as err:
            click.echo(f"speculation ratings-rebuild: {game_type}: {err}", err=True)
            failed.append(game_type)
            continue
        click.echo(f"{game_type}: {done['games']} rated game(s), {done['players']} player(s), "
                   f"kept_differing {done['kept_differing']}")
    if failed:
        raise SystemExit(EXIT_FAILED)


# --- finding a game: challenges, invitations, seeks, rematch, preferences (docs/matching.md) -------
NDJSON = "application/x-ndjson"
CHECK_EVERY = 10.0      # seconds between looks at the game (or the seek) while a stream waits
SAY_EVERY = 30.0        # seconds between "still waiting" lines


def _call(client: Client, method: str, path: str, body=None, params=None, seats=None) -> dict:
    """The JSON answer of a request that must succeed. An error answer exits 3 with its code
    and message (the matching refusals with a plainer line after it)."""
    response = client.request(method, path, body, params=params)
    if response.status_code < 400:
        return response.json() if response.content else {}
    code, message, details = _error(response)
    hint = None
    if code == "challenges_refused":
        field = str(details.get("field", ""))
        index = field.split(".")[1] if field.count(".") == 2 else ""
        name = (seats[int(index)].get("account") if seats and index.isdigit() and int(index) < len(seats)
                else None) or "this account"
        hint = (f"{name} does not take challenges (its owner chose `speculation preferences --challenges none`): "
                "the challenge was not sent")
    elif code == "too_many_challenges":
        hint = f"too many challenges from this account: try again in {_minutes(_retry_after(response, details))}"
    elif code in ("not_open", "not_invited", "not_yours"):
        hint = "see `speculation invitations` for the invitations still open"
    elif code == "too_many_seeks":
        hint = "at most 5 seeks wait at once for an account; a seek ends with its command (Ctrl-C)"
    if hint is None:
        client.fail(response)
    _fail(f"error {response.status_code} {code}: {message}\n{hint}", EXIT_API_ERROR)


def _stream_end(client: Client) -> int:
    """The position of the account's stream now: what a wait reads after (nothing older)."""
    after = 0
    while True:
        page = client.get("/v1/account/events", {"after": after})
        if page["until"] <= after:
            return after
        after = page["until"]


def _account_events(client: Client, after: int):
    """The account's notices after position `after` as they come (GET /v1/account/events as
    NDJSON), without end: a stream that ends (its `follow` time, a cut) is opened again after
    the last notice seen. Yields each notice (a dict), and None at each keep-alive."""
    import time

    import httpx

    while True:
        opened = time.monotonic()
        try:
            with client.http.stream("GET", "/v1/account/events", params={"after": after},
                                    headers={"Accept": NDJSON}, timeout=httpx.Timeout(40, read=90)) as response:
                if response.status_code >= 400:
                    response.read()
                    client.fail(response)
                for line in response.iter_lines():
                    try:
                        message = json.loads(line) if line.strip() else None
                    except ValueError:
                        message = None
                    if not isinstance(message, dict) or message.get("keepalive"):
                        yield None
                        continue
                    if isinstance(message.get("id"), int):
                        after = max(after, message["id"])
                    yield message
        except httpx.ReadTimeout:
            pass   # no keep-alive for too long: open it again
        except httpx.HTTPError as err:
            _fail(f"cannot reach the API at {client.api}: {err} (is `make serve` running?)", EXIT_UNREACHABLE)
        yield None
        if time.monotonic() - opened < 1.0:
            time.sleep(0.5)


def _seat_words(game: dict, me: str) -> list[str]:
    words = []
    for seat in game["seats"]:
        if seat.get("account") == me:
            words.append("you")
        elif seat.get("kind") == "player":
            words.append(seat.get("name") or "a player")
        elif seat.get("kind") == "bot":
            words.append(f"{seat.get('level', '')} bot".strip())
        elif seat.get("reserved"):
            words.append(f"{seat.get('invited') or seat['reserved']} (invited)")
        else:
            words.append("(open)")
    return words


def _pending(game: dict, me: str) -> dict:
    """The accounts (id -> username) whose reserved seat is still open, the asker's own aside."""
    return {s["reserved"]: s.get("invited") or s["reserved"] for s in game["seats"]
            if s.get("kind") == "open" and s.get("reserved") and s["reserved"] != me}


def _waits_for(game: dict, me: str) -> str:
    if game["status"] != "open":
        return {"active": "nobody: it has started", "expired": "nobody: it expired"}.get(
            game["status"], f"nobody: it is {game['status']}")
    who = list(_pending(game, me).values())
    free = sum(1 for s in game["seats"] if s.get("kind") == "open" and not s.get("reserved"))
    if free:
        who.append(f"{free} open seat{'s' if free != 1 else ''} (anyone may take {'them' if free != 1 else 'it'})")
    return ", ".join(who) or "nobody"


def _expires(ms) -> str:
    import time

    if not ms:
        return "-"
    left = int(ms / 1000 - time.time())
    if left <= 0:
        return f"{_when(ms)} (past)"
    return f"{_when(ms)} (in {left} s)" if left < 120 else f"{_when(ms)} (in {_minutes(left)})"


def _asker(game: dict) -> str | None:
    platform = game.get("platform_options") or {}
    return platform.get("challenger") or platform.get("rematch_by")


def _name_of(game: dict, account: str | None) -> str:
    for seat in game["seats"]:
        if account and seat.get("account") == account:
            return seat.get("name") or account
        if account and seat.get("reserved") == account:
            return seat.get("invited") or account
    return account or "someone"


def _show_game(game: dict, me: dict, heading: str) -> None:
    platform = game.get("platform_options") or {}
    rated = (f", rated, {platform['turn_timeout']:g} s a turn" if platform.get("rated") else
             (f", {platform['turn_timeout']:g} s a turn" if platform.get("turn_timeout") else ""))
    print(f"{heading}: game {game['game_id']} ({game['type']}{rated}), {game['status']}")
    print(f"  seats: {', '.join(_seat_words(game, me['id']))}")
    print(f"  waiting for: {_waits_for(game, me['id'])}")
    if game["status"] == "open" and platform.get("expires_at"):
        print(f"  expires {_expires(platform['expires_at'])}")


def _expired_line(game: dict, notice: dict | None) -> str:
    reason = (notice or {}).get("reason") or "expired"
    by = _name_of(game, (notice or {}).get("by")) if (notice or {}).get("by") else None
    what = "challenge" if (game.get("platform_options") or {}).get("challenger") else "rematch"
    if reason == "declined":
        return f"{by or 'an invited account'} declined the {what}: game {game['game_id']} expired and never starts"
    if reason == "cancelled":
        return f"the {what} was cancelled{f' by {by}' if by else ''}: game {game['game_id']} expired and never starts"
    return f"the {what} expired before every invitation was accepted: game {game['game_id']} never starts"


def _await_accepted(client: Client, me: dict, game: dict, after: int) -> dict:
    """Wait on the account's stream (read after `after`) until every seat reserved for another
    account is taken; exits 1 when the game expires (declined, cancelled, too late). Returns the
    game's summary."""
    import time

    game_id, waiting = game["game_id"], _pending(game, me["id"])
    if game["status"] == "expired":
        _fail(_expired_line(game, None), EXIT_FAILED)
    if game["status"] != "open" or not waiting:
        return game
    print(f"waiting for {', '.join(waiting.values())} to accept... (Ctrl-C stops waiting; the invitation stays open)")
    sys.stdout.flush()
    checked = said = time.monotonic()
    for notice in _account_events(client, after):
        now = time.monotonic()
        if notice is not None and notice.get("game_id") == game_id:
            if notice["type"] == "invitation.accepted" and notice.get("by") in waiting:
                print(f"{waiting.pop(notice['by'])} accepted")
                sys.stdout.flush()
            elif notice["type"] == "invitation.expired":
                _fail(_expired_line(client.get(f"/v1/games/{game_id}"), notice), EXIT_FAILED)
            elif notice["type"] == "game.started":
                waiting = {}
            if not waiting:
                return client.get(f"/v1/games/{game_id}")
        if now - checked >= CHECK_EVERY:   # what a notice would have said, in case of a cut
            checked = now
            game = client.get(f"/v1/games/{game_id}")
            if game["status"] == "expired":
                continue   # its notice, with the reason, is on the stream
            waiting = {a: n for a, n in waiting.items() if a in _pending(game, me["id"])}
            if game["status"] != "open" or not waiting:
                return game
        if now - said >= SAY_EVERY:
            said = now
            print(f"still waiting for {', '.join(waiting.values())}...")
            sys.stdout.flush()
    raise AssertionError("unreachable")


def _play_here(client: Client, game_id: str) -> None:
    from service.terminal import play_online

    try:
        summary = play_online(client, game_id)
    except (KeyboardInterrupt, EOFError):
        _fail(f"\nleft the table; the game goes on: speculation play --game {game_id} --api {client.api}",
              EXIT_FAILED)
    if summary.get("status") in ("expired", "abandoned"):
        raise SystemExit(EXIT_FAILED)


def _rated_needs_clock(rated: bool, clock) -> None:
    if rated and not clock:
        raise click.UsageError("--rated needs --clock SECONDS (a rated game has a turn clock)")


def _json_or_play(as_json: bool, play: bool) -> None:
    if as_json and play:
        raise click.UsageError("--json and --play: choose one")


@cli.command()
@click.argument("names", nargs=-1, required=True, metavar="NAME...")
@click.option("--type", "game_type", required=True, metavar="TYPE", help="the game type (see /v1/game-types)")
@click.option("--bots", type=click.IntRange(min=0), default=0, show_default=True, help="bot seats")
@click.option("--level", default="heuristic", show_default=True, help=LEVEL_HELP)
@click.option("--open", "open_seats", type=click.IntRange(min=0), default=0, show_default=True,
              help="seats open to anyone")
@click.option("--options", help='the game\'s options as JSON, e.g. \'{"deals": 2}\'')
@click.option("--rated", is_flag=True, help="a rated game (needs --clock)")
@click.option("--clock", type=click.FloatRange(1, 86400), metavar="SECONDS", help="seconds a seat may take a turn")
@click.option("--expires", type=click.FloatRange(10, 7 * 86400), metavar="SECONDS",
              help="seconds the invitations wait  [default: 600]")
@click.option("--play", is_flag=True, help="wait until every invitation is accepted, then play here")
@API_OPTION
@TOKEN_OPTION
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def challenge(names, game_type, bots, level, open_seats, options, rated, clock, expires, play, api, token,
              as_json) -> None:
    """Challenge accounts by NAME to a game of TYPE: seats for you, each NAME (reserved for it),
    --bots bots and --open open seats, in that order. Each is told on its stream and accepts or
    declines (`speculation invitations`); you may `speculation cancel GAME`. With --play, waits
    until all accept and plays the game here (exit 1 if one declines or it expires)."""
    _json_or_play(as_json, play)
    _rated_needs_clock(rated, clock)
    try:
        parsed = json.loads(options) if options else {}
    except ValueError as err:
        raise click.BadParameter(f"not JSON: {err}", param_hint="--options")
    seats = [{"me": True}] + [{"account": n} for n in names] + [{"bot": level}] * bots + [{}] * open_seats
    body = {"type": game_type, "options": parsed, "seats": seats, "rated": rated,
            **({"turn_timeout": clock} if clock else {}), **({"expires_in": expires} if expires else {})}
    client = _account_client(api, token)
    try:
        me = client.get("/v1/account")
        after = _stream_end(client) if play else 0
        game = _call(client, "POST", "/v1/challenges", body, seats=seats)
        if as_json:
            _print(game)
            return
        _show_game(game, me, "challenge sent")
        if not play:
            print(f"speculation cancel {game['game_id']} withdraws it")
            return
        try:
            game = _await_accepted(client, me, game, after)
        except KeyboardInterrupt:
            _fail(f"\nstopped waiting; the challenge stays open: speculation cancel {game['game_id']} withdraws it",
                  EXIT_FAILED)
        _play_here(client, game["game_id"])
    finally:
        client.close()


def _open_invitations(client: Client, me: dict) -> tuple[list[dict], list[dict]]:
    """(incoming, outgoing): the open games with a seat reserved for this account that it has not
    taken, and the open challenges and rematches it asked for (summaries, newest first)."""
    incoming, outgoing, offset = [], [], 0
    while offset < 1000:
        page = client.get("/v1/account/games", {"status": "active", "limit": 100, "offset": offset})
        for row in page["games"]:
            if row["status"] != "open":
                continue
            game = client.get(f"/v1/games/{row['game_id']}")
            asker = _asker(game)
            if game["status"] != "open" or not asker or not (game.get("platform_options") or {}).get("expires_at"):
                continue
            kind = "challenge" if (game.get("platform_options") or {}).get("challenger") else "rematch"
            entry = {**game, "kind": kind, "from": _name_of(game, asker)}
            if asker == me["id"]:
                outgoing.append(entry)
            elif any(s.get("reserved") == me["id"] and s.get("kind") == "open" for s in game["seats"]):
                incoming.append(entry)
        offset += len(page["games"])
        if not page["games"] or offset >= page["total"]:
            break
    return incoming, outgoing


@cli.command()
@API_OPTION
@TOKEN_OPTION
@click.option("--json", "as_json", is_flag=True, help='JSON, for machines: {"incoming": [...], "outgoing": [...]} '
                                                       "(game summaries with kind and from)")
def invitations(api, token, as_json) -> None:
    """Your open invitations: challenges and rematches to you (incoming: `speculation accept
    GAME` or `decline GAME`) and those you sent that still wait (outgoing: `cancel GAME`)."""
    client = _account_client(api, token)
    try:
        me = client.get("/v1/account")
        incoming, outgoing = _open_invitations(client, me)
    finally:
        client.close()
    if as_json:
        _print({"incoming": incoming, "outgoing": outgoing})
        return

    def rated(game):
        platform = game.get("platform_options") or {}
        return "rated" if platform.get("rated") else "-"

    if incoming:
        print("to you:")
        rows = [("GAME", "TYPE", "KIND", "FROM", "RATED", "SEATS", "EXPIRES")]
        rows += [(g["game_id"], g["type"], g["kind"], g["from"], rated(g), ", ".join(_seat_words(g, me["id"])),
                  _expires(g["platform_options"].get("expires_at"))) for g in incoming]
        for line in _table(rows):
            print("  " + line)
        print("  speculation accept GAME [--play] takes your seat; speculation decline GAME refuses")
    if outgoing:
        print(("\n" if incoming else "") + "from you:")
        rows = [("GAME", "TYPE", "KIND", "RATED", "WAITING FOR", "EXPIRES")]
        rows += [(g["game_id"], g["type"], g["kind"], rated(g), _waits_for(g, me["id"]),
                  _expires(g["platform_options"].get("expires_at"))) for g in outgoing]
        for line in _table(rows):
            print("  " + line)
        print("  speculation cancel GAME withdraws one")
    if not incoming and not outgoing:
        print("no open invitations")
    else:
        print(f"{len(incoming)} to you, {len(outgoing)} from you")


@cli.command()
@click.argument("game")
@click.option("--play", is_flag=True, help="then play the game here (it starts once every seat is taken)")
@API_OPTION
@TOKEN_OPTION
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def accept(game, play, api, token, as_json) -> None:
    """Accept a challenge or a rematch: take the seat reserved for you in GAME."""
    _json_or_play(as_json, play)
    client = _account_client(api, token)
    try:
        me = client.get("/v1/account")
        summary = _call(client, "POST", f"/v1/challenges/{game}/accept")
        if as_json:
            _print(summary)
            return
        _show_game(summary, me, "accepted")
        if play:
            _play_here(client, summary["game_id"])
        elif summary["status"] == "active":
            print(f"speculation play --game {summary['game_id']} --api {client.api} plays it")
    finally:
        client.close()


def _end_invitation(action: str, game: str, api, token, as_json) -> None:
    client = _account_client(api, token)
    try:
        me = client.get("/v1/account")
        summary = _call(client, "POST", f"/v1/challenges/{game}/{action}")
    finally:
        client.close()
    if as_json:
        _print(summary)
        return
    asker = _asker(summary)
    what = "challenge" if (summary.get("platform_options") or {}).get("challenger") else "rematch"
    whose = "your" if asker == me["id"] else f"{_name_of(summary, asker)}'s"
    done = "declined" if action == "decline" else "cancelled"
    print(f"{done} {whose} {what}: game {summary['game_id']} ({summary['type']}) is {summary['status']} "
          "and never starts")


@cli.command()
@click.argument("game")
@API_OPTION
@TOKEN_OPTION
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def decline(game, api, token, as_json) -> None:
    """Decline a challenge or a rematch to you: GAME expires and never starts (everyone is told)."""
    _end_invitation("decline", game, api, token, as_json)


@cli.command()
@click.argument("game")
@API_OPTION
@TOKEN_OPTION
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def cancel(game, api, token, as_json) -> None:
    """Cancel a challenge or a rematch you asked for: GAME expires and never starts."""
    _end_invitation("cancel", game, api, token, as_json)


def _answer_or_nothing(prompt: str) -> str:
    """A line typed (or piped) in answer to `prompt`; "" at the end of the input."""
    try:
        return input(prompt)
    except EOFError:
        return ""


@cli.command()
@click.argument("game")
@click.option("--seat", type=click.IntRange(min=0), help="which of your seats, when you hold several of GAME")
@click.option("--yes", is_flag=True, help="leave without asking first")
@API_OPTION
@TOKEN_OPTION
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def leave(game, seat, yes, api, token, as_json) -> None:
    """Leave GAME, as your account: a bot of the game's leave level takes your seat over and
    plays it to the end, and you cannot come back to it (asked first, unless --yes). The
    leave's signed receipt is kept with the others."""
    import uuid

    from service.terminal import confirm_leave, keep_receipt

    client = _account_client(api, token)
    try:
        if not yes:
            found = _call(client, "GET", f"/v1/games/{game}")
            level = (found.get("platform_options") or {}).get("leave_level") or "heuristic"
            if not confirm_leave(level, read=_answer_or_nothing):
                return
        client.http.headers["Idempotency-Key"] = f"cli-{uuid.uuid4().hex}"
        left = _call(client, "POST", f"/v1/games/{game}/leave", {"seat": seat} if seat is not None else {})
    finally:
        client.close()
    keep_receipt(left)
    if as_json:
        _print(left)
        return
    print(f"you left game {game}: a {left['level']} bot plays seat {left['seat']} to the end, and you cannot "
          f"come back to it (`speculation view {game} --follow` watches it)")


@cli.command()
@click.argument("game")
@click.option("--expires", type=click.FloatRange(10, 7 * 86400), metavar="SECONDS",
              help="seconds the others have to accept  [default: 600]")
@click.option("--play", is_flag=True, help="wait until the others accept, then play the game here")
@API_OPTION
@TOKEN_OPTION
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def rematch(game, expires, play, api, token, as_json) -> None:
    """Ask for a rematch of a finished GAME you played: the same table again, seats rotated by
    one, your seat taken and the other accounts invited (a seat that asked too lands on the
    same new game). With --play, waits until they accept and plays it here."""
    _json_or_play(as_json, play)
    client = _account_client(api, token)
    try:
        me = client.get("/v1/account")
        after = _stream_end(client) if play else 0
        summary = _call(client, "POST", f"/v1/games/{game}/rematch", {"expires_in": expires} if expires else {})
        if as_json:
            _print(summary)
            return
        _show_game(summary, me, f"rematch of {game}")
        if not play:
            if summary["status"] == "open" and _pending(summary, me["id"]):
                print(f"speculation cancel {summary['game_id']} withdraws it")
            elif summary["status"] == "active":
                print(f"speculation play --game {summary['game_id']} --api {client.api} plays it")
            return
        try:
            summary = _await_accepted(client, me, summary, after)
        except KeyboardInterrupt:
            _fail(f"\nstopped waiting; the rematch stays open: speculation cancel {summary['game_id']} withdraws it",
                  EXIT_FAILED)
        _play_here(client, summary["game_id"])
    finally:
        client.close()


def _await_match(client: Client, seek: dict, after: int, say) -> tuple[str, int | None]:
    """Wait on the account's stream (which keeps the seek alive) for the seek's `seek.matched`:
    (game id, seat). Exits 1 when the seek ends unmatched."""
    import time

    if seek["status"] == "matched":
        return seek["game_id"], None
    started = checked = said = time.monotonic()
    say("waiting... (Ctrl-C cancels the seek)")
    for notice in _account_events(client, after):
        now = time.monotonic()
        if notice is not None and notice.get("type") == "seek.matched" and notice.get("seek_id") == seek["seek_id"]:
            return notice["game_id"], notice.get("seat")
        if now - checked >= CHECK_EVERY:   # a seek can end without a notice (cancelled elsewhere)
            checked = now
            found = next((s for s in client.get("/v1/seeks")["seeks"] if s["seek_id"] == seek["seek_id"]), None)
            if found is None:
                _fail(f"the seek {seek['seek_id']} ended unmatched (cancelled)", EXIT_FAILED)
            if found["status"] == "matched" and found.get("game_id"):
                return found["game_id"], None
        if now - said >= SAY_EVERY:
            said = now
            say(f"waiting... {int(now - started)} s")
    raise AssertionError("unreachable")


def _cancel_seek(client: Client, seek_id: str) -> None:
    response = client.request("DELETE", f"/v1/seeks/{seek_id}")
    if response.status_code not in (204, 404):
        client.fail(response)
    found = next((s for s in client.get("/v1/seeks")["seeks"] if s["seek_id"] == seek_id), None)
    if found is not None and found["status"] == "matched":
        _fail(f"\nthe seek had found a game already: {found.get('game_id')}; speculation play --game "
              f"{found.get('game_id')} --api {client.api} plays it", EXIT_FAILED)
    _fail(f"\nseek {seek_id} cancelled", EXIT_FAILED)


@cli.command()
@click.argument("game_type", metavar="TYPE")
@click.option("--players", type=click.IntRange(2, 16), required=True, help="seats at the table, yours included")
@click.option("--rated", is_flag=True, help="a rated game (needs --clock)")
@click.option("--clock", type=click.FloatRange(1, 86400), metavar="SECONDS", help="seconds a seat may take a turn")
@click.option("--bots-after", "bots_after", type=click.FloatRange(0, 3600), metavar="SECONDS",
              help="complete the table with heuristic bots after this long  [default: wait for people]")
@click.option("--min", "low", type=float, metavar="RATING", help="meet only accounts rated at least this")
@click.option("--max", "high", type=float, metavar="RATING", help="meet only accounts rated at most this")
@click.option("--play", is_flag=True, help="play the game here once it is found")
@API_OPTION
@TOKEN_OPTION
@click.option("--json", "as_json", is_flag=True, help='JSON, for machines: {"seek": ..., "game": ...} once matched')
def seek(game_type, players, rated, clock, bots_after, low, high, play, api, token, as_json) -> None:
    """Find a game of TYPE for --players players: first come, within the rating range, with
    bots after --bots-after seconds if given. Waits until a table is formed (the seek lives
    while this command waits; Ctrl-C cancels it), prints the game, and with --play plays it."""
    _json_or_play(as_json, play)
    _rated_needs_clock(rated, clock)
    if low is not None and high is not None and low > high:
        raise click.UsageError("--min is above --max")
    body = {"type": game_type, "players": players, "rated": rated,
            **({"turn_timeout": clock} if clock else {}),
            **({"bots_after": bots_after} if bots_after is not None else {}),
            **({"rating_range": {"min": low, "max": high}} if low is not None or high is not None else {})}

    def say(line: str) -> None:
        click.echo(line, err=as_json)
        sys.stdout.flush()

    client = _account_client(api, token)
    try:
        me = client.get("/v1/account")
        after = _stream_end(client)
        opened = _call(client, "POST", "/v1/seeks", body)
        try:
            say(f"seeking a game of {game_type} for {players} players" + (", rated" if rated else "")
                + f" (seek {opened['seek_id']}, your rating {round(opened['rating'])})")
            game_id, _seat = _await_match(client, opened, after, say)
        except KeyboardInterrupt:
            _cancel_seek(client, opened["seek_id"])
        game = client.get(f"/v1/games/{game_id}")
        if as_json:
            _print({"seek": {**opened, "status": "matched", "game_id": game_id}, "game": game})
            return
        _show_game(game, me, "found")
        if play:
            _play_here(client, game_id)
        else:
            print(f"speculation play --game {game_id} --api {client.api} plays it")
    finally:
        client.close()


@cli.command()
@click.option("--challenges", type=click.Choice(["anyone", "none"]),
              help="who may challenge you (without it: show the preferences)")
@API_OPTION
@TOKEN_OPTION
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def preferences(challenges, api, token, as_json) -> None:
    """Your account's preferences: who may challenge you (anyone, or none: every challenge to
    you is refused)."""
    client = _account_client(api, token)
    try:
        if challenges:
            found = _call(client, "PUT", "/v1/account/preferences", {"challenges": challenges})
        else:
            found = client.get("/v1/account/preferences")
    finally:
        client.close()
    if as_json:
        _print(found)
        return
    print(f"challenges: {found['challenges']} ("
          + ("any account may challenge you" if found["challenges"] == "anyone" else
             "nobody may challenge you: every challenge to you is refused") + ")")


# --- the signing keys (docs/audit.md; docs/operations.md, "The signing key") -----------------

def _key_file(data, path) -> str:
    """--file, else DATA/audit-keys.json (--data), else SPECULATION_AUDIT_KEY_FILE, else the
    stack's own: SPECULATION_DATA_DIR (./var)/audit-keys.json."""
    from service.config import from_env
    from service.stack import KEY_FILE_NAME

    if path and data:
        raise click.UsageError("give --data or --file, not both")
    if path:
        return path
    if data:
        return os.path.join(data, KEY_FILE_NAME)
    config = from_env()
    return config.get("AUDIT_KEY_FILE") or os.path.join(config["DATA_DIR"], KEY_FILE_NAME)


KEY_FILE_OPTIONS = [
    click.option("--data", type=click.Path(file_okay=False), help="the stack's data folder: its audit-keys.json"),
    click.option("--file", "path", type=click.Path(dir_okay=False), metavar="PATH", help="the key file itself"),
]


def _key_file_options(command):
    for option in reversed(KEY_FILE_OPTIONS):
        command = option(command)
    return command


def _print_keys(keys: list[dict]) -> None:
    import time
    from datetime import datetime, timezone

    def when(ms):
        return "-" if ms is None else datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")

    now = int(time.time() * 1000)
    for key in keys:
        state = "ended" if key["valid_until"] is not None and key["valid_until"] < now else \
            "next" if key["valid_from"] > now else "current" if key["valid_until"] is None else "ending"
        click.echo(f"{key['key_id']}  {key['algorithm']}  {key['public_key']}  from {when(key['valid_from'])}"
                   f"  until {when(key['valid_until'])}  ({state})")


@cli.group()
def keys() -> None:
    """The service's Ed25519 signing keys (its key file; run where the service runs)."""


@keys.command("show")
@_key_file_options
@click.option("--json", "as_json", is_flag=True, help="GET /v1/keys's JSON: {\"keys\": [...]}")
def keys_show(data, path, as_json) -> None:
    """The public keys of the key file, newest first (what GET /v1/keys lists)."""
    from events.signing import Keyring

    path = _key_file(data, path)
    try:
        listed = Keyring.load(path).public_keys()
    except FileNotFoundError:
        _fail(f"{path}: no key file (the service makes one on its first start)", EXIT_USAGE)
    except (OSError, ValueError, KeyError) as why:
        _fail(f"{path}: not a usable key file: {why}", EXIT_FAILED)
    if as_json:
        _print({"keys": listed})
    else:
        _print_keys(listed)


@keys.command("rotate")
@_key_file_options
def keys_rotate(data, path) -> None:
    """End the current signing key and start a new one (in 5 s, once every running process
    has read the file again). Ended keys stay in the file and in GET /v1/keys, so what they
    signed still verifies. Back the file up again afterwards."""
    from service.audit.keys import ROTATION_DELAY_MS, rotate_key_file

    path = _key_file(data, path)
    try:
        keyring = rotate_key_file(path)
    except FileNotFoundError:
        _fail(f"{path}: no key file to rotate (the service makes one on its first start)", EXIT_USAGE)
    except (OSError, ValueError, KeyError) as why:
        _fail(f"{path}: not a usable key file: {why}", EXIT_FAILED)
    ended = keyring.keys[-2]
    click.echo(f"{path}: key {keyring.current.key_id} takes over in {ROTATION_DELAY_MS // 1000} s, when "
               f"{ended.key_id} ends", err=True)
    _print_keys(keyring.public_keys()[:2])


# --- the table chat: read and say (clients of the API), remove (the operator's, on the store) -----
@cli.group()
def chat() -> None:
    """A game's table chat: show it, say something, and the operator's removal of a message."""


def _chat_client(api: str, token) -> "Client":
    """As --token / SPECULATION_TOKEN (a seat's or an account's), else the account `login`
    stored for this API, else nobody (a spectator)."""
    from service.client_config import CredentialsError, stored

    if token:
        return Client(api, token)
    try:
        entry = stored(api)
    except CredentialsError as err:
        _fail(str(err), EXIT_FAILED)
    return Client(api, entry["token"], stored=True) if entry else Client(api)


CHAT_TOKEN_OPTION = click.option("--token", envvar="SPECULATION_TOKEN", metavar="TOKEN",
                                 help="a seat token or an account token (else the account `login` stored, else a "
                                      "spectator)  [default: SPECULATION_TOKEN]")


@chat.command("show")
@click.argument("game")
@API_OPTION
@CHAT_TOKEN_OPTION
@click.option("--seat", type=click.IntRange(min=0), help="which of the account's seats, when it holds several")
@click.option("--follow", is_flag=True, help="print new lines as they come (every 2 s), until Ctrl-C")
@click.option("--json", "as_json", is_flag=True, help="the API's JSON, for machines")
def chat_show(game, api, token, seat, follow, as_json) -> None:
    """The game's chat as this reader may read it: the players' channel with a seat's token
    (or the account's seat), or once the game is over; the spectators' always."""
    import time

    from service.terminal_chat import ChatLines, line

    client = _chat_client(api, token)
    params = {"seat": seat} if seat is not None else {}
    try:
        if as_json:
            _print(client.get(f"/v1/games/{game}/chat", params))
            return
        lines = ChatLines(client.get, game, params=params)
        items = lines.fresh()          # an error answer exits 3 (Client.get)
        if not items and not follow:
            print("  (nothing said yet)")
        while True:
            for item in items:
                print(line(item), flush=True)
            if not follow:
                return
            time.sleep(2.0)
            items = lines.fresh()
    except KeyboardInterrupt:
        pass
    finally:
        client.close()


@chat.command("say")
@click.argument("game")
@click.argument("text", required=False)
@API_OPTION
@CHAT_TOKEN_OPTION
@click.option("--preset", type=click.Choice(["good-luck", "well-played", "thanks", "oops", "your-move"]),
              help="a preset message instead of TEXT")
@click.option("--channel", type=click.Choice(["players", "spectators"]), default="players", show_default=True,
              help="players: as your seat; spectators: as your account")
@click.option("--seat", type=click.IntRange(min=0), help="which of the account's seats, when it holds several")
def chat_say(game, text, api, token, preset, channel, seat) -> None:
    """Say TEXT (or --preset ID) at the table: in the players' channel as your seat (a seat
    token, or the account holding the seat), in the spectators' as your account."""
    from service.terminal_chat import ChatLines, line

    if (text is None) == (preset is None):
        raise click.UsageError("give TEXT or --preset, one of them")
    client = _chat_client(api, token)
    try:
        status, said = ChatLines(client.get, game, client.post, {"seat": seat} if seat is not None else {}).say(
            preset, text, channel)
        if status != 201:
            client.fail(_Answer(status, said))
        print(line(said).strip())
    finally:
        client.close()


class _Answer:
    """An answer already read, in the shape Client.fail reads."""

    def __init__(self, status: int, body: dict):
        self.status_code, self._body, self.text, self.headers = status, body, json.dumps(body), {}

    def json(self):
        return self._body


@chat.command("remove")
@click.argument("game")
@click.argument("message", type=click.IntRange(min=1), metavar="MESSAGE_ID")
@click.option("--reason", default="", help="why (shown with the removal, at most 200 characters)")
def chat_remove(game, message, reason) -> None:
    """The operator's removal of chat message MESSAGE_ID of GAME (on the game store, REDIS_URL
    or REDIS_CLUSTER_NODES): a removal entry is appended, the message is shown without its text from then
    on (it stays in the log, the removal with it). Prints the removal as JSON."""
    from service.core.errors import CoreError

    core = _operator_core("chat remove")
    try:
        _print(core.chat.remove(game, message, reason))
    except CoreError as err:
        _fail(f"speculation chat remove: {err.message}", EXIT_FAILED)



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
