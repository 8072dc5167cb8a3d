"""Checking a dispute bundle (`speculation-bundle/1`, docs/audit.md) offline.

A bundle holds a game's export, a seat's signed receipts, the game's checkpoints with their
inclusion proofs, the signed tree head they are proved against, the earlier tree heads that
show when each checkpoint was first published, consistency proofs, and the service's keys.
`verify_bundle` runs every check it allows and names each one, ok or failed: a player or a
judge can see what holds without trusting the service that made the bundle, provided they
trust the keys (a bundle's own keys prove nothing against the server that sent them: pass
keys kept earlier).

Pure: no Redis, no Flask, no network.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

from events import merkle
from events.envelope import GENESIS, decode_body
from events.randomness import commitment
from events.signing import SignatureError, canonical_bytes, verify_signed

from .verify import verify_log

BUNDLE_FORMAT = "speculation-bundle/1"
RECEIPT_FORMAT = "speculation-receipt/1"
STH_FORMAT = "speculation-sth/1"

# The names of the failures that convict the operator (docs/audit.md, "Dispute bundles").
RECEIPT_NOT_IN_LOG = "receipt_not_in_log"
INCLUSION_PROMISE_BROKEN = "inclusion_promise_broken"
FORK = "fork"


@dataclass(frozen=True)
class Check:
    """One named check: ok, or failed with `failure` (its own name unless a conviction's)."""

    name: str
    ok: bool
    message: str
    failure: str = ""

    def as_dict(self) -> dict:
        out = {"name": self.name, "ok": self.ok, "message": self.message}
        if not self.ok:
            out["failure"] = self.failure or self.name
        return out


@dataclass(frozen=True)
class Report:
    game: str
    seat: Optional[int]
    trusted: str                  # "given": keys the caller kept; "bundle": the bundle's own
    key_ids: tuple[str, ...]      # the ids of the keys trusted
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)

    @property
    def failures(self) -> list[str]:
        return [c.failure or c.name for c in self.checks if not c.ok]

    def check(self, name: str) -> Optional[Check]:
        return next((c for c in self.checks if c.name == name), None)

    def as_dict(self) -> dict:
        return {"ok": self.ok, "game": self.game, "seat": self.seat,
                "trusted_keys": {"source": self.trusted, "key_ids": list(self.key_ids)},
                "failures": self.failures, "checks": [c.as_dict() for c in self.checks]}


class _Malformed(Exception):
    """A member of the bundle is not what the format says: the check that read it fails."""


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise _Malformed(what)


def _hex_bytes(value, what: str, length: Optional[int] = 32) -> bytes:
    _need(isinstance(value, str), f"{what}: not hex")
    try:
        out = bytes.fromhex(value)
    except ValueError:
        raise _Malformed(f"{what}: not hex") from None
    _need(length is None or len(out) == length, f"{what}: not {length} bytes")
    return out


def _span(receipt: dict) -> str:
    first, last = receipt.get("first_version"), receipt.get("version")
    return f"version {last}" if first in (None, last) else f"versions {first}-{last}"


# --- the log as the export shows it --------------------------------------------------------

@dataclass(frozen=True)
class _Log:
    header: dict
    complete: bool
    last_version: int
    hashes: dict            # version -> hash, where the export shows it
    created_commitment: Optional[str]


def _read_export(export) -> _Log:
    _need(isinstance(export, list) and export and isinstance(export[0], dict), "export: a header and events")
    header, rows = export[0], export[1:]
    _need(all(isinstance(r, dict) for r in rows), "export: every record is an object")
    complete = bool(header.get("complete"))
    hashes, created = {}, None
    if complete:
        prev = GENESIS
        for position, row in enumerate(rows, start=1):
            _need(isinstance(row.get("body"), str) and isinstance(row.get("hash"), str),
                  f"export: record {position} has no body and hash")
            hashes[position] = row["hash"]
            if position == 1:
                try:
                    event = decode_body(row["body"], prev, row["hash"])
                except (ValueError, KeyError, TypeError):   # the export check names it
                    event = None
                if event is not None and event.type == "game.created":
                    created = event.data.get("commitment")
            prev = row["hash"]
        last = len(rows)
    else:
        last = 0
        for row in rows:
            version = row.get("version")
            _need(isinstance(version, int) and isinstance(row.get("hash"), str)
                  and isinstance(row.get("prev_hash"), str), "export: an event without version, hash and prev_hash")
            hashes[version] = row["hash"]
            if version > 1:
                hashes.setdefault(version - 1, row["prev_hash"])   # a hidden event's hash, as its successor shows it
            if version == 1 and row.get("type") == "game.created":
                created = (row.get("data") or {}).get("commitment")
            last = max(last, version)
        last = max(last, header.get("version") or 0) if isinstance(header.get("version"), int) else last
    return _Log(header, complete, last, hashes, created)


