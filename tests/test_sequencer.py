"""The sequencer (events/transparency.py `sequence`, workers/sequencer.py) with a real service
core: it checkpoints exactly the games that moved, loses nothing to a pass that dies before its
commit, never forks under two sequencers, and publishes heads that verify; and the log's
endpoints answer per docs/audit.md (service/routes/transparency.py)."""

from __future__ import annotations

import time

import pytest

from events import merkle
from events.index import MemoryGameIndex
from events.signing import verify_signed
from events.store import MemoryEventStore
from events.transparency import Checkpoint, MemoryTransparencyLog, RedisTransparencyLog, sequence
from service.core.game_service import GameService
from service_kit import make_service
from workers.memory_jobs import MemoryJobs
from workers.sequencer import SequencerThread, run_once, sequencer_pass

SEED = "ab" * 32


@pytest.fixture(params=["memory", "fakeredis", "redis", "cluster"])
def core(request):
    """A service core with its transparency log, as the bootstrap attaches it ("cluster": the
    run's loopback Redis Cluster, every primary flushed first)."""
    if request.param == "memory":
        service = GameService(MemoryEventStore(), MemoryGameIndex(), MemoryJobs(), allow_seed=True)
        service.transparency = MemoryTransparencyLog()
    else:
        client = request.getfixturevalue({"fakeredis": "fake_redis", "cluster": "cluster_redis"}.get(request.param, "real_redis"))
        service, _ = make_service(client)
        service.transparency = RedisTransparencyLog(client)
    return service


def _pass(service, owner="seq-a", **kw):
    return sequence(service.transparency, service.store, service.index, service.keys.sign, owner=owner, **kw)


def _new_games(service, n):
    return [service.create("speculation", {}, [{}, {}, {}], seed=f"{i:064x}").game_id for i in range(n)]


def _logged(service) -> dict:
    """{game: [versions logged]} from the log's leaves."""
    out: dict = {}
    for entry in service.transparency.entries(0, service.transparency.size()):
        out.setdefault(entry["leaf"]["game"], []).append(entry["leaf"]["version"])
    return out


def _check_heads(service) -> list[dict]:
    """Every head signed by the core's keys, its root the leaves', consistent with the one before."""
    tlog = service.transparency
    heads = tlog.heads()
    hashes = [Checkpoint.of(e["leaf"]).leaf_hash() for e in tlog.entries(0, tlog.size())]
    for before, head in zip([None] + heads, heads):
        verify_signed(head, service.keys.public_keys())
        assert head["root_hash"] == merkle.root(hashes[:head["tree_size"]]).hex()
        if before is not None:
            proof = [bytes.fromhex(h) for h in tlog.consistency_proof(before["tree_size"], head["tree_size"])]
            assert merkle.verify_consistency(before["tree_size"], head["tree_size"], bytes.fromhex(before["root_hash"]),
                                             bytes.fromhex(head["root_hash"]), proof)
    return heads


def test_a_pass_checkpoints_exactly_the_games_that_moved_at_their_current_version(core):
    a, b, c = _new_games(core, 3)
    first = _pass(core)
    assert first.held and first.logged == 3 and first.tree_size == 3
    assert _logged(core) == {a: [1], b: [1], c: [1]}
    core.claim(a, 0, "ann")
    core.claim(a, 1, "bob")
    second = _pass(core)
    assert second.logged == 1 and _logged(core)[a] == [1, core.store.head(a)[0]]
    version, head = core.store.head(a)
    assert core.transparency.entries(3, 4)[0]["leaf"] == {"game": a, "head": head, "version": version}
    # Nothing moved: no leaf, no new head (the latest stays), and the watermark moves on.
    mark = core.transparency.watermark()
    quiet = _pass(core)
    assert quiet.held and quiet.logged == 0 and quiet.head is None and quiet.tree_size == 4
    assert len(core.transparency.heads()) == 2 and core.transparency.latest_head() == second.head
    assert core.transparency.watermark() >= mark
    _check_heads(core)


def test_a_pass_that_dies_before_its_commit_loses_nothing(core, monkeypatch):
    games = _new_games(core, 4)
    tlog = core.transparency

    def killed(batch):
        raise RuntimeError("killed between build and commit")

    monkeypatch.setattr(tlog, "commit", killed)
    assert run_once(sequencer_pass(core, owner="seq-a")) is None     # the loop logs it and goes on
    assert tlog.size() == 0 and tlog.heads() == [] and tlog.watermark() == 0.0
    monkeypatch.undo()
    # The watermark did not move: the next pass builds the same batch again and commits it.
    done = _pass(core)
    assert done.logged == 4 and sorted(_logged(core)) == sorted(games)

    # Killed after its commit, before the watermark: the next pass reads the same games, logs none twice.
    core.claim(games[0], 0, "ann")
    monkeypatch.setattr(tlog, "set_watermark", lambda at: (_ for _ in ()).throw(RuntimeError("killed")))
    with pytest.raises(RuntimeError):
        _pass(core)
    monkeypatch.undo()
    assert _pass(core).logged == 0
    assert _logged(core)[games[0]] == [1, 2] and tlog.size() == 5
    _check_heads(core)


