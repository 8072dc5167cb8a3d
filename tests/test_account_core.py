"""The accounts' core without HTTP, on fakeredis and a real server: the fold and its kept
state, the two-step chains (sign-up, close) healed after a crash between their steps, the
notices appended once whatever repeats them, the rebuild of the projections, and the sign-in
lock that is never extended while it holds."""

from __future__ import annotations

import time

import pytest

from events.account_index import AccountIndex
from events.envelope import NewEvent
from events.store import RedisEventStore
from service.accounts import service as account_service
from service.accounts.credentials import Principal, credential_hash
from service.accounts.maintenance import rebuild_accounts
from service.accounts.model import Account, fold_account
from service.accounts.notices import AccountNotices
from service.accounts.passwords import PasswordHashing
from service.accounts.service import AccountPolicy, Accounts
from service.core.errors import Conflict, Throttled, Unauthorized
from service.core.unit_of_work import Command, Decision
from tests.service_kit import make_service

pytestmark = pytest.mark.quick

PASSWORD = "correct horse battery staple"
SEED = "ab" * 32


@pytest.fixture
def accounts(redis_client):
    store = RedisEventStore(redis_client)
    return Accounts(store, AccountIndex(redis_client), PasswordHashing.for_tests(), lambda: b"k" * 32,
                    AccountPolicy(lock_after=3))


def principal_of(accounts, credential):
    return accounts.authenticate(credential)


def test_the_kept_state_is_the_fold_of_the_events(accounts):
    account, _ = accounts.sign_up("alice", PASSWORD)
    signed = accounts.sign_in("alice", PASSWORD)
    me = principal_of(accounts, signed.credential)
    token, grant = accounts.create_token(me, "bot", ["play"], 30)
    accounts.revoke(me, grant.id)
    accounts.change_password(me, PASSWORD, "another fine passphrase")
    kept = accounts.account_repository.load(account.stream_id)
    folded = accounts.account_repository.rebuilt(account.stream_id)
    assert kept == folded and kept.version == 5
    assert Account.from_state(kept.stream_id, kept.version, kept.head, kept.as_state()) == kept
    with pytest.raises(Unauthorized):
        accounts.authenticate(token)


def test_a_sign_up_that_died_after_claiming_its_name_frees_the_name_later(accounts, monkeypatch):
    accounts._claim_name("bob", "bob", "0123456789abcdef")      # the account itself never opened
    with pytest.raises(Conflict):
        accounts.sign_up("bob", PASSWORD)
    monkeypatch.setattr(account_service, "RECLAIM_AFTER_MS", -1)
    account, _ = accounts.sign_up("Bob", PASSWORD)
    assert accounts.by_username("bob").id == account.id != "0123456789abcdef"


def test_a_close_that_died_before_releasing_the_name_frees_it_after_the_tombstone(accounts):
    account, _ = accounts.sign_up("carol", PASSWORD)
    accounts.work.run(Command(account.stream_id, lambda a, c: Decision([NewEvent("account.closed", {})]),
                              lambda done: done.after))     # the release of the name is lost
    with pytest.raises(Conflict):
        accounts.sign_up("carol", PASSWORD)
    accounts.policy = AccountPolicy(tombstone_days=0)
    time.sleep(0.01)
    assert accounts.sign_up("carol", PASSWORD)[0].id != account.id


def test_a_released_name_waits_out_its_tombstone(accounts):
    accounts.sign_up("dave", PASSWORD)
    signed = accounts.sign_in("dave", PASSWORD)
    accounts.close(principal_of(accounts, signed.credential), PASSWORD)
    with pytest.raises(Conflict):
        accounts.sign_up("dave", PASSWORD)
    with pytest.raises(Unauthorized):
        accounts.sign_in("dave", PASSWORD)


