"""Accounts through the HTTP API, on fakeredis and on a real server: sign-up, sign-in and its
lock, credentials and scopes, seats that belong to accounts, "my games", the account's event
stream, password change, recovery, sign-out everywhere, closing, CSRF for the cookie session."""

from __future__ import annotations

import json
import random
import threading

import pytest

from service.app import create_app
from service.bootstrap import Backend
from workers.memory_jobs import MemoryJobs

SEED = "cd" * 32
PASSWORD = "correct horse battery staple"
CHEAP = {"ARGON2_TIME_COST": 1, "ARGON2_MEMORY_KIB": 1024}


class Api:
    def __init__(self, app, jobs):
        self.app, self.jobs, self.http = app, jobs, app.test_client()
        self.service = app.extensions["games"]

    def sign_up(self, username, password=PASSWORD):
        return self.http.post("/v1/accounts", json={"username": username, "password": password})

    def account(self, username, scopes=("play", "read", "account")):
        """A new account's personal token with these scopes (and its session's token)."""
        assert self.sign_up(username).status_code == 201
        session = self.http.post("/v1/sessions", json={"username": username, "password": PASSWORD}).json["token"]
        made = self.call("POST", "/v1/account/tokens", session, json={"label": "test", "scopes": list(scopes)})
        assert made.status_code == 201, made.json
        return made.json["token"], session

    def call(self, method, path, token=None, **kw):
        headers = dict(kw.pop("headers", {}))
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return self.http.open(path, method=method, headers=headers, **kw)

    def create(self, seats=2):
        response = self.http.post("/v1/games", json={"type": "secret-duel", "seats": [{}] * seats, "seed": SEED})
        assert response.status_code == 201, response.json
        return response.json["game_id"]

    def claim(self, game_id, seat, token):
        return self.call("POST", f"/v1/games/{game_id}/seats/{seat}", token, json={})

    def play_out(self, game_id, tokens_by_seat, rng):
        for n in range(2000):
            view = self.call("GET", f"/v1/games/{game_id}", None).json
            if view["status"] != "active":
                self.jobs.drain(self.service)
                return
            seat = rng.choice(view["to_act"])
            token = tokens_by_seat[seat]
            mine = self.call("GET", f"/v1/games/{game_id}/view", token, query_string={"seat": seat}).json
            template = rng.choice(mine["legal_actions"])
            action = {k: rng.randint(v["min"], v["max"]) if isinstance(v, dict) else v for k, v in template.items()}
            done = self.call("POST", f"/v1/games/{game_id}/actions", token, json={"action": action, "seat": seat},
                             headers={"Idempotency-Key": f"key-{game_id}-{n:06d}"})
            assert done.status_code == 200, done.json
        raise AssertionError("the game did not end")


@pytest.fixture
def api(redis_client):
    jobs = MemoryJobs()
    app = create_app({"ALLOW_SEED": True, "RATE_LIMIT": None, "STREAM_KEEPALIVE": 0.05, **CHEAP,
                      "SIGNUP_LIMIT": "1000/60", "SIGNIN_LIMIT": "1000/60", "SIGNIN_LOCK_AFTER": 3},
                     backend=Backend(redis_client, redis_client, False), jobs=jobs)
    return Api(app, jobs)


def error(response, status, code):
    assert response.status_code == status, response.json
    assert response.json["error"]["code"] == code, response.json
    return response.json["error"]


def test_sign_up_gives_recovery_codes_and_refuses_taken_and_lookalike_names(api):
    made = api.sign_up("Victim")
    assert made.status_code == 201
    assert made.json["account"]["username"] == "Victim" and len(made.json["recovery_codes"]) == 10
    for lookalike in ("victim", "VICT1M", "v_ictim", "ｖｉｃｔｉｍ"):
        assert error(api.sign_up(lookalike), 409, "username_taken")["details"]["field"] == "username"
    assert error(api.sign_up("bad\u202ename"), 422, "username_invalid")["details"]["field"] == "username"
    assert "\u202e" not in api.sign_up("bad\u202ename").json["error"]["message"]
    assert error(api.sign_up("heuristic"), 422, "username_reserved")
    assert error(api.sign_up("someone", "password123"), 422, "password_refused")["details"]["field"] == "password"
    assert api.call("GET", "/v1/accounts/VICTIM").json["username"] == "Victim"


