"""Failover drill (issue 45, item 5): a soak of many games on a loopback Redis Cluster while
its primaries are killed with -9, one after another.

The real processes: two API processes (gunicorn with the shipped configuration, one worker
each, on two ports: two masters that share nothing but the cluster) and two `speculation
worker`s, on a cluster of 3 primaries with one replica each (valkey, `ops/drills/redis_cluster.py`,
node timeout 1.5 s); RQ on a private redis-server of its own (RQ does not run on a cluster).
Client threads play games back to back over HTTP, each game on one of the two APIs in turn,
at three kinds of tables in turn (`TABLES`): three people played by one scripted client
(random legal actions), one such person and two random bots, three bots. Every create, claim and action carries an Idempotency-Key and is sent again with the
same key and body until it is answered below 500 (a 503 while a shard has no primary, or
while its replica has not confirmed the write, included).

Meanwhile, `--failovers` times: the primary that serves the most games in play (or with
`--round-robin` each slot range's primary in turn) is killed with -9; the drill waits until its replica serves its slots, starts the killed node again
(it rejoins as the new primary's replica) and waits until the cluster is whole before the
next kill. Then the clients finish their games and the drill reads everything back.

Counted: acknowledged actions lost (each 2xx receipt checked against the log read back:
its command at `first_version`, its `head` at `version`), acknowledged games lost (a 201
whose game is gone), claimed seats whose token no longer works, the time from each kill to
the promotion and to the first action appended and acknowledged in the killed node's slots,
games that finish (scored) and games that verify (`GET /v1/games/{id}/verify` on the API,
with the person's receipts). Run with `--ack-replicas 1` (`REDIS_ACK_REPLICAS`: an append is
answered once a replica confirms it) the drill must lose nothing; with `--ack-replicas 0` the
losses are reported as measured.

The nodes run without AOF unless `--aof` (appendfsync always). Either way the store waits with
WAIT: what keeps an acknowledged action through a failover is the replica holding it, which
WAIT confirms (WAITAOF, which the store uses only when built with `ack_aof`, took about a second
per append on the loopback cluster: docs/reliability.md).

    python -m ops.drills.cluster_failover --failovers 3 --short --ack-replicas 1
    python -m ops.drills.cluster_failover --failovers 3 --short --ack-replicas 0
    python -m ops.drills.cluster_failover --failovers 6 --short --round-robin   # each shard in turn
    make failover-drill          # the first two, the full form
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from projections.templates import fill_template

from . import _kit
from .outage import Client, hosted_games
from .proxy import wait_listening
from .redis_cluster import LoopbackCluster
from .redis_server import RedisProcess, free_port


def game_key(game_id: str) -> str:
    """A key of the game's hash tag: every key of a game lives in this one slot (events/keys.py)."""
    from events.keys import stream_prefix

    return stream_prefix(game_id) + ":events"


def slot_of(game_id: str) -> int:
    from redis.crc import key_slot

    return key_slot(game_key(game_id).encode())


