"""The table chat's rules, pure (no I/O): the channels and who may read and write each, the
preset messages, what a message's text may be, and what a viewer is shown of a chat's
entries (its channels, its mutes, the operator's removals).

Two channels per game:
- "players": the game's seats only (a seat token, or the account that holds the seat), to
  read and to write, while the game is open or active; once it is over (ended, scored,
  expired, abandoned) anyone reads it, as anyone reads the events.
- "spectators": anyone reads it; a signed-in account writes in it (an account holding a seat
  too, as itself). A guest's seat token alone does not: anonymous posting would be a flood
  vector, and a guest talks to the table in "players".

An entry is JSON of one of three kinds:
  {"kind": "message", "channel", "author": {"seat": n} | {"account": id}, "text" | "preset"}
  {"kind": "mute", "seat": n, "target": m, "on": bool}   (a seat hides another's messages)
  {"kind": "removal", "message": id, "channel", "reason"} (the operator's; the text is gone)
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from typing import Iterable, Optional

PLAYERS, SPECTATORS = "players", "spectators"
CHANNELS = (PLAYERS, SPECTATORS)
OVER = ("ended", "scored", "expired", "abandoned")   # statuses in which the players' channel is public

# The preset messages: fixed ids, served by the API (GET /v1/chat/presets), sent by id.
PRESETS: dict[str, str] = {
    "good-luck": "Good luck!",
    "well-played": "Well played!",
    "thanks": "Thanks!",
    "oops": "Oops!",
    "your-move": "Your move.",
}

MAX_COMBINING = 6      # combining marks in a row (Vietnamese, Indic, Hebrew points need a few; Zalgo many)
JOINERS = frozenset("\u200c\u200d")   # ZWNJ and ZWJ: emoji sequences and several scripts need them


@dataclass(frozen=True)
class Viewer:
    """Who reads or writes: a seat of the game (None: none) and a signed-in account (None: none)."""

    seat: Optional[int] = None
    account: Optional[str] = None


def text_problem(text: str, max_length: int) -> tuple[Optional[str], str]:
    """(why the text cannot be a chat message, or None; the text as it is kept: NFC, the outer
    spaces stripped). Refused: empty, longer than `max_length` characters after NFC, a control
    character (newlines and tabs included, ANSI escapes), a format character other than the
    joiners (bidi overrides and isolates, invisible characters), a line or paragraph separator,
    a private-use or unassigned code point, a lone surrogate, more than MAX_COMBINING combining
    marks in a row."""
    if not isinstance(text, str):
        return "must be a string", ""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "must be valid Unicode text (a lone surrogate)", ""
    kept = unicodedata.normalize("NFC", text).strip(" ")
    if not kept.strip():
        return "must not be empty or only spaces", kept
    if len(kept) > max_length:
        return f"at most {max_length} characters (this one has {len(kept)})", kept
    run = 0
    for i, char in enumerate(kept):
        category = unicodedata.category(char)
        if category in ("Cc", "Co", "Cn", "Cs", "Zl", "Zp") or (category == "Cf" and char not in JOINERS):
            return f"character {i + 1} (U+{ord(char):04X}) is not allowed in a chat message (a control, " \
                   "format, private-use or unassigned character)", kept
        run = run + 1 if category in ("Mn", "Me") else 0
        if run > MAX_COMBINING:
            return f"more than {MAX_COMBINING} combining marks in a row (at character {i + 1})", kept
    return None, kept


def may_read(channel: str, status: str, viewer: Viewer) -> bool:
    if channel == SPECTATORS:
        return True
    return viewer.seat is not None or status in OVER


def readable(status: str, viewer: Viewer) -> list[str]:
    return [c for c in CHANNELS if may_read(c, status, viewer)]


def write_problem(channel: str, viewer: Viewer) -> Optional[str]:
    """Why the viewer may not write in `channel` (None: it may)."""
    if channel == PLAYERS and viewer.seat is None:
        return "players: only the game's seats write here (a seat token, or the account that holds the seat)"
    if channel == SPECTATORS and viewer.account is None:
        return "spectators: writing here needs a signed-in account (an account credential)"
    return None


def writable(viewer: Viewer) -> list[str]:
    return [c for c in CHANNELS if write_problem(c, viewer) is None]


def author_key(channel: str, viewer: Viewer) -> str:
    """Whose rate a message counts against: the seat in the players' channel, the account in
    the spectators'."""
    return f"seat:{viewer.seat}" if channel == PLAYERS else f"account:{viewer.account}"