def test_a_wrong_name_and_a_wrong_password_get_the_same_answer(api):
    api.sign_up("alice")
    wrong_password = api.http.post("/v1/sessions", json={"username": "alice", "password": "not the password!"})
    wrong_name = api.http.post("/v1/sessions", json={"username": "nobody-here", "password": "not the password!"})
    assert wrong_password.status_code == wrong_name.status_code == 401
    assert wrong_password.json == wrong_name.json


def test_wrong_passwords_lock_the_name_but_not_a_known_device(api):
    api.sign_up("bob")
    first = api.http.post("/v1/sessions", json={"username": "bob", "password": PASSWORD})
    device = first.json["device"]
    for _ in range(3):
        api.http.post("/v1/sessions", json={"username": "bob", "password": "wrong password!"})
    locked = api.http.post("/v1/sessions", json={"username": "bob", "password": PASSWORD})
    assert error(locked, 429, "sign_in_locked") and 0 < int(locked.headers["Retry-After"]) <= 900
    known = api.http.post("/v1/sessions", json={"username": "bob", "password": PASSWORD, "device": device})
    assert known.status_code == 201
    forged = api.http.post("/v1/sessions", json={"username": "bob", "password": PASSWORD,
                                                 "device": device[:-1] + ("0" if device[-1] != "0" else "1")})
    assert error(forged, 429, "sign_in_locked")


def test_scopes_are_checked_and_never_escalated(api):
    reader, session = api.account("carol", scopes=("read",))
    game = api.create()
    assert error(api.claim(game, 0, reader), 403, "missing_scope")["details"]["scope"] == "play"
    assert error(api.call("GET", "/v1/account/tokens", reader), 403, "missing_scope")["details"]["scope"] == "account"
    manager, _ = api.account("dave", scopes=("account",))
    escalate = api.call("POST", "/v1/account/tokens", manager, json={"label": "more", "scopes": ["play"]})
    assert error(escalate, 403, "missing_scope")["details"]["scope"] == "play"
    listed = api.call("GET", "/v1/account/tokens", session).json["tokens"]
    assert {t["kind"] for t in listed} == {"session", "personal"}
    assert not any(session in json.dumps(t) or reader in json.dumps(t) for t in listed)


def test_a_revoked_token_is_refused_at_once(api):
    token, session = api.account("erin")
    assert api.call("GET", "/v1/account", token).status_code == 200
    token_id = api.call("GET", "/v1/account", token).json["token_id"]
    assert api.call("DELETE", f"/v1/account/tokens/{token_id}", session).status_code == 204
    assert error(api.call("GET", "/v1/account", token), 401, "unauthorized")
    assert error(api.call("GET", "/v1/account", "spa_0123456789abcdef_" + "x" * 43), 401, "unauthorized")


def test_two_accounts_play_a_game_to_the_end_and_find_it_in_their_games(api):
    alice, _ = api.account("alice")
    bob, _ = api.account("bob")
    game = api.create()
    assert api.claim(game, 0, alice).json["account"]
    assert "token" not in api.claim(game, 1, bob).json
    seats = api.call("GET", f"/v1/games/{game}").json["seats"]
    assert [s["name"] for s in seats] == ["alice", "bob"] and not any(s.get("guest") for s in seats)
    turn = api.call("GET", "/v1/account/games", alice, query_string={"my_turn": "true"}).json
    assert [g["game_id"] for g in turn["games"]] == [game] and turn["games"][0]["my_seats"] == [0]
    api.play_out(game, {0: alice, 1: bob}, random.Random(3))
    finished = api.call("GET", "/v1/account/games", bob, query_string={"status": "finished"}).json["games"]
    assert [g["game_id"] for g in finished] == [game] and finished[0]["status"] == "scored"
    events = api.call("GET", "/v1/account/events", alice).json["events"]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "game.joined" and "game.started" in kinds and "turn" in kinds and kinds[-1] == "game.ended"
    assert len({e["id"] for e in events}) == len(events)
    assert all(e["game_id"] == game for e in events)


