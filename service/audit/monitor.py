"""The monitor (`speculation audit`, docs/audit.md "Monitors"): holds the operator to the
transparency log it published, from outside, through the public API alone.

Each run, with the state its last run kept:

1. **Keys and the tree head.** GET /v1/keys: every key seen is kept (trust on first use); a
   key that vanished, or a known `key_id` answered with another public key or another start,
   is `key_changed` (a rotation, which only ends the current key, is not). The latest signed
   tree head must verify with the kept keys (else `bad_signature`), and be consistent with
   the head the last run kept: a smaller tree, a same-size head with another root, or a
   consistency proof (GET /v1/log/consistency) that does not verify is a `fork`.
2. **The new leaves.** GET /v1/log/entries from the kept size to the new head's, in pages;
   the root is recomputed over every leaf (the state keeps the right edge of the tree, the
   hashes of its complete subtrees: enough to extend it) and must be the head's (else
   `fork`: the leaves served are not the tree that was signed).
3. **The games.** Every game logged since the last run and a random sample of older ones:
   it must exist (GET /v1/games/{id}; 404 is `deleted`), its events as a spectator must hold,
   at each checkpoint's version, the head the leaf logged (else `rewritten`), and an ended
   game must re-run (GET /v1/games/{id}/verify).
4. **Receipts** given (dispute bundles, the receipts the command line kept): each must
   verify, its game must exist and hold the receipt's head at its version (`deleted`,
   `rewritten`), and once the latest head is past its `include_by`, a checkpoint of the game
   at its version or later must lie in a signed tree head whose timestamp is at most
   `include_by` (else `missed_promise`).
5. **Other heads**: a peer monitor's latest head and the heads inside given bundles must be
   consistent with this one's (same size, same root; else a consistency proof between them
   from the server must verify): otherwise `fork`.

A run that finds a fork keeps the head it had (it never adopts a head it could not prove a
successor of its own), so every later run reports the fork again until someone looks.

The class takes a getter, `get(path) -> (status, JSON or None)`, so that the tests drive it
against a Flask test client and the command line against a live server.
"""

from __future__ import annotations

import copy
import json
import os
import random
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence
from urllib.parse import quote

from events import merkle
from events.signing import SignatureError, canonical_bytes, verify_signed

STATE_FORMAT = "speculation-monitor/1"
STH_FORMAT = "speculation-sth/1"
RECEIPT_FORMAT = "speculation-receipt/1"
PAGE = 1000                       # leaves per GET /v1/log/entries (the server's most)
ENDED = ("ended", "scored")       # statuses whose game re-runs whole (GET /verify)

# The kinds of finding (docs/audit.md, "Monitors").
FORK, REWRITTEN, DELETED = "fork", "rewritten", "deleted"
MISSED_PROMISE, BAD_SIGNATURE, KEY_CHANGED = "missed_promise", "bad_signature", "key_changed"
KINDS = (FORK, REWRITTEN, DELETED, MISSED_PROMISE, BAD_SIGNATURE, KEY_CHANGED)

Getter = Callable[[str], tuple[int, Any]]


class MonitorError(Exception):
    """The API answered something that is neither evidence nor an answer (a 5xx, a 429, a
    body that is not JSON): the run stops and keeps its state as it was."""


@dataclass(frozen=True)
class Finding:
    kind: str                     # one of KINDS
    check: str                    # which check found it (docs/audit.md, "Monitors")
    message: str
    game: Optional[str] = None

    def as_dict(self) -> dict:
        out = {"kind": self.kind, "check": self.check, "message": self.message}
        if self.game is not None:
            out["game"] = self.game
        return out


@dataclass(frozen=True)
class Report:
    findings: tuple[Finding, ...]
    tree_size: int                # the head kept after the run
    previous_tree_size: int
    entries_read: int
    games: dict                   # {"logged", "sampled", "receipts", "replayed", "unverifiable"}
    receipts: dict                # {"given", "checked", "due", "kept"}
    heads_compared: int

    @property
    def ok(self) -> bool:
        return not self.findings

    def as_dict(self) -> dict:
        return {"ok": self.ok, "tree_size": self.tree_size, "previous_tree_size": self.previous_tree_size,
                "entries_read": self.entries_read, "games_checked": dict(self.games),
                "receipts": dict(self.receipts), "heads_compared": self.heads_compared,
                "findings": [f.as_dict() for f in self.findings]}


