"""The archive (events/archive.py, service/core/archiving.py): scored games leave Redis for
files at an fsspec URL and every read answers as before, byte for byte; a changed file is
caught; moving is safe to repeat and to interrupt; a game comes back on demand."""

import gzip
import json
import os
import random
import subprocess
import sys
import time

import pytest

from events.archive import Archive, ArchiveError, ArchivingStore, GameArchived
from events.envelope import GENESIS, NewEvent
from events.store import GameRecord, MemoryEventStore, RedisEventStore, keys
from ops.drills import _kit
from ops.drills._kit import wait_until
from ops.drills import archive as drill
from ops.drills.redis_server import RedisProcess, redis_server_path
from service.core.archiving import ARCHIVED, NOT_SCORED, RESTORED, verify_archive

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ev(n):
    return NewEvent(type="thing.happened", data={"n": n})


def append(store, game, events, **kw):
    version, head = store.head(game)
    return store.append(game, events, base_version=version, base_head=head, **kw)


def hot_keys(store, game):
    """The game's keys still in Redis (the in-memory store: its tables)."""
    if isinstance(store, MemoryEventStore):
        return [t for t in ("_events", "_meta", "_idem", "_snaps") if game in getattr(store, t)]
    return [name for name, key in keys(game).items() if name != "arch" and store.redis.exists(key)]


@pytest.fixture(params=["memory", "folder"])
def archive(request, tmp_path):
    """An archive in fsspec's memory filesystem and in a local folder."""
    if request.param == "memory":
        archive = Archive(f"memory://archive-{os.urandom(6).hex()}")
        yield archive
        if archive.fs.exists(archive.root):
            archive.fs.rm(archive.root, recursive=True)
    else:
        yield Archive(str(tmp_path / "archive"))


class TestSwapContract:
    """swap_out / swap_in on every store (in memory, fakeredis, a real redis-server)."""

    def test_a_game_goes_out_whole_and_comes_back_the_same(self, store, archive):
        first = append(store, "g1", [ev(1), ev(2)], idempotency_key="k1", body_digest="d1",
                       meta={"status": "scored", "seed": "ab" * 32, "token:t1": "0"})
        append(store, "g1", [ev(3)], idempotency_key="k2", body_digest="d2")
        store.set_meta("g1", {"waits": ""})
        store.save_snapshot("g1", 2, first.head, b"{}")
        before = (store.read_raw("g1"), store.head("g1"), store.get_meta("g1", "status", "seed", "waits"),
                  store.get_idempotent("g1", "k1"), store.get_meta_prefixed("g1", "token:"))
        digest = store.swap_out("g1", archive.put)
        assert digest and store.archived_digest("g1") == digest
        assert hot_keys(store, "g1") == [] and store.head("g1")[0] == 0
        assert store.swap_out("g1", archive.put) is None            # already out: nothing to do
        # a late job's bookkeeping never leaves a stray key behind an archived game
        store.set_meta("g1", {"waits": "bot"})
        store.save_snapshot("g1", 3, "x" * 64, b"{}")
        assert hot_keys(store, "g1") == []
        cold = ArchivingStore(store, archive)
        assert (cold.read_raw("g1"), cold.head("g1"), cold.get_meta("g1", "status", "seed", "waits"),
                cold.get_idempotent("g1", "k1"), cold.get_meta_prefixed("g1", "token:")) == before
        assert cold.peek("g1", "k2")[1:] == before[1]
        append(store, "g2", [ev(1)])
        assert cold.heads(["g1", "g2", "g3"]) == {"g1": before[1], "g2": store.head("g2"), "g3": (0, GENESIS)}
        assert cold.read_raw("g1", 1, 2) == before[0][1:2]
        with pytest.raises(GameArchived):
            cold.append("g1", [ev(4)], base_version=3, base_head=before[1][1])
        with pytest.raises(GameArchived):     # even one that would start the stream again
            store.append("g1", [ev(4)], base_version=0, base_head=GENESIS)
        assert hot_keys(store, "g1") == []
        record = archive.get("g1", digest)
        assert store.swap_in("g1", record, digest) and store.archived_digest("g1") is None
        assert (store.read_raw("g1"), store.head("g1"), store.get_meta("g1", "status", "seed", "waits"),
                store.get_idempotent("g1", "k1"), store.get_meta_prefixed("g1", "token:")) == before
        assert not store.swap_in("g1", record, digest)               # back already
        again = append(store, "g1", [ev(4)], idempotency_key="k1", body_digest="d1")
        assert again.duplicate and again.version == 2                # its idempotency records came back

    def test_a_game_that_moves_while_it_is_written_stays(self, store, archive):
        append(store, "g1", [ev(1)])

        def write_while_a_command_lands(record):
            append(store, "g1", [ev(2)])
            return archive.put(record)

        assert store.swap_out("g1", write_while_a_command_lands) is None
        assert store.head("g1")[0] == 2 and store.archived_digest("g1") is None

    def test_a_write_that_fails_changes_nothing(self, store):
        append(store, "g1", [ev(1)])
        before = store.read_raw("g1")

        def broken(record):
            raise OSError("the archive is unreachable")

        with pytest.raises(OSError):
            store.swap_out("g1", broken)
        assert store.read_raw("g1") == before and store.archived_digest("g1") is None

    def test_an_unknown_game_is_not_moved(self, store, archive):
        assert store.swap_out("nope", archive.put) is None and store.archived_digest("nope") is None