def test_an_account_with_two_seats_names_the_seat(api):
    alice, _ = api.account("alice")
    game = api.create()
    api.claim(game, 0, alice)
    api.claim(game, 1, alice)
    view = api.call("GET", f"/v1/games/{game}/view", alice)
    assert error(view, 422, "invalid")["details"]["field"] == "seat"
    assert api.call("GET", f"/v1/games/{game}/view", alice, query_string={"seat": 1}).json["seat"] == 1


def test_another_accounts_seat_is_refused(api):
    alice, _ = api.account("alice")
    mallory, _ = api.account("mallory")
    game = api.create()
    api.claim(game, 0, alice)
    api.claim(game, 1, api.account("bob")[0])
    assert error(api.call("GET", f"/v1/games/{game}/view", mallory), 403, "not_your_game")
    sneaky = api.call("POST", f"/v1/games/{game}/actions", mallory, json={"action": {"type": "bet", "amount": 1},
                                                                       "seat": 0},
                      headers={"Idempotency-Key": "sneaky-key-1"})
    assert error(sneaky, 403, "not_your_seat")
    assert api.call("GET", f"/v1/games/{game}/view", alice).json["seat"] == 0


def test_guests_are_marked_and_cannot_pass_for_an_account(api):
    api.account("alice")
    game = api.create()
    guest = api.http.post(f"/v1/games/{game}/seats/0", json={"name": "alice"}).json
    assert guest["token"]
    seat = api.call("GET", f"/v1/games/{game}").json["seats"][0]
    assert seat == {"kind": "player", "name": "alice", "guest": True}


def test_password_change_ends_other_sessions_and_keeps_personal_tokens(api):
    token, first = api.account("frank")
    second = api.http.post("/v1/sessions", json={"username": "frank", "password": PASSWORD}).json["token"]
    changed = api.call("POST", "/v1/account/password", second,
                       json={"current_password": PASSWORD, "new_password": "a much better passphrase"})
    assert changed.status_code == 204
    assert error(api.call("GET", "/v1/account", first), 401, "unauthorized")
    assert api.call("GET", "/v1/account", second).status_code == 200
    assert api.call("GET", "/v1/account", token).status_code == 200
    wrong = api.call("POST", "/v1/account/password", second,
                     json={"current_password": "not it at all", "new_password": "another passphrase"})
    assert error(wrong, 403, "wrong_password")["details"]["field"] == "current_password"


def test_sign_out_everywhere_ends_every_session(api):
    token, first = api.account("gina")
    second = api.http.post("/v1/sessions", json={"username": "gina", "password": PASSWORD}).json["token"]
    assert api.call("POST", "/v1/account/sign-out-everywhere", second).status_code == 204
    for session in (first, second):
        assert error(api.call("GET", "/v1/account", session), 401, "unauthorized")
    assert api.call("GET", "/v1/account", token).status_code == 200


def test_a_recovery_code_resets_the_password_once(api):
    codes = api.sign_up("hank").json["recovery_codes"]
    body = {"username": "hank", "recovery_code": codes[3], "new_password": "the new passphrase"}
    assert api.http.post("/v1/account/recover", json=body).status_code == 204
    again = api.http.post("/v1/account/recover", json={**body, "new_password": "yet another passphrase"})
    assert error(again, 401, "bad_credentials")
    assert api.http.post("/v1/sessions", json={"username": "hank", "password": "the new passphrase"}).status_code == 201


