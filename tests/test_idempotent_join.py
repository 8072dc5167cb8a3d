"""Creating a game and claiming a seat with an Idempotency-Key, through the HTTP API, on
fakeredis and on a real Redis: a retry gets the original answer (the claim's token
included) although only the token's hash is stored; a lost reply (the append done, its reply
lost) leaves no orphan game and no seat that nobody holds; concurrent retries append once."""

import base64

import pytest
import redis

from ops.drills import _kit
from service.app import create_app
from service.bootstrap import Backend, service_secrets
from service.core.game_service import GameService
from events.index import GameIndex
from service.core.tokens import keyed_game_id, keyed_token, token_hash
from events.index import MemoryGameIndex
from events.store import MemoryEventStore
from workers.memory_jobs import MemoryJobs

BODY = {"type": "secret-duel", "seats": [{}, {}]}


def make_app(client, key_file=None):
    """An API process on `client`; processes given one `key_file` sign with the same keys, as
    a deployment's do (without one, each draws its own: its receipts' signatures differ)."""
    jobs = MemoryJobs()
    return create_app({"ALLOW_SEED": True, "RATE_LIMIT": None, **({"AUDIT_KEY_FILE": key_file} if key_file else {})},
                      backend=Backend(client, client, False), jobs=jobs)


@pytest.fixture
def app(redis_client):
    return make_app(redis_client)


def _header(key):
    """The key a test names, made as long as create and claim keys must be (16 characters, 8
    of them distinct): padded with distinct characters."""
    return {"Idempotency-Key": key + "~0123456789abcdef"[:max(0, 16 - len(key))]} if key else {}


def create(http, key=None, body=BODY):
    return http.post("/v1/games", json=body, headers=_header(key))


def claim(http, game_id, seat, key=None, name="ann"):
    return http.post(f"/v1/games/{game_id}/seats/{seat}", json={"name": name}, headers=_header(key))


def error_of(response, status, code=None):
    assert response.status_code == status, (response.status_code, response.json)
    if code:
        assert response.json["error"]["code"] == code, response.json
    return response.json["error"]


def games_in_store(client) -> set[bytes]:
    return {key for key in client.scan_iter(match="game:{g:*}:meta")}


def every_stored_byte(client) -> bytes:
    """Every key and value in the Redis, concatenated (to look for a secret in it)."""
    out = []
    for key in client.scan_iter():
        out.append(key)
        kind = client.type(key).decode()
        if kind == "string":
            out.append(client.get(key))
        elif kind == "hash":
            for field, value in client.hgetall(key).items():
                out += [field, value]
        elif kind == "zset":
            out += client.zrange(key, 0, -1)
        elif kind == "set":
            out += list(client.smembers(key))
        elif kind == "list":
            out += client.lrange(key, 0, -1)
        elif kind == "stream":
            for _, fields in client.xrange(key):
                for field, value in fields.items():
                    out += [field, value]
    return b"\n".join(out)


def token_fields(client, game_id) -> dict:
    meta = client.hgetall(f"game:{{g:{game_id}}}:meta")
    return {k.decode(): v.decode() for k, v in meta.items() if k.startswith(b"token:")}


def lose_next_append_reply(client, monkeypatch):
    """The next append runs on Redis, then its reply is lost: the caller sees the
    ConnectionError a dropped connection gives."""
    from events.store import RedisEventStore

    real = RedisEventStore._append
    lost = []

    def append(self, *args, **kwargs):
        reply = real(self, *args, **kwargs)
        if not lost:
            lost.append(reply)
            raise redis.exceptions.ConnectionError("the reply was lost")
        return reply

    monkeypatch.setattr(RedisEventStore, "_append", append)
    return lost


# --- create ------------------------------------------------------------------------------
def test_a_create_retried_with_its_key_returns_the_same_game(app, redis_client):
    http = app.test_client()
    first = create(http, "create-1")
    assert first.status_code == 201 and first.headers["Idempotent-Replayed"] == "false"
    claim(http, first.json["game_id"], 0)                 # the game moves on
    again = create(http, "create-1")
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json == first.json                        # the original answer, as it was
    assert http.get("/v1/games").json["total"] == 1 and len(games_in_store(redis_client)) == 1
    other = create(http, "create-2")
    assert other.json["game_id"] != first.json["game_id"] and len(games_in_store(redis_client)) == 2
    plain = [create(http).json["game_id"] for _ in range(2)]
    assert len(set(plain)) == 2                            # without a key: a new game each time


def test_a_create_key_reused_with_another_body_is_409_and_changes_nothing(app, redis_client):
    http = app.test_client()
    first = create(http, "k")
    error = error_of(create(http, "k", {**BODY, "seats": [{}, {}, {}]}), 409, "idempotency_conflict")
    assert error["details"]["field"] == "Idempotency-Key" and "Idempotency-Key" in error["message"]
    assert len(games_in_store(redis_client)) == 1
    assert http.get(f"/v1/games/{first.json['game_id']}").json["version"] == 1
    # A body the service refuses is refused as it would be without a key: 422, nothing kept.
    error_of(create(http, "fresh", {**BODY, "type": "no-such-game"}), 422, "unknown_game_type")
    assert create(http, "fresh").status_code == 201


