"""The event store contract, run on the in-memory store, fakeredis and a real redis-server."""

import threading

import pytest

from events.envelope import GENESIS, NewEvent, chain_hash
from events.store import IdempotencyConflict, MemoryEventStore, VersionConflict, keys

pytestmark = pytest.mark.quick


def ev(n, **data):
    return NewEvent(type="thing.happened", data={"n": n, **data})


def cut_last_event(store, game):
    """Delete the stream's last entry behind the store's back (its meta is left as it was)."""
    if isinstance(store, MemoryEventStore):
        store._events[game].pop()
    else:
        version = store.head(game)[0]
        store.redis.xdel(keys(game)["events"], f"{version}-0")


def append(store, game, events, **kw):
    version, head = store.head(game)
    return store.append(game, events, base_version=version, base_head=head, **kw)


class TestStoreContract:
    def test_meta_from_the_sealed_batch_and_fields_by_prefix(self, store):
        seen = []

        def projection(sealed):
            seen.append([h for _, h in sealed])
            return {"status": f"after-{len(sealed)}", "token:aa": "0", "token:bb": "2"}

        receipt = append(store, "g1", [ev(1), ev(2)], meta=projection)
        assert seen == [[h for _, h in receipt.sealed]]              # called once, with the batch
        assert store.get_meta("g1", "status") == {"status": "after-2"}
        assert store.get_meta_prefixed("g1", "token:") == {"token:aa": "0", "token:bb": "2"}
        assert store.get_meta_prefixed("g1", "nothing:") == {}
        assert store.get_meta_prefixed("g2", "token:") == {}

    def test_empty_game_has_genesis_head(self, store):
        assert store.head("g1") == (0, GENESIS)
        assert store.read("g1") == []
        assert not store.exists("g1")

    def test_batch_append_assigns_versions_and_chains(self, store):
        receipt = append(store, "g1", [ev(1), ev(2), ev(3)])
        assert (receipt.first_version, receipt.version) == (1, 3)
        events = store.read("g1")
        assert [e.version for e in events] == [1, 2, 3]
        prev = GENESIS
        for e in events:
            assert e.prev_hash == prev
            assert e.hash == chain_hash(prev, e.body)
            prev = e.hash
        assert store.head("g1") == (3, receipt.head) and receipt.head == prev

    def test_read_seeks_by_version(self, store):
        append(store, "g1", [ev(i) for i in range(1, 8)])
        assert [e.data["n"] for e in store.read("g1", after=4)] == [5, 6, 7]
        assert [e.version for e in store.read("g1", after=2, until=4)] == [3, 4]
        assert store.read("g1", after=4)[0].prev_hash == store.read("g1", after=3, until=4)[0].hash

    def test_expected_version_mismatch_is_refused_and_writes_nothing(self, store):
        append(store, "g1", [ev(1)])
        with pytest.raises(VersionConflict) as err:
            append(store, "g1", [ev(2)], expected_version=0)
        assert err.value.current_version == 1
        assert store.head("g1")[0] == 1

    def test_stale_base_head_is_refused(self, store):
        r1 = append(store, "g1", [ev(1)])
        with pytest.raises(VersionConflict) as err:
            store.append("g1", [ev(2)], base_version=0, base_head=GENESIS)
        assert err.value.reason == "head"
        with pytest.raises(VersionConflict):
            store.append("g1", [ev(2)], base_version=1, base_head="f" * 64)
        assert store.head("g1") == (1, r1.head)

    def test_idempotent_retry_returns_original_receipt_once(self, store):
        first = append(store, "g1", [ev(1)], idempotency_key="k1", body_digest="d1")
        again = append(store, "g1", [ev(1)], idempotency_key="k1", body_digest="d1")
        assert again.duplicate and not first.duplicate
        assert again.as_dict() == first.as_dict()
        assert store.head("g1")[0] == 1

    def test_idempotency_key_is_checked_before_version(self, store):
        first = append(store, "g1", [ev(1)], idempotency_key="k1", body_digest="d1", expected_version=0)
        append(store, "g1", [ev(2)])
        # A retry with the old expected version still gets its original receipt.
        again = store.append("g1", [ev(1)], base_version=0, base_head=GENESIS,
                             idempotency_key="k1", body_digest="d1", expected_version=0)
        assert again.duplicate and again.version == first.version

    def test_idempotency_key_with_another_body_conflicts(self, store):
        append(store, "g1", [ev(1)], idempotency_key="k1", body_digest="d1")
        with pytest.raises(IdempotencyConflict) as err:
            append(store, "g1", [ev(9)], idempotency_key="k1", body_digest="other")
        assert err.value.current_version == 1
        assert store.head("g1")[0] == 1

    def test_keys_are_per_game(self, store):
        append(store, "g1", [ev(1)], idempotency_key="k", body_digest="d")
        receipt = append(store, "g2", [ev(1)], idempotency_key="k", body_digest="d")
        assert not receipt.duplicate
        assert store.read("g2")[0].prev_hash == GENESIS

    def test_meta_is_written_with_the_batch_only(self, store):
        append(store, "g1", [ev(1)], meta={"status": "open"})
        with pytest.raises(VersionConflict):
            append(store, "g1", [ev(2)], expected_version=5, meta={"status": "active"})
        assert store.get_meta("g1", "status", "missing") == {"status": "open", "missing": None}

    def test_meta_records_version_and_head_with_each_batch(self, store):
        assert store.get_meta("g1", "version", "head") == {"version": None, "head": None}
        first = append(store, "g1", [ev(1), ev(2)])
        assert store.get_meta("g1", "version", "head") == {"version": "2", "head": first.head}
        second = append(store, "g1", [ev(3)], meta={"status": "open"})
        assert store.get_meta("g1", "version", "head") == {"version": "3", "head": second.head}
        with pytest.raises(VersionConflict):
            append(store, "g1", [ev(4)], expected_version=1)
        assert store.get_meta("g1", "version", "head") == {"version": "3", "head": second.head}

    def test_heads_reads_many_games_as_head_reads_each(self, store):
        """The batched read answers what `head` answers for each game: games spread over
        the cluster's slots (and so its nodes), one with no events, one read twice, and one
        whose stream was cut behind the store's back (its recorded head, not the stream's end)."""
        games = [f"game-{n}" for n in range(24)]
        for n, game in enumerate(games):
            append(store, game, [ev(i) for i in range(n % 4 + 1)])
        cut_last_event(store, games[3])
        asked = games + ["never-played", games[0]]
        found = store.heads(asked)
        assert found == {game: store.head(game) for game in asked}
        assert found["never-played"] == (0, GENESIS) and found[games[3]][0] == 4
        assert len({version for version, _ in found.values()}) == 5    # not one answer for all
        assert store.heads([]) == {}

    def test_head_is_the_recorded_one_not_the_end_of_the_stream(self, store):
        """A log cut short behind the store's back still reports the head recorded with the
        last batch (what verify compares the stream's end against), and refuses a batch built
        on the stream's end."""
        receipt = append(store, "g1", [ev(1), ev(2), ev(3)])
        cut_last_event(store, "g1")
        assert len(store.read_raw("g1")) == 2
        assert store.head("g1") == (3, receipt.head)
        end_of_stream = store.read_raw("g1")[-1][1]
        with pytest.raises(VersionConflict):
            store.append("g1", [ev(4)], base_version=2, base_head=end_of_stream)

    def test_events_are_upcast_on_read_never_rewritten(self, store):
        created = NewEvent("game.created", {"game_type": "x"}, schema=1)
        append(store, "g1", [created])
        event = store.read("g1")[0]
        assert event.schema == 2 and event.data["platform"] == {"turn_timeout": None}
        assert '"s":1' in store.read_raw("g1")[0][0]

    def test_snapshot_round_trip(self, store):
        assert store.load_snapshot("g1") is None
        store.save_snapshot("g1", 5, "ab" * 32, b"\x00blob")
        assert store.load_snapshot("g1") == (5, "ab" * 32, b"\x00blob")

    def test_concurrent_writers_never_lose_or_duplicate(self, store):
        """Threads race to append on whatever head they last saw; every accepted event is
        kept exactly once and the chain stays valid."""
        accepted = []
        lock = threading.Lock()

        def writer(wid):
            for i in range(15):
                while True:
                    version, head = store.head("race")
                    try:
                        store.append("race", [ev(i, w=wid)], base_version=version, base_head=head)
                    except VersionConflict:
                        continue
                    with lock:
                        accepted.append((wid, i))
                    break

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        events = store.read("race")
        assert sorted((e.data["w"], e.data["n"]) for e in events) == sorted(accepted)
        assert len(events) == 8 * 15
        prev = GENESIS
        for e in events:
            assert e.hash == chain_hash(prev, e.body)
            prev = e.hash

    def test_idempotency_lookup(self, store):
        assert store.get_idempotent("g1", "k1") is None
        first = append(store, "g1", [ev(1)], idempotency_key="k1", body_digest="d1")
        digest, receipt = store.get_idempotent("g1", "k1")
        assert digest == "d1" and receipt.as_dict() == first.as_dict() and receipt.duplicate