def new_state() -> dict:
    return {"format": STATE_FORMAT, "keys": [], "tree_head": None, "frontier": [], "games": {},
            "first_heads": {}, "runs": 0}


def load_state(obj: Optional[dict]) -> dict:
    """A state read from a file (None: a first run). Refuses what is not a monitor's state."""
    if obj is None:
        return new_state()
    if not isinstance(obj, dict) or obj.get("format") != STATE_FORMAT:
        raise ValueError(f"not a monitor state of format {STATE_FORMAT}")
    state = new_state()
    state.update(obj)
    return state


# --- the right edge of a Merkle tree -----------------------------------------------------

def frontier_append(frontier: list[bytes], size: int, leaf_hash: bytes) -> list[bytes]:
    """The right edge of a tree of `size` leaves (the roots of its complete subtrees, largest
    first: one per bit of `size`) after one more leaf. RFC 9162's tree is the left-balanced
    one, so merging equal subtrees from the right is exactly its hashing."""
    out = list(frontier)
    node, carry = leaf_hash, size
    while carry & 1:
        node = merkle.node_hash(out.pop(), node)
        carry >>= 1
    out.append(node)
    return out


def frontier_root(frontier: Sequence[bytes]) -> bytes:
    """MTH of the tree whose right edge this is (the empty tree: SHA-256 of nothing)."""
    if not frontier:
        return merkle.EMPTY_ROOT
    node = frontier[-1]
    for left in reversed(frontier[:-1]):
        node = merkle.node_hash(left, node)
    return node


# --- small readers ---------------------------------------------------------------------

def _head_problem(head) -> Optional[str]:
    if not isinstance(head, dict) or head.get("format") != STH_FORMAT:
        return f"not a {STH_FORMAT}"
    size, root, when = head.get("tree_size"), head.get("root_hash"), head.get("timestamp")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return "tree_size is not a count"
    if not isinstance(when, int) or isinstance(when, bool):
        return "timestamp is not an integer"
    if not isinstance(root, str) or len(root) != 64:
        return "root_hash is not 32 bytes of hex"
    try:
        bytes.fromhex(root)
    except ValueError:
        return "root_hash is not hex"
    return None


def _leaf_hash(leaf) -> Optional[bytes]:
    """The leaf's hash, or None when it is not exactly {game, head, version}."""
    if not isinstance(leaf, dict) or set(leaf) != {"game", "head", "version"}:
        return None
    if not isinstance(leaf["game"], str) or not isinstance(leaf["head"], str) \
            or not isinstance(leaf["version"], int) or isinstance(leaf["version"], bool):
        return None
    try:
        return merkle.leaf_hash(canonical_bytes(leaf))
    except ValueError:
        return None


def _receipt_problem(receipt, keys: list) -> Optional[str]:
    if not isinstance(receipt, dict) or receipt.get("format") != RECEIPT_FORMAT:
        return f"not a {RECEIPT_FORMAT}"
    if not isinstance(receipt.get("game"), str) or not isinstance(receipt.get("head"), str):
        return "no game and head"
    if not all(isinstance(receipt.get(k), int) and not isinstance(receipt.get(k), bool)
               for k in ("version", "time", "include_by")):
        return "version, time and include_by must be integers"
    try:
        verify_signed(receipt, keys)
    except SignatureError as err:
        return str(err)
    except (KeyError, TypeError, ValueError) as err:
        return f"malformed ({err})"
    return None


def _span(receipt: dict) -> str:
    return f"receipt for version {receipt.get('version')} (include_by {receipt.get('include_by')})"


@dataclass
class _Tally:
    findings: list = field(default_factory=list)
    games: dict = field(default_factory=lambda: {"logged": 0, "sampled": 0, "receipts": 0, "replayed": 0,
                                                 "unverifiable": 0})
    receipts: dict = field(default_factory=lambda: {"given": 0, "checked": 0, "due": 0, "kept": 0})
    entries_read: int = 0
    heads_compared: int = 0

    def add(self, kind: str, check: str, message: str, game: Optional[str] = None) -> None:
        self.findings.append(Finding(kind, check, message, game))