def test_a_create_whose_reply_was_lost_is_found_by_its_retry(app, redis_client, monkeypatch):
    http = app.test_client()
    lost = lose_next_append_reply(redis_client, monkeypatch)
    error_of(create(http, "lost-create"), 503, "unavailable")
    assert lost and len(games_in_store(redis_client)) == 1   # the game was written
    retry = create(http, "lost-create")
    assert retry.status_code == 201 and retry.headers["Idempotent-Replayed"] == "true"
    assert len(games_in_store(redis_client)) == 1             # not a second game
    lobby = http.get("/v1/games").json
    assert [g["game_id"] for g in lobby["games"]] == [retry.json["game_id"]]   # the retry put it in the lobby
    verify = http.get(f"/v1/games/{retry.json['game_id']}/verify").json
    assert verify["ok"], verify


def test_a_create_whose_lobby_write_was_lost_is_listed_after_its_retry(app, redis_client, monkeypatch):
    http = app.test_client()
    index = app.extensions["games"].index
    real = index.record
    calls = []

    def record(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            raise redis.exceptions.ConnectionError("the lobby write was lost")
        return real(*args, **kwargs)

    monkeypatch.setattr(index, "record", record)
    error_of(create(http, "no-lobby"), 503)
    assert http.get("/v1/games").json["total"] == 0
    retry = create(http, "no-lobby")
    assert retry.status_code == 201
    assert [g["game_id"] for g in http.get("/v1/games").json["games"]] == [retry.json["game_id"]]


def all_at_once(apps, send, n=12) -> list:
    return _kit.all_at_once(apps, send, n)


def test_concurrent_creates_with_one_key_make_one_game(redis_client, tmp_path):
    keys = str(tmp_path / "audit-keys.json")
    apps = [make_app(redis_client, keys) for _ in range(4)]        # four API processes, one Redis, one key file
    results = all_at_once(apps, lambda http: create(http, "together"))
    assert {status for status, _, _ in results} == {201}, results
    assert len({body["game_id"] for _, _, body in results}) == 1
    assert len({str(body) for _, _, body in results}) == 1
    assert sum(replayed == "false" for _, replayed, _ in results) == 1
    assert len(games_in_store(redis_client)) == 1
    game_id = results[0][2]["game_id"]
    assert apps[0].test_client().get(f"/v1/games/{game_id}/verify").json["ok"]


# --- claim -------------------------------------------------------------------------------
def test_a_claim_retried_with_its_key_returns_the_same_token_stored_only_hashed(app, redis_client):
    http = app.test_client()
    game_id = create(http, "g").json["game_id"]
    first = claim(http, game_id, 0, "seat-0")
    assert first.status_code == 201 and first.headers["Idempotent-Replayed"] == "false"
    token = first.json["token"]
    other = claim(http, game_id, 1, "seat-1", name="bob").json["token"]   # the game starts
    again = claim(http, game_id, 0, "seat-0")
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json == first.json                        # status "open", version 2: as first answered
    view = http.get(f"/v1/games/{game_id}/view", headers={"Authorization": f"Bearer {token}"})
    assert view.status_code == 200 and view.json["status"] == "active"
    # One token per seat, stored as its hash only: neither the token nor its bytes are in Redis.
    assert token_fields(redis_client, game_id) == {f"token:{token_hash(token)}": "0",
                                                   f"token:{token_hash(other)}": "1"}
    stored = every_stored_byte(redis_client)
    raw = base64.urlsafe_b64decode(token + "=")
    assert token.encode() not in stored and raw not in stored and token_hash(token).encode() in stored


def test_a_claim_key_reused_with_another_body_is_409_and_the_seat_keeps_one_token(app, redis_client):
    http = app.test_client()
    game_id = create(http).json["game_id"]
    token = claim(http, game_id, 0, "mine").json["token"]
    error = error_of(claim(http, game_id, 0, "mine", name="eve"), 409, "idempotency_conflict")
    assert error["details"]["field"] == "Idempotency-Key"
    error_of(claim(http, game_id, 1, "mine"), 409, "idempotency_conflict")   # the key names seat 0's claim
    error_of(claim(http, game_id, 0, "theirs"), 409, "seat_taken")          # another key: the seat is taken
    assert token_fields(redis_client, game_id) == {f"token:{token_hash(token)}": "0"}
    assert http.get(f"/v1/games/{game_id}").json["version"] == 2
    # The same key on another game is another claim with another token.
    other = create(http).json["game_id"]
    elsewhere = claim(http, other, 0, "mine")
    assert elsewhere.status_code == 201 and elsewhere.json["token"] != token


def test_a_claim_whose_reply_was_lost_leaves_no_seat_without_a_holder(app, redis_client, monkeypatch):
    http = app.test_client()
    game_id = create(http, "g").json["game_id"]
    lose_next_append_reply(redis_client, monkeypatch)
    error_of(claim(http, game_id, 0, "lost-claim"), 503, "unavailable")
    assert http.get(f"/v1/games/{game_id}").json["seats"][0]["kind"] == "player"   # the seat was taken
    retry = claim(http, game_id, 0, "lost-claim")
    assert retry.status_code == 201 and retry.headers["Idempotent-Replayed"] == "true"
    token = retry.json["token"]
    assert token_fields(redis_client, game_id) == {f"token:{token_hash(token)}": "0"}   # held by this token only
    view = http.get(f"/v1/games/{game_id}/view", headers={"Authorization": f"Bearer {token}"})
    assert view.status_code == 200 and view.json["status"] == "open"
    owner = GameIndex(redis_client).token_owner(token_hash(token))
    assert owner == (game_id, 0)                            # the token directory was written by the retry
    assert token.encode() not in every_stored_byte(redis_client)


def test_concurrent_claims_with_one_key_get_one_token(redis_client, tmp_path):
    keys = str(tmp_path / "audit-keys.json")
    apps = [make_app(redis_client, keys) for _ in range(4)]
    game_id = create(apps[0].test_client()).json["game_id"]
    results = all_at_once(apps, lambda http: claim(http, game_id, 1, "one-key"))
    assert {status for status, _, _ in results} == {201}, results
    assert len({str(body["receipt"]) for _, _, body in results}) == 1   # one signed receipt, byte for byte
    tokens = {body["token"] for _, _, body in results}
    assert len(tokens) == 1 and sum(replayed == "false" for _, replayed, _ in results) == 1
    assert token_fields(redis_client, game_id) == {f"token:{token_hash(tokens.pop())}": "1"}
    assert apps[0].test_client().get(f"/v1/games/{game_id}").json["version"] == 2


# --- the header --------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["", "seat-0", "x" * 15, "a b" * 6, "x" * 201, "caf\u00e9" * 4,
                                 "x" * 16, "0" * 200, "ab" * 8, "1212-1212-1212-12", "abcdefgabcdefgab"])
