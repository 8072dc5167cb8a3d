"""The queries: a seat's view, events, replay, ledger, verify, export, the lobby and the
leaderboards. Everything a viewer reads goes through disclosure (what that seat may see)."""

from __future__ import annotations

from typing import Optional

from events.archive import ArchiveError
from events.index import GameIndex
from events.store import EventStore
from projections import disclosure
from projections.ledger import ledger_for
from projections.registry import UnknownGame, get_game
from projections.session import Session, fold
from projections.verify import Report, verify_log

from .errors import Invalid, NotFound


class Queries:
    """The read half of the GameService (service/core/game_service.py builds it)."""

    store: EventStore
    index: GameIndex

    # --- one game ---------------------------------------------------------------------
    def view(self, game_id: str, seat: Optional[int]) -> dict:
        """The seat's live view, with `decision`: the version at which the seat's current
        decision opened (None when it is not to act), which an action may echo."""
        session = self.load(game_id)
        view = disclosure.view_for(session, seat)
        return view if seat is None else {**view, "decision": session.decision(seat)}

    @staticmethod
    def view_of(session: Session, seat: Optional[int]) -> dict:
        """The view of a session already loaded (a bot's, deciding on what it just loaded)."""
        return disclosure.view_for(session, seat)

    @staticmethod
    def summary(session: Session) -> dict:
        """A game's public summary (the lobby's entry, the answer to creating a game)."""
        return disclosure.summary(session)

    def game(self, game_id: str) -> dict:
        """A game's public summary and the spectator view."""
        session = self.load(game_id)
        return {**disclosure.summary(session), "view": disclosure.view_for(session, None)}

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
        past = fold(self.store.read(game_id, 0, at), game_id)
        if current.finished:
            return {"version": at, "spectator": disclosure.view_for(past, None),
                    "seats": [disclosure.view_for(past, s) for s in range(len(past.seats))],
                    "full_state": disclosure.full_state(past.state)}
        return {"version": at, "view": disclosure.view_for(past, viewer)}

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
        raw = self.store.read_raw(game_id)
        return verify_log(raw, self.sessions.seed(game_id), game_id, receipts=receipts, head=head).as_dict()

    def export(self, game_id: str, viewer: Optional[int]) -> list[dict]:
        """The log as NDJSON records: complete (exact stored bytes) once the game has ended,
        otherwise the events as the viewer may see them."""
        current = self.load(game_id)
        header = {"game_id": game_id, "type": current.game_type, "version": current.version,
                  "commitment": current.commitment, "complete": current.finished}
        if current.finished:
            header["seed"] = self.sessions.seed(game_id)
            raw = self.store.read_raw(game_id, 0, current.version)
            return [header] + [{"body": body, "hash": hash_} for body, hash_ in raw]
        shown, _ = self.events(game_id, viewer)
        return [header] + shown

    # --- across games -----------------------------------------------------------------
    def lobby(self, game_type: Optional[str], status: Optional[str], page: int, per_page: int) -> dict:
        """The lobby: newest first, filtered by type and status."""
        ids, total = self.index.list(game_type, status, (page - 1) * per_page, per_page)
        summaries = []
        for game_id in ids:
            try:
                summaries.append(disclosure.summary(self.load(game_id)))
            except NotFound:
                continue
        return {"games": summaries, "total": total, "page": page, "per_page": per_page}

    def leaderboard(self, game_type: str) -> dict:
        """The leaderboard of a game type, best win rate first (ties are shared wins)."""
        try:
            get_game(game_type)
        except UnknownGame:
            raise NotFound(f"game_type: unknown game type {game_type!r}", {"field": "game_type"})
        return {"type": game_type, "rows": self.index.leaderboard(game_type)}

    def games_waiting(self, status: str, limit: int = 1000) -> list[str]:
        """Games in `status` (oldest first): what the reconciler repairs."""
        return self.index.games_waiting(status, limit)
