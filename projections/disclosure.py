"""Who sees what: every payload a seat or a spectator receives is built here.

While a game is live a seat sees what its player could see at the table and a spectator
the public part; once the rules have ended the game everything is disclosed to everyone.
A command's action is shown to the seat that sent it; others see only who acted (the
events it caused are redacted by the game's own rules).
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Optional

from events.envelope import StoredEvent

from .game import RECORDED_IN_CREATION
from .session import PLATFORM_EVENTS, Session, evolve


def _cmd_for(cmd: Optional[dict], viewer: Optional[int], disclose: bool) -> Optional[dict]:
    if cmd is None:
        return None
    if disclose or cmd.get("seat") == viewer:
        return cmd
    return {"seat": cmd.get("seat"), "by": cmd.get("by")}


def event_for(before: Optional[Session], event: StoredEvent, viewer: Optional[int], disclose: bool) -> Optional[dict]:
    """One event as `viewer` may see it; `before` is the session before the event."""
    payload = event.payload
    if not disclose and event.type not in PLATFORM_EVENTS:
        payload = before.game.redact(before.state, payload, viewer)
        if payload is None:
            return None
    out = {"version": event.version, "type": event.type,
           "data": {k: v for k, v in payload.items() if k != "type"},
           "at": event.at, "prev_hash": event.prev_hash, "hash": event.hash}
    cmd = _cmd_for(event.cmd, viewer, disclose)
    if cmd is not None:
        out["cmd"] = cmd
    return out


def events_for(events: Iterable[StoredEvent], before: Optional[Session], viewer: Optional[int],
               disclose: bool, game_id: str = "") -> tuple[list[dict], Optional[Session]]:
    """The events as `viewer` may see them, folding from `before`. Returns (events, session after)."""
    out = []
    session = before
    for event in events:
        shown = event_for(session, event, viewer, disclose)
        if shown is not None:
            out.append(shown)
        session = evolve(session, event, game_id)
    return out, session


def summary(session: Session) -> dict:
    """The public facts of a game (lobby and summary)."""
    out = {"game_id": session.game_id, "type": session.game_type, "status": session.status,
           "version": session.version, "head": session.head, "rules_version": session.rules_version,
           "options": session.options, "platform_options": session.platform,
           "seats": [s.as_dict() for s in session.seats], "commitment": session.commitment,
           "created_at": session.created_at, "moved_at": session.moved_at, "to_act": session.to_act()}
    if session.abandoned is not None:
        out["abandoned"] = dict(session.abandoned)
    if session.result is not None:
        out["result"] = session.result
    if session.seed is not None:
        out["seed"] = session.seed
    return out


def view_for(session: Session, viewer: Optional[int]) -> dict:
    """The view of a game for a seat (or None: a spectator), with that seat's legal actions."""
    game = session.game
    to_act = session.to_act()
    out = {"game_id": session.game_id, "type": session.game_type, "version": session.version,
           "head": session.head, "status": session.status, "seat": viewer, "to_act": to_act,
           "seats": [s.as_dict() for s in session.seats],
           "state": game.view(session.state, viewer) if session.state is not None else None,
           "legal_actions": (game.legal_actions(session.state, viewer)
                             if viewer is not None and viewer in to_act else [])}
    if session.finished and game.is_over(session.state):
        out["result"] = session.result or game.result(session.state)
    if session.turn_timeout:
        # a timed game's clock: each seat to act that a timeout plays for, and when (ms since
        # the epoch: compare with the answer's server_time, not the client's own clock)
        out["clock"] = {"turn_timeout": session.turn_timeout, "deadlines": session.deadlines()}
    if session.rules_version > 1:
        # the rules this game is played by (its creation event's); views of version-1 games
        # are pinned as they were recorded (tests/golden), so they do not carry it
        out["rules_version"] = session.rules_version
    return out


def full_state(state) -> object:
    """The whole rules state as JSON (hidden parts included): only for ended games. The
    rules version is left out (it is the summary's `rules_version`)."""
    if dataclasses.is_dataclass(state) and not isinstance(state, type):
        return {f.name: full_state(getattr(state, f.name)) for f in dataclasses.fields(state)
                if not f.metadata.get(RECORDED_IN_CREATION)}
    if isinstance(state, dict):
        return {str(k): full_state(v) for k, v in state.items()}
    if isinstance(state, (list, tuple)):
        return [full_state(v) for v in state]
    if isinstance(state, (set, frozenset)):
        return sorted((full_state(v) for v in state), key=repr)
    if state is None or isinstance(state, (bool, int, float, str)):
        return state
    return repr(state)
