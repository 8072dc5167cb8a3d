"""An account and a username as folds of their events: frozen state, one small pure function
per event type (the functional deciders of the eventsourcing library). No I/O here.

Two kinds of aggregate, one stream each (events/keys.py):

- `username/<key>`: who holds a name. `key` is the name's skeleton (names.username_key), so
  two names that look alike are one aggregate, and the first claim at expected version 0
  wins. A closed account's name is released with a tombstone date before which nobody may
  claim it.
- `account/<id>`: the account's credentials (password hash, recovery codes, the token grants)
  and its notices (game joined, started, your turn, ended): the account's one event stream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Optional

from events.envelope import GENESIS, StoredEvent

SCOPES = ("play", "read", "account")
SESSION, PERSONAL = "session", "personal"

# The events of the account's stream a client sees (its notices), by stored type, and the
# type it is shown as. Every other event of the stream (credentials) is never shown.
NOTICES = {"notice.joined": "game.joined", "notice.started": "game.started", "notice.turn": "turn",
           "notice.ended": "game.ended", "notice.invited": "invitation", "notice.accepted": "invitation.accepted",
           "notice.expired": "invitation.expired", "notice.matched": "seek.matched"}


@dataclass(frozen=True)
class Grant:
    """A credential the account issued: a session (sign-in) or a personal token."""

    id: str
    hash: str
    kind: str
    label: str
    scopes: tuple[str, ...]
    created_at: int
    expires_at: Optional[int] = None

    def live(self, now_ms: int) -> bool:
        return self.expires_at is None or now_ms < self.expires_at

    def as_public(self) -> dict:
        return {"id": self.id, "kind": self.kind, "label": self.label, "scopes": list(self.scopes),
                "created_at": self.created_at, "expires_at": self.expires_at}

    def as_record(self) -> str:
        """What the account's meta holds for this credential (`tok:<hash>`), read on every
        authenticated request without folding the account."""
        return json.dumps({"id": self.id, "kind": self.kind, "scopes": list(self.scopes),
                           "exp": self.expires_at}, separators=(",", ":"))


@dataclass(frozen=True)
class Account:
    stream_id: str
    version: int = 0
    head: str = GENESIS
    id: str = ""
    username: str = ""
    username_key: str = ""
    created_at: int = 0
    password_hash: str = ""
    recovery: tuple[str, ...] = ()       # hashes of the unused recovery codes
    grants: tuple[Grant, ...] = ()
    closed: bool = False
    closed_at: int = 0
    challenges: str = "anyone"           # who may challenge it: "anyone" or "none"

    @property
    def opened(self) -> bool:
        return self.version > 0 and bool(self.id)

    def grant(self, token_id: str) -> Optional[Grant]:
        return next((g for g in self.grants if g.id == token_id), None)

    def sessions(self) -> list[Grant]:
        return [g for g in self.grants if g.kind == SESSION]

    def as_state(self) -> str:
        """The state as kept in the stream's meta with each append (a snapshot that is never
        behind: it is written by the append itself)."""
        body = {k: getattr(self, k) for k in ("id", "username", "username_key", "created_at",
                                             "password_hash", "closed", "closed_at", "challenges")}
        body["recovery"] = list(self.recovery)
        body["grants"] = [{**g.as_public(), "hash": g.hash} for g in self.grants]
        return json.dumps(body, separators=(",", ":"))

    @classmethod
    def from_state(cls, stream_id: str, version: int, head: str, text: str) -> "Account":
        body = json.loads(text)
        grants = tuple(Grant(g["id"], g["hash"], g["kind"], g["label"], tuple(g["scopes"]), g["created_at"],
                             g["expires_at"]) for g in body.pop("grants"))
        return cls(stream_id, version, head, recovery=tuple(body.pop("recovery")), grants=grants, **body)


# --- the account's events --------------------------------------------------------------
def _opened(account: Account, event: StoredEvent) -> Account:
    data = event.data
    return replace(account, id=data["account_id"], username=data["username"], username_key=data["username_key"],
                   created_at=event.at, password_hash=data["password_hash"],
                   recovery=tuple(data["recovery_codes"]))


def _password_changed(account: Account, event: StoredEvent) -> Account:
    return replace(account, password_hash=event.data["password_hash"])


def _recovery_replaced(account: Account, event: StoredEvent) -> Account:
    return replace(account, recovery=tuple(event.data["recovery_codes"]))


def _recovery_used(account: Account, event: StoredEvent) -> Account:
    return replace(account, recovery=tuple(c for c in account.recovery if c != event.data["code_hash"]))


def _granted(account: Account, event: StoredEvent) -> Account:
    data = event.data
    grant = Grant(data["token_id"], data["token_hash"], data["kind"], data["label"], tuple(data["scopes"]),
                  event.at, data.get("expires_at"))
    # an expired grant is dropped from the state when the next one comes (its record stays refused)
    kept = tuple(g for g in account.grants if g.live(event.at))
    return replace(account, grants=kept + (grant,))


def _revoked(account: Account, event: StoredEvent) -> Account:
    return replace(account, grants=tuple(g for g in account.grants if g.id != event.data["token_id"]))


def _preferences(account: Account, event: StoredEvent) -> Account:
    return replace(account, challenges=event.data.get("challenges", account.challenges))


def _closed(account: Account, event: StoredEvent) -> Account:
    return replace(account, closed=True, closed_at=event.at, grants=(), recovery=())


ACCOUNT_EVENTS: dict[str, Callable[[Account, StoredEvent], Account]] = {
    "account.opened": _opened,
    "account.password_changed": _password_changed,
    "account.recovery_codes_replaced": _recovery_replaced,
    "account.recovery_code_used": _recovery_used,
    "token.granted": _granted,
    "token.revoked": _revoked,
    "account.closed": _closed,
    "account.preferences_changed": _preferences,
}


def fold_account(events: Iterable[StoredEvent], account: Account) -> Account:
    for event in events:
        evolve = ACCOUNT_EVENTS.get(event.type)
        if evolve is not None:
            account = evolve(account, event)
        account = replace(account, version=event.version, head=event.hash)
    return account


def token_records(before: Account, after: Account) -> dict[str, str]:
    """The meta fields an append writes with its batch so that authentication, which reads
    them without folding, agrees with the fold at once: every new grant's record, and "-" for
    every grant that went (revoked, signed out, the account closed)."""
    old = {g.hash for g in before.grants}
    new = {g.hash: g for g in after.grants}
    out = {f"tok:{h}": g.as_record() for h, g in new.items() if h not in old}
    out.update({f"tok:{h}": "-" for h in old if h not in new})
    if after.closed:
        out["closed"] = "1"
    return out


# --- a username ------------------------------------------------------------------------
@dataclass(frozen=True)
class Username:
    stream_id: str
    version: int = 0
    head: str = GENESIS
    account_id: Optional[str] = None     # who holds it now
    claimed_at: int = 0
    free_after: int = 0                  # a released name's tombstone: nobody claims it before (ms)
    history: tuple[str, ...] = field(default=())   # every account that held it

    def holder(self) -> Optional[str]:
        return self.account_id


def _name_claimed(name: Username, event: StoredEvent) -> Username:
    return replace(name, account_id=event.data["account_id"], claimed_at=event.at,
                   history=name.history + (event.data["account_id"],))


def _name_released(name: Username, event: StoredEvent) -> Username:
    return replace(name, account_id=None, free_after=event.data["free_after"])


USERNAME_EVENTS = {"username.claimed": _name_claimed, "username.released": _name_released}


def fold_username(events: Iterable[StoredEvent], name: Username) -> Username:
    for event in events:
        evolve = USERNAME_EVENTS.get(event.type)
        if evolve is not None:
            name = evolve(name, event)
        name = replace(name, version=event.version, head=event.hash)
    return name
