"""The accounts' endpoints against what an outside attacker's script would send, on fakeredis
and on a real Redis: look-alike, invisible, bidi and control characters in usernames; wrong
types and outsized values in every field of every account endpoint; guessed, altered,
expired, revoked and misplaced tokens; scope escalation; another account's seats and
stream; cookie requests without their CSRF token; and what the logs, the access log's format
and /metrics could leak. Every refusal is a 4xx in the error envelope that names the field,
changes nothing, and never carries a raw control or bidi character, a password or a token."""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import logging
import re
import secrets
import unicodedata
from pathlib import Path

import pytest

from service.app import create_app
from service.bootstrap import Backend
from workers.memory_jobs import MemoryJobs

PASSWORD = "correct horse battery staple"
SEED = "ab" * 32
CHEAP = {"ARGON2_TIME_COST": 1, "ARGON2_MEMORY_KIB": 1024}
SECRET_SHAPED = re.compile(r"sp[as]_[0-9a-f]{16}_[A-Za-z0-9_-]{43}")
# Characters an error message must never carry raw: controls, format (bidi, zero-width),
# surrogates, private use, unassigned, line and paragraph separators.
UNSHOWABLE = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


# --- the service and its helpers ------------------------------------------------------------
class Api:
    def __init__(self, app, jobs, client):
        self.app, self.jobs, self.redis = app, jobs, client
        self.http = app.test_client()
        self.service = app.extensions["games"]

    def call(self, method, path, token=None, **kw):
        headers = dict(kw.pop("headers", {}))
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return self.http.open(path, method=method, headers=headers, **kw)

    def sign_up(self, username, password=PASSWORD):
        return self.http.post("/v1/accounts", json={"username": username, "password": password})

    def sign_in(self, username, password=PASSWORD, **extra):
        return self.http.post("/v1/sessions", json={"username": username, "password": password, **extra})

    def account(self, username, scopes=("play", "read", "account")):
        """A new account: (its personal token with `scopes`, its session, its id)."""
        made = self.sign_up(username)
        assert made.status_code == 201, made.json
        session = self.sign_in(username).json["token"]
        token = self.call("POST", "/v1/account/tokens", session, json={"label": "t", "scopes": list(scopes)})
        assert token.status_code == 201, token.json
        for credential in (token.json["token"], session):   # first use recorded now, not in a check
            self.call("GET", "/v1/account", credential)
        return token.json["token"], session, made.json["account"]["id"]

    def create(self, seats=2):
        made = self.http.post("/v1/games", json={"type": "secret-duel", "seats": [{}] * seats, "seed": SEED})
        assert made.status_code == 201, made.json
        return made.json["game_id"]

    def version(self, game_id):
        return self.service.load(game_id).version

    def head(self, account_id):
        return self.service.store.head(f"account/{account_id}")[0]

    def digest(self):
        """Everything in the store but the rate-limit windows and the processes' presence
        heartbeats (an app of an earlier test on the same private Redis still beating every
        10 s: a process's liveness, not the store's state)."""
        out = hashlib.sha256()
        for key in sorted(self.redis.keys("*")):
            if not key.startswith((b"rate:", b"presence:process:")):
                out.update(key + b"\0" + (self.redis.dump(key) or b"") + b"\1")
        return out.hexdigest()


@pytest.fixture
def api(redis_client):
    jobs = MemoryJobs()
    app = create_app({"ALLOW_SEED": True, "RATE_LIMIT": None, "STREAM_KEEPALIVE": 0.05, **CHEAP,
                      "SIGNUP_LIMIT": "100000/60", "SIGNIN_LIMIT": "100000/60", "SIGNIN_LOCK_AFTER": 1000},
                     backend=Backend(redis_client, redis_client, False), jobs=jobs)
    return Api(app, jobs, redis_client)


@pytest.fixture(scope="module")
def spec():
    return create_app({"RATE_LIMIT": None, "REDIS_URL": None}).test_client().get("/openapi.json").json


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def refused(response, statuses, field=None, secrets_=(), code=None) -> dict:
    """A refusal in the envelope: one of `statuses` (all 4xx), naming `field`, holding no raw
    unshowable character and none of `secrets_` (passwords, tokens) anywhere."""
    statuses = (statuses,) if isinstance(statuses, int) else tuple(statuses)
    assert response.status_code in statuses, (response.status_code, response.get_data()[:400])
    assert 400 <= response.status_code < 500
    assert response.content_type.startswith("application/json"), response.content_type
    error = response.get_json()["error"]
    assert set(error) == {"code", "message", "details"} and isinstance(error["details"], dict), error
    for text in _strings(error):
        bad = [c for c in text if unicodedata.category(c) in UNSHOWABLE]
        assert not bad, f"raw {[hex(ord(c)) for c in bad]} in {error!r}"
        assert not SECRET_SHAPED.search(text), f"a credential in {error!r}"
        for secret in secrets_:
            assert secret not in text, f"{secret[:12]}... echoed in {error!r}"
    if code is not None:
        assert error["code"] == code, error
    if field is not None:
        named = error["details"].get("field") == field or field in json.dumps(error["details"].get("errors", {})) \
            or error["message"].startswith(f"{field}:") or error["message"].startswith(f"{field}.")
        assert named, f"{field} is not named in {error!r}"
    return error


