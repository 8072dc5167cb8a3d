"""The accounts' commands and queries: sign-up, sign-in, credentials, password and recovery,
closing, and the names seats are shown with.

Every write is an event appended through the unit of work to one aggregate: a username
(`username/<key>`) or an account (`account/<id>`). Sign-up is a chain of two appends, the
name first: its claim at expected version 0 decides the race for it, and a crash before the
account's own stream is opened leaves a claim that the next sign-up for the name takes over
once `RECLAIM_AFTER` has passed (no name is ever stuck). Closing is the other way round: the
account closes first, then its name is released with a tombstone date; a crash between them
is healed the same way (a name held by a closed account is free once its tombstone passes).

Password hashing and checking run in a bounded pool of threads off the event loop
(passwords.PasswordHashing); an unknown name costs the same Argon2id check as a known one.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import dataclass
from typing import Callable, Optional

from events.account_index import AccountIndex
from events.envelope import NewEvent
from events.store import EventStore

from ..core.errors import Conflict, Forbidden, Invalid, NotFound, Throttled, Unauthorized
from ..core.unit_of_work import Answer, Command, Decision, Idempotency, UnitOfWork
from .credentials import (CredentialCache, RevocationBroadcast, Principal, account_of, credential_hash, keyed, new_credential,
                          new_recovery_codes, recovery_code_hash, token_id_of)
from .model import PERSONAL, SCOPES, SESSION, Account, Grant, Username
from .names import NameRefused, check_username, display_username, username_key
from .passwords import HashingBusy, PasswordHashing, password_problem
from .repository import AccountRepository, UsernameRepository

RECLAIM_AFTER_MS = 60_000       # a name claimed by a sign-up whose account never opened is free after this
MAX_TOKENS = 100                # live personal tokens per account
MAX_SESSIONS = 100              # live sessions per account: the oldest ends when a new one begins
LABEL_MAX = 64
USED_EVERY = 60.0               # seconds between two writes of a credential's last use, per process
TOKEN_ID_FORM = re.compile(r"[0-9a-f]{16}")   # a credential's public id (credentials.token_id_of)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _key_of(username) -> str:
    """The name's key for a lookup ("" for text no username can be): reserved names too, so
    that signing in as one costs what any other wrong name does."""
    try:
        return username_key(display_username(username))
    except (NameRefused, TypeError):
        return ""


@dataclass(frozen=True)
class AccountPolicy:
    session_days: float = 30
    tombstone_days: float = 365
    lock_after: int = 10          # wrong passwords within `lock_window` that lock a name
    lock_window: int = 900        # seconds
    lock_seconds: int = 900       # how long the lock holds (never extended while it does)


@dataclass(frozen=True)
class SignedIn:
    credential: str
    grant: Grant
    account: Account
    device: str


class Accounts:
    def __init__(self, store: EventStore, index: AccountIndex, hashing: PasswordHashing,
                 secret: Callable[[], bytes], policy: AccountPolicy = AccountPolicy()):
        self.store = store
        self.index = index
        self.hashing = hashing
        self._secret = secret
        self.policy = policy
        self.cache = CredentialCache()
        self.revocations = RevocationBroadcast(index.redis, self.cache)
        self.account_repository = AccountRepository(store, on_appended=self._appended)
        self.names = UnitOfWork(UsernameRepository(store))
        self.work = UnitOfWork(self.account_repository)
        self._used: dict[str, float] = {}
        self._shown: dict[str, tuple[float, str, bool]] = {}   # account id -> (until, username, closed)

    # --- loading -------------------------------------------------------------------------
    def account(self, account_id: str) -> Account:
        account = self.account_repository.load(f"account/{account_id}")
        if not account.opened:
            raise NotFound(f"no account {account_id!r}", {"field": "account_id"})
        return account

    def _holder(self, key: str) -> Username:
        return self.names.repository.load(f"username/{key}")

    def by_username(self, username: str) -> Account:
        key = _key_of(username)
        if not key:
            raise NotFound("username: no such account", {"field": "username"})
        holder = self._holder(key).account_id
        account = self.account_repository.load(f"account/{holder}") if holder else None
        if account is None or not account.opened:
            raise NotFound("username: no such account", {"field": "username"})
        return account

    def profile(self, username: str) -> dict:
        account = self.by_username(username)
        return {"id": account.id, "username": account.username, "created_at": account.created_at,
                "closed": account.closed}

    # --- signing up ------------------------------------------------------------------------
    def sign_up(self, username: str, password: str) -> tuple[Account, list[str]]:
        display, key = self._checked_name(username)
        self._check_password("password", password, display)
        password_hash = self._hash(password)
        account_id = secrets.token_hex(8)
        self._claim_name(key, display, account_id)
        codes = new_recovery_codes()
        opened = NewEvent("account.opened", {
            "account_id": account_id, "username": display, "username_key": key, "password_hash": password_hash,
            "recovery_codes": [recovery_code_hash(account_id, c) for c in codes]})
        account = self.work.run(Command(f"account/{account_id}", lambda _a, _c: Decision([opened], 0),
                                        lambda done: done.after, new=True, unseen=True))
        self.index.record_account(account_id, account.created_at)
        return account, codes

    @staticmethod
    def _checked_name(username) -> tuple[str, str]:
        try:
            return check_username(username)
        except NameRefused as why:
            raise Invalid(why.message, {"field": "username"}, code=why.code) from None

    @staticmethod
    def _check_password(field: str, password, username: str = "") -> None:
        problem = password_problem(password, username)
        if problem:
            raise Invalid(field + problem[len("password"):], {"field": field}, code="password_refused")

    def _claim_name(self, key: str, display: str, account_id: str) -> None:
        taken = Conflict(f"username: {display!r} is taken (or looks like a name that is)",
                         {"field": "username"}, code="username_taken")

        def decide(name: Username, careful: bool) -> Decision:
            now = _now_ms()
            if name.account_id and not self._name_is_free(name, now):
                raise taken
            if not name.account_id and name.free_after > now:
                raise taken
            return Decision([NewEvent("username.claimed", {"account_id": account_id, "username": display})],
                            expected_version=name.version)

        self.names.run(Command(f"username/{key}", decide, lambda done: done.after,
                               version_conflict=lambda err: taken))

    def _name_is_free(self, name: Username, now: int) -> bool:
        """A held name that is free all the same: its sign-up died before the account opened,
        or its account closed and the tombstone passed (the release was lost)."""
        account = self.account_repository.load(f"account/{name.account_id}")
        if not account.opened:
            return now - name.claimed_at > RECLAIM_AFTER_MS
        return account.closed and now > account.closed_at + self._tombstone_ms()

    def _tombstone_ms(self) -> int:
        return int(self.policy.tombstone_days * 86400 * 1000)

    def open_bot_account(self, account_id: str, level: str) -> None:
        """The account a bot level is rated as (service/ratings): the level's own (reserved)
        name and no password, so it never signs in. Idempotent, in the sign-up's order."""
        key = username_key(level)

        def claim(name: Username, careful: bool):
            if name.account_id == account_id:
                return Answer(name)
            if name.account_id:
                raise RuntimeError(f"the bot level {level!r}'s name is held by another account")
            return Decision([NewEvent("username.claimed", {"account_id": account_id, "username": level})],
                            expected_version=name.version)

        try:
            self.names.run(Command(f"username/{key}", claim, lambda done: done.after))
        except Conflict:   # another process opened it at the same moment: the claim is now its own
            self.names.run(Command(f"username/{key}", claim, lambda done: done.after))
        opened = NewEvent("account.opened", {"account_id": account_id, "username": level, "username_key": key,
                                             "password_hash": "", "recovery_codes": [], "bot": level})
        self.work.run(Command(f"account/{account_id}",
                              lambda a, c: Answer(a) if a.opened else Decision([opened], expected_version=0),
                              lambda done: done.after, idem=Idempotency("open", "open"),
                              replay=lambda receipt: None))

    # --- signing in ----------------------------------------------------------------------
    def sign_in(self, username: str, password: str, device: Optional[str] = None) -> SignedIn:
        """A session for the right password. A wrong name and a wrong password get the same
        answer after the same work; wrong passwords lock the name (lock_after within
        lock_window) for lock_seconds, except on a device that signed in to it before."""
        key = _key_of(username)
        trusted = bool(key) and self._trusted(device, key)
        if key and not trusted:
            self._count_attempt(key)
        account = self._signable(key)
        if account is None:
            self._verify_dummy(password)
            ok = False
        else:
            ok = self._verify(account.password_hash, password)
        if not ok:
            raise Unauthorized("username or password: no account has this username and password",
                               {"field": "password"}, code="bad_credentials")
        self.index.signed_in(key)
        credential, grant = self._grant(account, SESSION, "sign-in", SCOPES,
                                        _now_ms() + int(self.policy.session_days * 86400 * 1000))
        return SignedIn(credential, grant, self.account(account.id),
                        device if trusted else self._new_device(key))

    def _count_attempt(self, key: str) -> None:
        """One more check of a secret for this name, counted before it is made: at most
        lock_after checks per lock_window from devices it does not know, however many arrive
        at once; past them the name is locked (429) for lock_seconds."""
        locked = self.index.attempt_sign_in(key, self.policy.lock_window, self.policy.lock_after,
                                            self.policy.lock_seconds)
        if locked:
            raise self._locked(locked)

    def _locked(self, seconds: int) -> Throttled:
        return Throttled(f"username: too many wrong passwords; sign-in to this account is locked for "
                         f"{seconds} s more (a device that signed in to it before is not locked out)",
                         seconds, {"field": "username"}, code="sign_in_locked")

    def _signable(self, key: str) -> Optional[Account]:
        if not key:
            return None
        holder = self._holder(key).account_id
        if not holder:
            return None
        account = self.account_repository.load(f"account/{holder}")
        return account if account.opened and not account.closed else None

    def _new_device(self, key: str) -> str:
        nonce = secrets.token_hex(8)
        return f"{nonce}.{keyed(self._secret(), 'device', key, nonce)[:32]}"

    def _trusted(self, device: Optional[str], key: str) -> bool:
        if not device or not isinstance(device, str) or len(device) != 49 or device[16] != ".":
            return False
        nonce, mac = device.split(".", 1)
        return secrets.compare_digest(mac, keyed(self._secret(), "device", key, nonce)[:32])

    def csrf_token(self, principal: Principal) -> str:
        """The value a cookie session's state-changing requests carry in X-CSRF-Token."""
        return keyed(self._secret(), "csrf", principal.token_hash)[:43]

    # --- passwords in the pool -----------------------------------------------------------
    def _hash(self, password: str) -> str:
        try:
            return self.hashing.hash(password)
        except HashingBusy as busy:
            raise Throttled("password: the service is checking too many passwords now; retry shortly",
                            busy.retry_after, {"field": "password"}, code="busy") from None

    def _verify(self, stored: str, password: str) -> bool:
        try:
            return self.hashing.verify(stored, password)
        except HashingBusy as busy:
            raise Throttled("password: the service is checking too many passwords now; retry shortly",
                            busy.retry_after, {"field": "password"}, code="busy") from None

    def _verify_dummy(self, password: str) -> None:
        try:
            self.hashing.verify_dummy(password)
        except HashingBusy as busy:
            raise Throttled("password: the service is checking too many passwords now; retry shortly",
                            busy.retry_after, {"field": "password"}, code="busy") from None

    def _check_own_password(self, account: Account, field: str, password) -> None:
        if not isinstance(password, str) or not self._verify(account.password_hash, password):
            raise Forbidden(f"{field}: not this account's password", {"field": field}, code="wrong_password")

    # --- credentials ---------------------------------------------------------------------
    def authenticate(self, credential: str, via_cookie: bool = False) -> Principal:
        """The principal an account credential stands for; 401 for anything else (malformed,
        unknown, revoked, expired, of a closed account)."""
        account_id = account_of(credential)
        if account_id is None:
            raise Unauthorized("credential: not an account token", {"field": "credential"})
        digest = credential_hash(credential)
        self.revocations.listen()
        found = self.cache.get(digest)
        if found is None:
            record = self.store.get_meta(f"account/{account_id}", f"tok:{digest}")[f"tok:{digest}"]
            if not record or record == "-":
                raise Unauthorized("credential: unknown or revoked token", {"field": "credential"})
            body = json.loads(record)
            if body["exp"] is not None and body["exp"] <= _now_ms():
                raise Unauthorized("credential: this token has expired", {"field": "credential"})
            found = Principal(account_id, body["id"], digest, body["kind"], tuple(body["scopes"]))
            self.cache.put(digest, found)
            self._mark_used(found)
        if via_cookie != found.via_cookie:
            found = Principal(found.account_id, found.token_id, found.token_hash, found.kind, found.scopes, via_cookie)
        return found

    def _mark_used(self, principal: Principal) -> None:
        now = time.monotonic()
        if now - self._used.get(principal.token_hash, -USED_EVERY) < USED_EVERY:
            return
        if len(self._used) > 100_000:
            self._used.clear()
        self._used[principal.token_hash] = now
        self.store.set_meta(principal.stream_id, {f"used:{principal.token_id}": str(_now_ms())})

    def still_valid(self, principal: Principal) -> bool:
        """Whether the credential is still live, read now (not from the cache)."""
        record = self.store.get_meta(principal.stream_id, f"tok:{principal.token_hash}")[f"tok:{principal.token_hash}"]
        return bool(record) and record != "-"

    def _grant(self, account: Account, kind: str, label: str, scopes, expires_at: Optional[int]
               ) -> tuple[str, Grant]:
        credential = new_credential(account.id, kind)
        digest = credential_hash(credential)
        token_id = token_id_of(digest)

        def decide(current: Account, careful: bool) -> Decision:
            self._check_open(current)
            same = [g for g in current.grants if g.kind == kind and g.live(_now_ms())]
            if kind == PERSONAL and len(same) >= MAX_TOKENS:
                raise Conflict(f"tokens: at most {MAX_TOKENS} personal tokens; revoke one first",
                               {"field": "tokens"}, code="too_many_tokens")
            events = []
            if kind == SESSION and len(same) >= MAX_SESSIONS:   # the oldest session ends
                events.append(NewEvent("token.revoked", {"token_id": same[0].id, "reason": "replaced"}))
            events.append(NewEvent("token.granted", {"token_id": token_id, "token_hash": digest, "kind": kind,
                                                     "label": label, "scopes": list(scopes),
                                                     "expires_at": expires_at}))
            return Decision(events)

        after = self.work.run(Command(account.stream_id, decide, lambda done: done.after))
        return credential, after.grant(token_id)

    @staticmethod
    def _check_open(account: Account) -> None:
        if not account.opened:
            raise NotFound("no such account", {"field": "account"})
        if account.closed:
            raise Forbidden("account: this account is closed", {"field": "account"}, code="account_closed")

    def create_token(self, principal: Principal, label: str, scopes: list[str],
                     expires_in_days: Optional[float]) -> tuple[str, Grant]:
        missing = [s for s in scopes if s not in principal.scopes]
        if missing:
            raise Forbidden(f"scopes: this credential cannot grant {missing[0]!r}: a token can create tokens "
                            f"only with scopes it holds ({', '.join(principal.scopes)})",
                            {"field": "scopes", "scope": missing[0]}, code="missing_scope")
        expires_at = None if expires_in_days is None else _now_ms() + int(expires_in_days * 86400 * 1000)
        return self._grant(self.account(principal.account_id), PERSONAL, label, sorted(set(scopes), key=SCOPES.index),
                           expires_at)

    def tokens(self, principal: Principal) -> list[dict]:
        account = self.account(principal.account_id)
        used = self.store.get_meta_prefixed(account.stream_id, "used:")
        now = _now_ms()
        return [{**g.as_public(), "last_used_at": int(used[f"used:{g.id}"]) if f"used:{g.id}" in used else None,
                 "current": g.id == principal.token_id}
                for g in account.grants if g.live(now)]

    def revoke(self, principal: Principal, token_id: str, reason: str = "revoked") -> None:
        def decide(account: Account, careful: bool) -> Decision:
            grant = account.grant(token_id)
            if grant is None:
                # the id is echoed only when it has an id's form: a caller who pasted the
                # token itself (or any other text) does not get it back in the answer
                shown = repr(token_id) if TOKEN_ID_FORM.fullmatch(token_id) else "with this id (an id is 16 hex digits)"
                raise NotFound(f"token_id: no live token {shown} of this account", {"field": "token_id"})
            return Decision([NewEvent("token.revoked", {"token_id": token_id, "reason": reason})])

        self.work.run(Command(principal.stream_id, decide, lambda done: done.after))

    def sign_out(self, principal: Principal) -> None:
        if principal.kind != SESSION:
            raise Invalid("credential: signing out ends a session; revoke a personal token instead "
                          "(DELETE /v1/account/tokens/{id})", {"field": "credential"})
        self.revoke(principal, principal.token_id, "signed out")

    def sign_out_everywhere(self, principal: Principal) -> None:
        def decide(account: Account, careful: bool) -> Decision:
            ended = [NewEvent("token.revoked", {"token_id": g.id, "reason": "signed out everywhere"})
                     for g in account.sessions()]
            return Decision(ended) if ended else Answer(account)

        self.work.run(Command(principal.stream_id, decide, lambda done: done.after))

    # --- password and recovery -------------------------------------------------------------
    def change_password(self, principal: Principal, current: str, new: str) -> None:
        account = self.account(principal.account_id)
        self._check_open(account)
        self._check_own_password(account, "current_password", current)
        self._check_password("new_password", new, account.username)
        new_hash = self._hash(new)

        def decide(now: Account, careful: bool) -> Decision:
            others = [g for g in now.sessions() if g.id != principal.token_id]
            return Decision([NewEvent("account.password_changed", {"password_hash": new_hash})] +
                            [NewEvent("token.revoked", {"token_id": g.id, "reason": "password changed"})
                             for g in others])

        self.work.run(Command(account.stream_id, decide, lambda done: done.after))

    def replace_recovery_codes(self, principal: Principal, password: str) -> list[str]:
        account = self.account(principal.account_id)
        self._check_open(account)
        self._check_own_password(account, "password", password)
        codes = new_recovery_codes()
        hashes = [recovery_code_hash(account.id, c) for c in codes]
        self.work.run(Command(account.stream_id, lambda _a, _c: Decision(
            [NewEvent("account.recovery_codes_replaced", {"recovery_codes": hashes})]), lambda done: done.after))
        return codes

    def recover(self, username: str, code: str, new_password: str) -> None:
        """A new password with one unused recovery code: every session ends. Wrong codes count
        toward the name's sign-in lock, as wrong passwords do."""
        key = _key_of(username)
        if key:
            self._count_attempt(key)
        account = self._signable(key)
        code_hash = recovery_code_hash(account.id, code) if account and isinstance(code, str) else ""
        if account is None or code_hash not in account.recovery:
            raise Unauthorized("username or recovery_code: no account has this username and unused code",
                               {"field": "recovery_code"}, code="bad_credentials")
        self._check_password("new_password", new_password, account.username)
        self._set_password(account, self._hash(new_password), used_code=code_hash)
        self.index.signed_in(key)

    def reset_password(self, username: str, new_password: str) -> None:
        """The operator's reset (`speculation accounts reset-password`): every session ends."""
        account = self.by_username(username)
        self._check_open(account)
        self._check_password("new_password", new_password, account.username)
        self._set_password(account, self._hash(new_password))

    def _set_password(self, account: Account, new_hash: str, used_code: str = "") -> None:
        def decide(now: Account, careful: bool) -> Decision:
            if used_code and used_code not in now.recovery:
                raise Unauthorized("recovery_code: this code was just used", {"field": "recovery_code"},
                                   code="bad_credentials")
            events = [NewEvent("account.recovery_code_used", {"code_hash": used_code})] if used_code else []
            events.append(NewEvent("account.password_changed", {"password_hash": new_hash}))
            events += [NewEvent("token.revoked", {"token_id": g.id, "reason": "password reset"})
                       for g in now.sessions()]
            return Decision(events)

        self.work.run(Command(account.stream_id, decide, lambda done: done.after))

    # --- preferences -------------------------------------------------------------------------
    CHALLENGE_CHOICES = ("anyone", "none")

    def set_preferences(self, principal: Principal, challenges: str) -> Account:
        if challenges not in self.CHALLENGE_CHOICES:
            raise Invalid(f"challenges: one of {', '.join(self.CHALLENGE_CHOICES)}", {"field": "challenges"})

        def decide(account: Account, careful: bool):
            self._check_open(account)
            if account.challenges == challenges:
                return Answer(account)
            return Decision([NewEvent("account.preferences_changed", {"challenges": challenges})])

        return self.work.run(Command(principal.stream_id, decide, lambda done: done.after))

    # --- closing ---------------------------------------------------------------------------
    def close(self, principal: Principal, password: str) -> None:
        account = self.account(principal.account_id)
        self._check_open(account)
        self._check_own_password(account, "password", password)
        self.work.run(Command(account.stream_id, lambda now, careful: Decision(
            [NewEvent("account.closed", {})]), lambda done: done.after,
            idem=Idempotency("close", "close")))
        self._release_name(account)

    def _release_name(self, account: Account) -> None:
        free_after = _now_ms() + self._tombstone_ms()

        def decide(name: Username, careful: bool):
            if name.account_id != account.id:
                return Answer(name)
            return Decision([NewEvent("username.released", {"account_id": account.id, "free_after": free_after})])

        self.names.run(Command(f"username/{account.username_key}", decide, lambda done: done.after))

    # --- what follows an append to an account -------------------------------------------------
    def _appended(self, after: Account, stored: list) -> None:
        """The revoking process forgets the revoked credentials at once (the others within
        the cache's lifetime)."""
        gone = {e.data["token_id"] for e in stored if e.type == "token.revoked"}
        if gone or after.closed:
            self.cache.drop_account(after.id, None if after.closed else gone)
            self.revocations.tell(after.id)   # every other process drops them too, at once
        if any(e.type == "account.closed" for e in stored):
            self._shown.pop(after.id, None)

    # --- names of the seats ------------------------------------------------------------------
    def shown_name(self, account_id: str) -> tuple[str, bool]:
        """The username a seat of this account is shown with, and whether the account closed."""
        now = time.monotonic()
        found = self._shown.get(account_id)
        if found is not None and found[0] > now:
            return found[1], found[2]
        try:
            account = self.account(account_id)
            shown = (account.username, account.closed)
        except NotFound:
            shown = ("(unknown account)", True)
        if len(self._shown) > 100_000:
            self._shown.clear()
        self._shown[account_id] = (now + 60.0, *shown)
        return shown

    def export(self, principal: Principal, games: list[dict]) -> dict:
        account = self.account(principal.account_id)
        return {"account": {"id": account.id, "username": account.username, "created_at": account.created_at,
                            "closed": account.closed},
                "tokens": self.tokens(principal), "games": games, "exported_at": _now_ms()}
