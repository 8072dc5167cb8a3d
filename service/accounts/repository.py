"""The repositories of the account and username aggregates: how the unit of work
(service/core/unit_of_work.py) loads and appends to them. The same event store as the games.

An account is read often (every command on it) and its stream grows with every notice, so
each append also writes the state after it into the stream's meta, in the same atomic
script: a load is one read of the meta, never a fold of the whole stream (the fold is the
fallback, and what `rebuild` checks against). The batch's token records (`tok:<hash>`) go the
same way, so a revocation and its event are one write.
"""

from __future__ import annotations

from typing import Callable, Generic, Optional, TypeVar

from events.envelope import decode_body
from events.store import EventStore, Receipt

from ..core.unit_of_work import Decision, Idempotency
from .model import Account, Username, fold_account, fold_username, token_records

Aggregate = TypeVar("Aggregate")


class _Repository(Generic[Aggregate]):
    def __init__(self, store: EventStore, empty: Callable[[str], Aggregate],
                 fold: Callable[[list, Aggregate], Aggregate],
                 meta: Callable[[Aggregate, Aggregate], dict],
                 on_appended: Optional[Callable[[Aggregate, list], None]] = None):
        self.store = store
        self._empty = empty
        self._fold = fold
        self._meta = meta
        self.on_appended = on_appended

    def peek(self, stream_id: str, idem_key: str):
        return self.store.peek(stream_id, idem_key)

    def head(self, stream_id: str) -> tuple[int, str]:
        return self.store.head(stream_id)

    def empty(self, stream_id: str) -> Aggregate:
        return self._empty(stream_id)

    def load(self, stream_id: str, at: Optional[tuple[int, str]] = None) -> Aggregate:
        at = at or self.store.head(stream_id)
        return self._fold(self.store.read(stream_id, 0, at[0]), self._empty(stream_id))

    def append(self, aggregate, decision: Decision, idem: Optional[Idempotency]):
        folded: dict = {}

        def meta(sealed) -> dict:
            prev, stored = aggregate.head, []
            for body, hash_ in sealed:
                stored.append(decode_body(body, prev, hash_))
                prev = hash_
            after = self._fold(stored, aggregate)
            folded["after"], folded["stored"] = after, stored
            return {**(decision.meta or {}), **self._meta(aggregate, after)}

        receipt: Receipt = self.store.append(
            aggregate.stream_id, decision.events, base_version=aggregate.version, base_head=aggregate.head,
            expected_version=decision.expected_version, idempotency_key=idem.key if idem else "",
            body_digest=idem.digest if idem else "", meta=meta)
        if not receipt.sealed:
            return receipt, aggregate, []
        if self.on_appended is not None:
            self.on_appended(folded["after"], folded["stored"])
        return receipt, folded["after"], folded["stored"]

    def follow_up(self, after) -> None:
        pass


class AccountRepository(_Repository[Account]):
    def __init__(self, store: EventStore, on_appended=None):
        super().__init__(store, Account, fold_account,
                         lambda before, after: {"state": after.as_state(), "state_version": str(after.version),
                                                **token_records(before, after)}, on_appended)

    def load(self, stream_id: str, at: Optional[tuple[int, str]] = None) -> Account:
        """From the state the last append wrote (one read), else by folding the stream."""
        found = self.store.get_meta(stream_id, "version", "head", "state", "state_version")
        if found["version"] is None:
            return Account(stream_id)
        version, head = int(found["version"]), found["head"]
        if at is not None and at[0] != version:
            return super().load(stream_id, at)
        if found["state"] is not None and found["state_version"] == str(version):
            return Account.from_state(stream_id, version, head, found["state"])
        return super().load(stream_id, (version, head))

    def rebuilt(self, stream_id: str) -> Account:
        """The account folded from its events alone (what the kept state must equal)."""
        return super().load(stream_id)


class UsernameRepository(_Repository[Username]):
    def __init__(self, store: EventStore):
        super().__init__(store, Username, fold_username,
                         lambda before, after: {"account": after.account_id or ""})
