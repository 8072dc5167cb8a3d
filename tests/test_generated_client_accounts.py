"""Accounts through the client generated from /openapi.json (tests/test_generated_client.py
generates it, with no warning allowed): a third party signs up, signs in, makes a personal
token with the scopes play and read, claims every seat of a small game as the account, plays
it to the end naming the seat, and finds it in its games and its event stream. Every call
goes through the generated operations and models, and every request and response is checked
against the document (the same Contract as the game test's)."""

from __future__ import annotations

import importlib
import random
import re

import httpx
import pytest

from projections.registry import game_types, get_game
from service.app import create_app
from service.bootstrap import Backend
from test_generated_client import PACKAGE, SHORT, Contract, _camel, _fill, _Tag, client_package  # noqa: F401
from workers.memory_jobs import MemoryJobs

PASSWORD = "correct horse battery staple"
SETTINGS = {"RATE_LIMIT": None, "ARGON2_TIME_COST": 1, "ARGON2_MEMORY_KIB": 1024,
            "SIGNUP_LIMIT": "1000/60", "SIGNIN_LIMIT": "1000/60"}


class AccountContract(Contract):
    """The game test's Contract, with the accounts' DELETE operations and 204 answers too."""

    def __init__(self, spec: dict):
        super().__init__(spec)
        for path, operations in spec["paths"].items():
            if "delete" in operations:
                pattern = re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$")
                self.routes.append(("DELETE", pattern, operations["delete"]))

    def response(self, response: httpx.Response):
        if response.status_code != 204:
            return super().response(response)
        response.read()
        operation = self.operation(response.request)
        assert "204" in operation["responses"], f"{operation['operationId']}: 204 is not declared"
        assert response.content == b""
        self.checked["responses"] += 1
        self.checked["operations"].add(operation["operationId"])


def _service(client_package, fake_redis):
    package, spec = client_package
    contract = AccountContract(spec)
    jobs = MemoryJobs()
    app = create_app(SETTINGS, backend=Backend(fake_redis, fake_redis, False), jobs=jobs)
    httpx_args = {"transport": httpx.WSGITransport(app=app),
                  "event_hooks": {"request": [contract.request], "response": [contract.response]}}

    def client(token=None):
        if token is None:
            return package.Client(base_url="http://service", httpx_args=httpx_args, raise_on_unexpected_status=True)
        return package.AuthenticatedClient(base_url="http://service", token=token, httpx_args=httpx_args,
                                           raise_on_unexpected_status=True)

    return app, jobs, contract, client


