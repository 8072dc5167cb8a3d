"""A game's dispute bundle (`speculation-bundle/1`, docs/audit.md "Dispute bundles"), made from
the core: the export as the caller may see it, the seat's signed receipts regenerated from
the log, the game's checkpoints with their inclusion proofs in the latest signed tree head,
the first head that held each checkpoint, consistency proofs from those heads (and from any
tree sizes the caller already knows) to the latest, and the service's public keys.

Checked offline by projections/audit_verify.py and in the browser by audit.js.
"""

from __future__ import annotations

import json
from typing import Iterable, Optional

from .receipts import split_batches

BUNDLE_FORMAT = "speculation-bundle/1"


def _seats_batch(first_version: int, first_body: dict, seat: Optional[int]) -> bool:
    """Whether a batch belongs in `seat`'s bundle: the creation (everyone's: a commitment and
    hashes any spectator sees), the seat's claim and its leave, and every batch whose command
    names the seat."""
    if first_version == 1:
        return True
    if seat is None:
        return False
    if first_body.get("t") in ("seat.claimed", "seat.left"):
        return (first_body.get("d") or {}).get("seat") == seat
    return (first_body.get("c") or {}).get("seat") == seat


def seat_receipts(core, game_id: str, raw: list[tuple[str, str]], seat: Optional[int]) -> list[dict]:
    """The signed receipts of the seat's batches of the log `raw` (its (body, hash) pairs from
    version 1), exactly as the commands answered them (Receipts.of_batch: deterministic)."""
    return [core.receipts.of_batch(game_id, start, batch) for start, batch in split_batches(raw)
            if _seats_batch(start, json.loads(batch[0][0]), seat)]


def build_bundle(core, game_id: str, seat: Optional[int], known_sizes: Iterable[int] = ()) -> dict:
    """The bundle of `game_id` for `seat` (None: a spectator's). `known_sizes`: tree sizes the
    caller holds heads of; a proof from each one no larger than the latest head's is added.
    The tree head is read first: every checkpoint under it is at a version the store already
    had, so the export read after it holds it."""
    log = core.transparency
    head = log.latest_head()
    tree_size = head["tree_size"] if head else 0
    export = core.export(game_id, seat)               # NotFound for a game that does not exist
    version = export[0]["version"]
    raw = core.store.read_raw(game_id, 0, version)
    checkpoints = log.checkpoints(game_id, tree_size) if tree_size else []
    earlier: dict[int, dict] = {}
    for checkpoint in checkpoints:
        first = log.first_head_holding(checkpoint["index"])
        if first is not None and first["tree_size"] < tree_size:
            earlier.setdefault(first["tree_size"], first)
    sizes = set(earlier) | {s for s in known_sizes if 0 < s < tree_size}
    return {
        "format": BUNDLE_FORMAT,
        "game": game_id,
        "seat": seat,
        "export": export,
        "receipts": seat_receipts(core, game_id, raw, seat),
        "checkpoints": checkpoints,
        "tree_head": head,
        "tree_heads": [earlier[size] for size in sorted(earlier)],
        "consistency": {str(size): log.consistency_proof(size, tree_size) for size in sorted(sizes)},
        "keys": core.keys.public_keys(),
    }