def _declared(spec, method, path, status) -> bool:
    for template, operations in spec["paths"].items():
        if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path) and method.lower() in operations:
            return str(status) in operations[method.lower()]["responses"]
    raise AssertionError(f"{method} {path} is not in the document")


# --- usernames: look-alikes, scripts, invisible and control characters -------------------------
LOOKALIKES = [                      # each passes for "victim", "mallory" or "alice": taken
    "VICTIM", "Vict1m", "v1ct1m", "VICTlM", "v_ictim", "vic-tim", "ｖｉｃｔｉｍ", "𝐯𝐢𝐜𝐭𝐢𝐦", "vⅰctⅰm",
    "vict¹m", "rnallory", "MALL0RY", "ma11ory", "a1ice", "AIice", "alice", "A-L-I-C-E",
]
INVALID = [                         # refused as they are: another script, invisible, bidi, control
    "vіctim",                       # U+0456 CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I
    "viсtim",                       # U+0441 CYRILLIC SMALL LETTER ES
    "аlice",                        # U+0430 CYRILLIC SMALL LETTER A
    "νictim",                       # U+03BD GREEK SMALL LETTER NU
    "ΑΒΕ",                          # Greek capitals that look Latin
    "pаypаl",                       # mixed scripts
    "vi\u0301ctim",                 # a combining accent (NFKC makes í)
    "vic\u202etim", "\u202avictim", "\u202bvictim", "victim\u202c", "\u202dvictim",
    "\u2066victim\u2069", "\u2067victim", "\u2068victim",
    "vic\u200btim", "\u200dvictim", "vic\u200ctim", "\ufeffvictim", "vic\u2060tim", "vic\u00adtim",
    "vic\x00tim", "\x00", "\x1b[31mred", "tab\tname", "new\nline", "del\x7f", "bell\x07name",
    "vic tim", " victim", "victim ", "vic\u00a0tim", "vic\u3000tim", "line\u2028sep",
    "_victim", "victim-", "v__ictim", "ab", "x" * 25, "x" * 10_000, "", "😀grin", "vic\ue000tim",
]


def test_look_alike_usernames_are_taken(api):
    for name in ("victim", "mallory", "Alice"):
        assert api.sign_up(name).status_code == 201
    before = api.digest()
    for name in LOOKALIKES:
        error = refused(api.sign_up(name), 409, "username", code="username_taken")
        assert name not in error["message"] or name.isascii()
    assert api.digest() == before
    # the profile answers to every look-alike spelling with the real name
    assert api.call("GET", "/v1/accounts/VICT1M").json["username"] == "victim"
    assert api.call("GET", "/v1/accounts/%EF%BD%96%EF%BD%89%EF%BD%83%EF%BD%94%EF%BD%89%EF%BD%8D").json["username"] \
        == "victim"


@pytest.mark.parametrize("name", INVALID, ids=[ascii(n)[:24] for n in INVALID])
def test_usernames_of_other_scripts_invisible_bidi_or_control_characters_are_refused(api, name):
    before = api.digest()
    error = refused(api.sign_up(name), 422, "username", secrets_=(PASSWORD,))
    assert error["code"] == ("invalid" if len(name) > 96 else "username_invalid")
    assert len(error["message"]) < 300
    assert api.digest() == before
    # as a profile or a sign-in name they find nothing, and say so as for any unknown name
    if name:
        profile = api.call("GET", "/v1/accounts/" + "".join(f"%{b:02X}" for b in name.encode()))
        assert refused(profile, 404, "username")["message"] == "username: no such account"
    signed = api.sign_in(name, "not the password")
    refused(signed, 422 if len(name) > 96 else 401, secrets_=("not the password",))
    assert api.digest() == before


def test_a_lone_surrogate_anywhere_is_a_400_naming_where(api):
    empty = api.digest()
    for raw in ('{"username": "\\ud800abc", "password": "correct horse battery staple"}',
                '{"username": "victim", "password": "\\udfffcorrect horse"}',
                '{"username": "victim", "password": "x", "\\ud83d": 1}'):
        error = refused(api.http.post("/v1/accounts", data=raw, content_type="application/json"), 400,
                        code="malformed_json")
        assert error["details"]["field"].startswith("body")
    assert api.digest() == empty
    session = api.account("victim")[1]
    before = api.digest()
    error = refused(api.call("POST", "/v1/account/tokens", session, data='{"label": "\\udc80", "scopes": ["read"]}',
                             content_type="application/json"), 400, code="malformed_json")
    assert error["details"]["field"] == "body.label"
    assert api.digest() == before


# --- every field of every account endpoint: wrong types, outsized values, unknown fields -----
NOT_TEXT = [5, -1, 1.5, True, False, None, [], ["x"], {}, {"a": 1}]
NOT_BOOL = [1, 0, "true", "yes", "", None, [], {}, 1.0]
NOT_NUMBER = ["1", "", True, False, [], [1], {}, {"d": 1}, "NaN"]
NOT_SCOPES = [None, "read", 5, {}, {"read": True}, [5], [None], [["read"]], [{"s": "read"}], ["READ"], ["admin"],
              [], ["read", "play", "account", "read"]]
