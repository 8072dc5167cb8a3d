"""The table chat (docs/api.md "Chat"): a thin service over the chat's log (events/chat.py)
and its pure rules (projections/chat.py). Reading, posting (text or a preset), a seat's mutes,
the operator's removals, and the chat as the game's export carries it.

The chat is kept with the game (its export, its archive file, the replay page) but outside
its hash chain: a message is no event, changes no version and no head, and verify never reads
it. Every refusal changes nothing: the text is checked before the append, and the append's
own script checks the cap and the author's rate before its first write.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Optional

from events.chat import ChatRefused, Rate
from projections import chat as rules
from projections.chat import CHANNELS, PRESETS, Viewer

from .errors import IDEMPOTENCY_KEY, Conflict, Forbidden, Invalid, NotFound, Throttled

REASON_MAX = 200


@dataclass(frozen=True)
class ChatPolicy:
    """The chat's limits (service/settings.py: CHAT_MAX_LENGTH, CHAT_RATE, CHAT_MAX_ENTRIES)."""

    max_length: int = 280          # characters of a message, after NFC
    rate_count: int = 5            # messages (and mutes) per author ...
    rate_seconds: int = 10         # ... within this many seconds
    max_entries: int = 2000        # entries per game: past it, 409 chat_full
    page: int = 200                # entries read per answer at most

    @property
    def rate(self) -> Rate:
        return Rate(self.rate_count, self.rate_seconds * 1000)

    def as_dict(self) -> dict:
        return {"max_length": self.max_length, "rate_count": self.rate_count, "rate_seconds": self.rate_seconds,
                "max_entries": self.max_entries}


def now_ms() -> int:
    return int(time.time() * 1000)


