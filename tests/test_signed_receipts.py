"""Signed receipts (docs/audit.md, `speculation-receipt/1`) through the API: every route that
appends to a game answers with one that verifies with GET /v1/keys' answer alone; the
creation's holds the game's seed commitment; each one's head is the export's hash at its
version; a retry gets the same bytes; a rotation keeps old receipts verifying; any change
fails. Also the key file under the stack, the keys CLI and the reload of a changed file."""

from __future__ import annotations

import json
import os
import random
import stat
import time

import pytest
from click.testing import CliRunner

from events.signing import Keyring, SignatureError, SigningKey, b64url, unb64url, verify_signed
from service.app import create_app
from service.audit import keys as audit_keys
from service.audit.keys import ServiceKeys, rotate_key_file
from service.bootstrap import Backend
from workers.memory_jobs import MemoryJobs

from test_accounts import CHEAP, Api

SETTINGS = {"ALLOW_SEED": True, "RATE_LIMIT": None, **CHEAP, "SIGNUP_LIMIT": "1000/60", "SIGNIN_LIMIT": "1000/60",
            "CHALLENGE_LIMIT": "1000/3600", "CREATE_LIMIT": "1000/60"}
SEED = "7" * 64
MEMBERS = {"format", "game", "first_version", "version", "head", "time", "include_by", "key_id", "signature"}


def make_api(client, **settings) -> Api:
    app = create_app({**SETTINGS, **settings}, backend=Backend(client, client, False), jobs=MemoryJobs())
    return Api(app, app.extensions["games"].jobs)


@pytest.fixture
def api(fake_redis):
    return make_api(fake_redis)


def public_keys(api) -> list[dict]:
    answer = api.http.get("/v1/keys")
    assert answer.status_code == 200
    return answer.json["keys"]


def export_hashes(api, game_id) -> tuple[dict, dict]:
    """The export's header and {version: hash} (a spectator's export: hashes of every event)."""
    lines = [json.loads(line) for line in api.http.get(f"/v1/games/{game_id}/export").data.decode().splitlines()]
    return lines[0], {record["version"]: record["hash"] for record in lines[1:]}


def check(api, answer, status=(200, 201)) -> dict:
    """The answer's receipt, checked as a player holding only GET /v1/keys would check it, and
    against the game's export."""
    assert answer.status_code in status, answer.json
    receipt = answer.json["receipt"]
    assert set(receipt) - {"seed_commitment"} == MEMBERS
    assert receipt["format"] == "speculation-receipt/1"
    verify_signed(receipt, public_keys(api))
    game_id = receipt["game"]
    header, hashes = export_hashes(api, game_id)
    assert hashes[receipt["version"]] == receipt["head"]
    assert 1 <= receipt["first_version"] <= receipt["version"] <= header["version"]
    assert receipt["include_by"] == receipt["time"] + 10_000
    assert ("seed_commitment" in receipt) == (receipt["first_version"] == 1)
    if receipt["first_version"] == 1:
        assert receipt["seed_commitment"] == header["commitment"]
    # deterministic: the log regenerates it byte for byte (what a dispute bundle does)
    core = api.service
    assert receipt in core.receipts.of_log(game_id, core.store.read_raw(game_id))
    return receipt


def act_once(api, game_id, token, seat, key):
    """(the answer, the body sent): the seat's first legal action, each template's least value."""
    view = api.call("GET", f"/v1/games/{game_id}/view", token, query_string={"seat": seat}).json
    action = {k: v["min"] if isinstance(v, dict) else v for k, v in view["legal_actions"][0].items()}
    body = {"action": action, "expected_version": view["version"]}
    return api.call("POST", f"/v1/games/{game_id}/actions", token, headers={"Idempotency-Key": key}, json=body), body


# --- every appending route ---------------------------------------------------------------------

def test_create_claim_and_act_answer_receipts_that_verify(api):
    created = api.http.post("/v1/games", json={"type": "secret-duel", "seats": [{}, {}], "seed": SEED})
    creation = check(api, created)
    game_id = created.json["game_id"]
    assert (creation["first_version"], creation["version"]) == (1, 1)
    assert creation["seed_commitment"] == created.json["commitment"]
    guest = api.http.post(f"/v1/games/{game_id}/seats/0", json={"name": "ada"})
    assert (check(api, guest)["first_version"], guest.json["receipt"]["version"]) == (2, 2)
    alice, _ = api.account("alice")
    seated = api.claim(game_id, 1, alice)                    # an account's claim, which starts the game
    starting = check(api, seated)
    assert starting["first_version"] == 3 and starting["version"] == seated.json["version"] > 3
    tokens = {0: guest.json["token"], 1: alice}
    for n in range(3):
        to_act = api.http.get(f"/v1/games/{game_id}").json["to_act"]
        if not to_act:
            break
        moved = check(api, act_once(api, game_id, tokens[to_act[0]], to_act[0], f"move-{n}")[0])
        assert moved["first_version"] == moved["version"] - len(
            api.service.store.read_raw(game_id, moved["first_version"] - 1, moved["version"])) + 1