HUGE = "Zq9!" * 2_500          # 10,000 characters


def _bodies(api):
    """(method, path, credential, valid body, {field: [bad values]}) for every account body."""
    return [
        ("POST", "/v1/accounts", None, {"username": "newcomer", "password": PASSWORD},
         {"username": NOT_TEXT + ["x" * 10_000], "password": NOT_TEXT + [HUGE]}),
        ("POST", "/v1/sessions", None, {"username": "victim", "password": PASSWORD},
         {"username": NOT_TEXT + ["x" * 10_000], "password": NOT_TEXT + [HUGE], "device": NOT_TEXT[:-4] + [[], {},
                                                                                                        "d" * 10_000],
          "use_cookie": NOT_BOOL}),
        ("POST", "/v1/account/password", "session", {"current_password": PASSWORD, "new_password": "a new passphrase"},
         {"current_password": NOT_TEXT + [HUGE], "new_password": NOT_TEXT + [HUGE]}),
        ("POST", "/v1/account/recovery-codes", "session", {"password": PASSWORD}, {"password": NOT_TEXT + [HUGE]}),
        ("POST", "/v1/account/recover", None, {"username": "victim", "recovery_code": "abcd-efgh-ijkm-npqr",
                                               "new_password": "a new passphrase"},
         {"username": NOT_TEXT + ["x" * 10_000], "recovery_code": NOT_TEXT + ["c" * 10_000],
          "new_password": NOT_TEXT + [HUGE]}),
        ("POST", "/v1/account/tokens", "session", {"label": "ok", "scopes": ["read"]},
         {"label": NOT_TEXT + ["l" * 10_000, "", " ", "a\u202eb", "\x1b[2J", "a\x00b", "a\u200bb", "a\nb"],
          "scopes": NOT_SCOPES, "expires_in_days": NOT_NUMBER + [0, -1, 0.001, 3651, 10 ** 15]}),
        ("POST", "/v1/account/close", "session", {"password": PASSWORD}, {"password": NOT_TEXT + [HUGE]}),
    ]


def test_every_field_of_every_account_body_refuses_wrong_types_and_outsized_values(api, spec):
    token, session, _ = api.account("victim")
    credentials = {"session": session}
    before = api.digest()
    checked = 0
    for method, path, who, valid, fields in _bodies(api):
        credential = credentials.get(who)
        for field, values in fields.items():
            for value in values:
                body = {**valid, field: value}
                answer = api.call(method, path, credential, json=body)
                error = refused(answer, 422, field, secrets_=(PASSWORD, HUGE, token, session))
                assert _declared(spec, method, path, answer.status_code)
                checked += 1
            missing = {k: v for k, v in valid.items() if k != field}
            if field in ("device", "use_cookie", "expires_in_days"):
                continue   # optional
            refused(api.call(method, path, credential, json=missing), 422, field, secrets_=(PASSWORD, token, session))
        # an unknown field, named safely whatever its name; a body that is not an object
        for extra in ("admin", "account_id", "\u202eevil", "\x00", "k" * 10_000, "scopes "):
            error = refused(api.call(method, path, credential, json={**valid, extra: True}), 422,
                            secrets_=(PASSWORD, token, session))
            assert "Unknown field" in error["message"] and len(error["message"]) < 400
        for raw in ("[]", '"text"', "null", "5", "{", '{"a": NaN}', "[" * 100 + "]" * 100):
            answer = api.call(method, path, credential, data=raw, content_type="application/json")
            refused(answer, (400, 422), secrets_=(PASSWORD, token, session))
            assert _declared(spec, method, path, answer.status_code)
        answer = api.call(method, path, credential, data=json.dumps(valid), content_type="text/plain")
        refused(answer, (400, 415, 422), secrets_=(PASSWORD, token, session))
    assert checked > 150
    assert api.digest() == before, "a refused request changed the store"
    assert api.call("GET", "/v1/account", session).status_code == 200


def test_query_parameters_of_the_account_lists_refuse_what_is_not_theirs(api):
    token, _, _ = api.account("victim")
    before = api.digest()
    for query, field in [("status=done", "status"), ("status=%E2%80%AE", "status"), ("my_turn=maybe", "my_turn"),
                         ("type=" + "t" * 65, "type"), ("offset=-1", "offset"), ("offset=100001", "offset"),
                         ("offset=" + "9" * 40, "offset"), ("limit=0", "limit"), ("limit=101", "limit"),
                         ("limit=1e2", "limit"), ("limit=%C2%B2", "limit"), ("status=active&limit=-5", "limit")]:
        refused(api.call("GET", "/v1/account/games?" + query, token), 422, field, secrets_=(token,))
    for query, field in [("after=-1", "after"), ("after=x", "after"), ("after=" + "9" * 40, "after"),
                         ("after=99", "after"), ("follow=nan", "follow"), ("follow=inf", "follow"),
                         ("follow=-1", "follow"), ("follow=3601", "follow")]:
        refused(api.call("GET", "/v1/account/events?" + query, token), 422, field, secrets_=(token,))
    # a query parameter a list does not know is ignored (as on every GET of the API), whatever its name
    for query in ("account=x", "account_id=x", "%E2%80%AE=1", "%00=1", "k" * 3000 + "=1"):
        assert api.call("GET", "/v1/account/games?" + query, token).json["games"] == []
        assert api.call("GET", "/v1/account/events?" + query, token).json["events"] == []
    for resume in ("-1", "x", "9" * 17, "\u00b2", "1x", "99"):
        answer = api.call("GET", "/v1/account/events", token, headers={"Accept": "text/event-stream",
                                                                      "Last-Event-ID": resume},
                          query_string={"follow": 0.1})
        refused(answer, 422, secrets_=(token,))
    assert api.digest() == before


