"""The whole service on a Redis Cluster (issue 45): a loopback valkey cluster of 3 primaries
with one replica each (ops/drills/redis_cluster.py, the valkey binary the project installs)
holds the store and every index and projection; RQ runs on a private plain Redis of its own
(RQ does not support a cluster), its jobs run in this process by a burst worker.

Through the HTTP API: sign up, tokens, create, claim as an account and anonymously, play to
the end with bots, score; a rated challenge, accepted, played and rated; quick pairing; the
leaderboard and the ratings' rebuild; the account's stream and games; the transparency log's
tree head and a game's inclusion proofs; verify; a revoked token refused. Any operation
across slots would fail here (CROSSSLOT, or a transaction refused by the cluster client)."""

from __future__ import annotations

import random
import time

import pytest
from redis.cluster import RedisCluster

from events import merkle
from events.transparency import Checkpoint, sequence
from ops.drills import redis_server
from ops.drills.redis_cluster import LoopbackCluster, valkey_binary
from service.app import create_app
from service.accounts.maintenance import rebuild_accounts
from service.matching.seeks import POOLS
from service.ratings.service import bot_account_id
from workers import tasks
from workers.embedded import ThreadWorker
from workers.queue import worker_queues

from test_accounts import CHEAP, Api

CONFIG = {"ALLOW_SEED": True, "RATE_LIMIT": None, **CHEAP, "SIGNUP_LIMIT": "1000/60", "SIGNIN_LIMIT": "1000/60",
          "CREATE_LIMIT": "1000/60", "CHALLENGE_LIMIT": "100/60", "BOT_GAMES_PER_ADDRESS": 0}


@pytest.fixture(scope="module")
def cluster():
    try:
        valkey_binary()
    except RuntimeError as missing:   # the project's install brings it: a missing binary is a failure
        pytest.fail(str(missing))
    with LoopbackCluster(primaries=3, replicas=1) as started:
        yield started


@pytest.fixture(scope="module")
def rq_redis():
    """RQ's own plain Redis: redis-server where installed, else the project's valkey-server."""
    with pytest.MonkeyPatch.context() as patch:
        if redis_server.redis_server_path() is None:
            patch.setattr(redis_server, "redis_server_path", valkey_binary)
        server = redis_server.RedisProcess().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def api(cluster, rq_redis):
    app = create_app({**CONFIG, "REDIS_CLUSTER_NODES": cluster.seed_nodes, "RQ_REDIS_URL": rq_redis.url,
                      "REDIS_URL": None})
    backend = app.extensions["backend"]
    assert isinstance(backend.store_client, RedisCluster) and not isinstance(backend.rq_client, RedisCluster)
    built = Api(app, None)
    built.rq = backend.rq_client
    yield built
    tasks.bind(None)


def run_jobs(api, done, timeout=30.0) -> None:
    """RQ's jobs (bot turns, scoring, expiries) in this process, burst after burst, until done()."""
    tasks.bind(api.service)
    worker = ThreadWorker(worker_queues(api.rq), connection=api.rq)
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "the jobs did not finish in time"
        worker.work(burst=True, logging_level="WARNING")


def summary(api, game):
    return api.http.get(f"/v1/games/{game}").json


def play(api, game, seats: dict, rng) -> None:
    """Play the game to scored: the people in `seats` (seat -> token) by
    random legal actions through the API, the bots and the scoring by RQ's jobs."""
    for _ in range(400):
        now = summary(api, game)
        if now["status"] == "scored":
            return
        mine = [s for s in now.get("to_act", []) if s in seats]
        if now["status"] != "active" or not mine:
            run_jobs(api, lambda version=now["version"]: summary(api, game)["version"] != version
                     or summary(api, game)["status"] == "scored")
            continue
        seat = rng.choice(mine)
        token = seats[seat]
        view = api.call("GET", f"/v1/games/{game}/view", token, query_string={"seat": seat}).json
        if not view["legal_actions"]:
            continue
        template = rng.choice(view["legal_actions"])
        action = {k: rng.randint(v["min"], v["max"]) if isinstance(v, dict) else v for k, v in template.items()}
        acted = api.call("POST", f"/v1/games/{game}/actions", token, headers={"Idempotency-Key": f"k{rng.random()}"},
                         json={"action": action, "seat": seat, "decision": view["decision"]})
        assert acted.status_code in (200, 409), acted.json
    raise AssertionError(f"game {game} did not end")


def kinds(api, token) -> list[str]:
    return [e["type"] for e in api.call("GET", "/v1/account/events", token).json["events"]]


