"""Snapshots are data: a session survives the JSON codec unchanged at every point of every
golden game, the fold goes on from a decoded snapshot as from the log, and nothing but the
rules' own value types can come out of one (a pickle in Redis is a cache miss, never code)."""

import json
import os
import pickle

import pytest

from events.store import MemoryEventStore
from projections import snapshot
from projections.session import fold
from tests.golden_games import decode_export, golden_names, load_case


@pytest.mark.parametrize("name", golden_names())
def test_every_point_of_a_golden_game_round_trips_and_folds_on(name):
    header, _, events = decode_export(load_case(name)[0])
    whole = fold(events, header["game_id"])
    step = max(1, len(events) // 12)
    for at in list(range(1, len(events), step)) + [len(events)]:
        session = fold(events[:at], header["game_id"])
        blob = snapshot.dumps(session)
        assert json.loads(blob)["format"] == snapshot.FORMAT
        back = snapshot.loads(blob)
        assert back == session, at
        assert snapshot.dumps(back) == blob, at            # one state, one encoding
        assert fold(events[at:], header["game_id"], back) == whole, at


class _Boom:
    def __reduce__(self):
        return (os.system, ("touch /tmp/should-never-exist",))


@pytest.mark.parametrize("blob", [
    pickle.dumps(_Boom()),
    b"",
    b"[]",
    json.dumps({"format": "session-json/0", "session": {}}).encode(),
    json.dumps({"format": snapshot.FORMAT, "session": {"$c": "os:system", "v": {}}}).encode(),
    json.dumps({"format": snapshot.FORMAT, "session": {"$c": "subprocess:Popen", "v": {}}}).encode(),
    json.dumps({"format": snapshot.FORMAT, "session": {"$c": "projections.session:fold", "v": {}}}).encode(),
    json.dumps({"format": snapshot.FORMAT, "session": {"$c": "projections.session:Seat", "v": {"kind": "x"}}}).encode(),
    json.dumps({"format": snapshot.FORMAT, "session": {"$c": "projections.session:Seat.__init__", "v": {}}}).encode(),
    json.dumps({"format": snapshot.FORMAT, "session": {"$d": [[{"$t": []}]]}}).encode(),
])
def test_anything_but_a_session_of_this_format_is_refused(blob):
    with pytest.raises(snapshot.SnapshotError):
        snapshot.loads(blob)


def test_only_the_rules_value_types_are_encoded():
    with pytest.raises(snapshot.SnapshotError):
        snapshot.dumps(object())


def test_a_pickle_in_the_store_is_ignored_and_never_run(tmp_path):
    from events.index import MemoryGameIndex
    from service.core.game_service import GameService
    from workers.memory_jobs import MemoryJobs

    store = MemoryEventStore()
    service = GameService(store, MemoryGameIndex(), MemoryJobs(), snapshot_every=2)
    game_id = service.create("speculation", {}, [{}, {}, {}]).game_id
    for seat in range(3):
        service.claim(game_id, seat, f"p{seat}")
    version, head = store.head(game_id)
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    store.save_snapshot(game_id, version, head, pickle.dumps(Evil()))
    fresh = GameService(store, MemoryGameIndex(), MemoryJobs(), snapshot_every=2)
    assert fresh.load(game_id).version == version
    assert not marker.exists()
