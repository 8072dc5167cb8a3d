"""Ratings: a projection of the rated games' logs, in an order recorded once.

Each game type has one ratings log, the stream `ratings/<type>`. When a rated game is scored,
one `rating.applied` event is appended to its type's log under the idempotency key
`game:<id>`: the places the game's own result gives, each player's rating before and after.
So each rated game changes ratings exactly once, whatever retries, crashes and reconcilers
do (the scoring, its follow-ups and the reconciler's repair all ask again; the second ask
finds the key), and the log is the single sequence in which games were rated: two games
scored at once are ordered by the log's append (the second one decides again on the
ratings the first left: the unit of work's head check). `rebuild` replays the log from the
games' own results and must find every recorded rating to the last digit.

Each append also writes, in the same atomic script, every rated player's current rating into
the log's meta (`r:<account>`): a decision reads the ratings of its table there (one read),
and the leaderboard and profiles read them. The leaderboard (a sorted set by ordinal) and each
account's rating history are written after the append and repaired by the same asks.

Bots are rated too: one account per level (`bot_account_id`), opened by the service. A bot
account in several seats of one table is rated once, at its best place (one player cannot
take several places of one ranking); a table with fewer than two distinct players rates
nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Optional

from redis.exceptions import LockError, WatchError

from events.envelope import NewEvent, decode_body
from events.keys import stream_prefix
from events.store import EventStore, Receipt, keys
from projections.registry import UnknownGame, get_game
from projections.session import SCORED, Session

from ..core.bots import BOT_LEVELS
from ..core.errors import NotFound
from ..core.unit_of_work import Answer, Command, Decision, Idempotency, UnitOfWork
from .model import MODEL, Rating, initial, rate

log = logging.getLogger(__name__)

HISTORY_KEPT = 500     # rating changes kept per account and game type for its profile
LEASE_SECONDS = 10     # a scorer that dies holding a log's lease holds it this long at most
LEASE_WAIT_SECONDS = 30   # past this, the scoring job fails and is asked again (its retry, the repair)
LEASE_POLL_SECONDS = 0.005   # a waiting scorer asks again this often (a rating takes a few ms)


class LeaseBusy(RuntimeError):
    """A ratings log's lease stayed held past LEASE_WAIT_SECONDS: ask again later."""


def bot_account_id(level: str) -> str:
    import hashlib

    return hashlib.sha256(f"bot-account\0{level}".encode()).hexdigest()[:16]


BOT_ACCOUNTS = {bot_account_id(level): level for level in BOT_LEVELS}


def log_of(game_type: str) -> str:
    return f"ratings/{game_type}"


def _board_key(game_type: str) -> str:
    return f"{stream_prefix(log_of(game_type))}:board"


def _lease_key(game_type: str) -> str:
    """The log's single-writer lease, in the log's own slot."""
    return f"{stream_prefix(log_of(game_type))}:lease"


def _history_key(account_id: str, game_type: str) -> str:
    return f"{stream_prefix('account/' + account_id)}:ratings:{game_type}"


@dataclass(frozen=True)
class RatingsLog:
    """A ratings log as the unit of work sees it: its head, and the ratings kept with it."""

    stream_id: str
    version: int
    head: str
    store: EventStore

    def ratings(self, accounts: list[str]) -> dict[str, Rating]:
        if not accounts or not self.version:
            return {}
        found = self.store.get_meta(self.stream_id, *(f"r:{a}" for a in accounts))
        return {a: Rating.from_record(found[f"r:{a}"]) for a in accounts if found[f"r:{a}"]}


class RatingsRepository:
    def __init__(self, store: EventStore):
        self.store = store

    def peek(self, stream_id: str, idem_key: str):
        return self.store.peek(stream_id, idem_key)

    def head(self, stream_id: str):
        return self.store.head(stream_id)

    def load(self, stream_id: str, at=None) -> RatingsLog:
        version, head = at or self.store.head(stream_id)
        return RatingsLog(stream_id, version, head, self.store)

    def empty(self, stream_id: str) -> RatingsLog:
        return self.load(stream_id)

    def append(self, log: RatingsLog, decision: Decision, idem: Optional[Idempotency]):
        def meta(sealed) -> dict:
            out = {}
            for event in decision.events:
                for player in event.data["players"]:
                    out[f"r:{player['account']}"] = Rating(*player["after"]).as_record()
            return out

        receipt: Receipt = self.store.append(log.stream_id, decision.events, base_version=log.version,
                                             base_head=log.head, idempotency_key=idem.key if idem else "",
                                             body_digest=idem.digest if idem else "", meta=meta)
        if not receipt.sealed:
            return receipt, log, []
        prev, stored = log.head, []
        for body, hash_ in receipt.sealed:
            stored.append(decode_body(body, prev, hash_))
            prev = hash_
        return receipt, RatingsLog(log.stream_id, receipt.version, receipt.head, self.store), stored

    def follow_up(self, after) -> None:
        pass