# --- the monitor --------------------------------------------------------------------------

class Monitor:
    """One monitor's runs against one API. `state` is the JSON-able dict a run reads and
    updates in place (save it after `run`); `sample`: how many older games each run checks
    again, drawn with `rng`."""

    def __init__(self, get: Getter, state: Optional[dict] = None, sample: int = 10,
                 rng: Optional[random.Random] = None):
        self.get = get
        self.state = load_state(state)
        self.sample = sample
        self.rng = rng or random.Random()

    # --- plumbing -----------------------------------------------------------------------
    def _json(self, path: str, allow: Iterable[int] = ()) -> tuple[int, Any]:
        status, body = self.get(path)
        if status == 200 or status in allow:
            return status, body
        raise MonitorError(f"GET {path}: answered {status}")

    @property
    def keys(self) -> list[dict]:
        return self.state["keys"]

    def _kept_head(self) -> Optional[dict]:
        return self.state["tree_head"]

    def _kept_size(self) -> int:
        head = self._kept_head()
        return head["tree_size"] if head else 0

    # --- a run ----------------------------------------------------------------------------
    def run(self, receipts: Iterable[dict] = (), peers: Iterable[dict] = (),
            bundles: Iterable[dict] = ()) -> Report:
        """One run (module docstring). `receipts`: receipts to hold the service to; `peers`:
        other monitors' states; `bundles`: dispute bundles (their receipts and tree heads
        count as given)."""
        kept = self.state
        self.state = copy.deepcopy(kept)      # a run that stops half way changes nothing
        try:
            return self._run(list(receipts), list(peers), [b for b in bundles if isinstance(b, dict)])
        except BaseException:
            self.state = kept
            raise

    def _run(self, receipts: list, peers: list, bundles: list) -> Report:
        tally = _Tally()
        before = self._kept_size()
        receipts = receipts + [r for b in bundles for r in (b.get("receipts") or [])]
        self._check_keys(tally)
        new_entries = self._advance(tally)
        logged = list(dict.fromkeys(e["leaf"]["game"] for e in new_entries))
        fresh = set(logged)
        older = [g for g in self.state["games"] if g not in fresh]
        sampled = self.rng.sample(older, min(self.sample, len(older))) if self.sample > 0 else []
        good_receipts = self._signed_receipts(receipts, tally)
        self._check_games(logged, sampled, good_receipts, tally)
        self._check_promises(good_receipts, tally)
        for peer in peers:
            self._compare(peer.get("tree_head") if isinstance(peer, dict) else None, "peer", tally)
        for bundle in bundles:
            for head in [bundle.get("tree_head")] + list(bundle.get("tree_heads") or []):
                self._compare(head, "bundle", tally)
        self.state["runs"] = int(self.state.get("runs") or 0) + 1
        return Report(tuple(tally.findings), self._kept_size(), before, tally.entries_read, tally.games,
                      tally.receipts, tally.heads_compared)

    # --- 1. keys ----------------------------------------------------------------------------
    def _check_keys(self, tally: _Tally) -> None:
        _, body = self._json("/v1/keys")
        listed = body.get("keys") if isinstance(body, dict) else None
        if not isinstance(listed, list):
            raise MonitorError("GET /v1/keys: no list of keys")
        now = {k.get("key_id"): k for k in listed if isinstance(k, dict)}
        kept = []
        for known in self.keys:
            kid = known["key_id"]
            found = now.get(kid)
            if found is None:
                tally.add(KEY_CHANGED, "keys", f"key {kid} is no longer listed by GET /v1/keys "
                          "(what it signed can no longer be checked against the service's own list)")
            elif found.get("public_key") != known.get("public_key"):
                tally.add(KEY_CHANGED, "keys", f"key {kid} is listed with another public key than before")
            elif found.get("valid_from") != known.get("valid_from"):
                tally.add(KEY_CHANGED, "keys", f"key {kid}: valid_from changed from {known.get('valid_from')} "
                          f"to {found.get('valid_from')}")
            elif known.get("valid_until") is not None and found.get("valid_until") != known.get("valid_until"):
                tally.add(KEY_CHANGED, "keys", f"key {kid}: valid_until changed from {known.get('valid_until')} "
                          f"to {found.get('valid_until')}")
            elif known.get("valid_until") is None and found.get("valid_until") is not None:
                known = {**known, "valid_until": found["valid_until"]}   # a rotation ended it
            kept.append(known)   # the first public key seen stays the one trusted
        seen = {k["key_id"] for k in kept}
        for kid, found in now.items():
            if kid not in seen and isinstance(kid, str):
                kept.append(dict(found))
        self.state["keys"] = kept

    # --- 1 and 2. the tree head and the new leaves -----------------------------------------
    def _advance(self, tally: _Tally) -> list[dict]:
        """Check the latest head against the kept one and read the leaves in between; adopt
        it only when everything holds. The new entries (empty when it was not adopted)."""
        status, head = self._json("/v1/log/tree-head", allow=(404,))
        kept = self._kept_head()
        if status == 404:
            if kept is not None:
                tally.add(FORK, "tree_head", f"the log has no tree head any more; this monitor kept one of size "
                          f"{kept['tree_size']}")
            return []
        problem = _head_problem(head)
        if problem is None:
            try:
                verify_signed(head, self.keys)
            except SignatureError as err:
                problem = str(err)
        if problem is not None:
            tally.add(BAD_SIGNATURE, "tree_head", f"the latest tree head does not verify: {problem}")
            return []
        size, root = head["tree_size"], bytes.fromhex(head["root_hash"])
        if kept is not None and not self._extends(kept, head, tally, "consistency"):
            return []
        entries = self._read_entries(self._kept_size(), size, tally)
        if entries is None:
            return []
        frontier = [bytes.fromhex(h) for h in self.state["frontier"]]
        at = self._kept_size()
        for entry in entries:
            frontier = frontier_append(frontier, at, _leaf_hash(entry["leaf"]))
            at += 1
        if frontier_root(frontier) != root:
            tally.add(FORK, "entries", f"the leaves served for the tree of size {size} do not hash to its signed "
                      "root: the log shown is not the tree that was signed")
            return []
        self._remember(entries, size)
        self.state["frontier"] = [h.hex() for h in frontier]
        self.state["tree_head"] = head
        tally.entries_read = len(entries)
        return entries

    def _extends(self, kept: dict, head: dict, tally: _Tally, check: str) -> bool:
        """Whether `head` is the kept head or a successor of it (a fork is recorded if not)."""
        old, new = kept["tree_size"], head["tree_size"]
        if new < old:
            tally.add(FORK, check, f"the latest tree head has {new} leaves; this monitor kept one of {old} "
                      "(a log only grows)")
            return False
        if new == old:
            if head["root_hash"] != kept["root_hash"]:
                tally.add(FORK, check, f"two signed tree heads of size {new} with different roots")
                return False
            return True
        if not self._consistent(old, bytes.fromhex(kept["root_hash"]), new, bytes.fromhex(head["root_hash"])):
            tally.add(FORK, check, f"no valid consistency proof from the kept tree of size {old} to the latest "
                      f"of size {new}: the earlier tree is not a prefix of the later one")
            return False
        return True

    def _consistent(self, first: int, first_root: bytes, second: int, second_root: bytes) -> bool:
        """A consistency proof from the server between two roots verifies (RFC 9162 §2.1.4.2).
        A refusal (the server has no tree of that size) proves nothing: not consistent."""
        if first == second:
            return first_root == second_root
        if first == 0:
            return True
        status, body = self._json(f"/v1/log/consistency?first={first}&second={second}", allow=(400, 404, 422))
        if status != 200 or not isinstance(body, dict) or not isinstance(body.get("proof"), list):
            return False
        try:
            proof = [bytes.fromhex(h) for h in body["proof"]]
        except (TypeError, ValueError):
            return False
        return merkle.verify_consistency(first, second, first_root, second_root, proof)

    def _read_entries(self, start: int, end: int, tally: _Tally) -> Optional[list[dict]]:
        out: list[dict] = []
        at = start
        while at < end:
            stop = min(at + PAGE, end)
            status, body = self._json(f"/v1/log/entries?start={at}&end={stop}", allow=(400, 422))
            page = body.get("entries") if status == 200 and isinstance(body, dict) else None
            if not page:
                tally.add(FORK, "entries", f"the log serves no leaves from index {at}, though its signed head has "
                          f"{end}")
                return None
            for entry in page:
                if not isinstance(entry, dict) or entry.get("index") != at or _leaf_hash(entry.get("leaf")) is None:
                    tally.add(FORK, "entries", f"leaf {at} is missing or malformed in GET /v1/log/entries")
                    return None
                out.append(entry)
                at += 1
                if at == stop:
                    break
        return out

    def _remember(self, entries: list[dict], size: int) -> None:
        """Keep each leaf under its game, with the size of the first head that held it: the
        end of its batch (the leaves a sequencer pass added share their `sequenced_at`; the
        head's size ends the last batch). Only a hint: a promise is judged on that head,
        fetched and proved consistent when needed."""
        games = self.state["games"]
        batch_end = size
        ends: list[int] = [0] * len(entries)
        for position in range(len(entries) - 1, -1, -1):
            ends[position] = batch_end
            if position and entries[position - 1].get("sequenced_at") != entries[position].get("sequenced_at"):
                batch_end = entries[position]["index"]
        for entry, end in zip(entries, ends):
            leaf = entry["leaf"]
            games.setdefault(leaf["game"], []).append([entry["index"], leaf["version"], leaf["head"], end])

    # --- 3 and 4. games and receipts -----------------------------------------------------
    def _signed_receipts(self, receipts: list, tally: _Tally) -> list[dict]:
        good = []
        seen = set()
        for receipt in receipts:
            tally.receipts["given"] += 1
            problem = _receipt_problem(receipt, self.keys)
            if problem is not None:
                game = receipt.get("game") if isinstance(receipt, dict) else None
                tally.add(BAD_SIGNATURE, "receipt", f"a receipt does not verify: {problem}",
                          game if isinstance(game, str) else None)
                continue
            key = (receipt["game"], receipt["version"], receipt["head"])
            if key not in seen:
                seen.add(key)
                good.append(receipt)
        return good

    def _check_games(self, logged: list[str], sampled: list[str], receipts: list[dict], tally: _Tally) -> None:
        by_game: dict[str, list[dict]] = {}
        for receipt in receipts:
            by_game.setdefault(receipt["game"], []).append(receipt)
        order = list(dict.fromkeys([*logged, *sampled, *by_game]))
        logged_set, sampled_set = set(logged), set(sampled)
        for game in order:
            source = "logged_game" if game in logged_set else "sampled_game" if game in sampled_set else "receipt"
            tally.games["logged" if game in logged_set else "sampled" if game in sampled_set else "receipts"] += 1
            self._check_game(game, source, by_game.get(game, []), tally)

    def _check_game(self, game: str, source: str, receipts: list[dict], tally: _Tally) -> None:
        path = f"/v1/games/{quote(game, safe='')}"   # a leaf's game is the server's word: quoted
        status, summary = self._json(path, allow=(404,))
        logged = self.state["games"].get(game, [])
        if status == 404:
            what = (f"{len(logged)} checkpoint(s) in the log" if logged else "") + \
                   (" and " if logged and receipts else "") + (f"{len(receipts)} signed receipt(s)" if receipts else "")
            tally.add(DELETED, source, f"GET /v1/games/{game} answers 404, though the service signed {what}", game)
            return
        if not isinstance(summary, dict) or not isinstance(summary.get("version"), int):
            raise MonitorError(f"GET /v1/games/{game}: no version")
        _, body = self._json(f"{path}/events")
        hashes = self._hashes(body, summary)
        current = summary["version"]
        wrong = []
        for index, version, head, _ in logged:
            problem = self._at(hashes, current, version, head)
            if problem == "unknown":
                tally.games["unverifiable"] += 1
            elif problem:
                wrong.append(("checkpoint", f"leaf {index}: {problem}"))
        for receipt in receipts:
            problem = self._at(hashes, current, receipt["version"], receipt["head"])
            if problem == "unknown":
                tally.games["unverifiable"] += 1
            elif problem:
                wrong.append(("receipt", f"the signed {_span(receipt)}: {problem}"))
        for what, message in wrong:
            tally.add(REWRITTEN, source if what == "checkpoint" else "receipt",
                      f"game {game}: {message}", game)
        if not wrong and summary.get("status") in ENDED:
            _, report = self._json(f"{path}/verify")
            tally.games["replayed"] += 1
            if not isinstance(report, dict) or report.get("ok") is not True:
                divergence = report.get("first_divergence") if isinstance(report, dict) else None
                tally.add(REWRITTEN, source, f"game {game}: its stored log does not re-run (GET /verify: "
                          f"{divergence or 'not ok'})", game)

    @staticmethod
    def _hashes(body, summary: dict) -> dict[int, str]:
        """version -> hash as a spectator sees them: each shown event's hash, a hidden event's
        as its successor's prev_hash, and the current head at the current version."""
        hashes: dict[int, str] = {}
        events = body.get("events") if isinstance(body, dict) else None
        for event in events or []:
            if not isinstance(event, dict) or not isinstance(event.get("version"), int):
                continue
            if isinstance(event.get("hash"), str):
                hashes[event["version"]] = event["hash"]
            if isinstance(event.get("prev_hash"), str) and event["version"] > 1:
                hashes.setdefault(event["version"] - 1, event["prev_hash"])
        if isinstance(summary.get("head"), str):
            hashes.setdefault(summary["version"], summary["head"])
        return hashes

    @staticmethod
    def _at(hashes: dict[int, str], current: int, version: int, head: str) -> str:
        """"" when the log holds `head` at `version`; "unknown" when it hides that event;
        else what is wrong."""
        if version > current:
            return f"the game is at version {current}, but version {version} was signed"
        found = hashes.get(version)
        if found is None:
            return "unknown"
        if found != head:
            return f"its event {version} has hash {found[:16]}…, not the signed {head[:16]}…"
        return ""

    def _check_promises(self, receipts: list[dict], tally: _Tally) -> None:
        head = self._kept_head()
        if head is None:
            return
        for receipt in receipts:
            tally.receipts["checked"] += 1
            if head["timestamp"] <= receipt["include_by"]:
                continue   # not due: the log has not published a head past include_by yet
            tally.receipts["due"] += 1
            rows = [row for row in self.state["games"].get(receipt["game"], []) if row[1] >= receipt["version"]]
            if any(self._published_by(row, receipt["include_by"]) for row in rows):
                tally.receipts["kept"] += 1
                continue
            tally.add(MISSED_PROMISE, "promise", f"game {receipt['game']}: the signed {_span(receipt)} promised a "
                      f"checkpoint at version {receipt['version']} or later in a tree head signed by include_by; the "
                      f"log (tree head of size {head['tree_size']}, signed at {head['timestamp']}) has none",
                      receipt["game"])

    def _published_by(self, row: list, include_by: int) -> bool:
        """Whether the first head that held this leaf, signed and proved a prefix of the kept
        head, was signed by `include_by`."""
        index, _, _, size = row
        when = self._first_head_time(size)
        return when is not None and index < size and when <= include_by

    def _first_head_time(self, size: int) -> Optional[int]:
        cache = self.state["first_heads"]
        if str(size) in cache:
            return cache[str(size)]
        kept = self._kept_head()
        if kept["tree_size"] == size:
            when = kept["timestamp"]
        else:
            status, head = self._json(f"/v1/log/tree-heads?size={size}", allow=(404, 400, 422))
            if status != 200 or _head_problem(head) is not None or head["tree_size"] != size:
                return None
            try:
                verify_signed(head, self.keys)
            except SignatureError:
                return None
            if size > kept["tree_size"] or not self._consistent(size, bytes.fromhex(head["root_hash"]),
                                                                 kept["tree_size"], bytes.fromhex(kept["root_hash"])):
                return None
            when = head["timestamp"]
        cache[str(size)] = when
        return when

    # --- 5. other heads ------------------------------------------------------------------
    def _compare(self, other, source: str, tally: _Tally) -> None:
        mine = self._kept_head()
        if other is None or mine is None:
            return
        problem = _head_problem(other)
        if problem is None:
            try:
                verify_signed(other, self.keys)
            except SignatureError as err:
                problem = str(err)
        if problem is not None:
            tally.add(BAD_SIGNATURE, source, f"a tree head from a {source} does not verify: {problem}")
            return
        tally.heads_compared += 1
        a, b = (other, mine) if other["tree_size"] <= mine["tree_size"] else (mine, other)
        if a["tree_size"] == b["tree_size"]:
            consistent = a["root_hash"] == b["root_hash"]
        else:
            consistent = self._consistent(a["tree_size"], bytes.fromhex(a["root_hash"]),
                                          b["tree_size"], bytes.fromhex(b["root_hash"]))
        if not consistent:
            tally.add(FORK, source, f"the {source}'s tree head of size {other['tree_size']} (signed at "
                      f"{other['timestamp']}) and this monitor's of size {mine['tree_size']} are not one log: "
                      "the service showed them different trees")