def test_two_sequencers_never_fork(redis_client):
    service, _ = make_service(redis_client)
    service.transparency = RedisTransparencyLog(redis_client)
    rival = RedisTransparencyLog(redis_client)          # another process's log object
    _new_games(service, 3)
    assert _pass(service, owner="seq-a").logged == 3
    refused = sequence(rival, service.store, service.index, service.keys.sign, owner="seq-b")
    assert not refused.held and refused.logged == 0      # a holds the lease: b does nothing

    # Both believe they hold it (a's lease lapsed while a paused between its build and its
    # commit, and b took it): b commits; a's commit is refused, by the lease's owner checked
    # inside the commit and by the size it built on.
    games = _new_games(service, 2)
    service.transparency.hold_lease = lambda owner, ttl_ms=0: True
    build = service.transparency.build

    def build_then_b_commits(*args, **kwargs):
        batch = build(*args, **kwargs)
        rival.release_lease("seq-a")      # a's lease lapses
        assert sequence(rival, service.store, service.index, service.keys.sign, owner="seq-b").logged == 2
        return batch

    service.transparency.build = build_then_b_commits
    stale = _pass(service, owner="seq-a")
    assert stale.stale and stale.logged == 0 and stale.tree_size == 5
    del service.transparency.build
    assert _pass(service, owner="seq-a").logged == 0     # b logged them: nothing twice
    assert sorted(g for g, versions in _logged(service).items() if g in games) == sorted(games)
    assert [h["tree_size"] for h in _check_heads(service)] == [3, 5]


def test_sequencers_at_once_in_threads_keep_one_tree(redis_client):
    """Four loops on one Redis, each with its own log object and owner, while games move."""
    service, _ = make_service(redis_client)
    service.transparency = RedisTransparencyLog(redis_client)
    loops = []
    for n in range(4):
        log_object = RedisTransparencyLog(redis_client)
        loops.append(SequencerThread(lambda log_object=log_object, n=n: sequence(
            log_object, service.store, service.index, service.keys.sign, owner=f"seq-{n}", lease_ms=300),
            every=0.02).start())
    games = _new_games(service, 6)
    for game in games[:3]:
        service.claim(game, 0, "ann")
    time.sleep(0.3)
    loops[0].stop()                                        # the holder may go: another takes over
    for game in games[3:]:
        service.claim(game, 0, "ann")
    deadline = time.time() + 5
    while time.time() < deadline and {g: service.store.head(g)[0] for g in games} != \
            {g: v[-1] for g, v in _logged(service).items()}:
        time.sleep(0.05)
    for loop in loops[1:]:
        loop.stop()
    assert {g: v[-1] for g, v in _logged(service).items()} == {g: service.store.head(g)[0] for g in games}
    assert all(v == sorted(set(v)) for v in _logged(service).values())   # no version logged twice
    _check_heads(service)


def test_a_game_that_left_the_store_keeps_its_checkpoints(redis_client):
    service, _ = make_service(redis_client)
    service.transparency = RedisTransparencyLog(redis_client)
    game, other = _new_games(service, 2)
    _pass(service)
    assert service.store.swap_out(game, lambda record: "f" * 64) == "f" * 64   # gone from the hot store
    service.index.touch(game)
    service.claim(other, 0, "ann")
    assert _pass(service).logged == 1                      # the other game; nothing for the one gone
    size = service.transparency.size()
    kept = service.transparency.checkpoints(game, size)
    assert [c["leaf"]["version"] for c in kept] == [1]
    root = bytes.fromhex(service.transparency.latest_head()["root_hash"])
    assert merkle.verify_inclusion(Checkpoint.of(kept[0]["leaf"]).leaf_hash(), kept[0]["index"], size,
                                   [bytes.fromhex(h) for h in kept[0]["inclusion"]], root)


# --- the endpoints ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def app():
    from service.app import create_app

    return create_app({"REDIS_URL": None, "RATE_LIMIT": None, "ALLOW_SEED": True})


def _hexes(proof):
    return [bytes.fromhex(h) for h in proof]