def rewritten(data: bytes, old: bytes, new: bytes) -> bytes:
    """An archive file's content changed by someone who knows its format."""
    changed = gzip.decompress(data).replace(old, new, 1)
    assert changed != gzip.decompress(data)
    return gzip.compress(changed)


def archived(client) -> list:
    return list(client.scan_iter(match="game:*:arch"))


class TestArchiveFiles:
    def test_a_record_is_stored_under_its_digest_and_read_back(self, archive):
        record = GameRecord("0123456789abcdef", (("{}", "a" * 64),), {"version": "1"}, {"k": ("d", 1, 1)})
        digest = archive.put(record)
        assert archive.put(record) == digest                         # the same content, the same file
        assert archive.get("0123456789abcdef", digest) == record
        assert [(g, d) for g, d, _ in archive.files()] == [("0123456789abcdef", digest)]

    def test_a_changed_or_missing_file_is_refused(self, archive):
        record = GameRecord("0123456789abcdef", (("{}", "a" * 64),))
        digest = archive.put(record)
        path = archive.path(record.game_id, digest)
        archive.fs.pipe_file(path, rewritten(archive.fs.cat_file(path), b"a" * 64, b"b" * 64))
        with pytest.raises(ArchiveError, match="changed"):
            archive.get(record.game_id, digest)
        archive.fs.rm(path)
        with pytest.raises(ArchiveError, match="missing"):
            archive.get(record.game_id, digest)


# --- through the service and the API ------------------------------------------------------

def archived_app(client, folder, **config):
    return _kit.make_app(client, ARCHIVE_URL=str(folder), ARCHIVE_AFTER=0, **config)


def finished_games(app, rng):
    """A scored game of every type, seat 0 a person's (its token kept), the last seat a bot."""
    service = app.extensions["games"]
    games = []
    for name in _kit.service_games():
        players = _kit.get_game(name).MIN_PLAYERS
        game_id, tokens = _kit.create_open_game(service, name, seed=f"{rng.getrandbits(256):064x}",
                                                bots=(players - 1,))
        _kit.play_out(service, service.jobs, game_id, rng)
        session = service.load(game_id)
        assert session.status == "scored"
        games.append((game_id, tokens, session.version))
    return games


def reads(http, games):
    """Every read a client makes of each game, and the lobby, as bytes."""
    out = {}
    for game_id, tokens, version in games:
        out.update({(game_id, *k): v for k, v in drill.reads_of(http, game_id, tokens[0], version).items()})
    out.update(drill.lobby_reads(http))
    return out


def every_key(client, pattern: str) -> list:
    """KEYS of every primary on a cluster (a plain KEYS asks one node), else of the server."""
    from redis.cluster import RedisCluster

    if isinstance(client, RedisCluster):
        return client.keys(pattern, target_nodes=RedisCluster.PRIMARIES)
    return client.keys(pattern)