def places(session: Session) -> list[int]:
    """Each seat's place in the ratings (1 = first, equal places tie): the seats whose person
    stayed keep the order of the game's result among themselves; the seats whose person left
    come after all of them, the first to leave last (whatever the bot that took the seat over
    made of it: the result itself is the rules' and stays as it is)."""
    ranks = session.result["ranks"]
    if not any(info.left for info in session.seats):
        return list(ranks)
    stayed = [s for s, info in enumerate(session.seats) if not info.left]
    out = [0] * len(session.seats)
    for s in stayed:
        out[s] = 1 + sum(1 for o in stayed if ranks[o] < ranks[s])
    leavers = sorted((info.left, s) for s, info in enumerate(session.seats) if info.left)
    for order, (_, s) in enumerate(leavers):
        out[s] = len(session.seats) - order
    return out


def table_of(session: Session) -> list[dict]:
    """The rated players of a scored game: each account once, at its best place. A seat whose
    person left is rated as that person's account, at its place after everyone who stayed
    (`places`), and never wins; the bot that took it over is not rated for it."""
    result = session.result
    place = places(session)
    best: dict[str, dict] = {}
    for seat, info in enumerate(session.seats):
        bot = info.kind == "bot" and not info.left
        account = info.account or (bot_account_id(info.level) if bot else None)
        if account is None:
            continue
        entry = {"account": account, "seat": seat, "place": place[seat],
                 "won": seat in result["winners"] and not info.left, "bot": info.level if bot else None}
        if account not in best or entry["place"] < best[account]["place"]:
            best[account] = entry
    return sorted(best.values(), key=lambda e: e["seat"])


def applied(log: RatingsLog, session: Session) -> Optional[NewEvent]:
    """The event that rates one scored game on `log` (None: nothing to rate)."""
    table = table_of(session)
    if len(table) < 2:
        return None
    current = log.ratings([p["account"] for p in table])
    before = [current.get(p["account"]) or initial() for p in table]
    after = rate(before, [p["place"] for p in table], [p["won"] for p in table])
    players = [{**p, "before": [b.mu, b.sigma, b.games, b.wins], "after": [a.mu, a.sigma, a.games, a.wins]}
               for p, b, a in zip(table, before, after)]
    return NewEvent("rating.applied", {"game_id": session.game_id, "game_type": session.game_type,
                                       "version": session.version, "model": MODEL, "players": players})