# --- the command line's side (`speculation audit`, service/cli.py) -------------------------

class Unreachable(MonitorError):
    """The API (or a peer's URL) cannot be reached at all."""


def http_getter(api: str, timeout: float = 30.0) -> Getter:
    """GET against a live API with httpx: (status, JSON or None)."""
    import httpx

    client = httpx.Client(base_url=api.rstrip("/"), timeout=timeout, headers={"Accept": "application/json"})

    def get(path: str) -> tuple[int, Any]:
        try:
            response = client.get(path)
        except httpx.HTTPError as err:
            raise Unreachable(f"cannot reach the API at {api}: {err}") from None
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, None
    return get


def read_json_file(path: str) -> Any:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def read_state(path: str) -> dict:
    """The state file (a first run when it does not exist yet)."""
    try:
        return load_state(read_json_file(path))
    except FileNotFoundError:
        return new_state()


def save_state(path: str, state: dict) -> None:
    """Write the state whole or not at all (a temporary file beside it, renamed)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".monitor-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(state, handle, separators=(",", ":"), sort_keys=True)
            handle.write("\n")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read_peer(source: str) -> dict:
    """Another monitor's state: a file, or a URL that serves one."""
    if source.startswith(("http://", "https://")):
        import httpx

        try:
            found = httpx.get(source, timeout=30).json()
        except (httpx.HTTPError, ValueError) as err:
            raise Unreachable(f"peer {source}: {err}") from None
    else:
        found = read_json_file(source)
    if not isinstance(found, dict) or found.get("format") != STATE_FORMAT:
        raise ValueError(f"peer {source}: not a monitor state of format {STATE_FORMAT}")
    return found