def test_every_read_of_an_archived_game_answers_as_before(redis_client, tmp_path):
    app = archived_app(redis_client, tmp_path / "archive")
    service, http = app.extensions["games"], app.test_client()
    games = finished_games(app, random.Random(46))
    before = reads(http, games)
    statuses = [v[0] for k, v in before.items() if isinstance(v, tuple)]
    assert statuses and all(status == 200 for status in statuses)
    memory_before = len(every_key(redis_client, "game:*"))
    assert service.archive_due() == {ARCHIVED: len(games)}
    assert service.archive_due() == {}                                # nothing left to move
    for game_id, _, _ in games:
        assert service.is_archived(game_id) and service.archive_game(game_id) == ARCHIVED   # a no-op
    left = {k.decode() for k in every_key(redis_client, "game:*")}
    assert left == {keys(g)["arch"] for g, _, _ in games} and len(left) < memory_before
    fresh = archived_app(redis_client, tmp_path / "archive")       # a new process: nothing cached
    assert reads(fresh.test_client(), games) == before
    assert reads(http, games) == before
    # a seat's token still works, and an action on the finished game is refused as before
    game_id, tokens, version = games[0]
    refused = http.post(f"/v1/games/{game_id}/actions", json={"action": {"type": "pass"}},
                        headers={"Authorization": f"Bearer {tokens[0]}", "Idempotency-Key": "late-move"})
    assert refused.status_code in (409, 422) and service.is_archived(game_id)
    # back into Redis on demand: the same answers again
    assert service.restore_game(game_id) == RESTORED and not service.is_archived(game_id)
    assert reads(http, games) == before


def test_a_changed_archive_file_is_caught_by_verify(redis_client, tmp_path):
    app = archived_app(redis_client, tmp_path / "archive")
    service, http = app.extensions["games"], app.test_client()
    games = finished_games(app, random.Random(7))[:2]
    for game_id, _, _ in games:
        assert service.archive_game(game_id) == ARCHIVED
    archive = service.archiving.archive
    (changed, _, _), (untouched, _, _) = games
    assert http.get(f"/v1/games/{changed}").status_code == 200        # read once: its record cached
    path = archive.path(changed, service.store.archived_digest(changed))
    with open(path, "rb") as handle:
        data = handle.read()
    with open(path, "wb") as handle:        # a seat changed in one event, the file gzipped again
        handle.write(rewritten(data, b'\\"seat\\":0', b'\\"seat\\":1'))
    assert http.get(f"/v1/games/{changed}").status_code == 200      # what this process checked before
    report = http.get(f"/v1/games/{changed}/verify").json             # verify reads the file again
    assert report["ok"] is False and report["first_divergence"]["check"] == "archive"
    assert "changed" in report["first_divergence"]["message"]
    view = archived_app(redis_client, tmp_path / "archive").test_client().get(f"/v1/games/{changed}")
    assert view.status_code == 500 and view.json["error"]["code"] == "archive_unreadable"
    assert http.get(f"/v1/games/{untouched}/verify").json["ok"]
    offline = verify_archive(archive)
    assert not offline["ok"] and [p["game_id"] for p in offline["problems"]] == [changed]


def test_readiness_still_checks_the_append_script_behind_the_archive(redis_client, tmp_path):
    app = archived_app(redis_client, tmp_path / "archive")
    app.test_client().post("/v1/games", json={"type": "big-shot", "seats": [{}, {}]})   # the script loaded
    checks = app.test_client().get("/readyz").json["checks"]
    assert checks["append_script"] == {"ok": True}


def test_only_scored_games_move(redis_client, tmp_path):
    app = archived_app(redis_client, tmp_path / "archive")
    service = app.extensions["games"]
    game_id, _ = _kit.create_open_game(service, "big-shot", seed="ab" * 32)
    assert service.archive_game(game_id) == NOT_SCORED and not service.is_archived(game_id)


def test_games_wait_in_redis_for_their_age(redis_client, tmp_path):
    app = archived_app(redis_client, tmp_path / "archive")
    service = app.extensions["games"]
    games = finished_games(app, random.Random(3))
    service.archive_after = 3600
    assert service.archive_due() == {}
    assert service.archive_due(now=time.time() + 3601) == {ARCHIVED: len(games)}
    assert all(service.is_archived(g) for g, _, _ in games)