# --- guessed, altered, misplaced, expired and revoked tokens -----------------------------------
def _alter(token: str, at: int) -> str:
    char = token[at]
    alphabet = "0123456789abcdef" if token[:4] in ("spa_", "sps_") and 4 <= at < 20 else \
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    return token[:at] + alphabet[(alphabet.index(char) + 1) % len(alphabet)] + token[at + 1:]


def test_guessed_and_altered_tokens_are_401_and_say_nothing_of_the_account(api):
    token, session, account_id = api.account("victim")
    game = api.create()
    assert api.call("POST", f"/v1/games/{game}/seats/0", token, json={}).status_code == 201
    seat = api.http.post(f"/v1/games/{game}/seats/1", json={"name": "guest"}).json["token"]
    unknown_id = secrets.token_hex(8)
    random_secret = secrets.token_urlsafe(32)
    same_answer = {
        "an unknown account, a random secret": f"spa_{unknown_id}_{random_secret}",
        "a real account, a random secret": f"spa_{account_id}_{random_secret}",
        "a real session's account, a random secret": f"sps_{account_id}_{random_secret}",
        "the real token, its last character changed": _alter(token, len(token) - 1),
        "the real token, its first secret character changed": _alter(token, 21),
        "the real session, a character changed": _alter(session, 30),
        "the real token as a session": "sps_" + token[4:],
        "the real session as a personal token": "spa_" + session[4:],
        "the real token, its account id altered": _alter(token, 10),
    }
    bodies = {}
    before, version = api.digest(), api.version(game)
    for guess in same_answer.values():
        assert guess != token and guess != session
        for method, path, body in [("GET", "/v1/account", None), ("POST", "/v1/account/tokens",
                                                                  {"label": "x", "scopes": ["read"]}),
                                   ("GET", "/v1/account/games", None), ("GET", "/v1/account/events", None),
                                   ("POST", f"/v1/games/{game}/actions", {"action": {"type": "bet", "amount": 1}})]:
            answer = api.call(method, path, guess, json=body, headers={"Idempotency-Key": "guess-key-000001"})
            error = refused(answer, 401, "Authorization", secrets_=(guess, token, session))
            bodies.setdefault(path, set()).add(json.dumps(error, sort_keys=True))
    # an unknown account and a wrong secret for a real one: one and the same answer
    assert all(len(answers) == 1 for answers in bodies.values()), bodies
    malformed = [f"spa_{random_secret}", "spa_", "sps_" + "0" * 16, token[:-1], token + "A", token + "=",
                 "spa_" + account_id.upper() + token[20:], token.replace("_", "-", 1), " " + token[:10],
                 "spa_" + "g" * 16 + token[20:], "Spa_" + token[4:]]
    for guess in malformed:
        refused(api.call("GET", "/v1/account", guess), 401, "Authorization", secrets_=(token, session))
    # a seat token where an account token is wanted, with an account prefix too
    for guess in (seat, "spa_" + seat, "sps_" + seat):
        refused(api.call("GET", "/v1/account", guess), 401, "Authorization", secrets_=(seat, token))
        refused(api.call("POST", "/v1/account/tokens", guess, json={"label": "x", "scopes": ["read"]}), 401)
    assert api.digest() == before and api.version(game) == version


def test_bearer_variants(api):
    token, _, _ = api.account("victim")
    # the scheme is case-insensitive and spaces around the token are dropped (RFC 9110)
    for header in (f"bearer {token}", f"BEARER {token}", f"Bearer   {token}  ", f"  Bearer {token}"):
        assert api.call("GET", "/v1/account", headers={"Authorization": header}).status_code == 200, header
    wrong = f"spa_{secrets.token_hex(8)}_{secrets.token_urlsafe(32)}"
    basic = "Basic " + base64.b64encode(f"victim:{PASSWORD}".encode()).decode()
    for header in (f"bearer {wrong}", f"Bearer   {wrong}  ", "Bearer", "Bearer ", "bearer", basic, token,
                   f"Token {token}", f"Bearer\t{token}", f"Bearer {token} {token}", f"Bearer {token},Bearer x",
                   f"Bearer: {token}", f"BearerX {token}", f"Bearer {token[:-1]}", f"Bearer {token}\x00"):
        refused(api.call("GET", "/v1/account", headers={"Authorization": header}), 401, "Authorization",
                secrets_=(token, PASSWORD))