class TableChat:
    """The chat of every game, on the core's store."""

    def __init__(self, core, policy: ChatPolicy = ChatPolicy()):
        self.core = core
        self.policy = policy

    @property
    def store(self):
        return self.core.store

    # --- reading ---------------------------------------------------------------------------
    def presets(self) -> dict:
        return {"presets": [{"id": k, "text": v} for k, v in PRESETS.items()], "limits": self.policy.as_dict()}

    def read(self, game_id: str, viewer: Viewer, channel: Optional[str] = None, after: int = 0,
             limit: Optional[int] = None) -> dict:
        """The items after id `after` the viewer may read (one channel's when given), at most
        `limit` entries read; `last`, the id to ask after next time; `more` when a page is left."""
        session = self.core.load(game_id)
        if channel is not None and not rules.may_read(channel, session.status, viewer):
            raise Forbidden(f"channel: the players' channel is read by the game's seats only until the game is over "
                            f"(a seat token, or the account that holds the seat)",
                            {"field": "channel"}, code="chat_forbidden")
        limit = min(limit or self.policy.page, self.policy.page)
        page = self.store.chat_page(game_id, after, limit)
        entries = rules.decode(page.entries)
        items = rules.shown(entries, session.status, viewer, rules.muted_by(page.flags, viewer.seat),
                            rules.removed_in(page.flags), channel)
        self._name(items, session)
        cursor = page.entries[-1].id if page.entries else min(after, page.last)
        return {"game_id": game_id, "items": items, "last": cursor, "more": cursor < page.last,
                "readable": rules.readable(session.status, viewer), "writable": self._writable(viewer),
                "muted": rules.muted_by(page.flags, viewer.seat), "seat": viewer.seat}

    def _writable(self, viewer: Viewer) -> list[str]:
        return rules.writable(viewer)

    def export(self, game_id: str, viewer: Optional[int], session=None) -> list[dict]:
        """Every item the viewer may read, removals applied and no mute (the export is the
        game's record, not a reader's screen): what the export's header carries as `chat`."""
        session = session or self.core.load(game_id)
        who = Viewer(seat=viewer)
        out, after = [], 0
        while True:
            page = self.store.chat_page(game_id, after, 1000)
            if not page.entries:
                break
            out += rules.shown(rules.decode(page.entries), session.status, who, (), rules.removed_in(page.flags))
            after = page.entries[-1].id
        return self._name(out, session)

    def _name(self, items: list[dict], session) -> list[dict]:
        """Each message's author with the name it is shown by (an account's username now, a
        guest's typed name marked `guest`)."""
        for item in items:
            author = item.get("author")
            if not author:
                continue
            seat, account = author.get("seat"), author.get("account")
            guest = False
            if seat is not None and 0 <= seat < len(session.seats):
                held = session.seats[seat]
                account = account or held.account
                if held.account:
                    name = self.core.account_name(held.account)[0]
                else:
                    name, guest = held.name or f"Seat {seat + 1}", held.name is not None   # people count from 1
            elif account:
                name = self.core.account_name(account)[0]
            else:
                name = "someone"
            item["author"] = {"seat": seat, "account": account, "name": name, "guest": guest}
        return items

    # --- writing ---------------------------------------------------------------------------
    def post(self, game_id: str, viewer: Viewer, channel: str, text: Optional[str] = None,
             preset: Optional[str] = None, idempotency_key: Optional[str] = None,
             at: Optional[int] = None) -> tuple[dict, bool]:
        """Say `text` (or the preset `preset`) in `channel` as the viewer: (the item as the
        chat shows it, whether it answers a retry of the same key)."""
        if channel not in CHANNELS:
            raise Invalid(f"channel: one of {', '.join(CHANNELS)}", {"field": "channel"})
        if (text is None) == (preset is None):
            raise Invalid("text: give either `text` or `preset` (one of GET /v1/chat/presets)", {"field": "text"},
                          code="invalid_text")
        if preset is not None and preset not in PRESETS:
            raise Invalid(f"preset: no preset {preset[:40]!r} (one of {', '.join(PRESETS)})", {"field": "preset"},
                          code="unknown_preset")
        if text is not None:
            problem, text = rules.text_problem(text, self.policy.max_length)
            if problem:
                raise Invalid(f"text: {problem}", {"field": "text", "max_length": self.policy.max_length},
                              code="invalid_text")
        session = self.core.load(game_id)
        problem = rules.write_problem(channel, viewer)
        if problem:
            raise Forbidden(problem, {"field": "channel"}, code="chat_forbidden")
        body = rules.message_body(channel, viewer, text, preset)
        entry, replayed = self._append(game_id, body, at, author=rules.author_key(channel, viewer),
                                       idempotency_key=idempotency_key)
        items = rules.shown(rules.decode([entry]), session.status, viewer)
        return self._name(items, session)[0], replayed

    def mute(self, game_id: str, seat: int, target: int, on: bool = True, at: Optional[int] = None) -> dict:
        """The seat mutes (or, `on` False, unmutes) another seat: its messages are left out
        of this seat's reads (never deleted). Already so: nothing is written."""
        session = self.core.load(game_id)
        if not isinstance(target, int) or not 0 <= target < len(session.seats):
            raise Invalid(f"target: a seat of this game, 0 to {len(session.seats) - 1}", {"field": "target"})
        if target == seat:
            raise Invalid("target: a seat cannot mute itself", {"field": "target"})
        muted = rules.muted_by(self._flags(game_id), seat)
        if (target in muted) != on:
            # an unmute goes past the cap (each follows a mute, so they are bounded): a full chat
            # never keeps a seat muted
            self._append(game_id, rules.mute_body(seat, target, on), at, author=f"seat:{seat}",
                         flag=rules.mute_flag(seat, target), on=on, capped=on)
            muted = rules.muted_by(self._flags(game_id), seat)
        return {"game_id": game_id, "seat": seat, "muted": muted}

    def muted(self, game_id: str, seat: int) -> dict:
        self.core.load(game_id)
        return {"game_id": game_id, "seat": seat, "muted": rules.muted_by(self._flags(game_id), seat)}

    def remove(self, game_id: str, message_id: int, reason: str = "", at: Optional[int] = None) -> dict:
        """The operator's removal of a message: a removal entry (the message stays in the log,
        its text is shown to nobody from then on). Removing a removed message changes nothing."""
        session = self.core.load(game_id)
        if reason:
            problem, reason = rules.text_problem(reason, REASON_MAX)
            if problem:
                raise Invalid(f"reason: {problem}", {"field": "reason"})
        page = self.store.chat_page(game_id, max(0, message_id - 1), 1) if message_id >= 1 else None
        found = rules.decode(page.entries) if page and page.entries and page.entries[0].id == message_id else []
        if not found or found[0].body.get("kind") != "message":
            raise NotFound(f"message: no chat message {message_id} in game {game_id}",
                           {"field": "message", "game_id": game_id}, code="no_such_message")
        message = found[0]
        everyone = Viewer(seat=0)      # a seat reads both channels: the removal item as anyone shown it
        if message_id not in rules.removed_in(page.flags):
            entry, _ = self._append(game_id, rules.removal_body(message_id, message.body["channel"], reason), at,
                                    flag=rules.removal_flag(message_id), capped=False)
            removal = rules.shown(rules.decode([entry]), session.status, everyone)
        else:
            removal = []
        return {"game_id": game_id, "message": message_id, "removed": True,
                "removal": removal[0] if removal else None}

    # --- the log ---------------------------------------------------------------------------
    def _flags(self, game_id: str) -> dict:
        return self.store.chat_page(game_id, 1 << 62, 1).flags

    def _append(self, game_id, body, at, author=None, idempotency_key=None, flag=None, on=True, capped=True):
        try:
            return self.store.append_chat(game_id, body, at=at if at is not None else now_ms(), author=author,
                                          rate=self.policy.rate if author else None,
                                          cap=self.policy.max_entries if capped else 0,
                                          idempotency_key=idempotency_key, flag=flag, on=on)
        except ChatRefused as refused:
            raise self._error(game_id, refused) from None

    def _error(self, game_id: str, refused: ChatRefused):
        if refused.reason == "rate":
            wait = max(1, math.ceil(refused.retry_after_ms / 1000))
            return Throttled(f"chat: at most {self.policy.rate_count} messages in {self.policy.rate_seconds} s; "
                             f"retry in {wait} s", wait, code="chat_rate_limited")
        if refused.reason == "full":
            return Conflict(f"chat: this game's chat holds its most, {self.policy.max_entries} entries; it takes "
                            "no more", {"limit": self.policy.max_entries}, code="chat_full")
        if refused.reason == "archived":
            return Conflict("chat: the game is archived; its chat is kept and read, but takes no more",
                            code="chat_closed")
        if refused.reason == "idempotency":
            return Conflict(f"{IDEMPOTENCY_KEY}: used before with another message", {"field": IDEMPOTENCY_KEY},
                            code="idempotency_conflict")
        return NotFound(f"no game {game_id!r}", {"game_id": game_id})
