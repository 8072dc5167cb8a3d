"""Rebuilding the accounts' projections from the logs (`speculation accounts rebuild`), as
the lobby is rebuilt: each account's kept state and credential records from its own events,
and each account's list of games (and any notice a game still owes it) from the games' logs.
Nothing here decides anything: a rebuild writes what the events already say.
"""

from __future__ import annotations

from redis.exceptions import WatchError

from events.account_index import AccountIndex
from events.store import keys

from .model import Account, fold_account


def credential_records(events) -> dict[str, str]:
    """Every credential the account ever issued, as authentication reads it: its record while
    live, "-" once revoked (or the account closed)."""
    records: dict[str, str] = {}
    account = Account("")
    for event in events:
        before = account
        account = fold_account([event], account)
        if event.type == "token.granted":
            grant = account.grant(event.data["token_id"])
            records[f"tok:{grant.hash}"] = grant.as_record()
        for gone in {g.hash for g in before.grants} - {g.hash for g in account.grants}:
            records[f"tok:{gone}"] = "-"
    if account.closed:
        records["closed"] = "1"
    return records


def rebuild_accounts(core, index: AccountIndex, games_of_lobby) -> dict:
    """Every account's state and credential records from its events, then every game's
    accounts (its games list, notices owed) through the games' observers. `games_of_lobby`:
    the ids of every game the lobby knows (the same list the reconciler walks)."""
    store = core.store
    accounts, fixed = 0, 0
    offset = 0
    while True:
        batch = index.accounts(offset, 1000)
        if not batch:
            break
        offset += len(batch)
        for account_id in batch:
            accounts += 1
            stream = f"account/{account_id}"
            events = store.read(stream)
            folded = fold_account(events, Account(stream))
            kept = store.get_meta(stream, "state", "state_version")
            records = credential_records(events)
            if kept["state"] != folded.as_state() or kept["state_version"] != str(folded.version):
                fixed += 1
            _write_if_unchanged(store, stream, folded.version,
                                {"state": folded.as_state(), "state_version": str(folded.version), **records})
            index.forget_games(account_id)
    games = 0
    for game_id in games_of_lobby:
        session = core.repair(game_id)
        games += session is not None
    return {"accounts": accounts, "accounts_fixed": fixed, "games": games}


def _write_if_unchanged(store, stream: str, version: int, fields: dict) -> bool:
    """Write the fields only while the stream is still at `version` (an append meanwhile
    wrote its own, newer, records: a stale rebuild must never bring a revoked token back)."""
    meta = keys(stream)["meta"]
    with store.redis.pipeline(transaction=True) as pipe:   # one slot: the stream's meta (a cluster too)
        try:
            pipe.watch(meta)
            current = pipe.hget(meta, "version")
            if int(current or 0) != version:
                return False
            pipe.multi()
            pipe.hset(meta, mapping=fields)
            pipe.execute()
            return True
        except WatchError:
            return False
