"""The transparency log's contract (events/transparency.py), run on memory, fakeredis, a
real Redis server and a Redis Cluster: batches, stale commits, proofs against the published
heads, a game's checkpoints, the lease and the watermark."""

from __future__ import annotations

import time

import pytest

from events import merkle
from events.signing import Keyring, verify_signed
from events.transparency import (KEYS, STH_FORMAT, Checkpoint, MemoryTransparencyLog, RedisTransparencyLog,
                                 StaleBase)

NOW = 1_796_380_000_000
KEYRING = Keyring.ephemeral(NOW - 1000)


@pytest.fixture(params=["memory", "fakeredis", "redis", "cluster"])
def tlog(request):
    """The log on each implementation; "cluster": the run's loopback Redis Cluster (3 primaries
    with a replica each, tests/conftest.py), every primary flushed first (cluster_redis)."""
    if request.param == "memory":
        return MemoryTransparencyLog()
    fixture = {"fakeredis": "fake_redis", "cluster": "cluster_redis"}.get(request.param, "real_redis")
    return RedisTransparencyLog(request.getfixturevalue(fixture))


def _cp(game: str, version: int) -> Checkpoint:
    return Checkpoint(game, f"{version:02x}" * 32, version)


def _append(tlog, checkpoints, at=NOW):
    batch = tlog.build(tlog.size(), checkpoints, KEYRING.sign, at)
    assert tlog.commit(batch)
    return batch


def _hashes(tlog) -> list[bytes]:
    return [Checkpoint.of(e["leaf"]).leaf_hash() for e in tlog.entries(0, tlog.size())]


class TestContract:
    def test_an_empty_log(self, tlog):
        assert tlog.size() == 0
        assert tlog.latest_head() is None and tlog.head_at(0) is None and tlog.heads() == []
        assert tlog.entries(0, 10) == [] and tlog.checkpoints("g1", 0) == []
        assert tlog.logged_versions(["g1"]) == {} and tlog.leaf_indexes("g1") == []

    def test_a_batch_appends_its_leaves_and_a_head_over_them(self, tlog):
        batch = _append(tlog, [_cp("g1", 3), _cp("g2", 1)])
        head = tlog.latest_head()
        assert head == batch.head == tlog.head_at(2) and tlog.heads() == [head]
        assert {k: head[k] for k in ("format", "tree_size", "timestamp")} == \
            {"format": STH_FORMAT, "tree_size": 2, "timestamp": NOW}
        verify_signed(head, KEYRING.public_keys())
        leaves = [b'{"game":"g1","head":"' + b"03" * 32 + b'","version":3}',
                  b'{"game":"g2","head":"' + b"01" * 32 + b'","version":1}']
        assert head["root_hash"] == merkle.root([merkle.leaf_hash(leaf) for leaf in leaves]).hex()
        assert tlog.entries(0, 5) == [
            {"index": 0, "leaf": {"game": "g1", "head": "03" * 32, "version": 3}, "sequenced_at": NOW},
            {"index": 1, "leaf": {"game": "g2", "head": "01" * 32, "version": 1}, "sequenced_at": NOW}]
        assert tlog.entries(1, 2) == tlog.entries(0, 2)[1:]
        assert tlog.logged_versions(["g1", "g2", "g3"]) == {"g1": 3, "g2": 1}

        second = _append(tlog, [_cp("g1", 7)], NOW + 500)
        assert tlog.size() == 3 and tlog.heads() == [head, second.head] and tlog.head_at(2) == head
        assert second.head["root_hash"] == merkle.root(_hashes(tlog)).hex()
        assert tlog.logged_versions(["g1"]) == {"g1": 7}
        assert tlog.first_head_holding(0) == head and tlog.first_head_holding(2) == second.head
        assert tlog.first_head_holding(3) is None

    def test_a_commit_on_a_stale_size_fails_and_writes_nothing(self, tlog):
        first = tlog.build(0, [_cp("g1", 1)], KEYRING.sign, NOW)
        rival = tlog.build(0, [_cp("g2", 5), _cp("g3", 2)], KEYRING.sign, NOW)
        assert tlog.commit(first)
        assert not tlog.commit(rival)
        assert tlog.size() == 1 and tlog.heads() == [first.head] and tlog.head_at(2) is None
        assert tlog.logged_versions(["g2", "g3"]) == {} and tlog.leaf_indexes("g2") == []
        with pytest.raises(StaleBase):   # and a batch is not even built on a size the log has left
            tlog.build(0, [_cp("g2", 5)], KEYRING.sign, NOW)

    def test_proofs_verify_against_every_published_head(self, tlog):
        for n in range(1, 7):
            _append(tlog, [_cp(f"g{n}-{i}", n) for i in range(n)], NOW + n)
        heads = tlog.heads()
        assert [h["tree_size"] for h in heads] == [1, 3, 6, 10, 15, 21]
        hashes = _hashes(tlog)
        for head in heads:
            size, root = head["tree_size"], bytes.fromhex(head["root_hash"])
            assert merkle.root(hashes[:size]) == root
            for index in range(size):
                proof = [bytes.fromhex(h) for h in tlog.inclusion_proof(index, size)]
                assert merkle.verify_inclusion(hashes[index], index, size, proof, root)
            for earlier in heads:
                if earlier["tree_size"] <= size:
                    proof = [bytes.fromhex(h) for h in tlog.consistency_proof(earlier["tree_size"], size)]
                    assert merkle.verify_consistency(earlier["tree_size"], size, bytes.fromhex(earlier["root_hash"]),
                                                     root, proof)

    def test_a_games_checkpoints_in_order_with_their_proofs(self, tlog):
        _append(tlog, [_cp("g1", 1), _cp("g2", 1)])
        _append(tlog, [_cp("g2", 4)])
        _append(tlog, [_cp("g3", 1), _cp("g1", 9)])
        assert tlog.leaf_indexes("g1") == [0, 4]
        size = tlog.size()
        root = bytes.fromhex(tlog.latest_head()["root_hash"])
        found = tlog.checkpoints("g1", size)
        assert [(c["index"], c["leaf"]["version"]) for c in found] == [(0, 1), (4, 9)]
        for c in found:
            proof = [bytes.fromhex(h) for h in c["inclusion"]]
            assert merkle.verify_inclusion(Checkpoint.of(c["leaf"]).leaf_hash(), c["index"], size, proof, root)
        within = tlog.checkpoints("g1", 3)   # an earlier tree: its proofs reach that head's root
        assert [c["index"] for c in within] == [0]
        assert merkle.verify_inclusion(Checkpoint.of(within[0]["leaf"]).leaf_hash(), 0, 3,
                                       [bytes.fromhex(h) for h in within[0]["inclusion"]],
                                       bytes.fromhex(tlog.head_at(3)["root_hash"]))

    def test_the_lease_is_held_by_one_owner_at_a_time(self, tlog):
        assert tlog.hold_lease("a", 200)
        assert not tlog.hold_lease("b", 200)
        assert tlog.hold_lease("a", 200)       # renewed
        tlog.release_lease("b")                 # not b's to release
        assert not tlog.hold_lease("b", 200)
        tlog.release_lease("a")
        assert tlog.hold_lease("b", 50)
        time.sleep(0.12)                        # b stopped renewing: it lapses
        assert tlog.hold_lease("a", 200)

    def test_a_sequencer_whose_lease_lapsed_commits_nothing(self, tlog):
        assert tlog.hold_lease("a", 50)
        late = tlog.build(0, [_cp("g1", 1)], KEYRING.sign, NOW)
        time.sleep(0.12)                        # a stalled past its lease; b took it over
        assert tlog.hold_lease("b", 5000)
        assert not tlog.commit(late, "a")       # the owner is checked inside the commit itself
        assert tlog.size() == 0 and tlog.heads() == []
        assert tlog.commit(tlog.build(0, [_cp("g2", 4)], KEYRING.sign, NOW), "b")
        assert tlog.logged_versions(["g1", "g2"]) == {"g2": 4}

    def test_the_watermark(self, tlog):
        assert tlog.watermark() == 0.0
        tlog.set_watermark(1234.5)
        assert tlog.watermark() == 1234.5