def test_challenge_accept_decline_cancel_and_rematch_answer_receipts_that_verify(redis_client):
    api = make_api(redis_client)
    alice, _ = api.account("alice")
    bob, _ = api.account("bob")
    challenged = api.call("POST", "/v1/challenges", alice, json={"type": "secret-duel",
                                                                 "seats": [{"me": True}, {"account": "bob"}]})
    receipt = check(api, challenged)
    game_id = challenged.json["game_id"]
    assert (receipt["first_version"], receipt["version"]) == (2, 2)      # the challenger's claim, after the creation
    accepted = check(api, api.call("POST", f"/v1/challenges/{game_id}/accept", bob))
    assert accepted["first_version"] == 3 and accepted["version"] == api.http.get(f"/v1/games/{game_id}").json["version"]
    api.play_out(game_id, {0: alice, 1: bob}, random.Random(1))
    assert api.http.get(f"/v1/games/{game_id}").json["status"] == "scored"
    rematch = api.call("POST", f"/v1/games/{game_id}/rematch", bob, json={})
    asked = check(api, rematch)
    assert asked["game"] == rematch.json["game_id"] != game_id and asked["first_version"] == 2
    declined = check(api, api.call("POST", f"/v1/challenges/{asked['game']}/decline", alice))
    assert declined["first_version"] == declined["version"] == 3 and declined["game"] == asked["game"]
    again = api.call("POST", "/v1/challenges", alice, json={"type": "secret-duel",
                                                           "seats": [{"me": True}, {"account": "bob"}]}).json
    cancelled = check(api, api.call("POST", f"/v1/challenges/{again['game_id']}/cancel", alice))
    assert cancelled["first_version"] == cancelled["version"] == 3


# --- retries -----------------------------------------------------------------------------------

def test_a_retry_with_the_same_key_gets_the_same_receipt(api):
    def create():
        return api.http.post("/v1/games", json={"type": "secret-duel", "seats": [{}, {}], "seed": SEED},
                             headers={"Idempotency-Key": "create-the-duel-0123"})

    first = create()
    game_id = first.json["game_id"]
    claims = [api.http.post(f"/v1/games/{game_id}/seats/{seat}", json={"name": f"p{seat}"},
                            headers={"Idempotency-Key": f"claim-seat-{seat}-abcdefgh"}) for seat in (0, 1)]
    tokens = {seat: claim.json["token"] for seat, claim in enumerate(claims)}
    seat = api.http.get(f"/v1/games/{game_id}").json["to_act"][0]
    moved, body = act_once(api, game_id, tokens[seat], seat, "the-move")
    check(api, moved)
    time.sleep(0.005)          # a retry's own clock is later: its receipt must not be
    again = create()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json["receipt"] == first.json["receipt"]
    for seat_, claim in enumerate(claims):
        retried = api.http.post(f"/v1/games/{game_id}/seats/{seat_}", json={"name": f"p{seat_}"},
                                headers={"Idempotency-Key": f"claim-seat-{seat_}-abcdefgh"})
        assert retried.headers["Idempotent-Replayed"] == "true"
        assert retried.json["receipt"] == claim.json["receipt"]
    retried = api.call("POST", f"/v1/games/{game_id}/actions", tokens[seat], headers={"Idempotency-Key": "the-move"},
                       json=body)
    assert retried.headers["Idempotent-Replayed"] == "true", retried.json
    assert retried.json["receipt"] == moved.json["receipt"]


# --- the keys and their rotation -------------------------------------------------------------------

def test_apps_without_a_key_file_share_their_process_key(fake_redis):
    """Several apps in one process (a test's "API processes" on one Redis) sign with the
    process's one in-memory key: a retry answered by another of them gets the same bytes."""
    first, second = make_api(fake_redis), make_api(fake_redis)
    body = {"type": "secret-duel", "seats": [{}, {}], "seed": SEED}
    key = {"Idempotency-Key": "one-create-two-apps"}
    created = first.http.post("/v1/games", json=body, headers=key)
    again = second.http.post("/v1/games", json=body, headers=key)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json["receipt"] == created.json["receipt"]
    assert public_keys(first) == public_keys(second)


def test_get_keys_is_public_and_cacheable(api):
    answer = api.http.get("/v1/keys")
    assert answer.status_code == 200
    assert answer.headers["Cache-Control"] == "public, max-age=60"
    (key,) = answer.json["keys"]
    assert key["algorithm"] == "Ed25519" and key["valid_until"] is None and len(unb64url(key["public_key"])) == 32
    assert key["key_id"] == api.app.extensions["keyring"].current.key_id


