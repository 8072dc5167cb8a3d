"""The queries: a seat's view, events, replay, ledger, verify, export, the lobby and the
leaderboards. Everything a viewer reads goes through disclosure (what that seat may see)."""

from __future__ import annotations

import copy
import hashlib
import json
import threading
import time
from collections import OrderedDict
from typing import Optional

from events.archive import ArchiveError
from events.envelope import GENESIS, decode_body
from events.index import GameIndex
from events.store import EventStore
from projections import disclosure
from projections.ledger import ledger_for
from projections.registry import UnknownGame, get_game
from projections.session import Session, fold
from projections.verify import Report, verify_log

from .errors import Invalid, NotFound
from .tokens import seat_left


def log_digest(raw: list[tuple[str, str]]) -> str:
    """SHA-256 over the exact stored bytes of a log (each body and hash, length-prefixed):
    any change to any entry, or to their order or number, changes it."""
    digest = hashlib.sha256()
    for body, hash_ in raw:
        data = body.encode()
        digest.update(b"%d:" % len(data))
        digest.update(data)
        digest.update(hash_.encode())
    return digest.hexdigest()


def _ends_scored(raw: list[tuple[str, str]]) -> bool:
    try:
        return json.loads(raw[-1][0]).get("t") == "game.scored"
    except (IndexError, ValueError, AttributeError):
        return False


class AuditCache:
    """A scored game's audit answers (verify's report, a replay), each kept under the digest
    of the exact stored bytes it was made from and the store's recorded head. The cache only
    vouches for what it can check again cheaply: every call reads the log again and digests
    it (a fraction of a millisecond per hundred events, against re-deciding every command),
    so a log rewritten behind the store's back, head and meta untouched or not, is a miss
    and is audited afresh. Bounded: the least recently used answers go first."""

    def __init__(self, size: int = 256):
        self.size = size
        self._lock = threading.Lock()
        self._answers: OrderedDict = OrderedDict()
        self.hits = self.misses = 0

    def get(self, key):
        with self._lock:
            found = self._answers.get(key)
            if found is None:
                self.misses += 1
                return None
            self._answers.move_to_end(key)
            self.hits += 1
            return found

    def put(self, key, answer) -> None:
        with self._lock:
            self._answers[key] = answer
            self._answers.move_to_end(key)
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)


def now_ms() -> int:
    """The server's clock (ms since the epoch), the one the events' `at` and the clock's
    deadlines are on: every live view carries it as `server_time`, so that a client counts
    down by the server's clock, not by its own."""
    return int(time.time() * 1000)


_CACHE_LOCK = threading.Lock()
READ_PAGE = 128   # events a read of a whole log takes at a time (each page a round trip, a point to yield)