def test_a_malformed_key_is_422_naming_the_header_and_changes_nothing(app, redis_client, key):
    http = app.test_client()
    game_id = create(http).json["game_id"]
    for response in (http.post("/v1/games", json=BODY, headers={"Idempotency-Key": key}),
                     http.post(f"/v1/games/{game_id}/seats/0", json={"name": "a"}, headers={"Idempotency-Key": key})):
        error = error_of(response, 422, "invalid")
        assert error["message"].startswith("Idempotency-Key:"), error
    assert len(games_in_store(redis_client)) == 1
    assert http.get(f"/v1/games/{game_id}").json["version"] == 1


def test_a_weak_key_is_refused_by_name_and_eight_distinct_characters_pass(app):
    """A claim's retry returns the token: a key of one repeated character (or a few) is a 422
    that names the header and the rule; 8 distinct characters in 16 pass."""
    http = app.test_client()
    error = error_of(http.post("/v1/games", json=BODY, headers={"Idempotency-Key": "a" * 16}), 422, "invalid")
    assert error["message"].startswith("Idempotency-Key:") and "8 distinct characters" in error["message"], error
    assert "Idempotency-Key" in error["details"]["errors"]["headers"], error
    game_id = http.post("/v1/games", json=BODY, headers={"Idempotency-Key": "abcdefghabcdefgh"}).json["game_id"]
    assert http.post(f"/v1/games/{game_id}/seats/0", json={"name": "a"},
                     headers={"Idempotency-Key": "hgfedcbahgfedcba"}).status_code == 201


def test_the_longest_key_is_accepted(app):
    http = app.test_client()
    key = "~0123456" * 25
    assert create(http, key).status_code == 201 and create(http, key).headers["Idempotent-Replayed"] == "true"


# --- the derivations ---------------------------------------------------------------------
def test_tokens_and_game_ids_derive_from_the_server_secret_game_seat_and_key(redis_client):
    secret = service_secrets(redis_client)["idem_key"]
    assert len(secret) == 32 and service_secrets(redis_client)["idem_key"] == secret   # made once, kept
    token = keyed_token(secret, "g1", 0, "k")
    assert token == keyed_token(secret, "g1", 0, "k") and len(token) == 43
    assert len({token, keyed_token(secret, "g2", 0, "k"), keyed_token(secret, "g1", 1, "k"),
                keyed_token(secret, "g1", 0, "k2"), keyed_token(b"\x00" * 32, "g1", 0, "k")}) == 5
    game_id = keyed_game_id(secret, "k")
    assert len(game_id) == 16 and int(game_id, 16) >= 0 and game_id != keyed_game_id(b"\x00" * 32, "k")


def test_a_bare_core_without_secrets_still_uses_an_unguessable_key():
    core = GameService(MemoryEventStore(), MemoryGameIndex(), MemoryJobs())
    assert len(core.idem_key) == 32 and core.idem_key == core.idem_key
    other = GameService(MemoryEventStore(), MemoryGameIndex(), MemoryJobs())
    assert other.idem_key != core.idem_key
    session, token = core.claim(core.create("secret-duel", {}, [{}, {}], idempotency_key="c").game_id, 0, "a", "k")
    assert core.claim(session.game_id, 0, "a", "k") == (session, token)