def test_an_expired_token_is_401(api, monkeypatch):
    from service.accounts import service as core

    token, session, _ = api.account("victim")
    made = api.call("POST", "/v1/account/tokens", session, json={"label": "brief", "scopes": ["read"],
                                                                 "expires_in_days": 1 / 24}).json
    later = core._now_ms() + 3_600_000 + 1_000
    monkeypatch.setattr(core, "_now_ms", lambda: later)
    error = refused(api.call("GET", "/v1/account", made["token"]), 401, "Authorization", secrets_=(made["token"],))
    assert "expired" in error["message"]
    refused(api.call("GET", "/v1/account/games", made["token"]), 401)
    assert made["id"] not in {t["id"] for t in api.call("GET", "/v1/account/tokens", session).json["tokens"]}
    assert api.call("GET", "/v1/account", token).status_code == 200   # no lifetime: still good


def test_revoked_and_closed_account_tokens_are_401(api):
    token, session, account_id = api.account("victim")
    other = api.call("POST", "/v1/account/tokens", session, json={"label": "b", "scopes": ["read"]}).json
    assert api.call("DELETE", f"/v1/account/tokens/{other['id']}", session).status_code == 204
    unknown = refused(api.call("GET", "/v1/account", f"spa_{account_id}_{secrets.token_urlsafe(32)}"), 401)
    revoked = refused(api.call("GET", "/v1/account", other["token"]), 401, "Authorization")
    assert revoked == unknown, "a revoked token is told apart from a guessed one"
    # revoking again, or a token id that is the token itself: 404, the token never echoed
    refused(api.call("DELETE", f"/v1/account/tokens/{other['id']}", session), 404, "token_id")
    for path_id in (other["token"], token, "%E2%80%AE" + other["id"], "%00", "x" * 3000):
        refused(api.call("DELETE", f"/v1/account/tokens/{path_id}", session), 404, "token_id",
                secrets_=(other["token"], token, session))
    assert api.call("POST", "/v1/account/close", session, json={"password": PASSWORD}).status_code == 204
    for credential in (token, session):
        assert refused(api.call("GET", "/v1/account", credential), 401) == unknown


# --- scopes are never escalated --------------------------------------------------------------
def test_scopes_are_never_escalated(api):
    reader, session, account_id = api.account("reader", scopes=("read",))
    manager, _, _ = api.account("manager", scopes=("account",))
    player, _, _ = api.account("player", scopes=("play",))
    game = api.create()
    before = api.digest()

    def missing(answer, scope):
        assert refused(answer, 403, code="missing_scope")["details"]["scope"] == scope

    missing(api.call("POST", f"/v1/games/{game}/seats/0", reader, json={}), "play")
    missing(api.call("GET", "/v1/account/tokens", reader), "account")
    missing(api.call("POST", "/v1/account/tokens", reader, json={"label": "x", "scopes": ["read"]}), "account")
    missing(api.call("POST", "/v1/account/password", reader, json={"current_password": PASSWORD,
                                                                    "new_password": "a new passphrase"}), "account")
    missing(api.call("POST", "/v1/account/close", reader, json={"password": PASSWORD}), "account")
    missing(api.call("POST", "/v1/account/recovery-codes", reader, json={"password": PASSWORD}), "account")
    missing(api.call("POST", "/v1/account/sign-out-everywhere", reader), "account")
    missing(api.call("GET", "/v1/account/export", reader), "account")
    missing(api.call("DELETE", "/v1/account/tokens/0123456789abcdef", reader), "account")
    for scopes in (["play"], ["read"], ["account", "play"], ["play", "read", "account"]):
        wanted = next(s for s in scopes if s != "account")
        missing(api.call("POST", "/v1/account/tokens", manager, json={"label": "more", "scopes": scopes}), wanted)
    missing(api.call("GET", "/v1/account/tokens", player), "account")
    missing(api.call("POST", "/v1/account/tokens", player, json={"label": "x", "scopes": ["play"]}), "account")
    missing(api.call("GET", "/v1/account/games", player), "read")
    missing(api.call("GET", "/v1/account/events", player), "read")
    assert api.digest() == before
    # a reader that holds a seat (claimed by its session) still cannot act on it
    assert api.call("POST", f"/v1/games/{game}/seats/0", session, json={}).status_code == 201
    api.call("POST", f"/v1/games/{game}/seats/1", player, json={})
    version = api.version(game)
    missing(api.call("POST", f"/v1/games/{game}/actions", reader, json={"action": {"type": "bet", "amount": 1}},
                     headers={"Idempotency-Key": "reader-acts-key-0001"}), "play")
    assert api.version(game) == version
    assert api.call("POST", f"/v1/games/{game}/actions", session, json={"action": {"type": "bet", "amount": 1}},
                    headers={"Idempotency-Key": "reader-acts-key-0002"}).status_code == 200   # its session may