def _check_log(bundle: dict, log: _Log) -> Check:
    game = bundle["game"]
    rows = bundle["export"][1:]
    header = log.header
    if header.get("game_id") != game:
        return Check("export", False, f"the export is of game {header.get('game_id')!r}, not {game!r}")
    if log.complete:
        report = verify_log([(r["body"], r["hash"]) for r in rows], header.get("seed"), game)
        if not report.ok:
            div = report.first_divergence
            return Check("export", False, f"the complete export does not re-run: event {div['version']} "
                                          f"({div['check']}): {div['message']}")
        if header.get("version") != len(rows):
            return Check("export", False, f"the export holds {len(rows)} events; its header says {header.get('version')}")
        return Check("export", True, f"the complete export re-runs: {report.checked} events, the hash chain, "
                                     "every decision" + (", every draw from the revealed seed"
                                                         if report.seed_checked else ""))
    # A live game's export: what the seat may see. The hashes are not recomputable (bodies are
    # not shown), but the shown links must hold: versions rising, each prev_hash the hash before.
    shown = [r["version"] for r in rows]
    if shown != sorted(set(shown)):
        return Check("export", False, "the export's events are not in rising order of version")
    by_version = {r["version"]: r for r in rows}
    for row in rows:
        version = row["version"]
        if version == 1 and row["prev_hash"] != GENESIS:
            return Check("export", False, "event 1 does not chain from 64 zeros")
        before = by_version.get(version - 1)
        if before is not None and before["hash"] != row["prev_hash"]:
            return Check("export", False, f"event {version}: its prev_hash is not event {version - 1}'s hash")
    if shown and shown[-1] != header.get("version"):
        return Check("export", False, f"the export ends at event {shown[-1]}; its header says {header.get('version')}")
    return Check("export", True, f"a live game's export as the viewer sees it: {len(rows)} of {log.last_version} "
                                 "events shown, each linked to the hash before it (the bodies are hidden until "
                                 "the end, so the rules cannot re-run yet)")


# --- signatures ------------------------------------------------------------------------------

def _signed_ok(obj, keys: list) -> Optional[str]:
    """None when `obj`'s signature verifies with `keys`, else why not."""
    if not isinstance(obj, dict):
        return "not an object"
    try:
        verify_signed(obj, keys)
    except SignatureError as err:
        return str(err) or "the signature does not verify"
    except (KeyError, TypeError, ValueError) as err:
        return f"malformed ({err})"
    return None


def _receipt_problem(receipt, game: str, keys: list) -> Optional[str]:
    if not isinstance(receipt, dict) or receipt.get("format") != RECEIPT_FORMAT:
        return f"not a {RECEIPT_FORMAT}"
    why = _signed_ok(receipt, keys)
    if why is not None:
        return why
    if not all(isinstance(receipt.get(k), int) for k in ("first_version", "version", "time", "include_by")):
        return "versions and times must be integers"
    return None


def _check_receipt_signatures(name: str, receipts: list, game: str, keys: list, whose: str) -> tuple[Check, list]:
    good, bad = [], []
    for receipt in receipts:
        why = _receipt_problem(receipt, game, keys)
        if why is None:
            good.append(receipt)
        else:
            bad.append(f"{_span(receipt) if isinstance(receipt, dict) else 'a receipt'}: {why}")
    if bad:
        return Check(name, False, f"{len(bad)} of {len(receipts)} {whose} do not verify: " + "; ".join(bad[:5])), good
    used = sorted({r["key_id"] for r in good})
    return Check(name, True, f"{len(good)} {whose}, each signed by a trusted key ({', '.join(used) or 'none'})"), good


# --- receipts against the log ----------------------------------------------------------------