@dataclass
class Ledger:
    """What the clients were told, each fact with the moment it was told (time.time())."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    games: list = field(default_factory=list)          # (game_id, with_people)
    tokens: list = field(default_factory=list)         # (game_id, seat, token)
    acknowledged: list = field(default_factory=list)   # (game_id, seat, action, receipt, answered_at)
    errors: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    finished: set = field(default_factory=set)

    def add(self, name: str, item) -> None:
        with self.lock:
            getattr(self, name).append(item)

    def active_games(self) -> list[str]:
        with self.lock:
            return [g for g, _ in self.games if g not in self.finished]


def play_people(client: Client, game_id: str, seats: list[int], rng: random.Random, ledger: Ledger,
                patience: float) -> None:
    """Claim `seats` and play them with random legal actions until the game is over (one
    client for every person of the game: whoever of them is to act moves)."""
    tokens = {}
    for seat in seats:
        status, claim = client.until_answered("POST", f"/v1/games/{game_id}/seats/{seat}", {"name": f"drill{seat}"},
                                              {"Idempotency-Key": uuid.uuid4().hex}, give_up=patience)
        if status != 201:
            ledger.add("errors", f"claim {game_id}/{seat}: {status} {claim}")
            return
        tokens[seat] = claim["token"]
        ledger.add("tokens", (game_id, seat, claim["token"]))
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        moved, version = False, None
        for seat, token in tokens.items():
            auth = {"Authorization": f"Bearer {token}"}
            status, view = client.until_answered("GET", f"/v1/games/{game_id}/view", headers=auth, give_up=patience)
            if status != 200:
                ledger.add("errors", f"view {game_id}: {status} {view}")
                return
            if view["status"] not in ("open", "active"):
                return
            version = view["version"]
            if view["status"] != "active" or seat not in view["to_act"] or not view["legal_actions"]:
                continue
            action = fill_template(rng.choice(view["legal_actions"]), rng)
            body = {"action": action, "expected_version": view["version"]}
            status, answer = client.until_answered("POST", f"/v1/games/{game_id}/actions", body,
                                                   {**auth, "Idempotency-Key": uuid.uuid4().hex}, give_up=patience)
            if status in (200, 201):
                moved = True
                ledger.add("acknowledged", (game_id, seat, action, answer["receipt"], time.time()))
            elif status != 409:   # 409: another seat (a bot) moved first; read the view again
                ledger.add("errors", f"action {game_id}: {status} {answer}")
                return
        if not moved:   # a bot's turn (or the start): wait for the next version
            first = {"Authorization": f"Bearer {next(iter(tokens.values()))}"}
            client.until_answered("GET", f"/v1/games/{game_id}/view?wait=2&after_version={version}", headers=first,
                                  give_up=patience)
    ledger.add("errors", f"{game_id}: the people's game did not end in {patience} s")


# Who sits at a drill's game, in turn: three scripted people (many acknowledged actions, no
# bot jobs), one person and two bots, three bots (only the workers play).
TABLES = ((["person"] * 3), (["person", "bot", "bot"]), (["bot"] * 3))


def wait_over(client: Client, game_id: str, patience: float) -> bool:
    """Long-poll a game's summary until it is scored (or abandoned)."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        status, summary = client.until_answered("GET", f"/v1/games/{game_id}", give_up=patience)
        if status == 200 and summary.get("status") not in ("open", "active"):
            return True
        time.sleep(0.5)
    return False


def client_loop(bases: list[str], index: int, rng: random.Random, ledger: Ledger, stop: threading.Event,
                short: bool, patience: float, games: list[str]) -> None:
    """One client thread: games back to back until told to stop, each on the next API."""
    n = 0
    while not stop.is_set():
        client = Client(bases[(index + n) % len(bases)], ledger.stats, ledger.lock)
        game_type, table = games[(index + n) % len(games)], TABLES[(index + n) % len(TABLES)]
        n += 1
        game_id = None
        seats = [{} if kind == "person" else {"bot": "random"} for kind in table]
        body = {"type": game_type, "options": _kit.short_options(game_type) if short else {}, "seats": seats}
        try:
            status, game = client.until_answered("POST", "/v1/games", body, {"Idempotency-Key": uuid.uuid4().hex},
                                                 give_up=patience)
            if status != 201:
                ledger.add("errors", f"create: {status} {game}")
                continue
            game_id = game["game_id"]
            people = [seat for seat, kind in enumerate(table) if kind == "person"]
            ledger.add("games", (game_id, bool(people)))
            if people:
                play_people(client, game_id, people, rng, ledger, patience)
            if not wait_over(client, game_id, patience):
                ledger.add("errors", f"{game_id}: not over after {patience} s")
        except TimeoutError as err:
            ledger.add("errors", str(err))
        with ledger.lock:
            ledger.finished.add(game_id)