def test_the_lock_is_not_extended_by_attempts_while_it_holds(accounts, redis_client):
    accounts.sign_up("erin", PASSWORD)
    for _ in range(3):
        with pytest.raises(Unauthorized):
            accounts.sign_in("erin", "wrong password!")
    with pytest.raises(Throttled):          # a fourth check is refused, and locks the name
        accounts.sign_in("erin", PASSWORD)
    key = "erln"
    redis_client.expire(f"username:{{username:{key}}}:signin:lock", 100)   # as if most of it had passed
    for _ in range(5):
        with pytest.raises(Throttled) as locked:
            accounts.sign_in("erin", "wrong password!")
    assert locked.value.retry_after <= 100


def test_checks_in_flight_at_once_cannot_pass_the_bound(accounts, redis_client):
    import threading

    accounts.sign_up("fred", PASSWORD)
    outcomes = []

    def guess():
        try:
            accounts.sign_in("fred", "wrong password!")
        except (Unauthorized, Throttled) as err:
            outcomes.append(type(err).__name__)

    threads = [threading.Thread(target=guess) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("Unauthorized") == 3 and outcomes.count("Throttled") == 9


def test_notices_are_appended_once_and_a_repair_restores_the_games_list(redis_client, accounts):
    core, jobs = make_service(redis_client)
    notices = AccountNotices(accounts.work, accounts.index)
    core.games.observers.append(notices.game_moved)
    alice, _ = accounts.sign_up("alice", PASSWORD)
    bob, _ = accounts.sign_up("bob", PASSWORD)
    session = core.create("secret-duel", None, [{}, {}], seed=SEED)
    core.claim_seat(session.game_id, 0, None, account=alice.id)
    core.claim_seat(session.game_id, 1, None, account=bob.id)
    before = redis_client.xlen(f"account:{{account:{alice.id}}}:events")
    again = AccountNotices(accounts.work, accounts.index)   # another process: no memory of what was sent
    again.game_moved(core.load(session.game_id))
    again.game_moved(core.load(session.game_id))
    assert redis_client.xlen(f"account:{{account:{alice.id}}}:events") == before
    accounts.index.forget_games(alice.id)
    assert accounts.index.games(alice.id)[1] == 0
    core.repair(session.game_id)
    assert accounts.index.games(alice.id)[0] == [session.game_id]


def test_the_rebuild_restores_kept_state_and_never_revives_a_revoked_token(redis_client, accounts):
    core, _ = make_service(redis_client)
    account, _ = accounts.sign_up("frank", PASSWORD)
    signed = accounts.sign_in("frank", PASSWORD)
    me = principal_of(accounts, signed.credential)
    token, grant = accounts.create_token(me, "old", ["read"], None)
    accounts.revoke(me, grant.id)
    stream = account.stream_id
    accounts.store.set_meta(stream, {"state": "{}", f"tok:{credential_hash(token)}": '{"id":"x","kind":"personal",'
                                     '"scopes":["read"],"exp":null}'})
    done = rebuild_accounts(core, accounts.index, [])
    assert done == {"accounts": 1, "accounts_fixed": 1, "games": 0}
    assert accounts.account_repository.load(stream) == fold_account(accounts.store.read(stream), Account(stream))
    accounts.cache = type(accounts.cache)()
    with pytest.raises(Unauthorized):
        accounts.authenticate(token)
    assert accounts.authenticate(signed.credential).account_id == account.id


def test_a_token_can_only_grant_scopes_it_holds(accounts):
    accounts.sign_up("gina", PASSWORD)
    signed = accounts.sign_in("gina", PASSWORD)
    me = principal_of(accounts, signed.credential)
    token, _ = accounts.create_token(me, "manager", ["account"], None)
    manager = principal_of(accounts, token)
    assert isinstance(manager, Principal) and manager.scopes == ("account",)
    from service.core.errors import Forbidden

    with pytest.raises(Forbidden) as refused:
        accounts.create_token(manager, "player", ["play"], None)
    assert refused.value.code == "missing_scope" and refused.value.details["scope"] == "play"