# --- the entries ------------------------------------------------------------------------------
def message_body(channel: str, viewer: Viewer, text: Optional[str] = None, preset: Optional[str] = None) -> str:
    author = {"seat": viewer.seat} if channel == PLAYERS else {"account": viewer.account}
    said = {"preset": preset} if preset is not None else {"text": text}
    return _dumps({"kind": "message", "channel": channel, "author": author, **said})


def mute_flag(seat: int, target: int) -> str:
    return f"mute:{seat}:{target}"


def mute_body(seat: int, target: int, on: bool) -> str:
    return _dumps({"kind": "mute", "seat": seat, "target": target, "on": on})


def removal_flag(message_id: int) -> str:
    """The flag a removal sets: every page read knows the removed messages, wherever their
    removal stands in the log (a removed text is never shown, even on a page before it)."""
    return f"removed:{message_id}"


def removed_in(flags: dict) -> set[int]:
    return {int(f[len("removed:"):]) for f, on in flags.items() if on and f.startswith("removed:")}


def removal_body(message_id: int, channel: str, reason: str) -> str:
    return _dumps({"kind": "removal", "message": message_id, "channel": channel, "reason": reason})


def _dumps(obj: dict) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def muted_by(flags: dict, seat: Optional[int]) -> list[int]:
    """The seats `seat` has muted, from the chat's flags."""
    if seat is None:
        return []
    prefix = f"mute:{seat}:"
    return sorted(int(f[len(prefix):]) for f, on in flags.items() if on and f.startswith(prefix))


@dataclass(frozen=True)
class Entry:
    """A stored entry as the rules read it (events/chat.py ChatEntry, decoded)."""

    id: int
    body: dict
    version: int
    at: int


def decode(entries: Iterable) -> list[Entry]:
    """Stored entries (anything with id, body (JSON), version, at) as the rules read them;
    one that is not a JSON object is skipped (never shown)."""
    out = []
    for e in entries:
        try:
            body = json.loads(e.body)
        except ValueError:
            continue
        if isinstance(body, dict):
            out.append(Entry(e.id, body, e.version, e.at))
    return out


def shown(entries: Iterable[Entry], status: str, viewer: Viewer, muted: Iterable[int] = (),
          removed: Iterable[int] = (), channel: Optional[str] = None) -> list[dict]:
    """What the viewer is shown of `entries`: the messages and removals of the channels it
    may read (only `channel`'s when given), in order, leaving out the messages of the seats it
    muted; a removed message (its id in `removed`, the chat's removal flags, or a removal
    among `entries`) without its text. Mutes are never shown. Each item is the API's ChatItem
    with the author's seat or account, not yet its name (the caller adds it)."""
    entries = list(entries)
    removed = set(removed) | {e.body.get("message") for e in entries if e.body.get("kind") == "removal"}
    muted = set(muted)
    out = []
    for entry in entries:
        body = entry.body
        kind, where = body.get("kind"), body.get("channel")
        if kind not in ("message", "removal") or where not in CHANNELS or not may_read(where, status, viewer):
            continue
        if channel is not None and where != channel:
            continue
        if kind == "removal":
            out.append({"id": entry.id, "kind": "removal", "channel": where, "at": entry.at, "version": entry.version,
                        "message": body.get("message"), "reason": body.get("reason") or "", "author": None,
                        "text": None, "preset": None, "removed": False})
            continue
        author = body.get("author") or {}
        if author.get("seat") is not None and author["seat"] in muted:
            continue
        gone = entry.id in removed
        preset = body.get("preset")
        text = None if gone else PRESETS.get(preset, preset) if preset is not None else body.get("text")
        out.append({"id": entry.id, "kind": "message", "channel": where, "at": entry.at, "version": entry.version,
                    "author": {"seat": author.get("seat"), "account": author.get("account")},
                    "text": text, "preset": None if gone else preset, "removed": gone,
                    "message": None, "reason": None})
    return out
