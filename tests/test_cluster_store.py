"""The store on a Redis Cluster (the run's loopback cluster: 3 primaries, a replica each):
settings that cannot work together stop the start; an append acknowledged only once a replica
holds it (WAIT/WAITAOF on the game primary's connection), a 503 when none confirms it in time,
the batch kept and a retry with the same key waiting again; two API apps and a worker on one
cluster seeing each other's appends (sharded pub/sub wakes a long-poll of the other app)."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from events.envelope import NewEvent
from events.store import NotReplicated, RedisEventStore
from service.app import create_app
from service.bootstrap import ConfigurationError, build_backend, build_core
from service.settings import SettingsError, load

SEED = "ab" * 32


def append(store, game, key, n=1):
    version, head = store.head(game)
    return store.append(game, [NewEvent("thing.happened", {"n": i}) for i in range(n)],
                        base_version=version, base_head=head, idempotency_key=key, body_digest="d" * 64)


# --- settings ---------------------------------------------------------------------------------
def test_a_cluster_needs_a_job_queue_of_its_own_and_no_redis_url():
    with pytest.raises(ConfigurationError, match="RQ_REDIS_URL"):
        build_backend({"REDIS_CLUSTER_NODES": "127.0.0.1:1"})
    with pytest.raises(ConfigurationError, match="both set"):
        build_backend({"REDIS_CLUSTER_NODES": "127.0.0.1:1", "REDIS_URL": "redis://127.0.0.1:2",
                       "RQ_REDIS_URL": "redis://127.0.0.1:2"})
    with pytest.raises(SettingsError, match="REDIS_CLUSTER_NODES"):
        load({"REDIS_CLUSTER_NODES": "127.0.0.1"})
    assert load({"REDIS_CLUSTER_NODES": " a:7000, b:7001 "})["REDIS_CLUSTER_NODES"] == "a:7000,b:7001"


# --- acknowledge after replication ------------------------------------------------------------
def test_an_append_waits_for_its_replica_on_the_games_primary(cluster_redis):
    store = RedisEventStore(cluster_redis, ack_replicas=1, ack_timeout_ms=2000)
    receipts = [append(store, f"g{n}", f"k{n}") for n in range(12)]     # games on every primary
    assert all(r.version == 1 and not r.duplicate for r in receipts)
    assert store._ack_command == "WAIT"          # the loopback cluster runs without AOF


def test_an_unconfirmed_append_stays_and_its_retry_waits_again_for_the_same_receipt(cluster_redis):
    strict = RedisEventStore(cluster_redis, ack_replicas=2, ack_timeout_ms=100)   # one replica only
    append(strict.__class__(cluster_redis), "g1", "first")
    with pytest.raises(NotReplicated) as refused:
        append(strict, "g1", "second", n=2)
    assert isinstance(refused.value, redis.exceptions.TimeoutError)   # the API's 503, a job's retry
    assert strict.head("g1")[0] == 3                                   # appended all the same
    started = time.monotonic()
    with pytest.raises(NotReplicated):                                 # the retry waits again
        strict.append("g1", [NewEvent("thing.happened", {"n": 0})], base_version=1,
                      base_head=strict.read_raw("g1", 0, 1)[0][1], idempotency_key="second", body_digest="d" * 64)
    assert time.monotonic() - started >= 0.09
    with pytest.raises(NotReplicated):                                 # a retry found by its first read too
        strict.peek("g1", "second")
    relaxed = RedisEventStore(cluster_redis, ack_replicas=1, ack_timeout_ms=2000)
    seen, version, head = relaxed.peek("g1", "second")
    assert seen[1].as_dict() == {"version": 3, "head": head, "first_version": 2} and version == 3
    assert relaxed.get_idempotent("g1", "second") == seen
    assert relaxed.head("g1")[0] == 3


# --- many processes on one cluster ------------------------------------------------------------
@pytest.fixture
def cluster_config(redis_cluster, cluster_redis, real_redis, redis_server):
    """The settings of API and worker processes on the cluster, RQ on a plain Redis."""
    return {"REDIS_CLUSTER_NODES": redis_cluster.seed_nodes, "RQ_REDIS_URL": redis_server.url,
            "ALLOW_SEED": True, "RATE_LIMIT": None, "CREATE_LIMIT": "1000/60", "BOT_GAMES_PER_ADDRESS": 0,
            "REDIS_ACK_REPLICAS": 1, "REDIS_ACK_TIMEOUT_MS": 1000, "REDIS_SOCKET_TIMEOUT": 3}


def first_legal(view: dict) -> dict:
    template = view["legal_actions"][0]
    return {k: v["min"] if isinstance(v, dict) and set(v) == {"min", "max"} else v for k, v in template.items()}


def test_two_apps_and_a_worker_see_each_others_appends(cluster_config, redis_server):
    from test_workers import run_worker_until

    one, two = create_app(cluster_config).test_client(), create_app(cluster_config).test_client()
    created = two.post("/v1/games", json={"type": "speculation", "seed": SEED,
                                          "seats": [{}, {"bot": "random"}, {"bot": "random"}]})
    assert created.status_code == 201, created.json
    game = created.json["game_id"]
    claim = two.post(f"/v1/games/{game}/seats/0", json={"name": "alice"})
    token = claim.json["token"]
    auth = {"Authorization": f"Bearer {token}"}
    worker = build_core(cluster_config, build_backend(cluster_config))
    rq = redis.Redis.from_url(redis_server.url)
    for n in range(40):   # seat 0 plays through app two until a bot is to act
        view = one.get(f"/v1/games/{game}/view", headers=auth).json
        if view["to_act"] != [0]:
            break
        acted = two.post(f"/v1/games/{game}/actions", headers={**auth, "Idempotency-Key": f"move-{n}-{game}"},
                         json={"action": first_legal(view), "expected_version": view["version"]})
        assert acted.status_code == 200, acted.json
    after = view["version"]
    assert worker.load(game).version == after          # the worker reads what app two appended
    woke = []

    def long_poll():
        started = time.monotonic()
        answer = one.get(f"/v1/games/{game}/view", headers=auth, query_string={"wait": 20, "after_version": after})
        woke.append((answer.json["version"], time.monotonic() - started))

    poll = threading.Thread(target=long_poll)
    poll.start()
    time.sleep(0.3)       # parked in app one
    run_worker_until(worker, rq, lambda: worker.store.head(game)[0] > after, timeout=30)
    poll.join(25)
    (version, waited), = woke
    assert version > after and waited < 15       # woken by the worker's append, not by the timeout


def test_an_action_no_replica_confirms_is_503_and_its_retry_gets_the_same_receipt(cluster_config):
    strict = create_app({**cluster_config, "REDIS_ACK_REPLICAS": 2, "REDIS_ACK_TIMEOUT_MS": 100}).test_client()
    relaxed = create_app(cluster_config).test_client()
    created = relaxed.post("/v1/games", json={"type": "secret-duel", "seed": SEED, "seats": [{}, {}]})
    game = created.json["game_id"]
    tokens = [relaxed.post(f"/v1/games/{game}/seats/{s}", json={"name": f"p{s}"}).json["token"] for s in (0, 1)]
    view = relaxed.get(f"/v1/games/{game}/view", headers={"Authorization": f"Bearer {tokens[0]}"}).json
    seat = view["to_act"][0]
    auth = {"Authorization": f"Bearer {tokens[seat]}", "Idempotency-Key": f"the-one-move-{game}"}
    view = relaxed.get(f"/v1/games/{game}/view", headers={"Authorization": f"Bearer {tokens[seat]}"}).json
    body = {"action": first_legal(view), "expected_version": view["version"]}
    for _ in range(2):     # not confirmed: 503 with Retry-After, and again on the retry
        refused = strict.post(f"/v1/games/{game}/actions", headers=auth, json=body)
        assert refused.status_code == 503 and refused.headers.get("Retry-After"), refused.json
    answers = [relaxed.post(f"/v1/games/{game}/actions", headers=auth, json=body) for _ in range(2)]
    assert all(a.status_code == 200 and a.headers.get("Idempotent-Replayed") == "true" for a in answers)
    assert answers[0].json["receipt"] == answers[1].json["receipt"]
    assert answers[0].json["receipt"]["first_version"] == view["version"] + 1     # appended once
    assert relaxed.get(f"/v1/games/{game}").json["version"] == answers[0].json["receipt"]["version"]