def _every_key(client) -> list[bytes]:
    """KEYS * of the whole keyspace (on a cluster: every primary's)."""
    from redis.cluster import RedisCluster

    if isinstance(client, RedisCluster):
        return client.keys("*", target_nodes=RedisCluster.PRIMARIES)
    return client.keys("*")


def test_every_key_shares_one_hash_tag(redis_client):
    tlog = RedisTransparencyLog(redis_client)
    _append(tlog, [_cp("g1", 1)])
    tlog.hold_lease("a")
    tlog.set_watermark(1.0)
    stored = {k.decode() for k in _every_key(redis_client)}
    assert stored == {KEYS[k] for k in ("hashes", "leaves", "heads", "head-at", "checkpointed", "game-leaves",
                                        "lease", "watermark")}
    assert all(k.startswith("{tlog}:") for k in stored)


def test_a_second_process_reads_the_tree_another_wrote_and_a_log_replaced_underneath(redis_client):
    writer, reader = RedisTransparencyLog(redis_client), RedisTransparencyLog(redis_client)
    _append(writer, [_cp("g1", 1), _cp("g2", 1)])
    assert reader.inclusion_proof(1, 2) == writer.inclusion_proof(1, 2)
    _append(writer, [_cp("g1", 2)])
    assert reader.consistency_proof(2, 3) == writer.consistency_proof(2, 3)
    # The log replaced (a restore from another backup): the reader's cached tree is read again.
    for key in KEYS.values():
        redis_client.delete(key)
    other = RedisTransparencyLog(redis_client)
    _append(other, [_cp("x", 1), _cp("y", 1), _cp("z", 1), _cp("w", 1)])
    root = bytes.fromhex(other.latest_head()["root_hash"])
    proof = [bytes.fromhex(h) for h in reader.inclusion_proof(3, 4)]
    assert merkle.verify_inclusion(_cp("w", 1).leaf_hash(), 3, 4, proof, root)