class Queries:
    """The read half of the GameService (service/core/game_service.py builds it)."""

    store: EventStore
    index: GameIndex

    @property
    def audit_cache(self) -> AuditCache:
        """This process's cache of scored games' audits (made on first use)."""
        found = self.__dict__.get("_audit_cache")
        if found is None:
            with _CACHE_LOCK:
                found = self.__dict__.setdefault("_audit_cache", AuditCache())
        return found

    # --- one game ---------------------------------------------------------------------
    def view(self, game_id: str, seat: Optional[int]) -> dict:
        """The seat's live view, with `decision`: the version at which the seat's current
        decision opened (None when it is not to act), which an action may echo."""
        session = self.load(game_id)
        if seat is not None and session.seats[seat].left:   # a credential a stale cache let through
            raise seat_left(session, seat)
        view = disclosure.view_for(session, seat)
        self.shown_seats(view["seats"])
        view["server_time"] = now_ms()
        return view if seat is None else {**view, "decision": session.decision(seat)}

    @staticmethod
    def view_of(session: Session, seat: Optional[int]) -> dict:
        """The view of a session already loaded (a bot's, deciding on what it just loaded)."""
        return disclosure.view_for(session, seat)

    def summary(self, session: Session) -> dict:
        """A game's public summary (the lobby's entry, the answer to creating a game)."""
        out = disclosure.summary(session)
        self.shown_seats(out["seats"])
        return out

    def game(self, game_id: str) -> dict:
        """A game's public summary and the spectator view."""
        session = self.load(game_id)
        view = disclosure.view_for(session, None)
        self.shown_seats(view["seats"])
        view["server_time"] = now_ms()
        return {**self.summary(session), "view": view}

    def shown_seats(self, seats: list[dict]) -> list[dict]:
        """Seats as shown: an account's seat with its username (resolved now: the events hold
        only the account's id) and `closed` once the account is; a guest's with `guest: true`,
        so a guest's name never passes for an account's."""
        for seat in seats:
            if seat.get("account"):
                seat["name"], closed = self.account_name(seat["account"])
                if closed:
                    seat["closed"] = True
            elif seat.get("kind") == "player" or (seat.get("left") and seat.get("name")):
                seat["guest"] = True
            if seat.get("reserved"):
                seat["invited"] = self.account_name(seat["reserved"])[0]
        return seats

    def account_name(self, account_id: str) -> tuple[str, bool]:
        """(username, closed) of an account (the accounts' part sets the resolver)."""
        resolve = getattr(self, "account_names", None)
        return resolve(account_id) if resolve is not None else (f"account {account_id}", False)

    def events(self, game_id: str, viewer: Optional[int], after: int = 0,
               until: Optional[int] = None) -> tuple[list[dict], Session]:
        """The events after `after`, as the viewer may see them, with the current session."""
        current = self.load(game_id)
        stored = self.store.read(game_id, 0, until or current.version)
        before = fold(stored[:after], game_id)
        shown, _ = disclosure.events_for(stored[after:], before, viewer, current.finished, game_id)
        return shown, current

    def replay(self, game_id: str, at: int, viewer: Optional[int]) -> dict:
        current = self.load(game_id)
        if not 1 <= at <= current.version:
            raise Invalid(f"at: must be between 1 and {current.version}", {"field": "at"})
        if current.status == "scored":
            # The same answer for every caller; kept under the digest of the bytes read now.
            raw = self._read_paged(game_id, at)
            key = ("replay", game_id, at, log_digest(raw))
            found = self.audit_cache.get(key)
            if found is not None:
                return copy.deepcopy(found)   # a caller may change its answer, never the cache's
            stored, prev = [], GENESIS
            for body, hash_ in raw:
                stored.append(self.store.upcasters.upcast(decode_body(body, prev, hash_)))
                prev = hash_
            answer = self._finished_replay(at, fold(stored, game_id))
            self.audit_cache.put(key, copy.deepcopy(answer))
            return answer
        past = fold(self.store.read(game_id, 0, at), game_id)
        if current.finished:
            return self._finished_replay(at, past)
        return {"version": at, "view": disclosure.view_for(past, viewer)}

    def _read_paged(self, game_id: str, until: int, to_end: bool = False) -> list[tuple[str, str]]:
        """The raw log up to `until` (with `to_end`, whatever follows too), a page at a time: under a
        cooperative server each round trip lets other requests (a player's action) run, so
        a long log read and digested never holds the process for long."""
        raw: list[tuple[str, str]] = []
        after = 0
        while True:                      # by version, not by count: a log with a gap reads whole
            last = after + READ_PAGE
            final = last >= until
            raw += self.store.read_raw(game_id, after, None if final and to_end else min(last, until))
            if final:
                return raw
            after = last

    @staticmethod
    def _finished_replay(at: int, past: Session) -> dict:
        return {"version": at, "spectator": disclosure.view_for(past, None),
                "seats": [disclosure.view_for(past, s) for s in range(len(past.seats))],
                "full_state": disclosure.full_state(past.state)}

    def ledger(self, game_id: str, viewer: Optional[int]) -> dict:
        current = self.load(game_id)
        return ledger_for(self.store.read(game_id, 0, current.version), viewer, current.finished, game_id)

    def verify(self, game_id: str, receipts: Optional[dict[int, str]] = None) -> dict:
        """Verify the stored log with the server's seed, against the store's recorded head and
        any receipts (version -> head hash) a client kept."""
        # No load(): a log that fails its chain cannot be folded, and verify is what names it.
        try:
            if self.archiving is not None:       # an archived game's file is read and checked again
                self.archiving.record_of(game_id, fresh=True)
            head = self.store.head(game_id)
        except ArchiveError as err:      # an archived game whose file is missing or changed
            return Report(checked=0).fail(0, "archive", str(err)).as_dict()
        if head[0] == 0:
            raise NotFound(f"no game {game_id!r}", {"game_id": game_id})
        raw = self._read_paged(game_id, head[0], to_end=True)
        seed = self.sessions.seed(game_id)
        key = None
        if _ends_scored(raw):
            # A scored game's log never changes: its report is kept under everything it was
            # made from (the bytes, the recorded head, the seed, the receipts) and served again
            # only while the log just read digests the same.
            key = ("verify", game_id, tuple(head), log_digest(raw), seed,
                   tuple(sorted((receipts or {}).items())))
            found = self.audit_cache.get(key)
            if found is not None:
                return copy.deepcopy(found)
        report = verify_log(raw, seed, game_id, receipts=receipts, head=head).as_dict()
        if key is not None:
            self.audit_cache.put(key, copy.deepcopy(report))
        return report

    def export(self, game_id: str, viewer: Optional[int]) -> list[dict]:
        """The log as NDJSON records: complete (exact stored bytes) once the game has ended,
        otherwise the events as the viewer may see them. The header carries the table chat
        as the viewer may read it (`chat`: kept with the game, outside its hash chain)."""
        current = self.load(game_id)
        header = {"game_id": game_id, "type": current.game_type, "version": current.version,
                  "commitment": current.commitment, "complete": current.finished,
                  "chat": self.chat.export(game_id, viewer, current)}
        if current.finished:
            header["seed"] = self.sessions.seed(game_id)
            raw = self.store.read_raw(game_id, 0, current.version)
            return [header] + [{"body": body, "hash": hash_} for body, hash_ in raw]
        shown, _ = self.events(game_id, viewer)
        return [header] + shown

    # --- across games -----------------------------------------------------------------
    live_within: float = 0    # seconds since its last move an active game counts as live (0: any)

    def lobby(self, game_type: Optional[str], status: Optional[str], page: int, per_page: int,
              live: bool = False) -> dict:
        """The lobby: newest first, filtered by type and status. `live`: the active games that
        moved within `live_within` seconds, latest move first."""
        if live:
            since = int(now_ms() - self.live_within * 1000) if self.live_within else 0
            ids, total = self.index.live(game_type, since, (page - 1) * per_page, per_page)
        else:
            ids, total = self.index.list(game_type, status, (page - 1) * per_page, per_page)
        summaries = []
        for game_id in ids:
            try:
                summaries.append(self.summary(self.load(game_id)))
            except NotFound:
                continue
        return {"games": summaries, "total": total, "page": page, "per_page": per_page}

    def games_waiting(self, status: str, limit: int = 1000) -> list[str]:
        """Games in `status` (oldest first): what the reconciler repairs."""
        return self.index.games_waiting(status, limit)
