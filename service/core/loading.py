"""Loading a game's session (`GameSessions`): the process cache, snapshots (JSON data, projections/snapshot.py:
never unpickled), and the fold of the stream's tail on top of either (the cost does not grow
with the game's length)."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Optional

from events.envelope import chain_hash, decode_body
from events.store import EventStore
from events.upcast import UPCASTERS
from projections import snapshot as snapshots
from projections.session import Session, fold

from .errors import NotFound

log = logging.getLogger(__name__)


class GameSessions:
    """The games' sessions as the core reads them: a process cache in front of the store's
    snapshots and log. The game repository (game_repository.py) loads through it and tells it
    of every batch appended; the queries read through it."""

    def __init__(self, store: EventStore, snapshot_every: int, cache_size: int) -> None:
        self.store = store
        self.snapshot_every = snapshot_every
        self._cache: OrderedDict[str, Session] = OrderedDict()
        self._seeds: dict[str, tuple[str, str]] = {}   # game -> its seed and creator
        self._snapshot_at: dict[str, int] = {}   # game -> version of its last snapshot
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def load(self, game_id: str, at: Optional[tuple[int, str]] = None) -> Session:
        """The game's session at the store's head (`at`: the head when the caller has just
        read it): cache or snapshot, plus the tail."""
        if "/" in game_id:   # the stream of another kind of aggregate (events/keys.py), never a game
            raise NotFound(f"no game {game_id!r}", {"game_id": game_id})
        version, head = at if at is not None else self.store.head(game_id)
        if version == 0:
            raise NotFound(f"no game {game_id!r}", {"game_id": game_id})
        with self._lock:
            cached = self._cache.get(game_id)
        if cached is not None and cached.version == version and cached.head == head:
            return cached
        base = cached if cached is not None and cached.version < version else None
        if base is None:
            base = self._load_snapshot(game_id)
        session = self.fold_tail(game_id, base, version)
        if session is None or session.head != head:
            session = self.fold_tail(game_id, None, version)  # a stale cache: rebuild
        self.remember(session)
        return session

    def forget_all(self) -> None:
        """Drop every cached session (the log changed behind the service's back: an operator's
        repair, a tampering drill): the next loads fold from the store."""
        with self._lock:
            self._cache.clear()
            self._snapshot_at.clear()

    def cached(self, game_id: str) -> Optional[Session]:
        with self._lock:
            return self._cache.get(game_id)

    def fold_tail(self, game_id: str, base: Optional[Session], until: int) -> Optional[Session]:
        after = base.version if base else 0
        raw = self.store.read_raw(game_id, after, until)
        # A cached base is only good if the tail chains from it; the rest of the chain is
        # verify's to check, not every load's.
        if base is not None and raw and chain_hash(base.head, raw[0][0]) != raw[0][1]:
            return None
        events, prev = [], base.head if base else ""
        for body, hash_ in raw:
            events.append(UPCASTERS.upcast(decode_body(body, prev, hash_)))
            prev = hash_
        return fold(events, game_id, base)

    def _load_snapshot(self, game_id: str) -> Optional[Session]:
        snap = self.store.load_snapshot(game_id)
        if snap is None:
            return None
        version, head, blob = snap
        stored = self.store.read_raw(game_id, version - 1, version)
        if not stored or stored[0][1] != head:
            return None  # a snapshot is a cache: one that disagrees with the log is ignored
        try:
            session = snapshots.loads(blob)
        except snapshots.SnapshotError:
            return None   # an older format (a pickle, say) or foreign bytes: fold from the log
        if not isinstance(session, Session) or session.version != version or session.head != head:
            return None
        if getattr(session.state, "rules_version", session.rules_version) != session.rules_version:
            return None  # stored before the state kept its rules version: fold it again
        if len(session.decisions) != len(session.seats):
            return None  # stored before sessions kept the seats' decisions: fold from the log
        self._snapshot_at[game_id] = version
        return session

    def remember(self, session: Session) -> None:
        """Cache the session; snapshot it once it is snapshot_every versions past the last
        snapshot. The last snapshot's version is kept in process (read from the store once
        per game), not fetched, blob and all, on every action."""
        with self._lock:
            self._cache[session.game_id] = session
            self._cache.move_to_end(session.game_id)
            while len(self._cache) > self._cache_size:
                evicted, _ = self._cache.popitem(last=False)
                self._snapshot_at.pop(evicted, None)
        if not self.snapshot_every:
            return
        last = self._snapshot_at.get(session.game_id)
        if last is None:
            snap = self.store.load_snapshot(session.game_id)
            last = snap[0] if snap else 0
        if session.version - last >= self.snapshot_every:
            try:
                blob = snapshots.dumps(session)
            except (snapshots.SnapshotError, ValueError) as err:   # a cache: the log stays the truth
                log.warning("snapshot of %s at %d skipped: %s", session.game_id, session.version, err)
            else:
                self.store.save_snapshot(session.game_id, session.version, session.head, blob)
            last = session.version
        self._snapshot_at[session.game_id] = last

    def seed(self, game_id: str) -> str:
        return self._created(game_id)[0]

    def creator(self, game_id: str) -> str:
        """Whose bot time the game's bot turns are: the `creator` its create recorded in its
        meta ("" for a game created without one: the CLI, older games)."""
        return self._created(game_id)[1]

    def _created(self, game_id: str) -> tuple[Optional[str], str]:
        """What the game's create wrote in its meta, which never changes: its seed and its
        creator, read together (an act needs the seed, its follow-up bot turns the creator)."""
        created = self._seeds.get(game_id)
        if created is None:
            meta = self.store.get_meta(game_id, "seed", "creator")
            created = (meta["seed"], meta["creator"] or "")
            if created[0] is not None:   # not a game (yet): read again next time
                self._seeds[game_id] = created
        return created

    def remember_seed(self, game_id: str, seed: str, creator: str = "") -> None:
        """The seed and creator of a game just created (its meta holds them too)."""
        self._seeds[game_id] = (seed, creator)

    def as_of(self, game_id: str, version: int) -> Session:
        """The game as the batch that ended at `version` left it (a retry's original answer,
        however far the game has moved on since)."""
        return fold(self.store.read(game_id, 0, version), game_id)
