"""`verify`: re-run a game from its log and name the first divergence.

Checks, event by event: the version sequence and the hash chain over the stored bytes; the
nonce and every random outcome against the seed (when it is known); every recorded command
re-decided from the state before it, its events compared with the recorded ones; the
opening draws re-run; the recorded result equal to the rules' result and the revealed seed
equal to the published commitment. Messages never quote event contents, so a report on a
live game discloses nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Optional

from events.envelope import GENESIS, StoredEvent, canonical, chain_hash, decode_body
from events.randomness import Draws, commitment, event_nonce
from events.upcast import UPCASTERS

from .game import IllegalAction
from .registry import UnknownGame
from .session import PLATFORM_EVENTS, Session, evolve


@dataclass
class Report:
    ok: bool = True
    checked: int = 0
    seed_checked: bool = False
    first_divergence: Optional[dict] = None
    notes: list = field(default_factory=list)

    def fail(self, version: int, check: str, message: str) -> "Report":
        self.ok = False
        self.first_divergence = {"version": version, "check": check, "message": message}
        return self

    def as_dict(self) -> dict:
        return {"ok": self.ok, "events_checked": self.checked, "seed_checked": self.seed_checked,
                "first_divergence": self.first_divergence}


class _Divergence(Exception):
    def __init__(self, version: int, check: str, message: str):
        super().__init__(message)
        self.version, self.check, self.message = version, check, message


_SEED = re.compile(r"[0-9a-f]{64}")


def _valid_seed(seed) -> bool:
    """A seed as the service makes them: 64 lowercase hex digits, nothing else."""
    return isinstance(seed, str) and _SEED.fullmatch(seed) is not None


def _normalise(events: list[dict]) -> list[dict]:
    return json.loads(canonical(events))


def _decode_chain(raw: list[tuple[str, str]], seed: Optional[str]) -> tuple[list[StoredEvent], Optional[_Divergence]]:
    """The events up to the first one that breaks the chain (or its format, version or nonce),
    and that break (None when the whole log holds)."""
    events, prev = [], GENESIS
    for position, (body, hash_) in enumerate(raw, start=1):
        if chain_hash(prev, body) != hash_:
            return events, _Divergence(position, "chain", "the hash does not match the body and the previous hash")
        try:
            event = decode_body(body, prev, hash_)
        except (ValueError, KeyError, TypeError):
            return events, _Divergence(position, "format", "the stored body is not a well-formed event")
        if event.version != position:
            return events, _Divergence(position, "sequence", f"event carries version {event.version}")
        if seed is not None and event.nonce != event_nonce(seed, event.version):
            return events, _Divergence(position, "nonce", "the nonce was not derived from the game's seed")
        events.append(UPCASTERS.upcast(event))
        prev = hash_
    return events, None


def _expected_batch(session: Optional[Session], first: StoredEvent, seed: Optional[str]) -> Optional[list[dict]]:
    """The events the rules produce for the batch starting at `first`, or None when the
    batch cannot be re-derived (random draws with no seed)."""
    game = session.game
    if first.type == "game.started":
        if seed is None:
            return None
        return [{"type": "game.started"}] + game.start(session.state, Draws(seed, f"v{first.version}"))
    cmd = first.cmd
    if seed is None:
        # Without the seed, re-deciding is still exact for batches with no draws; a batch
        # whose decision draws raises inside Draws and is reported as not re-derivable.
        rng = _NoDraws()
    else:
        rng = Draws(seed, f"v{first.version}")
    try:
        return game.decide(session.state, cmd["seat"], cmd["action"], rng)
    except _NeedsSeed:
        return None
    except IllegalAction as err:
        raise _Divergence(first.version, "decide", f"the recorded action is not legal: {err.message}")
    except Exception:
        raise _Divergence(first.version, "decide", "the recorded command is malformed")


class _NeedsSeed(Exception):
    pass


class _NoDraws:
    def __getattr__(self, name):
        raise _NeedsSeed()


def _check_platform(session: Optional[Session], event: StoredEvent, seed: Optional[str]) -> None:
    if event.type == "game.created":
        if session is not None or event.version != 1:
            raise _Divergence(event.version, "platform", "game.created must be the first event")
        if seed is not None and commitment(seed) != event.data.get("commitment"):
            raise _Divergence(event.version, "seed", "the seed does not match the published commitment")
        return
    if session is None:
        raise _Divergence(event.version, "platform", "the log does not start with game.created")
    if event.type == "seat.claimed":
        seat = event.data.get("seat")
        if not isinstance(seat, int) or not 0 <= seat < len(session.seats) or session.seats[seat].kind != "open":
            raise _Divergence(event.version, "platform", "a seat was claimed that was not open")
        if session.status != "open":
            raise _Divergence(event.version, "platform", f"a seat was claimed in a game that was {session.status}")
        reserved = session.seats[seat].reserved
        if reserved is not None and event.data.get("account") != reserved:
            raise _Divergence(event.version, "platform", "a reserved seat was claimed by another than its account")
    elif event.type == "seat.left":
        _check_left(session, event)
    elif event.type == "game.expired":
        if session.status != "open":
            raise _Divergence(event.version, "platform", "a game expired that was not open")
    elif event.type == "game.abandoned":
        _check_abandoned(session, event)
    elif event.type == "game.scored":
        if session.status == "scored":
            raise _Divergence(event.version, "platform", "the game was scored twice")
        if not session.finished:
            raise _Divergence(event.version, "platform", "scored before the rules ended the game")
        if _normalise(session.game.result(session.state)) != event.data.get("result"):
            raise _Divergence(event.version, "result", "the recorded result differs from the rules' result")
        revealed = event.data.get("seed")
        if not _valid_seed(revealed) or commitment(revealed) != session.commitment:
            raise _Divergence(event.version, "seed", "the revealed seed does not match the commitment")


def _check_abandoned(session: Session, event: StoredEvent) -> None:
    """An abandonment ends an active game without a clock where a person was to act, and
    records since when nobody moved (the last event's time) and the persons' seats to act."""
    if session.status != "active":
        raise _Divergence(event.version, "platform", f"a game was abandoned that was {session.status}")
    if session.turn_timeout:
        raise _Divergence(event.version, "platform", "a game with a clock was abandoned (its timeouts play it)")
    people = [s for s in session.to_act() if session.seats[s].kind == "player"]
    if not people or event.data.get("to_act") != people:
        raise _Divergence(event.version, "platform", "the abandonment does not name the persons who were to act")
    if event.data.get("idle_since") != session.moved_at or event.at < session.moved_at:
        raise _Divergence(event.version, "platform", "the abandonment's idle_since is not the game's last move")


def _check_left(session: Session, event: StoredEvent) -> None:
    """A person leaves a seat they hold, in a game still open or under way, and the bot that
    takes it over is of the level the creation chose (`leave_level`, heuristic when absent)."""
    seat = event.data.get("seat")
    if not isinstance(seat, int) or not 0 <= seat < len(session.seats) or session.seats[seat].kind != "player":
        raise _Divergence(event.version, "platform", "a seat was left that no person held")
    if session.status not in ("open", "active"):
        raise _Divergence(event.version, "platform", f"a seat was left in a game that was {session.status}")
    if event.data.get("level") != session.leave_level:
        raise _Divergence(event.version, "platform", "the bot that took over is not of the creation's leave_level")


def _check_receipts(raw: list[tuple[str, str]], receipts: dict[int, str], head: Optional[tuple[int, str]]) -> None:
    """Receipts a client kept (version -> head hash) and the store's own head must all be on
    the chain: this is what catches a log cut short or rewritten wholesale with a new chain."""
    for version, hash_ in sorted(receipts.items()):
        if version > len(raw):
            raise _Divergence(len(raw) + 1, "receipt", f"a receipt names version {version}, past the log's end")
        if raw[version - 1][1] != hash_:
            raise _Divergence(version, "receipt", "the hash at this version differs from the receipt's")
    if head is not None:
        version, hash_ = head
        if version != len(raw) or (raw and raw[-1][1] != hash_):
            raise _Divergence(min(version, len(raw)) + 1 if version != len(raw) else len(raw), "head",
                              "the stream does not end at the store's recorded head")


def verify_log(raw: list[tuple[str, str]], seed: Optional[str] = None, game_id: str = "",
               receipts: Optional[dict[int, str]] = None, head: Optional[tuple[int, str]] = None) -> Report:
    """Verify a whole log given as stored (body, hash) pairs; `seed` when known; `receipts`
    (version -> head hash) kept by clients; `head` the (version, hash) the store recorded."""
    report = Report()
    if seed is not None and not _valid_seed(seed):
        return report.fail(1, "seed", "the seed given is not 64 hex digits")
    try:
        _check_receipts(raw, receipts or {}, head)
    except _Divergence as div:
        outside = div  # reported unless the log itself diverges earlier
    else:
        outside = None
    inside = _verify_events(raw, seed, game_id, report)
    first = min((d for d in (inside, outside) if d is not None), key=lambda d: d.version, default=None)
    if first is not None:
        return report.fail(first.version, first.check, first.message)
    return report


def _verify_events(raw, seed, game_id, report: Report) -> Optional[_Divergence]:
    try:
        events, broken = _decode_chain(raw, seed)
        if seed is None:
            scored = [e for e in events if e.type == "game.scored"]
            revealed = scored[-1].data.get("seed") if scored else None
            seed = revealed if _valid_seed(revealed) else None
            if seed is not None:
                events, broken = _decode_chain(raw, seed)
        report.seed_checked = seed is not None
        # Replay the events before the first break: a forged event that chains well is
        # caught by the replay at its own version, before its successor's chain break.
        try:
            _replay(events, seed, game_id, report)
        except _Divergence as div:
            if broken is None or div.version < broken.version:
                raise
        if broken is not None:
            raise broken
    except _Divergence as div:
        return div
    return None


def _replay(events: list[StoredEvent], seed: Optional[str], game_id: str, report: Report) -> None:
    session: Optional[Session] = None
    i = 0
    while i < len(events):
        first = events[i]
        if first.type in PLATFORM_EVENTS and first.type != "game.started":
            _check_platform(session, first, seed)
            try:
                session = evolve(session, first, game_id)
            except UnknownGame:
                raise _Divergence(first.version, "platform", "unknown game type")
            i += 1
            report.checked = i
            continue
        if session is None or (first.type != "game.started" and first.cmd is None):
            raise _Divergence(first.version, "command", "an event that no command or draw caused")
        if session.status == "abandoned":
            raise _Divergence(first.version, "platform", "an event after the game was abandoned")
        if first.type == "game.started" and session.status != "open":
            raise _Divergence(first.version, "platform", "the game was started twice")
        expected = _expected_batch(session, first, seed)
        if expected is None:
            # Not re-derivable without the seed: the batch runs to the next command.
            j = i + 1
            while j < len(events) and events[j].cmd is None and events[j].type not in PLATFORM_EVENTS:
                j += 1
            report.notes.append(first.version)
        else:
            expected = _normalise(expected)
            j = i + len(expected)
            recorded = [e.payload for e in events[i:j]]
            for offset, (want, got) in enumerate(zip(expected, recorded)):
                if want != got or (offset > 0 and events[i + offset].cmd is not None):
                    raise _Divergence(first.version + offset, "decide",
                                      "the recorded event differs from what the rules produce")
            if len(recorded) < len(expected):
                raise _Divergence(first.version + len(recorded), "decide", "events the rules produce are missing")
        for event in events[i:j]:
            try:
                session = evolve(session, event, game_id)
            except Exception:
                raise _Divergence(event.version, "evolve", "the event cannot be applied to the state")
        i = j
        report.checked = i