def _check_receipts_in_log(receipts: list, game: str, log: _Log) -> Check:
    missing, unknown = [], 0
    for r in receipts:
        where = f"{r['__whose']} receipt for {_span(r)}"
        if r.get("game") != game:
            missing.append(f"{where}: of game {r.get('game')!r}")
        elif r["version"] > log.last_version:
            missing.append(f"{where}: the log ends at version {log.last_version}")
        elif r["version"] not in log.hashes:
            unknown += 1     # a live export that hides this event and the next: not checkable yet
        elif log.hashes[r["version"]] != r.get("head"):
            missing.append(f"{where}: the log's hash at version {r['version']} is not the receipt's head")
    if missing:
        return Check("receipts_in_log", False, "the service signed receipts for a log it no longer holds "
                     "(this convicts the operator): " + "; ".join(missing[:5]), RECEIPT_NOT_IN_LOG)
    held = len(receipts) - unknown
    return Check("receipts_in_log", True, f"{held} signed receipt(s) end on the log's own hash at their version"
                 + (f"; {unknown} not checkable from this live export (their events are hidden)" if unknown else ""))


def _check_seed_commitment(receipts: list, log: _Log) -> Check:
    created = [r for r in receipts if r.get("first_version") == 1 and "seed_commitment" in r]
    if not created:
        return Check("seed_commitment", False, "no signed creation receipt (version 1 with seed_commitment)")
    signed = created[0]["seed_commitment"]
    wrong = [what for what, value in (("the export's header", log.header.get("commitment")),
                                      ("the game.created event", log.created_commitment)) if value != signed]
    if log.complete:
        seed = log.header.get("seed")
        try:
            if commitment(seed) != signed:
                wrong.append("SHA-256 of the export's seed")
        except (TypeError, ValueError):
            wrong.append("the export's seed (not hex)")
    if wrong:
        return Check("seed_commitment", False, "the commitment signed when the game was created differs from "
                     + ", ".join(wrong))
    return Check("seed_commitment", True, "the commitment signed at creation is the export's"
                 + (" and SHA-256 of its seed" if log.complete else " (the seed is revealed at the end)"))


# --- the transparency log ------------------------------------------------------------------

@dataclass(frozen=True)
class _Head:
    tree_size: int
    root: bytes
    timestamp: int


def _head(sth) -> _Head:
    _need(isinstance(sth, dict) and sth.get("format") == STH_FORMAT, f"not a {STH_FORMAT}")
    _need(isinstance(sth.get("tree_size"), int) and sth["tree_size"] >= 0, "tree_size: not a count")
    _need(isinstance(sth.get("timestamp"), int), "timestamp: not an integer")
    return _Head(sth["tree_size"], _hex_bytes(sth.get("root_hash"), "root_hash"), sth["timestamp"])


def _leaf_bytes(leaf: dict) -> bytes:
    """The leaf's canonical JSON, exactly {game, head, version}."""
    _need(isinstance(leaf, dict) and set(leaf) == {"game", "head", "version"}, "leaf: {game, head, version}")
    return canonical_bytes(leaf)


def _proof(value, what: str) -> list:
    _need(isinstance(value, list), f"{what}: a list of hex hashes")
    return [_hex_bytes(h, what) for h in value]


def _check_checkpoints(checkpoints: list, game: str, head: _Head, log: _Log) -> tuple[Check, list]:
    good, bad, unseen = [], [], 0
    for cp in checkpoints:
        try:
            _need(isinstance(cp, dict) and isinstance(cp.get("index"), int), "index: not an integer")
            leaf, index = cp.get("leaf"), cp["index"]
            data = _leaf_bytes(leaf)
            proof = _proof(cp.get("inclusion"), "inclusion")
            where = f"checkpoint {index} (version {leaf['version']})"
            if leaf["game"] != game:
                bad.append(f"{where}: of game {leaf['game']!r}")
            elif not 0 <= index < head.tree_size or not merkle.verify_inclusion(
                    merkle.leaf_hash(data), index, head.tree_size, proof, head.root):
                bad.append(f"{where}: not included in the tree head (the proof does not reach its root)")
            elif leaf["version"] > log.last_version or (log.complete and leaf["version"] < 1):
                bad.append(f"{where}: the log ends at version {log.last_version}")
            elif leaf["version"] not in log.hashes:
                unseen += 1
                good.append(cp)
            elif log.hashes[leaf["version"]] != leaf["head"]:
                bad.append(f"{where}: its head is not the log's hash at that version")
            else:
                good.append(cp)
        except _Malformed as err:
            bad.append(f"a checkpoint: {err}")
    if bad:
        return Check("checkpoints", False, f"{len(bad)} of {len(checkpoints)} checkpoints fail: " + "; ".join(bad[:5])), good
    return Check("checkpoints", True, f"{len(good)} checkpoint(s) of the game included in the tree head of size "
                 f"{head.tree_size}, each head the log's hash at its version"
                 + (f" ({unseen} at versions this live export hides)" if unseen else "")), good