# --- another account's seats, and its stream ---------------------------------------------------
def test_another_accounts_seat_cannot_be_viewed_played_or_taken(api):
    alice, _, alice_id = api.account("alice")
    bob, _, _ = api.account("bob")
    mallory, _, mallory_id = api.account("mallory")
    game = api.create()
    assert api.call("POST", f"/v1/games/{game}/seats/0", alice, json={}).status_code == 201
    assert api.call("POST", f"/v1/games/{game}/seats/1", bob, json={}).status_code == 201
    version, before = api.version(game), api.digest()
    bet = {"type": "bet", "amount": 1}
    for seat in (None, 0, 1, 2, 99):
        query = {} if seat is None else {"seat": seat}
        body = {"action": bet, **query}
        code, field = ("not_your_game", "Authorization") if seat is None else ("not_your_seat", "seat")
        view = api.call("GET", f"/v1/games/{game}/view", mallory, query_string=query)
        refused(view, 403, field, code=code, secrets_=(mallory, alice))
        act = api.call("POST", f"/v1/games/{game}/actions", mallory, json=body,
                       headers={"Idempotency-Key": f"mallory-act-key-{seat}-0001"})
        refused(act, 403, field, code=code, secrets_=(mallory, alice))
        # a seat's own view, asked for with another seat's number
        if seat == 1:
            refused(api.call("GET", f"/v1/games/{game}/view", alice, query_string=query), 403, "seat",
                    code="not_your_seat")
            refused(api.call("POST", f"/v1/games/{game}/actions", alice, json=body,
                             headers={"Idempotency-Key": "alice-as-bob-key-0001"}), 403, "seat", code="not_your_seat")
    # a seat taken by another account: 409, whoever asks and however
    for claim, status, field in (({}, 409, None), ({"name": "alice"}, 422, "name"), ({"account": alice_id}, 422,
                                                                                      "account"),
                                 ({"name": "mallory"}, 422, "name")):
        answer = api.call("POST", f"/v1/games/{game}/seats/0", mallory, json=claim)
        refused(answer, status, field, secrets_=(mallory,))
    refused(api.http.post(f"/v1/games/{game}/seats/0", json={"name": "alice"}), 409)
    # the game's events as another seat: a spectator's at most, never alice's hand
    events = api.call("GET", f"/v1/games/{game}/events", mallory, query_string={"seat": 0})
    assert events.status_code in (200, 403), events.json
    if events.status_code == 200:
        spectator = api.http.get(f"/v1/games/{game}/events").json
        assert events.json == spectator
    assert api.version(game) == version
    assert api.digest() == before
    assert api.call("GET", "/v1/account/games", mallory).json["games"] == []
    # an account cannot claim as a guest with a name, nor name another account in the claim
    open_game = api.create()
    for claim, field in (({"name": "alice"}, "name"), ({"account": alice_id}, "account"),
                         ({"name": "mallory", "account": mallory_id}, "account")):
        refused(api.call("POST", f"/v1/games/{open_game}/seats/0", mallory, json=claim), 422, field)
    assert api.version(open_game) == 1


def test_the_account_stream_is_always_the_callers_own(api):
    alice, _, alice_id = api.account("alice")
    bob, _, _ = api.account("bob")
    mallory, _, _ = api.account("mallory")
    game = api.create()
    api.call("POST", f"/v1/games/{game}/seats/0", alice, json={})
    api.call("POST", f"/v1/games/{game}/seats/1", bob, json={})
    theirs = api.call("GET", "/v1/account/events", alice).json
    assert theirs["events"] and {e["game_id"] for e in theirs["events"]} == {game}
    assert {e["seat"] for e in theirs["events"]} == {0}
    mine = api.call("GET", "/v1/account/events", mallory).json
    assert mine["events"] == []
    # no parameter, header or path names another account's stream: a parameter naming one is
    # ignored (as every unknown query parameter is), and the answer is still the caller's own
    for query in ({"account": alice_id}, {"account_id": alice_id}, {"stream": f"account/{alice_id}"},
                  {"user": "alice"}, {"username": "alice"}):
        assert api.call("GET", "/v1/account/events", mallory, query_string=query).json["events"] == []
        assert api.call("GET", "/v1/account/games", mallory, query_string=query).json["games"] == []
    for path in ("/v1/accounts/alice/events", f"/v1/account/{alice_id}/events", f"/v1/accounts/{alice_id}/events",
                 "/v1/account/events/alice"):
        answer = api.call("GET", path, mallory)
        refused(answer, (404, 405))
    for headers in ({"X-Account-Id": alice_id}, {"X-Forwarded-User": "alice"}, {"Cookie": "account=" + alice_id}):
        same = api.call("GET", "/v1/account/events", mallory, headers=headers).json
        assert same["events"] == []
    # the streamed forms too: keep-alives only, never alice's notices
    for accept in ("application/x-ndjson", "text/event-stream"):
        body = api.call("GET", "/v1/account/events", mallory, headers={"Accept": accept},
                        query_string={"follow": 0.15, "account": alice_id}).get_data(as_text=True)
        assert "keepalive" in body or body.startswith(":")
        assert game not in body and alice_id not in body
    # and a notice never carries the account stream's private events (hashes, grants)
    every = json.dumps(theirs) + api.call("GET", "/v1/account/events", alice, headers={
        "Accept": "application/x-ndjson"}, query_string={"follow": 0.1}).get_data(as_text=True)
    for private in ("token_hash", "password_hash", "recovery_codes", "token.granted", "$argon2", alice):
        assert private not in every