def test_the_log_endpoints(app):
    http = app.test_client()
    core = app.extensions["games"]
    none = http.get("/v1/log/tree-head")
    assert none.status_code == 404 and none.json["error"]["code"] == "no_tree_head"
    game = http.post("/v1/games", json={"type": "speculation", "options": {}, "seats": [{}, {}, {}]}).json["game_id"]
    assert http.get(f"/v1/games/{game}/checkpoints").json == {"game": game, "tree_size": 0, "tree_head": None,
                                                               "checkpoints": []}
    sequence(core.transparency, core.store, core.index, core.keys.sign)
    http.post(f"/v1/games/{game}/seats/0", json={"name": "ann"})
    http.post("/v1/games", json={"type": "speculation", "options": {}, "seats": [{}, {}, {}]})
    sequence(core.transparency, core.store, core.index, core.keys.sign)

    head = http.get("/v1/log/tree-head").json
    verify_signed(head, core.keys.public_keys())
    assert head["format"] == "speculation-sth/1" and head["tree_size"] == 3
    assert http.get("/v1/log/tree-heads?size=3").json == head
    first = http.get("/v1/log/tree-heads?size=1").json
    verify_signed(first, core.keys.public_keys())

    found = http.get(f"/v1/games/{game}/checkpoints").json
    assert found["tree_size"] == 3 and found["tree_head"] == head
    assert [c["leaf"]["version"] for c in found["checkpoints"]] == [1, 2]
    assert found["checkpoints"][-1]["leaf"]["head"] == core.store.head(game)[1]
    for c in found["checkpoints"]:
        leaf = merkle.leaf_hash(('{"game":"%s","head":"%s","version":%d}' % (
            game, c["leaf"]["head"], c["leaf"]["version"])).encode())
        assert merkle.verify_inclusion(leaf, c["index"], head["tree_size"], _hexes(c["inclusion"]),
                                       bytes.fromhex(head["root_hash"]))
    early = http.get(f"/v1/games/{game}/checkpoints?tree_size=1").json
    assert [c["index"] for c in early["checkpoints"]] == [0] and early["tree_head"] == first

    proof = http.get("/v1/log/consistency?first=1&second=3").json
    assert proof["first"] == 1 and proof["second"] == 3
    assert merkle.verify_consistency(1, 3, bytes.fromhex(first["root_hash"]), bytes.fromhex(head["root_hash"]),
                                     _hexes(proof["proof"]))
    entries = http.get("/v1/log/entries?start=1&end=50").json["entries"]
    assert [e["index"] for e in entries] == [1, 2] and entries[0]["leaf"]["game"] == game
    assert entries[0]["sequenced_at"] == head["timestamp"]

    def refused(path, status, code, field):
        answer = http.get(path)
        assert answer.status_code == status, (path, answer.json)
        error = answer.json["error"]
        assert error["code"] == code and field in error["message"], (path, error)

    refused("/v1/log/consistency?first=3&second=2", 422, "invalid", "first")
    refused("/v1/log/consistency?first=1&second=4", 422, "beyond_tree", "second")
    refused("/v1/log/consistency?first=0&second=2", 422, "invalid", "first")
    refused("/v1/log/consistency?first=x&second=2", 422, "invalid", "first")
    refused("/v1/log/consistency?first=%EF%BC%91&second=2", 422, "invalid", "first")   # a fullwidth 1
    refused("/v1/log/consistency?second=2", 422, "invalid", "first")
    refused("/v1/log/tree-heads?size=2", 404, "no_tree_head", "size")
    refused("/v1/log/tree-heads?size=-1", 422, "invalid", "size")
    refused("/v1/log/entries?start=5&end=6", 422, "beyond_tree", "start")
    refused("/v1/log/entries?start=0&end=1001", 422, "invalid", "end")
    refused("/v1/log/entries?start=2&end=2", 422, "invalid", "end")
    refused(f"/v1/games/{game}/checkpoints?tree_size=4", 422, "beyond_tree", "tree_size")
    refused("/v1/games/no-such-game/checkpoints", 404, "not_found", "no-such-game")


def test_the_embedded_worker_sequences():
    """`speculation serve`'s in-process worker runs the sequencer beside its jobs."""
    from service.app import create_app
    from workers.embedded import EmbeddedWorker

    app = create_app({"REDIS_URL": None, "RATE_LIMIT": None})
    core = app.extensions["games"]
    worker = EmbeddedWorker(core, app.extensions["backend"].rq_client).start()
    try:
        assert worker.sequencer is not None
        game = app.test_client().post("/v1/games", json={"type": "speculation", "options": {},
                                                         "seats": [{}, {}, {}]}).json["game_id"]
        deadline = time.time() + 5
        while time.time() < deadline and not core.transparency.leaf_indexes(game):
            time.sleep(0.05)
        assert core.transparency.leaf_indexes(game) == [0]
    finally:
        worker.stop()