def test_after_a_rotation_old_receipts_verify_and_new_ones_use_the_new_key(fake_redis, tmp_path, monkeypatch):
    monkeypatch.setattr(audit_keys, "RELOAD_CHECK_SECONDS", 0.0)   # read the changed file at once
    path = str(tmp_path / "audit-keys.json")
    api = make_api(fake_redis, AUDIT_KEY_FILE=path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    first = api.http.post("/v1/games", json={"type": "secret-duel", "seats": [{}, {}], "seed": SEED})
    game_id = first.json["game_id"]
    claim_key = {"Idempotency-Key": "claim-before-the-rotation"}
    claimed = api.http.post(f"/v1/games/{game_id}/seats/0", json={"name": "ada"}, headers=claim_key)
    old_key = first.json["receipt"]["key_id"]
    time.sleep(0.005)
    rotated = rotate_key_file(path, delay_ms=0)
    assert rotated.current.key_id != old_key
    keys = public_keys(api)
    assert [k["key_id"] for k in keys] == [rotated.current.key_id, old_key]
    for receipt in (first.json["receipt"], claimed.json["receipt"]):
        verify_signed(receipt, keys)
    later = check(api, api.http.post(f"/v1/games/{game_id}/seats/1", json={"name": "bob"}))
    assert later["key_id"] == rotated.current.key_id
    retried = api.http.post(f"/v1/games/{game_id}/seats/0", json={"name": "ada"}, headers=claim_key)
    assert retried.json["receipt"] == claimed.json["receipt"]          # still the old key's: its time was then
    # the old key cannot vouch for a time after its end, even signed by its own private half
    ended = rotated.keys[0]
    forged = Keyring([SigningKey.from_private(ended.private_raw, ended.valid_from, None)]).sign(later)
    assert forged["key_id"] == old_key
    with pytest.raises(SignatureError, match="validity"):
        verify_signed(forged, keys)


def test_a_changed_file_is_read_again_at_most_once_a_second(tmp_path):
    path = str(tmp_path / "audit-keys.json")
    now = [100.0]
    held = ServiceKeys.from_file(path, clock=lambda: now[0])
    before = held.current.key_id
    rotate_key_file(path, delay_ms=0)
    now[0] += 0.5
    assert held.current.key_id == before                      # not looked at yet
    now[0] += 0.5
    assert held.current.key_id != before
    assert held.public_keys()[1]["key_id"] == before


def test_a_receipt_altered_in_any_member_fails(api):
    created = api.http.post("/v1/games", json={"type": "secret-duel", "seats": [{}, {}], "seed": SEED})
    receipt, keys = created.json["receipt"], public_keys(api)
    verify_signed(receipt, keys)
    for member, value in receipt.items():
        if member == "signature":
            raw = bytearray(unb64url(value))
            raw[0] ^= 1
            changed = b64url(bytes(raw))
        elif isinstance(value, int):
            changed = value + 1
        else:
            changed = value[:-1] + ("1" if value[-1] == "0" else "0")
        with pytest.raises(SignatureError):
            verify_signed({**receipt, member: changed}, keys)
    without = {k: v for k, v in receipt.items() if k != "seed_commitment"}
    with pytest.raises(SignatureError):
        verify_signed(without, keys)


# --- one key file for every process ---------------------------------------------------------------

def test_the_stack_makes_one_key_file_its_processes_share(tmp_path, monkeypatch, fake_redis):
    from service.stack import build_stack

    monkeypatch.delenv("SPECULATION_AUDIT_KEY_FILE", raising=False)
    data = str(tmp_path / "data")

    def children_env():
        stack, facts = build_stack(host="127.0.0.1", port=5999, data_dir=data, redis_url="redis://127.0.0.1:1/0",
                                   redis_port=6399, workers=2, say=lambda line: None)
        envs = {child.env["SPECULATION_AUDIT_KEY_FILE"] for child in stack.children}
        assert len(envs) == 1 and facts["keys"] in envs
        return envs.pop()

    path = children_env()
    assert path == os.path.join(os.path.abspath(data), "audit-keys.json")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    first = Keyring.load(path).keys
    assert children_env() == path and Keyring.load(path).keys == first      # kept across restarts
    # an API process and a worker's core built from the same setting sign with the same key
    api = make_api(fake_redis, AUDIT_KEY_FILE=path)
    from service.bootstrap import build_core
    worker_core = build_core({**SETTINGS, "AUDIT_KEY_FILE": path}, Backend(fake_redis, fake_redis, False), MemoryJobs())
    assert worker_core.keys.current.key_id == api.app.extensions["keyring"].current.key_id == first[0].key_id


def test_keys_show_and_rotate(tmp_path):
    from service.cli import cli

    runner = CliRunner()
    path = str(tmp_path / "audit-keys.json")
    missing = runner.invoke(cli, ["keys", "show", "--file", path])
    assert missing.exit_code == 2 and "no key file" in missing.output
    ring = Keyring.load_or_create(path, int(time.time() * 1000) - 60_000)
    shown = runner.invoke(cli, ["keys", "show", "--data", str(tmp_path), "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output) == {"keys": ring.public_keys()}
    rotated = runner.invoke(cli, ["keys", "rotate", "--file", path])
    assert rotated.exit_code == 0, rotated.output
    after = Keyring.load(path)
    assert [k.key_id for k in after.keys] == [ring.current.key_id, after.current.key_id]
    assert after.current.valid_from == after.keys[0].valid_until > time.time() * 1000   # takes over in a few seconds
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    both = runner.invoke(cli, ["keys", "show", "--data", str(tmp_path), "--file", path])
    assert both.exit_code == 2