def _check_consistency(bundle: dict, head: _Head, sths: list, keys: list, whose: str) -> tuple[Check, list]:
    """Each head in `sths` must be a prefix of the bundle's head: the same root at its size, or
    a consistency proof from its size (the bundle's `consistency`). Returns the heads proved."""
    proofs = bundle.get("consistency") or {}
    proved, forks, other = [], [], []
    for sth in sths:
        try:
            earlier = _head(sth)
        except _Malformed as err:
            other.append(f"a tree head: {err}")
            continue
        why = _signed_ok(sth, keys)
        if why is not None:
            other.append(f"the tree head of size {earlier.tree_size}: {why}")
            continue
        if earlier.tree_size > head.tree_size:
            other.append(f"the tree head of size {earlier.tree_size} is later than the bundle's "
                         f"({head.tree_size}): fetch the bundle again")
            continue
        if earlier.tree_size == head.tree_size:
            consistent = earlier.root == head.root
        else:
            proof = proofs.get(str(earlier.tree_size)) if isinstance(proofs, dict) else None
            try:
                consistent = proof is not None and merkle.verify_consistency(
                    earlier.tree_size, head.tree_size, earlier.root, head.root, _proof(proof, "consistency"))
            except _Malformed:
                consistent = False
        if consistent:
            proved.append((earlier, sth))
        else:
            forks.append(f"the tree head of size {earlier.tree_size} (signed at {earlier.timestamp})")
    name = "consistency" if whose == "the bundle's earlier tree heads" else "known_heads"
    if forks:
        return Check(name, False, f"{whose} not proved to be prefixes of the bundle's tree head (a fork: the "
                     "service showed different logs): " + "; ".join(forks[:5]), FORK), proved
    if other:
        return Check(name, False, f"{whose}: " + "; ".join(other[:5])), proved
    return Check(name, True, f"{len(proved)} of {whose}, each a prefix of the bundle's tree head of size "
                 f"{head.tree_size}" if sths else f"none of {whose} to check"), proved


def _check_promises(receipts: list, checkpoints: list, heads: list, bundle_head: _Head) -> Check:
    """Every receipt promised a checkpoint of the game at its version or later, in a tree head
    signed by `include_by`: `heads` are the signed heads proved consistent with the bundle's."""
    kept, due_later, broken = 0, 0, []
    for r in receipts:
        fits = [cp["index"] for cp in checkpoints if cp["leaf"]["version"] >= r["version"]]
        if any(h.tree_size > index and h.timestamp <= r["include_by"] for index in fits for h in heads):
            kept += 1
        elif bundle_head.timestamp > r["include_by"]:
            broken.append(f"{r['__whose']} receipt for {_span(r)} (include_by {r['include_by']})")
        else:
            due_later += 1
    if broken:
        return Check("inclusion_promises", False, "no checkpoint at or after the receipt's version was in a tree "
                     "head signed by its include_by: " + "; ".join(broken[:5]), INCLUSION_PROMISE_BROKEN)
    return Check("inclusion_promises", True, f"{kept} receipt(s) checkpointed in a tree head by their include_by"
                 + (f"; {due_later} not due yet (the bundle's tree head is earlier than their include_by)"
                    if due_later else ""))


# --- the whole bundle ----------------------------------------------------------------------

def _key_ids(keys) -> tuple[str, ...]:
    return tuple(k.get("key_id", "?") for k in keys if isinstance(k, dict))


def _guarded(name: str, run: Callable[[], Check]) -> Check:
    try:
        return run()
    except _Malformed as err:
        return Check(name, False, f"malformed: {err}")
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        return Check(name, False, f"malformed: {type(err).__name__} {err}")