def test_the_cli_lists_and_verifies_the_archive_offline(redis_client, tmp_path):
    app = archived_app(redis_client, tmp_path / "archive")
    games = finished_games(app, random.Random(5))
    app.extensions["games"].archive_due()
    run = lambda *args: subprocess.run([sys.executable, "-m", "service.cli", "archive", *args, "--archive",
                                        str(tmp_path / "archive")], cwd=ROOT, capture_output=True, text=True,
                                       timeout=60, env={k: v for k, v in os.environ.items() if k != "REDIS_URL"})
    listed = json.loads(run("list", "--json").stdout)
    assert sorted(f["game_id"] for f in listed) == sorted(g for g, _, _ in games)
    verified = run("verify")
    assert verified.returncode == 0 and json.loads(verified.stdout) == {"ok": True, "files": len(games), "problems": []}
    with open(listed[0]["path"], "ab") as handle:
        handle.write(b" ")
    broken = run("verify")
    assert broken.returncode == 1 and json.loads(broken.stdout)["problems"][0]["game_id"] == listed[0]["game_id"]


@pytest.mark.slow
@pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")
def test_kill_9_while_archiving_loses_and_changes_nothing(tmp_path):
    """`speculation archive move --all-scored` killed with -9 at random moments: every game is
    readable (in Redis or in the archive), none changed; the next move finishes the work."""
    import redis

    server = RedisProcess(durable=True).start()
    try:
        client = redis.Redis.from_url(server.url)
        app = archived_app(client, tmp_path / "archive")
        games = [g for n in range(5) for g in finished_games(app, random.Random(n))]
        exports = {g: app.test_client().get(f"/v1/games/{g}/export").get_data() for g, _, _ in games}
        env = {**os.environ, "REDIS_URL": server.url}
        kills = 0
        for round_ in range(1, 4):
            proc = subprocess.Popen([sys.executable, "-m", "service.cli", "archive", "move", "--all-scored",
                                     "--archive", str(tmp_path / "archive")], cwd=ROOT, env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # killed once it has moved a few more games: in the middle of its work
            target = min(len(games) - 1, len(archived(client)) + round_)
            assert _kit.wait_until(lambda: len(archived(client)) >= target or proc.poll() is not None, 60, 0.005)
            if proc.poll() is None:
                proc.kill()
                kills += 1
            proc.wait()
            server.kill()                           # and Redis with it, as a machine's crash would
            server.start()
            client.connection_pool.disconnect()
            after = archived_app(client, tmp_path / "archive").test_client()
            for game_id, _, _ in games:
                assert after.get(f"/v1/games/{game_id}/export").get_data() == exports[game_id], game_id
        assert kills >= 1
        done = subprocess.run([sys.executable, "-m", "service.cli", "archive", "move", "--all-scored",
                               "--archive", str(tmp_path / "archive")], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        service = archived_app(client, tmp_path / "archive").extensions["games"]
        assert all(service.is_archived(g) for g, _, _ in games)
        assert all(service.verify(g)["ok"] for g, _, _ in games)
        assert verify_archive(service.archiving.archive)["ok"]
    finally:
        server.stop()


class TestArchiveQueue:
    """The index's queue of scored games waiting for the archive, on every index."""

    def test_a_scored_game_is_queued_once_and_due_after_its_age(self, index):
        index.record("g1", "big-shot", "active", 1)
        assert index.archive_queue_due(time.time() + 10) == []        # not scored: not queued
        index.record("g1", "big-shot", "scored", 1)
        g1_by = time.time()                                            # g1 was queued by now
        assert index.archive_queue_due(time.time() + 10) == ["g1"]
        assert index.archive_queue_due(time.time() - 3600) == []
        assert wait_until(lambda: time.time() > g1_by, 1, every=0.001)
        index.record("g1", "big-shot", "scored", 1)                     # recorded again: its first time kept
        index.record("g2", "big-shot", "scored", 2)
        assert index.archive_queue_due(g1_by) == ["g1"]
        assert index.archive_queue_due(time.time() + 10) == ["g1", "g2"]   # oldest first
        assert index.archive_queue_due(time.time() + 10, limit=1) == ["g1"]
        index.archive_queue_done("g1")
        index.archive_queue_done("g2")
        assert index.archive_queue_due(time.time() + 10) == []
