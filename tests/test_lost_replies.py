"""A command whose Redis reply is lost, sent without an Idempotency-Key: the service's own
Redis client retries the append (service/bootstrap.py: one retry on a connection error), and
the retry must find the append done. Before, the retried claim found its own seat taken (409
`seat_taken`, and nobody held the token) and the retried create found its own game (409
`idempotency_conflict` about a key never sent, and an orphan game).

The Redis behind a proxy that lets the Nth append script run and cuts the connection instead
of its reply (ops/drills/proxy.py)."""

from __future__ import annotations

import pytest

from ops.drills.proxy import FaultyProxy
from service.app import create_app
from service.bootstrap import build_backend
from service.core.tokens import token_hash
from workers.memory_jobs import MemoryJobs

BODY = {"type": "secret-duel", "seats": [{}, {}]}


@pytest.fixture
def lossy(real_redis, redis_server):
    """An app whose Redis loses the reply of the second append script it runs (the first is
    the create that every test starts with)."""
    proxy = FaultyProxy(redis_server.port, match=b"EVALSHA", drop_reply_every=2)
    backend = build_backend({"REDIS_URL": proxy.url})
    app = create_app({"RATE_LIMIT": None}, backend=backend, jobs=MemoryJobs())
    app.extensions["games"].store.append_script    # load the script before counting: the drop is of an append
    yield app, proxy
    proxy.close()


def games_in(client) -> int:
    return sum(1 for _ in client.scan_iter(match="game:{g:*}:meta"))


def test_an_unkeyed_claim_whose_reply_is_lost_gets_its_seat_and_token(lossy, real_redis):
    app, proxy = lossy
    http = app.test_client()
    game_id = http.post("/v1/games", json=BODY).json["game_id"]
    claimed = http.post(f"/v1/games/{game_id}/seats/0", json={"name": "ann"})
    assert proxy.replies_dropped >= 1                            # an append script among them
    assert claimed.status_code == 201, claimed.json
    assert claimed.headers.get("Idempotent-Replayed") != "true"   # to the client, the first answer
    token = claimed.json["token"]
    meta = {k.decode(): v.decode() for k, v in real_redis.hgetall(f"game:{{g:{game_id}}}:meta").items()
            if k.startswith(b"token:")}
    assert meta == {f"token:{token_hash(token)}": "0"}            # the seat is held, by this token
    view = http.get(f"/v1/games/{game_id}/view", headers={"Authorization": f"Bearer {token}"})
    assert view.status_code == 200
    assert http.get(f"/v1/games/{game_id}").json["version"] == 2  # one claim appended, not two


def test_an_unkeyed_create_whose_reply_is_lost_answers_its_game_and_leaves_no_orphan(lossy, real_redis):
    app, proxy = lossy
    http = app.test_client()
    http.post("/v1/games", json=BODY)                             # the first append goes through
    created = http.post("/v1/games", json=BODY)
    assert proxy.replies_dropped >= 1                            # an append script among them
    assert created.status_code == 201, created.json
    assert created.headers.get("Idempotent-Replayed") != "true"
    assert games_in(real_redis) == 2                              # no orphan: each create answered its game
    lobby = {g["game_id"] for g in http.get("/v1/games").json["games"]}
    assert created.json["game_id"] in lobby


def test_drill_short_form_no_orphan_game_and_no_ghost_seat():
    """ops/drills/lost_replies.py, short: every third script's reply lost over a few games."""
    from ops.drills import lost_replies

    figures = lost_replies.run(size=6, seed=2)
    assert figures["replies_lost"] > 0 and figures["ok"], figures