def verify_bundle(bundle: dict, keys: Optional[list] = None, known_heads: Sequence[dict] = (),
                  kept: Iterable[dict] = ()) -> Report:
    """Check a bundle. `keys`: a /v1/keys list the caller trusts (else the bundle's own,
    which proves nothing if the server is the accused); `known_heads`: signed tree heads the
    caller saw before, each of which must be a prefix of the bundle's; `kept`: receipts the
    player kept (any game's: this game's are checked as the bundle's are)."""
    game = bundle.get("game") if isinstance(bundle, dict) else None
    seat = bundle.get("seat") if isinstance(bundle, dict) else None
    given = keys is not None
    trusted = list(keys if given else (bundle.get("keys") if isinstance(bundle, dict) else None) or [])
    ids = _key_ids(trusted)
    report = lambda checks: Report(str(game or ""), seat if isinstance(seat, int) else None,
                                   "given" if given else "bundle", ids, tuple(checks))
    problem = _bundle_shape(bundle)
    if problem:
        return report([Check("format", False, problem)])
    checks = [Check("format", True, f"a {BUNDLE_FORMAT} of game {game}, "
                    + (f"seat {seat}" if isinstance(seat, int) else "as a spectator"))]
    checks.append(Check("keys", bool(ids), (f"trusted the {len(ids)} key(s) given by the caller: {', '.join(ids)}"
                        if given else f"trusted the bundle's own {len(ids)} key(s): {', '.join(ids)}; they prove "
                        "nothing against the service that sent them (pass keys kept earlier)") if ids
                        else "no key to trust"))
    head, head_signed = None, False
    try:
        _need(bundle["tree_head"] is not None, "none: the log had no signed tree head when the bundle was made")
        head = _head(bundle["tree_head"])
        why = _signed_ok(bundle["tree_head"], trusted)
        head_signed = why is None
        checks.append(Check("tree_head_signature", head_signed, why or
                            f"the tree head of size {head.tree_size} is signed by {bundle['tree_head'].get('key_id')}"))
    except _Malformed as err:
        checks.append(Check("tree_head_signature", False, f"tree_head: {err}"))
    signed, good = _check_receipt_signatures("receipt_signatures", bundle["receipts"], game, trusted,
                                             "receipts in the bundle")
    checks.append(signed)
    receipts = [{**r, "__whose": "the bundle's"} for r in good]
    mine = [r for r in kept if isinstance(r, dict) and r.get("game") == game]
    if mine:
        signed, good_kept = _check_receipt_signatures("kept_receipt_signatures", mine, game, trusted,
                                                      "receipts kept by the player")
        checks.append(signed)
        signed_by_bundle = {r["signature"] for r in receipts}   # a kept copy of the bundle's is the same evidence
        receipts += [{**r, "__whose": "a kept"} for r in good_kept if r["signature"] not in signed_by_bundle]
    log = None
    try:
        log = _read_export(bundle["export"])
    except _Malformed as err:
        checks.append(Check("export", False, f"malformed: {err}"))
    if log is not None:
        checks.append(_guarded("export", lambda: _check_log(bundle, log)))
        checks.append(_guarded("receipts_in_log", lambda: _check_receipts_in_log(receipts, game, log)))
        checks.append(_guarded("seed_commitment", lambda: _check_seed_commitment(receipts, log)))
    if head is not None and log is not None:
        checked, included = _check_checkpoints(bundle["checkpoints"], game, head, log)
        checks.append(checked)
        earlier = [s for s in bundle.get("tree_heads") or [] if isinstance(s, dict)]
        consistency, proved = _check_consistency(bundle, head, earlier, trusted, "the bundle's earlier tree heads")
        checks.append(consistency)
        if known_heads:
            known, proved_known = _check_consistency(bundle, head, list(known_heads), trusted,
                                                     "the tree heads known to the caller")
            checks.append(known)
            proved += proved_known
        heads = ([head] if head_signed else []) + [h for h, _ in proved]
        checks.append(_guarded("inclusion_promises", lambda: _check_promises(receipts, included, heads, head)))
    return report(checks)


def _bundle_shape(bundle) -> str:
    if not isinstance(bundle, dict):
        return "the bundle is not a JSON object"
    if bundle.get("format") != BUNDLE_FORMAT:
        return f"format: not {BUNDLE_FORMAT!r}"
    if not isinstance(bundle.get("game"), str) or not bundle["game"]:
        return "game: missing"
    for member in ("export", "receipts", "checkpoints", "keys"):
        if not isinstance(bundle.get(member), list):
            return f"{member}: missing (a list)"
    if bundle.get("tree_head") is not None and not isinstance(bundle["tree_head"], dict):
        return "tree_head: a signed tree head or null"
    if bundle.get("seat") is not None and not isinstance(bundle["seat"], int):
        return "seat: an integer or null"
    return ""