# --- CSRF: a cookie session changes nothing without its X-CSRF-Token ------------------------
def test_a_cookie_session_without_its_csrf_token_changes_nothing(api):
    token, _, account_id = api.account("victim")
    other = api.sign_in("victim", use_cookie=True)   # a second cookie session: its CSRF token is not this one's
    foreign_csrf = other.json["csrf_token"]
    signed = api.sign_in("victim", use_cookie=True)
    assert signed.status_code == 201 and "token" not in signed.json
    csrf = api.http.get("/v1/account").json["csrf_token"]
    assert csrf == signed.json["csrf_token"] != foreign_csrf
    personal = api.call("POST", "/v1/account/tokens", token, json={"label": "k", "scopes": ["read"]}).json
    game = api.create()
    playing = api.create()
    assert api.http.post(f"/v1/games/{playing}/seats/0", json={}, headers={"X-CSRF-Token": csrf}).status_code == 201
    api.http.post(f"/v1/games/{playing}/seats/1", json={"name": "guest"})
    requests = [
        ("POST", "/v1/account/tokens", {"label": "x", "scopes": ["read"]}),
        ("DELETE", f"/v1/account/tokens/{personal['id']}", None),
        ("DELETE", "/v1/session", None),
        ("POST", "/v1/account/password", {"current_password": PASSWORD, "new_password": "a new passphrase"}),
        ("POST", "/v1/account/sign-out-everywhere", None),
        ("POST", "/v1/account/recovery-codes", {"password": PASSWORD}),
        ("POST", "/v1/account/close", {"password": PASSWORD}),
        ("POST", f"/v1/games/{game}/seats/0", {}),
        ("POST", f"/v1/games/{playing}/actions", {"action": {"type": "bet", "amount": 1}}),
    ]
    api.http.get("/v1/account")
    before, head, version = api.digest(), api.head(account_id), api.version(playing)
    for method, path, body in requests:
        for headers in ({}, {"X-CSRF-Token": ""}, {"X-CSRF-Token": "x" * 43}, {"X-CSRF-Token": foreign_csrf},
                        {"X-CSRF-Token": csrf.upper()}, {"X-CSRF-Token": csrf[:-1]}, {"X-CSRF-Token": csrf + " x"},
                        {"X-Csrf-Token-Not": csrf}, {"X-HTTP-Method-Override": "GET"},
                        {"Origin": "https://evil.example", "Referer": "https://evil.example/"}):
            answer = api.http.open(path, method=method, json=body, headers={**headers,
                                                                            "Idempotency-Key": "csrf-probe-key-0001"})
            refused(answer, 403, "X-CSRF-Token", code="csrf_failed", secrets_=(csrf, foreign_csrf))
    assert (api.digest(), api.head(account_id), api.version(playing)) == (before, head, version)
    # with it, the same cookie works (one request stands for them all)
    made = api.http.post("/v1/account/tokens", json={"label": "x", "scopes": ["read"]}, headers={"X-CSRF-Token": csrf})
    assert made.status_code == 201


def test_a_request_with_an_authorization_header_is_never_read_from_the_cookie(api):
    api.account("victim")
    mallory, _, _ = api.account("mallory")
    signed = api.sign_in("victim", use_cookie=True)
    csrf = signed.json["csrf_token"]
    assert api.http.get("/v1/account").json["username"] == "victim"
    before = api.digest()
    wrong = f"spa_{secrets.token_hex(8)}_{secrets.token_urlsafe(32)}"
    for header in (f"Bearer {wrong}", "Basic dmljdGltOnBhc3N3b3Jk", "Bearer", "garbage"):
        for method, path, body in [("GET", "/v1/account", None),
                                   ("POST", "/v1/account/tokens", {"label": "x", "scopes": ["read"]})]:
            answer = api.http.open(path, method=method, json=body,
                                   headers={"Authorization": header, "X-CSRF-Token": csrf})
            refused(answer, 401, "Authorization", secrets_=(csrf,))
    assert api.digest() == before
    # a real bearer token beside the cookie: the request is the token's account, not the cookie's
    assert api.call("GET", "/v1/account", mallory).json["username"] == "mallory"
    made = api.call("POST", "/v1/account/tokens", mallory, json={"label": "m", "scopes": ["read"]})
    assert made.status_code == 201    # no CSRF needed: a header cannot be sent cross-site by a page
    assert api.call("GET", "/v1/account", made.json["token"]).json["username"] == "mallory"