# --- the processes ------------------------------------------------------------------------------

def cluster_env(cluster: LoopbackCluster, rq_url: str, ack_replicas: int, ack_timeout_ms: int) -> dict:
    """The settings of a service on the cluster (service/settings.py): the store on the
    cluster's seed nodes, RQ on its own Redis, the replica acknowledgement."""
    return {"REDIS_URL": "", "SPECULATION_REDIS_CLUSTER_NODES": cluster.seed_nodes, "RQ_REDIS_URL": rq_url,
            "SPECULATION_REDIS_ACK_REPLICAS": str(ack_replicas),
            "SPECULATION_REDIS_ACK_TIMEOUT_MS": str(ack_timeout_ms),
            "SPECULATION_CREATE_LIMIT": "100000/60", "SPECULATION_BOT_GAMES_PER_ADDRESS": "0",
            "SPECULATION_AUDITS_PER_ADDRESS": "8", "SPECULATION_LOG_LEVEL": "WARNING"}


def start_api(env: dict, port: int) -> _kit.ChildProcess:
    env = {**env, "GUNICORN_BIND": f"127.0.0.1:{port}", "GUNICORN_WORKERS": "1"}
    return _kit.ChildProcess([sys.executable, "-m", "gunicorn", "-c", str(_kit.REPO / "ops" / "gunicorn.conf.py"),
                              "service.app:create_app()"], env, name="api")


def _ready(port: int) -> bool:
    """The API's readiness probe answers 200 (its store reachable)."""
    try:
        return Client(f"http://127.0.0.1:{port}", {}, threading.Lock()).call("GET", "/readyz", timeout=2)[0] == 200
    except OSError:
        return False


def start_worker(env: dict) -> _kit.ChildProcess:
    return _kit.ChildProcess([sys.executable, "-m", "service.cli", "worker", "--reconcile-every", "2",
                              "--job-monitoring-interval", "1", "--abandoned-after", "3"], env, name="worker")


# --- the chaos ----------------------------------------------------------------------------------

def busiest_primary(cluster: LoopbackCluster, games: list[str]):
    """The live primary that serves the most of `games` (a node, and how many it serves)."""
    counts: dict[int, int] = {}
    for game_id in games:
        node = cluster.primary_of(game_key(game_id))
        counts[node.port] = counts.get(node.port, 0) + 1
    if not counts:
        node = cluster.primary_of(game_key("probe"))
        return node, 0
    port = max(counts, key=counts.get)
    return next(n for n in cluster.nodes if n.port == port), counts[port]


def served_slots(cluster: LoopbackCluster, port: int) -> set[int]:
    """The slots a node serves as primary now."""
    node = next(n for n in cluster.nodes if n.alive())
    shards = cluster.node_client(node, socket_timeout=2).execute_command("CLUSTER", "SLOTS")
    return {s for start, end, primary, *_ in shards if primary[1] == port for s in range(start, end + 1)}