def test_closing_ends_credentials_tombstones_the_name_and_keeps_the_games(api):
    token, session = api.account("ivan")
    other, _ = api.account("judy")
    game = api.create()
    api.claim(game, 0, token)
    api.claim(game, 1, other)
    assert error(api.call("POST", "/v1/account/close", session, json={"password": "wrong password!"}),
                 403, "wrong_password")
    assert api.call("POST", "/v1/account/close", session, json={"password": PASSWORD}).status_code == 204
    for credential in (token, session):
        assert error(api.call("GET", "/v1/account", credential), 401, "unauthorized")
    assert error(api.sign_up("ivan"), 409, "username_taken")
    api.service.accounts._shown.clear()
    seat = api.call("GET", f"/v1/games/{game}").json["seats"][0]
    assert seat["name"] == "ivan" and seat["closed"] is True


def test_a_cookie_session_needs_its_csrf_token_to_change_anything(api):
    api.sign_up("kate")
    signed = api.http.post("/v1/sessions", json={"username": "kate", "password": PASSWORD, "use_cookie": True})
    assert "token" not in signed.json
    cookie = signed.headers.getlist("Set-Cookie")
    assert any("HttpOnly" in c and "SameSite=Lax" in c and c.startswith("speculation_session=") for c in cookie)
    assert api.http.get("/v1/account").status_code == 200      # the cookie is sent by the test client
    refused = api.http.post("/v1/account/tokens", json={"label": "x", "scopes": ["read"]})
    assert error(refused, 403, "csrf_failed")
    csrf = api.http.get("/v1/account").json["csrf_token"]
    made = api.http.post("/v1/account/tokens", json={"label": "x", "scopes": ["read"]},
                         headers={"X-CSRF-Token": csrf})
    assert made.status_code == 201
    assert api.http.delete("/v1/session", headers={"X-CSRF-Token": csrf}).status_code == 204
    assert error(api.http.get("/v1/account"), 401, "unauthorized")


def test_parallel_sign_ups_for_one_name_make_one_account(api):
    answers = []

    def sign_up(i):
        client = api.app.test_client()
        answers.append(client.post("/v1/accounts", json={"username": f"Racer{'' if i % 2 else ''}",
                                                         "password": PASSWORD}).status_code)

    threads = [threading.Thread(target=sign_up, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [201] + [409] * 19


def test_the_account_stream_resumes_and_ends_when_its_token_is_revoked(api):
    alice, session = api.account("alice")
    bob, _ = api.account("bob")
    game = api.create()
    api.claim(game, 0, alice)
    api.claim(game, 1, bob)
    streamed = api.call("GET", "/v1/account/events", alice, headers={"Accept": "application/x-ndjson"},
                        query_string={"follow": 0.3})
    lines = [json.loads(line) for line in streamed.data.decode().splitlines()]
    notices = [m for m in lines if "keepalive" not in m]
    assert [m["type"] for m in notices][:2] == ["game.joined", "game.started"]
    resumed = api.call("GET", "/v1/account/events", alice, headers={"Accept": "text/event-stream",
                                                                    "Last-Event-ID": str(notices[0]["id"])},
                       query_string={"follow": 0.2})
    ids = [int(line[4:]) for line in resumed.data.decode().splitlines() if line.startswith("id: ")]
    assert ids == [m["id"] for m in notices[1:]]
    token_id = api.call("GET", "/v1/account", alice).json["token_id"]
    holder = {}

    def follow():
        holder["body"] = api.call("GET", "/v1/account/events", alice, headers={"Accept": "application/x-ndjson"},
                                  query_string={"follow": 30, "after": notices[-1]["id"]}).data

    import time

    reader = threading.Thread(target=follow)
    started = time.monotonic()
    reader.start()
    time.sleep(0.3)
    assert api.call("DELETE", f"/v1/account/tokens/{token_id}", session).status_code == 204
    reader.join(5)
    assert not reader.is_alive() and time.monotonic() - started < 3