class Ratings:
    def __init__(self, store: EventStore, client, load_game, accounts):
        self.store = store
        self.redis = client
        self.load_game = load_game
        self.accounts = accounts
        self.work = UnitOfWork(RatingsRepository(store))
        self._bots_opened: set[str] = set()

    # --- rating a game ---------------------------------------------------------------------
    def record(self, session: Session) -> None:
        """Rate a scored rated game, once (a repeat finds its key and repairs the projections)."""
        if session.status != SCORED or not session.platform.get("rated"):
            return
        for level in {s.level for s in session.seats if s.kind == "bot" and not s.left}:
            self._open_bot_account(level)

        def decide(log: RatingsLog, careful: bool):
            event = applied(log, session)
            return Answer(None) if event is None else Decision([event])

        command = Command(log_of(session.game_type), decide, lambda done: self._project(done.stored),
                          idem=Idempotency(f"game:{session.game_id}", session.game_id),
                          replay=lambda receipt: self._project(
                              self.store.read(log_of(session.game_type), receipt.version - 1, receipt.version)))
        # One writer of a log at a time: scorers of one type queue on its lease instead of
        # racing on its head (each loser deciding again). The lease is not what keeps the
        # order: the append's head check is the fencing token (a writer whose lease lapsed
        # appends only onto the head it read, checked inside the append's script).
        lease = self.redis.lock(_lease_key(session.game_type), timeout=LEASE_SECONDS, sleep=LEASE_POLL_SECONDS,
                                blocking_timeout=LEASE_WAIT_SECONDS)
        if not lease.acquire():
            raise LeaseBusy(f"{log_of(session.game_type)}: its lease stayed held {LEASE_WAIT_SECONDS} s")
        try:
            self.work.run(command)
        finally:
            try:
                lease.release()
            except LockError:   # it lapsed (a stall past LEASE_SECONDS): the head check kept the order
                log.warning("the lease of %s lapsed before its release", log_of(session.game_type))

    def _open_bot_account(self, level: str) -> None:
        if level not in self._bots_opened:
            self.accounts.open_bot_account(bot_account_id(level), level)
            self._bots_opened.add(level)

    def _project(self, stored: list) -> None:
        pipe = self.redis.pipeline(transaction=False)
        boards: dict[str, set[str]] = {}
        for event in stored:
            game_type = event.data["game_type"]
            for player in event.data["players"]:
                boards.setdefault(game_type, set()).add(player["account"])
                history = _history_key(player["account"], game_type)
                pipe.zadd(history, {str(event.version): event.version})
                pipe.zremrangebyrank(history, 0, -HISTORY_KEPT - 1)
        pipe.execute()
        for game_type, accounts in boards.items():
            self._board(game_type, sorted(accounts))

    def _board(self, game_type: str, accounts: list[str]) -> None:
        """The accounts' leaderboard scores from their kept ratings as they stand, not from the
        event being projected: a repair replays an event whose projections a crash lost, and
        the games rated since must not be undone. Written only if no rating was appended to
        the log between the read and the write (WATCH on the log's meta, the same slot), so
        the last write is always of the latest ratings."""
        meta = keys(log_of(game_type))["meta"]
        fields = [f"r:{a}" for a in accounts]
        # transaction=True: on a cluster a pipeline is not a transaction unless asked (the
        # meta and the board share the log's slot, so WATCH and MULTI run there).
        with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(meta)
                    kept = pipe.hmget(meta, fields)
                    pipe.multi()
                    scores = {a: Rating.from_record(k.decode()).ordinal for a, k in zip(accounts, kept) if k}
                    if scores:
                        pipe.zadd(_board_key(game_type), scores)
                    pipe.execute()
                    return
                except WatchError:
                    continue

    # --- reading -----------------------------------------------------------------------------
    def leaderboard(self, game_type: str, offset: int, limit: int) -> dict:
        self._known_type(game_type)
        stream = log_of(game_type)
        pipe = self.redis.pipeline(transaction=False)
        pipe.zrevrange(_board_key(game_type), offset, offset + limit - 1)
        pipe.zcard(_board_key(game_type))
        ids, total = pipe.execute()
        ids = [i.decode() for i in ids]
        kept = self.store.get_meta(stream, *(f"r:{a}" for a in ids)) if ids else {}
        rows = []
        for place, account in enumerate(ids, start=offset + 1):
            if not kept.get(f"r:{account}"):
                continue
            rating = Rating.from_record(kept[f"r:{account}"])
            name, closed = self.accounts.shown_name(account)
            rows.append({"rank": place, "account": account, "name": name, "bot": account in BOT_ACCOUNTS,
                         **({"closed": True} if closed else {}), **rating.shown()})
        return {"type": game_type, "rows": rows, "total": total, "offset": offset, "limit": limit}

    def of_account(self, account_id: str) -> dict:
        """The account's rating in every game type it was rated in."""
        from projections.registry import all_games

        out = {}
        for game_type in sorted(all_games()):
            found = self.store.get_meta(log_of(game_type), f"r:{account_id}")[f"r:{account_id}"]
            if found:
                out[game_type] = Rating.from_record(found).shown()
        return out

    def history(self, account_id: str, game_type: str, limit: int = 100) -> list[dict]:
        self._known_type(game_type)
        versions = [int(v) for v in self.redis.zrevrange(_history_key(account_id, game_type), 0, limit - 1)]
        out = []
        stream = log_of(game_type)
        for version in sorted(versions):
            event = self.store.read(stream, version - 1, version)[0]
            player = next(p for p in event.data["players"] if p["account"] == account_id)
            after = Rating(*player["after"])
            out.append({"game_id": event.data["game_id"], "at": event.at, "place": player["place"],
                        "seat": player["seat"], "players": len(event.data["players"]), **after.shown()})
        return out

    @staticmethod
    def _known_type(game_type: str) -> None:
        try:
            get_game(game_type)
        except UnknownGame:
            raise NotFound(f"game_type: unknown game type {game_type!r}", {"field": "game_type"}) from None

    # --- rebuilding --------------------------------------------------------------------------
    def rebuild(self, game_type: str) -> dict:
        """Replay the type's ratings log from the games' own results, in its recorded order:
        every rating it recorded must come out the same to the last digit (else ValueError,
        naming the first event that differs); then the kept ratings, the leaderboard and the
        histories are written again from it."""
        stream = log_of(game_type)
        events = self.store.read(stream)
        current: dict[str, Rating] = {}
        for event in events:
            if event.data.get("model") != MODEL:
                raise ValueError(f"{stream} v{event.version}: rated with {event.data.get('model')!r}, not {MODEL}")
            session = self.load_game(event.data["game_id"])
            table = table_of(session)
            recorded = event.data["players"]
            if [(p["account"], p["place"], p["won"]) for p in table] != \
                    [(p["account"], p["place"], p["won"]) for p in recorded]:
                raise ValueError(f"{stream} v{event.version}: the places differ from game {session.game_id}'s result")
            before = [current.get(p["account"]) or initial() for p in table]
            after = rate(before, [p["place"] for p in table], [p["won"] for p in table])
            for p, a in zip(recorded, after):
                if list(p["after"]) != [a.mu, a.sigma, a.games, a.wins]:
                    raise ValueError(f"{stream} v{event.version}: {p['account']}'s rating differs on rebuild")
                current[p["account"]] = a
        kept = self.store.get_meta(stream, *(f"r:{a}" for a in current)) if current else {}
        differing = sum(1 for a, r in current.items() if kept.get(f"r:{a}") != r.as_record())
        if current:
            self.store.set_meta(stream, {f"r:{a}": r.as_record() for a, r in current.items()})
        self.redis.delete(_board_key(game_type))
        for account in current:
            self.redis.delete(_history_key(account, game_type))
        if events:
            self._project(events)
        return {"games": len(events), "players": len(current), "kept_differing": differing}