@pytest.mark.parametrize("game_type", [t.name for t in game_types()])
def test_a_generated_client_plays_a_whole_game_as_an_account(game_type, client_package, fake_redis):
    app, jobs, contract, client = _service(client_package, fake_redis)
    accounts, games, play = _Tag("accounts"), _Tag("games"), _Tag("play")
    models = importlib.import_module(f"{PACKAGE}.models")
    Unset = importlib.import_module(f"{PACKAGE}.types").Unset
    anonymous = client()

    # sign up, sign in, a personal token for play and read
    signed_up = accounts.sign_up.sync(client=anonymous, body=models.SignUp(username="gen-client", password=PASSWORD))
    assert isinstance(signed_up, models.SignedUp), signed_up
    assert signed_up.account.username == "gen-client" and len(signed_up.recovery_codes) == 10
    account_id = signed_up.account.id
    session = accounts.sign_in.sync(client=anonymous, body=models.SignIn(username="gen-client", password=PASSWORD))
    assert isinstance(session, models.Session), session
    assert session.token.startswith("sps_") and set(session.scopes) == {"play", "read", "account"}
    made = accounts.create_token.sync(client=client(session.token), body=models.TokenRequest(
        label="generated client", scopes=[models.TokenRequestScopesItem.PLAY, models.TokenRequestScopesItem.READ]))
    assert isinstance(made, models.NewToken), made
    assert made.token.startswith("spa_") and sorted(made.scopes) == ["play", "read"] and made.expires_at is None
    player = client(made.token)
    me = accounts.get_account.sync(client=player)
    assert isinstance(me, models.WhoAmI), me
    assert (me.id, me.kind, me.token_id, sorted(me.scopes)) == (account_id, "personal", made.id, ["play", "read"])
    listed = accounts.list_tokens.sync(client=client(session.token))
    assert isinstance(listed, models.Tokens) and made.id in {t.id for t in listed.tokens}
    assert all(not hasattr(t, "token") for t in listed.tokens)
    # the play-and-read token may not manage tokens: a typed 403 naming the scope
    refused = accounts.list_tokens.sync(client=player)
    assert isinstance(refused, models.Error) and refused.error.code == "missing_scope"
    assert refused.error.details["scope"] == "account"

    # a small game, every seat claimed by the account (body {}: the token is the claim)
    players = get_game(game_type).MIN_PLAYERS
    created = games.create_game.sync(client=anonymous, body=models.CreateGame.from_dict(
        {"type": game_type, "options": SHORT.get(game_type, {}), "seats": [{}] * players}))
    assert isinstance(created, models.GameSummary), created
    game_id = created.game_id
    for seat in range(players):
        claimed = games.claim_seat.sync(game_id, seat, client=player, body=models.Claim())
        assert isinstance(claimed, models.Claimed), claimed
        assert claimed.account == account_id and isinstance(claimed.token, Unset)   # no seat token for an account
    summary = games.get_game.sync(game_id, client=anonymous)
    assert [s.name for s in summary.seats] == ["gen-client"] * players
    again = games.claim_seat.sync(game_id, 0, client=player, body=models.Claim())
    assert isinstance(again, models.Error), again    # a taken seat: a typed error in the envelope
    # holding several seats, the account names the one it views: without it, a typed 422
    unnamed = play.get_view.sync(game_id, client=player)
    assert isinstance(unnamed, models.Error) and unnamed.error.details.field == "seat"
    mine_now = accounts.list_my_games.sync(client=player, status=models.ListMyGamesStatus.ACTIVE)
    assert [(g.game_id, sorted(g.my_seats)) for g in mine_now.games] == [(game_id, list(range(players)))]

    rng = random.Random(f"account-{game_type}")
    for n in range(20_000):
        view = play.get_view.sync(game_id, client=player, seat=0)
        assert type(view).__name__ == f"{_camel(game_type)}View", view
        if view.status != "active":
            break
        seat = rng.choice(view.to_act)
        mine = play.get_view.sync(game_id, client=player, seat=seat)
        assert mine.seat == seat
        templates = [item.to_dict() for item in mine.legal_actions]
        assert templates, f"seat {seat} is to act with no legal action"
        body = models.ActionRequest.from_dict({"action": _fill(rng.choice(templates), rng), "seat": seat,
                                               "expected_version": mine.version, "decision": mine.decision})
        done = play.post_action.sync(game_id, client=player, body=body, idempotency_key=f"acct-{n:06d}")
        assert isinstance(done, models.ActionResponse), done
    else:
        pytest.fail("the game did not end")
    jobs.drain(app.extensions["games"])
    summary = games.get_game.sync(game_id, client=anonymous)
    assert summary.status == "scored" and summary.result is not None

    # the account's games: the game is finished, every seat the account's
    finished = accounts.list_my_games.sync(client=player, status=models.ListMyGamesStatus.FINISHED)
    assert isinstance(finished, models.AccountGames), finished
    assert finished.total == 1 and [g.game_id for g in finished.games] == [game_id]
    row = finished.games[0]
    assert row.status == "scored" and sorted(row.my_seats) == list(range(players)) and not row.my_turn
    assert row.version == summary.version and row.to_act == []
    active = accounts.list_my_games.sync(client=player, status=models.ListMyGamesStatus.ACTIVE)
    assert active.total == 0 and active.games == []

    # the account's one event stream, as JSON pages
    page = accounts.list_account_events.sync(client=player)
    assert isinstance(page, models.AccountEvents), page
    kinds = [str(e.type_) for e in page.events]
    assert kinds.count("game.joined") == players and "game.started" in kinds and "turn" in kinds
    assert kinds.count("game.ended") == players and kinds[-1] == "game.ended"
    assert all(e.game_id == game_id and e.game_type == game_type for e in page.events)
    ids = [e.id for e in page.events]
    assert ids == sorted(set(ids)) and page.until == ids[-1]
    turns = [e for e in page.events if str(e.type_) == "turn"]
    assert all(isinstance(e.version, int) and isinstance(e.decision, int) for e in turns)
    ended = [e for e in page.events if str(e.type_) == "game.ended"]
    assert sorted(e.seat for e in ended) == list(range(players)) and all(isinstance(e.rank, int) for e in ended)
    rest = accounts.list_account_events.sync(client=player, after=ids[len(ids) // 2])
    assert [e.id for e in rest.events] == ids[len(ids) // 2 + 1:]
    assert accounts.list_account_events.sync(client=player, after=page.until).events == []

    assert {"signUp", "signIn", "createToken", "getAccount", "listTokens", "createGame", "claimSeat", "getView",
            "postAction", "listMyGames", "listAccountEvents"} <= contract.checked["operations"]


def test_a_generated_client_manages_its_credentials(client_package, fake_redis):
    """Tokens with a lifetime, the list, revocation, recovery codes, a password change and
    sign-out: the DELETE operations and the 204 answers through the generated client."""
    _, _, contract, client = _service(client_package, fake_redis)
    accounts = _Tag("accounts")
    models = importlib.import_module(f"{PACKAGE}.models")
    anonymous = client()
    assert isinstance(accounts.sign_up.sync(client=anonymous, body=models.SignUp(username="keeper", password=PASSWORD)),
                      models.SignedUp)
    session = accounts.sign_in.sync(client=anonymous, body=models.SignIn(username="keeper", password=PASSWORD))
    manager = client(session.token)
    short = accounts.create_token.sync(client=manager, body=models.TokenRequest(
        label="a day", scopes=[models.TokenRequestScopesItem.READ], expires_in_days=1.0))
    assert isinstance(short, models.NewToken) and abs(short.expires_at - short.created_at - 86_400_000) < 5_000
    listed = accounts.list_tokens.sync(client=manager)
    assert {t.id: t.kind for t in listed.tokens} == {session.token_id: "session", short.id: "personal"}
    profile = accounts.get_profile.sync("KEEPER", client=anonymous)
    assert isinstance(profile, models.Profile) and profile.username == "keeper" and not profile.closed

    revoked = accounts.revoke_token.sync_detailed(short.id, client=manager)
    assert revoked.status_code == 204
    gone = accounts.get_account.sync(client=client(short.token))
    assert isinstance(gone, models.Error) and gone.error.code == "unauthorized"
    again = accounts.revoke_token.sync(short.id, client=manager)
    assert isinstance(again, models.Error) and again.error.code == "not_found"

    codes = accounts.replace_recovery_codes.sync(client=manager, body=models.Password(password=PASSWORD))
    assert isinstance(codes, models.RecoveryCodes) and len(codes.recovery_codes) == 10
    wrong = accounts.change_password.sync(client=manager, body=models.PasswordChange(
        current_password="not the password", new_password="another long passphrase"))
    assert isinstance(wrong, models.Error) and wrong.error.code == "wrong_password"
    assert accounts.change_password.sync_detailed(client=manager, body=models.PasswordChange(
        current_password=PASSWORD, new_password="another long passphrase")).status_code == 204
    recovered = accounts.recover_account.sync_detailed(client=anonymous, body=models.Recover(
        username="keeper", recovery_code=codes.recovery_codes[0], new_password="a third long passphrase"))
    assert recovered.status_code == 204      # and it ended every session
    ended = accounts.get_account.sync(client=manager)
    assert isinstance(ended, models.Error) and ended.error.code == "unauthorized"

    again = accounts.sign_in.sync(client=anonymous, body=models.SignIn(username="keeper",
                                                                        password="a third long passphrase"))
    assert isinstance(again, models.Session)
    assert accounts.sign_out.sync_detailed(client=client(again.token)).status_code == 204
    assert isinstance(accounts.get_account.sync(client=client(again.token)), models.Error)
    assert {"signUp", "signIn", "createToken", "listTokens", "getProfile", "revokeToken", "getAccount",
            "replaceRecoveryCodes", "changePassword", "recoverAccount", "signOut"} <= contract.checked["operations"]


def test_the_accounts_part_of_the_document_is_complete(client_package):
    """The existing validity test looks at GET and POST; here every method, the accounts'
    security schemes and their use (openapi-spec-validator passes for the whole document in
    test_generated_client.py)."""
    from openapi_spec_validator.validation.validators import OpenAPIV31SpecValidator

    _, spec = client_package
    assert [str(e) for e in OpenAPIV31SpecValidator(spec).iter_errors()] == []
    schemes = spec["components"]["securitySchemes"]
    assert schemes["accountToken"]["type"] == "http" and schemes["accountToken"]["scheme"] == "bearer"
    assert schemes["sessionCookie"] == {**schemes["sessionCookie"], "type": "apiKey", "in": "cookie",
                                        "name": "speculation_session"}
    operations = [(m, p, op) for p, ops in spec["paths"].items() for m, op in ops.items()
                  if m in ("get", "post", "delete")]
    ids = [op["operationId"] for _, _, op in operations]
    assert len(ids) == len(set(ids)), ids
    for method, path, op in operations:
        assert {"429", "503"} <= set(op["responses"]), op["operationId"]
        for requirement in op.get("security", []):
            assert set(requirement) <= set(schemes), (op["operationId"], requirement)
        if path.startswith("/v1/account/") and path != "/v1/account/recover" or path in ("/v1/account",
                                                                                           "/v1/session"):
            assert op.get("security") and {} not in op["security"], f"{op['operationId']} must need a credential"
            assert "401" in op["responses"] and "403" in op["responses"], op["operationId"]
        if "requestBody" in op:
            assert {"400", "413", "422"} <= set(op["responses"]), op["operationId"]
