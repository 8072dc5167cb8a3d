"""Moving scored games out of Redis into the archive (events/archive.py) and back.

A move is one job that heals:
  1. the game's whole record is read under WATCH (events, meta, idempotency records);
  2. its log is verified (chain, seed, every command re-decided) and the record written to
     the archive under its digest, then read back and checked;
  3. only then, in one transaction and only if none of the game's keys changed since 1, its
     keys are dropped and the digest kept as its pointer.
A crash before 3 leaves the game in Redis (at worst an archive file nobody points to, which
the next move writes again under the same name); after 3 it is in the archive. It is never
in neither, and never changed: the file holds the exact bytes the store held. A second move
of an archived game is a no-op.
"""

from __future__ import annotations

import logging
import time
from typing import Optional

from events.archive import ArchiveError, ArchivingStore, checked_record
from projections.verify import verify_log

from .errors import Invalid, NotFound

log = logging.getLogger(__name__)

ARCHIVED, RESTORED, LIVE, NOT_SCORED, CHANGED = ("archived", "restored", "live", "not scored", "changed")


class ArchiveRefused(Exception):
    """The game's log does not verify: it is not archived (it stays in Redis, for an operator)."""


class Archiving:
    """The archiving half of the GameService (service/core/game_service.py builds it)."""

    archive_after: float = 0.0     # seconds a scored game stays in Redis (bootstrap sets it)

    @property
    def archiving(self) -> Optional[ArchivingStore]:
        return self.store if isinstance(self.store, ArchivingStore) else None

    def _archiving_store(self) -> ArchivingStore:
        if self.archiving is None:
            raise Invalid("no archive is configured (SPECULATION_ARCHIVE_URL)", {"field": "ARCHIVE_URL"})
        return self.archiving

    def is_archived(self, game_id: str) -> bool:
        store = self.archiving
        return bool(store and store.hot.head(game_id)[0] == 0 and store.archived_digest(game_id))

    def archive_game(self, game_id: str) -> str:
        """Move one scored game to the archive; what became of it (ARCHIVED, or why not)."""
        store = self._archiving_store()
        if self.is_archived(game_id):
            self.index.archive_queue_done(game_id)
            return ARCHIVED
        if store.hot.head(game_id)[0] == 0:
            raise NotFound(f"no game {game_id!r}", {"game_id": game_id})
        if self.load(game_id).status != "scored":
            return NOT_SCORED

        def write(record) -> str:
            problem = log_problem(record)
            if problem:
                raise ArchiveRefused(f"{game_id}: {problem}")
            return store.archive.put(record)

        digest = store.swap_out(game_id, write)
        if digest is None:
            return CHANGED
        self.index.archive_queue_done(game_id)
        log.info("archived %s as %s", game_id, digest)
        return ARCHIVED

    def restore_game(self, game_id: str) -> str:
        """Bring an archived game back into Redis (its archive file stays where it is)."""
        store = self._archiving_store()
        if not self.is_archived(game_id):
            if store.hot.head(game_id)[0] == 0:
                raise NotFound(f"no game {game_id!r}", {"game_id": game_id})
            return LIVE
        digest = store.archived_digest(game_id)
        record = store.archive.get(game_id, digest)
        if not store.swap_in(game_id, record, digest):
            return CHANGED
        log.info("restored %s from %s", game_id, digest)
        return RESTORED

    def archive_due(self, now: Optional[float] = None, limit: int = 100) -> dict[str, int]:
        """One pass: move the games scored more than `archive_after` seconds ago (at most
        `limit`); a game that fails stays queued for the next pass, except one whose log
        does not verify, which is left in Redis and named in the log."""
        done: dict[str, int] = {}
        if self.archiving is None:
            return done
        now = time.time() if now is None else now
        for game_id in self.index.archive_queue_due(now - self.archive_after, limit):
            try:
                outcome = self.archive_game(game_id)
            except ArchiveRefused as refused:
                log.error("not archived: %s", refused)
                self.index.archive_queue_done(game_id)
                outcome = "refused"
            except NotFound:
                self.index.archive_queue_done(game_id)
                outcome = "missing"
            except (ArchiveError, OSError) as err:      # the archive is unreachable: next pass
                log.warning("archiving %s failed: %s", game_id, err)
                outcome = "failed"
            if outcome == NOT_SCORED:
                self.index.archive_queue_done(game_id)
            done[outcome] = done.get(outcome, 0) + 1
        return done


def log_problem(record) -> Optional[str]:
    """What keeps a game's record from verifying (None: nothing): the head its meta records
    against its log's last event, its log re-run with its revealed seed."""
    if record.meta.get("version") != str(record.version) or record.meta.get("head") != record.head:
        return "its recorded head is not its log's last event"
    report = verify_log(list(record.events), record.meta.get("seed"), record.game_id,
                        head=(record.version, record.head))
    if not report.ok:
        return f"its log does not verify: {report.first_divergence}"
    if not report.seed_checked:
        return "its seed is not the one committed to"
    return None


def verify_archive_file(archive, game_id: str, digest: str, path: str) -> Optional[str]:
    """What is wrong with one archive file (None: nothing): its content against its name, then
    its log (log_problem)."""
    try:
        record = checked_record(game_id, digest, archive.read_file(path))
    except ArchiveError as err:
        return str(err)
    return log_problem(record)


def verify_archive(archive) -> dict:
    """Every archive file checked offline (no Redis): the report `speculation archive verify` prints."""
    checked, problems = 0, []
    for game_id, digest, path in archive.files():
        checked += 1
        problem = verify_archive_file(archive, game_id, digest, path)
        if problem:
            problems.append({"game_id": game_id, "path": path, "problem": problem})
    return {"ok": not problems, "files": checked, "problems": problems}