# --- what is logged and measured -----------------------------------------------------------
class _Everything(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []

    def emit(self, record):
        try:
            text = record.getMessage()
        except Exception:   # a record whose args do not fit its message: its parts as they are
            text = f"{record.msg!r} {record.args!r}"
        extras = {k: v for k, v in record.__dict__.items() if k not in ("msg", "args")}
        self.texts.append(text + " " + repr(extras) + " " + (self.format(record) if record.exc_info else ""))


def test_no_password_token_or_csrf_token_reaches_a_log_record(api, caplog):
    handler = _Everything()
    loggers = [logging.getLogger()] + [logging.getLogger(n) for n in list(logging.root.manager.loggerDict)]
    for logger in loggers:
        logger.addHandler(handler)
    caplog.set_level(logging.DEBUG)
    levels = {}
    for logger in loggers:
        levels[logger] = logger.level
        logger.setLevel(logging.DEBUG)
    secrets_seen = [PASSWORD, "a different passphrase", "wrong password!!"]
    try:
        made = api.sign_up("victim")
        secrets_seen += made.json["recovery_codes"]
        signed = api.sign_in("victim")
        session = signed.json["token"]
        secrets_seen += [session, signed.json["csrf_token"], signed.json["device"]]
        token = api.call("POST", "/v1/account/tokens", session, json={"label": "t", "scopes": ["read", "play"]}).json
        secrets_seen.append(token["token"])
        api.call("GET", "/v1/account", token["token"])
        api.sign_in("victim", "wrong password!!")
        api.call("GET", "/v1/account", _alter(token["token"], 30))
        api.call("POST", "/v1/account/password", session, json={"current_password": PASSWORD,
                                                                 "new_password": "a different passphrase"})
        api.call("POST", "/v1/account/tokens", session, json={"label": "t", "scopes": ["read"], "x": PASSWORD})
        cookie = api.sign_in("victim", "a different passphrase", use_cookie=True)
        secrets_seen.append(cookie.json["csrf_token"])
        api.http.post("/v1/account/tokens", json={"label": "c", "scopes": ["read"]})
        api.call("GET", "/metrics")
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
            logger.setLevel(levels[logger])
    texts = handler.texts + [r.getMessage() for r in caplog.records]
    assert any("/v1/account/tokens" in t and "/v1/sessions" not in t for t in texts) and \
        any("/v1/sessions" in t for t in texts), "the requests' access records were not seen: the check saw nothing"
    for text in texts:
        assert not SECRET_SHAPED.search(text), text[:300]
        for secret in secrets_seen:
            assert secret not in text, f"{secret[:10]}... in a log record: {text[:300]}"


def test_the_access_log_format_logs_no_authorization_cookie_or_csrf_header():
    """ops/gunicorn.conf.py sets no access_log_format (or a safe one): gunicorn's own format
    logs the request line, the referer and the user agent, never a credential header."""
    from datetime import timedelta
    from types import SimpleNamespace

    from gunicorn.config import Config
    from gunicorn.glogging import Logger

    conf = Path(__file__).resolve().parents[1] / "ops" / "gunicorn.conf.py"
    tree = ast.parse(conf.read_text())
    assigned = {t.id: node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)}
    assert not ({"logconfig", "logconfig_dict", "logconfig_json"} & set(assigned)), "a log config: check it"
    cfg = Config()
    if "access_log_format" in assigned:
        cfg.set("access_log_format", ast.literal_eval(assigned["access_log_format"]))
    form = cfg.access_log_format
    for atom in ("{authorization}i", "{cookie}i", "{x-csrf-token}i", "{set-cookie}o", "{http_authorization}e",
                 "{http_cookie}e"):
        assert atom not in form.lower(), atom
    token = f"spa_{secrets.token_hex(8)}_{secrets.token_urlsafe(32)}"
    session = f"sps_{secrets.token_hex(8)}_{secrets.token_urlsafe(32)}"
    headers = [("AUTHORIZATION", f"Bearer {token}"), ("COOKIE", f"speculation_session={session}"),
               ("X-CSRF-TOKEN", "c" * 43), ("USER-AGENT", "probe")]
    environ = {"REQUEST_METHOD": "POST", "RAW_URI": "/v1/account/tokens", "SERVER_PROTOCOL": "HTTP/1.1",
               "REMOTE_ADDR": "203.0.113.9", "HTTP_AUTHORIZATION": f"Bearer {token}",
               "HTTP_COOKIE": f"speculation_session={session}", "PATH_INFO": "/v1/account/tokens",
               "QUERY_STRING": ""}
    response = SimpleNamespace(status="201 CREATED", sent=10,
                               headers=[("Set-Cookie", f"speculation_session={session}; HttpOnly")])
    logger = Logger(cfg)
    atoms = logger.atoms_wrapper_class(logger.atoms(response, SimpleNamespace(headers=headers), environ,
                                                    timedelta(milliseconds=3)))
    line = form % atoms
    assert "POST /v1/account/tokens" in line
    assert token not in line and session not in line and "c" * 43 not in line, line


def test_metrics_hold_no_token_or_name_of_a_secret(api):
    token, session, _ = api.account("victim")
    api.call("GET", "/v1/account", f"spa_{secrets.token_hex(8)}_{secrets.token_urlsafe(32)}")
    api.call("DELETE", f"/v1/account/tokens/{token}", session)
    api.call("GET", f"/v1/accounts/{token}")
    api.sign_in("victim", "wrong password!!")
    metrics = api.http.get("/metrics")
    assert metrics.status_code == 200
    text = metrics.get_data(as_text=True)
    assert "http_requests" in text or "requests" in text
    assert not SECRET_SHAPED.search(text) and token not in text and session not in text
    assert "spa_" not in text and "sps_" not in text
    assert PASSWORD not in text and "wrong password" not in text