def read_receipts(path: str) -> list[dict]:
    """Receipts kept in a file: one JSON receipt a line (as `speculation play` keeps them), or
    a JSON list of them."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    try:
        found = json.loads(text)
        if isinstance(found, list):
            return [r for r in found if isinstance(r, dict)]
    except ValueError:
        pass
    out = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def audit(get: Getter, state_path: str, peers: Sequence[str] = (), bundles: Sequence[str] = (),
          receipt_files: Sequence[str] = (), kept: Sequence[dict] = (), sample: int = 10) -> Report:
    """One run of `speculation audit`: the state read from `state_path`, the run, the state
    saved. Raises MonitorError (the API failed), OSError / ValueError (a file is not what it
    should be) before anything is saved."""
    state = read_state(state_path)
    peer_states = [read_peer(p) for p in peers]
    bundle_objs = [read_json_file(b) for b in bundles]
    for path, found in zip(bundles, bundle_objs):
        if not isinstance(found, dict) or found.get("format") != "speculation-bundle/1":
            raise ValueError(f"{path}: not a dispute bundle (speculation-bundle/1)")
    receipts = [r for f in receipt_files for r in read_receipts(f)] + list(kept)
    monitor = Monitor(get, state, sample=sample)
    report = monitor.run(receipts=receipts, peers=peer_states, bundles=bundle_objs)
    save_state(state_path, monitor.state)
    return report
