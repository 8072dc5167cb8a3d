"""Signed receipts (`speculation-receipt/1`, docs/audit.md): what a command that appended to a
game answers with, and what a dispute bundle regenerates from the log.

A receipt's content is a function of the log alone: its batch's versions and head, the `at`
of the batch's last event as its `time` (so a retry of the same command, or a bundle made a
year later, gets the same bytes), `include_by = time + AUDIT_INCLUDE_WITHIN`, and on the
creation's receipt the seed commitment. Ed25519 is deterministic and the keyring signs with
the key valid at the receipt's time, so the signature is the same too.

A batch, read from the log: it starts at an event that carries a command (`c`) or is
`game.created`, `seat.claimed`, `seat.left`, `game.scored`, `game.expired` or `game.abandoned`, and runs to the event before
the next such start (every append of service/core/commands.py begins so).
"""

from __future__ import annotations

import json
from typing import Iterable, Optional, Protocol, Sequence

RECEIPT_FORMAT = "speculation-receipt/1"
DEFAULT_INCLUDE_WITHIN_MS = 10_000
BATCH_START_TYPES = frozenset({"game.created", "seat.claimed", "seat.left", "game.scored", "game.expired",
                               "game.abandoned"})


class Signer(Protocol):
    def sign(self, obj: dict) -> dict: ...


def starts_batch(body: dict) -> bool:
    """Whether a stored event's body (its decoded JSON) begins a batch."""
    return "c" in body or body.get("t") in BATCH_START_TYPES


def receipt_payload(game_id: str, first_version: int, version: int, head: str, time_ms: int,
                    include_within_ms: int, seed_commitment: Optional[str] = None) -> dict:
    """The receipt before its signature."""
    payload = {"format": RECEIPT_FORMAT, "game": game_id, "first_version": first_version, "version": version,
               "head": head, "time": time_ms, "include_by": time_ms + include_within_ms}
    if first_version == 1:
        if seed_commitment is None:
            raise ValueError("the creation's receipt carries the seed commitment")
        payload["seed_commitment"] = seed_commitment
    return payload


class Receipts:
    """Signs receipts with the service's keys (service/audit/keys.py ServiceKeys, or any
    object with `sign`)."""

    def __init__(self, keys: Signer, include_within_ms: int = DEFAULT_INCLUDE_WITHIN_MS):
        self.keys = keys
        self.include_within_ms = include_within_ms

    def sign(self, game_id: str, first_version: int, version: int, head: str, time_ms: int,
             seed_commitment: Optional[str] = None) -> dict:
        return self.keys.sign(receipt_payload(game_id, first_version, version, head, time_ms,
                                              self.include_within_ms, seed_commitment))

    def of_batch(self, game_id: str, first_version: int, batch: Sequence[tuple[str, str]]) -> dict:
        """The receipt of one batch: its stored (body, hash) pairs, versions first_version..,
        as the store wrote them (Receipt.sealed) or read them back (read_raw)."""
        if not batch:
            raise ValueError("a batch has at least one event")
        last_body, head = batch[-1]
        time_ms = json.loads(last_body)["at"]
        commitment = json.loads(batch[0][0])["d"]["commitment"] if first_version == 1 else None
        return self.sign(game_id, first_version, first_version + len(batch) - 1, head, time_ms, commitment)

    def of_log(self, game_id: str, events: Iterable[tuple[str, str]], first_version: int = 1) -> list[dict]:
        """The receipt of every batch of a log (its (body, hash) pairs from `first_version`,
        which must begin a batch), in order."""
        return [self.of_batch(game_id, start, batch) for start, batch in split_batches(events, first_version)]


def split_batches(events: Iterable[tuple[str, str]], first_version: int = 1) -> list[tuple[int, list]]:
    """[(first version, [(body, hash), ...])] of each batch of a run of stored events."""
    out: list[tuple[int, list]] = []
    for version, (body, hash_) in enumerate(events, start=first_version):
        if not out or starts_batch(json.loads(body)):
            out.append((version, []))
        out[-1][1].append((body, hash_))
    return out


def batch_start(events: Sequence[tuple[str, str]], first_version: int) -> Optional[int]:
    """The version of the last batch start among stored events numbered from `first_version`
    (None: none of them starts one)."""
    for offset in range(len(events) - 1, -1, -1):
        if starts_batch(json.loads(events[offset][0])):
            return first_version + offset
    return None
