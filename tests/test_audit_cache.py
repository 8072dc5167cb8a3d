"""A scored game's verify and replay are served from a cache that re-checks the stored bytes
on every call (a log rewritten behind the store's back is audited afresh), and verify,
export and replay are bounded per address (429 too_many_audits with Retry-After)."""

import random
import threading

import pytest

from events.store import unpack_body
from ops.drills import _kit
from service.expensive import AuditGate, TooManyAudits


def _scored(client, **config):
    app = _kit.make_app(client, **config)
    service = app.extensions["games"]
    game_id, _ = _kit.create_open_game(service, "secret-duel", options={"rounds": 2})
    _kit.play_out(service, service.jobs, game_id, random.Random(3))
    assert service.load(game_id).status == "scored"
    return app, service, game_id


def _rewrite(client, game_id, change):
    stream = f"game:{{g:{game_id}}}:events"
    entries = [fields for _, fields in client.xrange(stream)]
    change(entries)
    client.delete(stream)
    for version, fields in enumerate(entries, start=1):
        client.xadd(stream, fields, id=f"{version}-0")


@pytest.mark.parametrize("how", ["swap", "body"])
def test_a_cached_report_never_vouches_for_a_rewritten_log(real_redis, how):
    app, service, game_id = _scored(real_redis)
    http = app.test_client()
    cache = service.audit_cache
    first = http.get(f"/v1/games/{game_id}/verify").json
    hits = cache.hits
    assert http.get(f"/v1/games/{game_id}/verify").json == first and first["ok"] is True
    assert cache.hits == hits + 1

    def change(entries):
        if how == "swap":    # meta, head and the last entry untouched
            entries[4], entries[5] = entries[5], entries[4]
        else:                # one middle body changed (stored as plain text), its stored hash kept
            body = unpack_body(entries[5][b"e"])
            entries[5][b"e"] = body.replace('"v":6', '"v":6 ', 1).encode()

    _rewrite(real_redis, game_id, change)
    service.sessions.forget_all()
    report = http.get(f"/v1/games/{game_id}/verify").json
    assert report["ok"] is False and report["first_divergence"]["version"] in (5, 6), report


def test_receipts_are_part_of_the_key(fake_redis):
    app, service, game_id = _scored(fake_redis)
    http = app.test_client()
    assert http.get(f"/v1/games/{game_id}/verify").json["ok"] is True
    wrong = http.get(f"/v1/games/{game_id}/verify?receipts=3:{'ab' * 32}").json
    assert wrong["ok"] is False


def test_a_scored_replay_is_cached_and_the_same(fake_redis):
    app, service, game_id = _scored(fake_redis)
    http = app.test_client()
    first = http.get(f"/v1/games/{game_id}/replay?at=6").json
    hits = service.audit_cache.hits
    assert http.get(f"/v1/games/{game_id}/replay?at=6").json == first
    assert service.audit_cache.hits == hits + 1


def test_the_gate_bounds_each_address():
    gate = AuditGate(1)
    with gate.slot("a", may_wait=False):
        with pytest.raises(TooManyAudits):
            with gate.slot("a", may_wait=False):
                pass
        with gate.slot("b", may_wait=False):      # another address
            pass
    with gate.slot("a", may_wait=False):
        pass
    # waiting: the second runs once the first is done
    order, entered = [], threading.Event()

    def first():
        with gate.slot("a", may_wait=True):
            entered.set()
            order.append("first")
            threading.Event().wait(0.1)

    thread = threading.Thread(target=first)
    thread.start()
    entered.wait()
    with gate.slot("a", may_wait=True):
        order.append("second")
    thread.join()
    assert order == ["first", "second"] and gate.running() == 0
    assert AuditGate(0).slot("a", False).__enter__() is None   # 0: no bound


def test_past_the_bound_verify_export_and_replay_answer_429_with_retry_after(fake_redis):
    app, service, game_id = _scored(fake_redis, AUDITS_PER_ADDRESS=1)
    http = app.test_client()
    assert http.get(f"/v1/games/{game_id}/verify").status_code == 200
    with app.app_context():
        from service.expensive import gate

        with gate().slot("127.0.0.1", may_wait=False):
            for path in ("verify", "export", "replay?at=2"):
                response = http.get(f"/v1/games/{game_id}/{path}")
                assert response.status_code == 429, (path, response.json)
                assert response.json["error"]["code"] == "too_many_audits"
                assert int(response.headers["Retry-After"]) >= 1
            assert http.get(f"/v1/games/{game_id}/ledger").status_code == 200
    assert http.get(f"/v1/games/{game_id}/export").status_code == 200


def test_a_cached_replay_is_a_copy_a_caller_cannot_change(fake_redis):
    app, service, game_id = _scored(fake_redis)
    first = service.replay(game_id, 6, None)
    first["spectator"] = "changed by a caller"
    again = service.replay(game_id, 6, None)
    assert again["spectator"] != "changed by a caller"
    again["seats"].clear()
    assert service.replay(game_id, 6, None)["seats"]