def shard_primary(cluster: LoopbackCluster, shard: int, games: list[str]):
    """The live primary of the `shard`-th of the cluster's three slot ranges (as `valkey-cli
    --cluster create` splits 16,384 slots), and how many of `games` it serves."""
    low = 16_384 * shard // cluster.primaries
    key = next(k for k in (f"probe-{i}" for i in range(100_000))
               if low <= slot_of(k) < 16_384 * (shard + 1) // cluster.primaries)
    node = cluster.primary_of(game_key(key))
    return node, sum(cluster.primary_of(game_key(g)).port == node.port for g in games)


def fail_over(cluster: LoopbackCluster, ledger: Ledger, shard: Optional[int] = None,
              promote_timeout: float = 30) -> dict:
    """kill -9 of the busiest primary (or, given `shard`, of that slot range's primary), its
    replica's promotion awaited, the node started again and the cluster whole again. Returns
    the kill's figures (times from the kill)."""
    victim, games_there = (busiest_primary(cluster, ledger.active_games()) if shard is None
                           else shard_primary(cluster, shard, ledger.active_games()))
    slots = served_slots(cluster, victim.port)
    probe = next(k for k in (f"probe-{i}" for i in range(100_000)) if slot_of(k) in slots)
    killed_at, started = time.time(), time.monotonic()
    victim.kill()
    promoted = _kit.wait_until(lambda: _safe_port(cluster, game_key(probe)) not in (None, victim.port), promote_timeout, 0.05)
    promoted_s = round(time.monotonic() - started, 2) if promoted else None
    cluster.restart(victim)
    cluster.wait_healthy(60)
    return {"node": victim.port, "games_in_play_there": games_there, "slots": len(slots), "killed_at": killed_at,
            "promoted_s": promoted_s, "whole_again_s": round(time.monotonic() - started, 2), "slot_set": slots}


def _safe_port(cluster: LoopbackCluster, key: str) -> Optional[int]:
    try:
        return cluster.primary_of(key).port
    except Exception:
        return None


def first_acknowledged_after(kill: dict, ledger: Ledger) -> Optional[float]:
    """Seconds from the kill to the first person's action in the killed node's slots that was
    appended after the kill (its receipt's time) and acknowledged."""
    killed_ms = kill["killed_at"] * 1000
    with ledger.lock:
        answered = [at for g, _, _, receipt, at in ledger.acknowledged
                    if receipt["time"] >= killed_ms and slot_of(g) in kill["slot_set"]]
    return round(min(answered) - kill["killed_at"], 2) if answered else None


def first_append_after(kill: dict, service, games: list[str]) -> Optional[float]:
    """Seconds from the kill to the first event appended in the killed node's slots after it,
    by anyone (a person through an API, a bot or a scoring through a worker), from the log."""
    killed_ms = kill["killed_at"] * 1000
    times = [event["at"] for game_id in games if slot_of(game_id) in kill["slot_set"]
             for event in (json.loads(body) for body, _ in service.store.read_raw(game_id))
             if event["at"] >= killed_ms]
    return round(min(times) / 1000 - kill["killed_at"], 2) if times else None


# --- the audit ----------------------------------------------------------------------------------

def audit(service, bases: list[str], ledger: Ledger, stats: dict, lock: threading.Lock) -> dict:
    """Everything the clients were told, checked against what the cluster holds now."""
    games = [g for g, _ in ledger.games]
    lost = duplicated = games_lost = 0
    lost_detail = []
    by_game: dict[str, list] = {}
    for game_id, seat, action, receipt, _ in ledger.acknowledged:
        by_game.setdefault(game_id, []).append((seat, action, receipt))
    statuses = {}
    for game_id in games:
        raw = service.store.read_raw(game_id)
        if not raw:
            games_lost += 1
            continue
        by_version = {}
        for body, hash_ in raw:
            decoded = json.loads(body)
            by_version[decoded["v"]] = (decoded, hash_)
        mine = by_game.get(game_id, [])
        firsts = [receipt["first_version"] for _, _, receipt in mine]
        duplicated += len(firsts) - len(set(firsts))
        for seat, action, receipt in mine:
            stored = by_version.get(receipt["first_version"])
            command = (stored[0].get("c") or {}) if stored else {}
            at_head = by_version.get(receipt["version"])
            if command.get("seat") != seat or command.get("action") != action or at_head is None \
                    or _hex_head(at_head[1]) != receipt["head"]:
                lost += 1
                lost_detail.append({"game": game_id, "version": receipt["version"], "stored": at_head is not None})
        players = [v for v, (d, _) in by_version.items() if (d.get("c") or {}).get("by") == "player"]
        duplicated += len(set(players) - set(firsts))
        statuses[game_id] = service.load(game_id).status
    unheld = 0
    for game_id, seat, token in ledger.tokens:
        try:
            unheld += service.authenticate(game_id, token) != seat
        except Exception:
            unheld += 1
    verified, unverified = 0, []
    for n, game_id in enumerate(games):
        receipts = ",".join(f"{r['version']}:{r['head']}" for _, _, r in by_game.get(game_id, [])[-20:])
        path = f"/v1/games/{game_id}/verify" + (f"?receipts={receipts}" if receipts else "")
        status, report = Client(bases[n % len(bases)], stats, lock).until_answered("GET", path, give_up=60)
        if status == 200 and report.get("ok"):
            verified += 1
        else:
            unverified.append((game_id, status, str(report)[:300]))
    return {"games": len(games), "games_lost": games_lost, "acknowledged": len(ledger.acknowledged),
            "lost": lost, "lost_detail": lost_detail[:10], "duplicated": duplicated,
            "finished": sum(s == "scored" for s in statuses.values()), "verified": verified,
            "statuses": dict(Counter(statuses.values())),
            "unverified_detail": unverified[:5], "tokens": len(ledger.tokens), "unheld_seats": unheld}


def _hex_head(value) -> str:
    return value.hex() if isinstance(value, bytes) else value


# --- the drill ----------------------------------------------------------------------------------

def run(failovers: int = 3, clients: int = 8, ack_replicas: int = 1, seed: int = 1, short: bool = False,
        node_timeout_ms: int = 1500, ack_timeout_ms: int = 1000, settle: float = 15.0, warm_up: float = 10.0,
        patience: float = 300.0, durable: bool = False, game_types: Optional[list[str]] = None,
        round_robin: bool = False) -> dict:
    """The soak and its failovers; the figures (and "ok") at the end."""
    rng = random.Random(seed)
    ledger, stop = Ledger(), threading.Event()
    figures: dict = {"failovers_asked": failovers, "clients": clients, "ack_replicas": ack_replicas,
                     "node_timeout_ms": node_timeout_ms, "short_games": short, "aof": durable,
                     "victims": "round-robin" if round_robin else "busiest"}
    cluster = LoopbackCluster(primaries=3, replicas=1, durable=durable, node_timeout_ms=node_timeout_ms).start()
    rq = RedisProcess(durable=True).start()
    env = cluster_env(cluster, rq.url, ack_replicas, ack_timeout_ms)
    ports = [free_port(), free_port()]
    apis = [start_api(env, port) for port in ports]
    workers = [start_worker(env) for _ in range(2)]
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    threads: list[threading.Thread] = []
    kills: list[dict] = []
    began = time.monotonic()
    phases = figures["phases_s"] = {}
    try:
        for api, port in zip(apis, ports):
            if not (wait_listening(port, 60) and _kit.wait_until(lambda: _ready(port), 60, 0.2)):
                raise RuntimeError("an API did not start: " + api.output()[-3000:])
        phases["started"] = round(time.monotonic() - began, 1)
        for k in range(clients):
            thread = threading.Thread(target=client_loop, daemon=True,
                                      args=(bases, k, random.Random(rng.getrandbits(64)), ledger, stop, short, patience,
                                            game_types or hosted_games()))
            thread.start()
            threads.append(thread)
        time.sleep(warm_up)
        for k in range(failovers):
            kills.append(fail_over(cluster, ledger, k % cluster.primaries if round_robin else None))
            time.sleep(settle)
        stop.set()
        phases["failovers_done"] = round(time.monotonic() - began, 1)
        for thread in threads:
            thread.join(patience + 60)
        phases["games_over"] = round(time.monotonic() - began, 1)
        figures["clients_finished"] = sum(not t.is_alive() for t in threads)
        service = _kit.make_service(cluster.client(socket_timeout=5))
        for kill in kills:
            kill["first_append_s"] = first_append_after(kill, service, [g for g, _ in ledger.games])
            kill["first_acknowledged_s"] = first_acknowledged_after(kill, ledger)
        figures.update(audit(service, bases, ledger, ledger.stats, ledger.lock))
        figures["processes_alive"] = sum(p.alive() for p in apis + workers)
        phases["audited"] = round(time.monotonic() - began, 1)
        figures["dead_process_output"] = [p.output()[-1500:] for p in apis + workers if not p.alive()][:2]
    finally:
        stop.set()
        for process in workers + apis:
            process.stop()
        rq.stop()
        cluster.stop()
    figures.update(kills=[{k: v for k, v in kill.items() if k not in ("killed_at", "slot_set")} for kill in kills],
                   failovers=sum(k["promoted_s"] is not None for k in kills), retried=ledger.stats,
                   errors=ledger.errors[:10], error_count=len(ledger.errors))
    # Without the replica acknowledgement a loss is what is measured, not a failure: the drill
    # then judges only that the failovers happened and every game was played to its end.
    lossless = ack_replicas == 0 or (
        figures.get("lost", 1) == 0 and figures.get("games_lost", 1) == 0 and figures.get("unheld_seats", 1) == 0
        and figures.get("verified") == figures.get("games"))
    figures["ok"] = (lossless and figures["failovers"] == failovers and figures.get("duplicated", 1) == 0
                     and figures.get("games", 0) > 0 and figures.get("finished") == figures.get("games")
                     and all(k.get("first_append_s") is not None for k in kills if k["games_in_play_there"])
                     and figures.get("clients_finished") == clients and not ledger.errors)
    return figures


def summary(fig: dict) -> str:
    kills = fig.get("kills", [])
    promoted = [k["promoted_s"] for k in kills if k["promoted_s"] is not None]
    appended = [k["first_append_s"] for k in kills if k.get("first_append_s") is not None]
    acknowledged = [k["first_acknowledged_s"] for k in kills if k.get("first_acknowledged_s") is not None]
    span = (lambda xs: f"{min(xs)}-{max(xs)} s" if xs else "none")
    return (f"REDIS_ACK_REPLICAS={fig['ack_replicas']}: {fig['failovers']} failovers (promoted {span(promoted)}, "
            f"first append after the kill {span(appended)}, first person's action acknowledged "
            f"{span(acknowledged)}); {fig.get('games')} games, "
            f"{fig.get('acknowledged')} actions acknowledged: {fig.get('lost')} lost, {fig.get('duplicated')} "
            f"duplicated, {fig.get('games_lost')} games lost, {fig.get('unheld_seats')} seats without a working "
            f"token; {fig.get('finished')} finished, {fig.get('verified')} verified ({fig['seconds']} s)")


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 3, "unused (see --failovers)")
    p.add_argument("--failovers", type=int, default=3, help="primaries killed, one after another")
    p.add_argument("--clients", type=int, default=8, help="client threads, each playing games back to back")
    p.add_argument("--ack-replicas", type=int, default=1, help="REDIS_ACK_REPLICAS of the API and workers")
    p.add_argument("--node-timeout-ms", type=int, default=1500, help="cluster-node-timeout")
    p.add_argument("--settle", type=float, default=15.0, help="seconds of play between the cluster whole and the next kill")
    p.add_argument("--short", action="store_true", help="the shortest games the options allow")
    p.add_argument("--aof", action="store_true", help="cluster nodes with AOF (appendfsync always); "
                   "the store still acknowledges with WAIT")
    p.add_argument("--round-robin", action="store_true", help="kill each slot range's primary in turn "
                   "(default: the primary serving the most games in play)")
    args = p.parse_args(argv)
    _kit.conclude("cluster_failover", args, lambda: run(args.failovers, args.clients, args.ack_replicas, args.seed,
                                                        args.short, args.node_timeout_ms, settle=args.settle,
                                                        durable=args.aof, round_robin=args.round_robin),
                  summary)


if __name__ == "__main__":
    main()