def test_the_whole_service_on_a_cluster(api, cluster):
    rng = random.Random(45)
    alice, _ = api.account("alice")
    bob, bob_session = api.account("bob")

    # an unrated game: one seat claimed by an account, one anonymously, one bot
    made = api.http.post("/v1/games", json={"type": "secret-duel", "seats": [{}, {}, {"bot": "random"}],
                                            "seed": "ab" * 32})
    assert made.status_code == 201, made.json
    casual = made.json["game_id"]
    assert api.claim(casual, 0, alice).status_code == 201
    guest = api.http.post(f"/v1/games/{casual}/seats/1", json={"name": "visitor"})
    assert guest.status_code == 201, guest.json
    assert summary(api, casual)["status"] == "active"
    play(api, casual, {0: alice, 1: guest.json["token"]}, rng)
    shown = summary(api, casual)["seats"]
    assert shown[0]["name"] == "alice" and not shown[0].get("guest") and shown[1]["guest"]

    # a rated challenge, accepted, played, rated once
    challenge = api.call("POST", "/v1/challenges", alice, json={
        "type": "secret-duel", "seats": [{"me": True}, {"account": "bob"}, {"bot": "baseline"}],
        "rated": True, "turn_timeout": 60})
    assert challenge.status_code == 201, challenge.json
    rated = challenge.json["game_id"]
    assert "invitation" in kinds(api, bob)
    assert api.call("POST", f"/v1/challenges/{rated}/accept", bob).json["status"] == "active"
    assert "invitation.accepted" in kinds(api, alice)
    play(api, rated, {0: alice, 1: bob}, rng)
    board = api.http.get("/v1/leaderboards/secret-duel").json
    assert {r["name"] for r in board["rows"]} == {"alice", "bob", "baseline"}
    assert all(r["games"] == 1 for r in board["rows"])
    ratings = api.service.ratings
    assert api.service.store.head("ratings/secret-duel")[0] == 1
    assert ratings.rebuild("secret-duel") == {"games": 1, "players": 3, "kept_differing": 0}
    assert api.http.get("/v1/leaderboards/secret-duel").json["rows"] == board["rows"]
    assert api.http.get("/v1/accounts/alice/ratings/secret-duel").json
    assert bot_account_id("baseline") in {r["account"] for r in board["rows"]}

    # quick pairing: two seeks make one table
    first = api.call("POST", "/v1/seeks", alice, json={"type": "secret-duel", "players": 2})
    second = api.call("POST", "/v1/seeks", bob, json={"type": "secret-duel", "players": 2})
    assert first.status_code == second.status_code == 201, (first.json, second.json)
    assert second.json["status"] == "matched"
    paired = {e["game_id"] for token in (alice, bob)
              for e in api.call("GET", "/v1/account/events", token).json["events"] if e["type"] == "seek.matched"}
    assert len(paired) == 1
    (pairing,) = paired
    assert summary(api, pairing)["status"] == "active"
    assert api.service.seeks.pools() == []             # the table took both seeks out of the pool
    assert cluster.client().smembers(POOLS) == {b"secret-duel.2.0"}

    # the account's stream and games
    seen = kinds(api, alice)
    for kind in ("game.joined", "game.started", "turn", "game.ended", "invitation.accepted", "seek.matched"):
        assert kind in seen, (kind, seen)
    listed = api.call("GET", "/v1/account/games", alice).json
    assert {casual, rated, pairing} <= {g["game_id"] for g in listed["games"]}

    # the accounts' rebuild (kept state and credential records written under WATCH, in each
    # account's slot) keeps the account games and the token
    rebuilt = rebuild_accounts(api.service, api.service.accounts.index, [casual, rated, pairing])
    assert rebuilt["accounts"] >= 2 and rebuilt["accounts_fixed"] == 0 and rebuilt["games"] == 3
    assert api.call("GET", "/v1/account", alice).status_code == 200
    assert {casual, rated, pairing} <= {g["game_id"] for g in api.call("GET", "/v1/account/games", alice).json["games"]}

    # the transparency log: a sequencer pass, the tree head, each game's inclusion proofs
    passed = sequence(api.service.transparency, api.service.store, api.service.index, api.service.keys.sign)
    assert passed.held and passed.logged >= 3, passed
    head = api.http.get("/v1/log/tree-head").json
    root = bytes.fromhex(head["root_hash"])
    for game in (casual, rated, pairing):
        found = api.http.get(f"/v1/games/{game}/checkpoints").json["checkpoints"]
        assert found, game
        for c in found:
            proof = [bytes.fromhex(h) for h in c["inclusion"]]
            assert merkle.verify_inclusion(Checkpoint.of(c["leaf"]).leaf_hash(), c["index"], head["tree_size"],
                                           proof, root)
        assert api.http.get(f"/v1/games/{game}/verify").json["ok"]

    # a revoked token is refused at once
    tokens = api.call("GET", "/v1/account/tokens", bob_session).json["tokens"]
    personal = next(t for t in tokens if t["kind"] != "session")
    assert api.call("DELETE", f"/v1/account/tokens/{personal['id']}", bob_session).status_code == 204
    assert api.call("GET", "/v1/account", bob).status_code == 401

    # every key the service wrote is in a slot of the cluster: nothing outside a hash tag
    # was written across slots (the cluster client refuses that), and the store is spread
    client = cluster.client()
    written = client.keys("*", target_nodes=RedisCluster.PRIMARIES)
    assert len({client.keyslot(k) for k in written}) > 10
