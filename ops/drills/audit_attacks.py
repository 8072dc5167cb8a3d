"""Operator-attack drill: an operator with full Redis access (and the signing key file: assume
the worst) attacks the audit trail; every attempt must be caught by a monitor
(service/audit/monitor.py, `speculation audit`) or by the offline check of a player's dispute
bundle (projections/audit_verify.py).

The service runs in process (the Flask test client as the API, the sequencer's passes run by
hand right after each command, bots' jobs drained by hand) on a fresh Redis each round: a
private redis-server flushed between rounds (`--redis real`), or a fakeredis server
(`--redis fake`, the suite's short form). Players are the API's own clients: speculation, one
deal, seat 0 a person who keeps every signed receipt, two random bots. The kinds:

- `rewritten`: a logged game's whole stream replaced in Redis by another valid game (another
  seed, another commitment, the chain recomputed: a game played on the operator's scratch
  Redis with the same seats, its keys copied over the victim's, the seat's token kept so the
  player can still ask for its bundle). Half are attacked before the monitor's next run
  (caught as a game logged since its last run), half after it (caught by the sample, the
  player's receipts, and the player's bundle: its kept receipts and the log's checkpoints no
  longer match the log).
- `deleted`: a logged game's keys deleted (the same two timings): GET /v1/games/{id} is 404.
- `forked_head`: the operator shows monitor A a second tree, without one leaf (never the
  last: without it the tree is the real one's prefix, a late view, not a fork), its heads
  re-signed with the service's key, while monitor B sees the real log; mostly a leaf A has
  not seen yet (A's run on the fork holds), one in ten a leaf A had (A's own consistency check
  fails at once, and A keeps its head). Caught when B compares A's head, and by A's next run
  on the real log.
- `dropped_checkpoint`: a game moves but its checkpoint stays out of the log: half hidden
  from the sequencer (the operator's sequencer skips the game), half logged, seen by the
  monitor, then deleted with every head after it rebuilt and re-signed (the same
  timestamps). Once a tree head is past the receipt's include_by: caught by the player's
  receipts (missed promise), the player's bundle, and, for the rebuilt log, as a fork by the
  monitor holding the earlier head.
- `control`: the same rounds with no attack; any finding, or a bundle that fails, is a false
  positive (a failure of the drill).

Judged: every kind caught in 100 % of its attempts, no false finding anywhere (a finding that
names no victim in an attack round counts as false too).

    python -m ops.drills.audit_attacks --attempts 1000        # the full drill (make audit-attacks)
    python -m ops.drills.audit_attacks --attempts 20 --redis fake
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional
from urllib.parse import parse_qs, urlsplit

from events import merkle
from events.store import keys as game_keys
from events.transparency import KEYS as TLOG_KEYS, Checkpoint, sequence, tree_head_payload
from projections.templates import fill_template
from service.audit.monitor import FORK, MISSED_PROMISE, Monitor
from workers.memory_jobs import MemoryJobs

from . import _kit

KINDS = ("rewritten", "deleted", "forked_head", "dropped_checkpoint", "control")
GAME, OPTIONS = "speculation", {"deals": 1}
SEATS = [{}, {"bot": "random"}, {"bot": "random"}]
INCLUDE_WITHIN_MS = 1000        # include_by = time + 1 s: a promise falls due within the round
ROUND = 50                      # attempts per round (each round on a fresh Redis)
SAMPLE = 10                     # older games the long-running monitor checks again each run
# The bundle checks whose failure convicts (or shows) the attack; `keys`/`format` failing
# would be a broken bundle, not a catch.
BUNDLE_CATCHES = {"receipt_not_in_log", "checkpoints", "seed_commitment", "inclusion_promise_broken", "fork"}


# --- the service, in process -------------------------------------------------------------

class OperatorIndex:
    """The index the drill's sequencer passes read: the games touched since the previous pass
    (the drill runs each pass right after its commands, in one thread, so nothing is in flight
    and the real sequencer's 30 s look back would only cost time), minus the games the
    operator hides from the sequencer."""

    MARGIN = 0.5

    def __init__(self, index):
        self.index = index
        self.hidden: set[str] = set()
        self.last = 0.0

    def touched(self, since: float, until: float, limit: int):
        rows = self.index.touched(max(since, self.last - self.MARGIN), until, limit)
        self.last = until
        return [(game, at) for game, at in rows if game not in self.hidden]


class Stack:
    """One service on one Redis: the app (its test client is the API), its core, the jobs
    drained by hand, the sequencer's passes run by hand."""

    def __init__(self, client, include_within_ms: int = INCLUDE_WITHIN_MS):
        self.client = client
        self.include_within_ms = include_within_ms
        self.index: Optional[OperatorIndex] = None
        self.restart()

    def restart(self) -> None:
        """What an operator does after editing Redis: start the processes again, so no cache
        (a session, a seed, the log's tree) remembers what was there."""
        hidden = self.index.hidden if self.index is not None else set()
        self.jobs = MemoryJobs()
        self.app = _kit.make_app(self.client, jobs=self.jobs, AUDIT_INCLUDE_WITHIN=self.include_within_ms)
        self.core = self.app.extensions["games"]
        self.http = self.app.test_client()
        self.index = OperatorIndex(self.core.index)
        self.index.hidden = hidden
        self.has_bundles = any(r.rule == "/v1/games/<game_id>/bundle" for r in self.app.url_map.iter_rules())

    def get(self, path: str, token: Optional[str] = None):
        response = self.http.get(path, headers=_kit.auth(token))
        return response.status_code, response.get_json(silent=True)

    def post(self, path: str, body: dict, token: Optional[str] = None, key: Optional[str] = None) -> dict:
        response = self.http.post(path, json=body, headers=_kit.auth(token, key))
        if response.status_code >= 300:
            raise AssertionError(f"POST {path}: {response.status_code} {response.get_json(silent=True)}")
        return response.get_json()

    def sequence(self):
        self.jobs.drain(self.core)
        return sequence(self.core.transparency, self.core.store, self.index, self.core.keys.sign, owner="drill")

    def monitor(self, state: Optional[dict] = None, sample: int = SAMPLE, seed: int = 0) -> Monitor:
        return Monitor(self.get, state, sample=sample, rng=random.Random(seed))


@dataclass
class Player:
    """Seat 0 of one game: its token and every signed receipt its commands got."""

    game: str
    token: str
    receipts: list = field(default_factory=list)
    active: bool = True


def open_game(stack: Stack, rng: random.Random, moves: int) -> Player:
    """A game created and claimed through the API, then up to `moves` actions of seat 0 (the
    bots' turns between them), a sequencer pass after each command (an honest service logs a
    move well within include_by)."""
    created = stack.post("/v1/games", {"type": GAME, "options": OPTIONS, "seats": SEATS})
    stack.sequence()
    claimed = stack.post(f"/v1/games/{created['game_id']}/seats/0", {"name": "p0"})
    player = Player(created["game_id"], claimed["token"], [created["receipt"], claimed["receipt"]])
    stack.sequence()
    act(stack, player, rng, moves)
    return player


def act(stack: Stack, player: Player, rng: random.Random, moves: int) -> int:
    """Up to `moves` actions of seat 0, each followed by the bots' turns and a pass. Returns
    how many it played (fewer when the game ended)."""
    played = 0
    while played < moves:
        stack.jobs.drain(stack.core)
        _, view = stack.get(f"/v1/games/{player.game}/view", player.token)
        player.active = view["status"] == "active"
        if not player.active or not view["legal_actions"]:
            break
        action = fill_template(rng.choice(view["legal_actions"]), rng)
        answer = stack.post(f"/v1/games/{player.game}/actions", {"action": action, "expected_version": view["version"]},
                            player.token, key=f"a{view['version']}")
        player.receipts.append(answer["receipt"])
        stack.sequence()
        played += 1
    stack.jobs.drain(stack.core)
    _, view = stack.get(f"/v1/games/{player.game}/view", player.token)
    player.active = view["status"] == "active" and bool(view["legal_actions"])
    return played


def playable_game(stack: Stack, rng: random.Random, moves: int) -> Player:
    """A game whose seat 0 is still to act after its first moves (a one-deal speculation can
    end in its opening draws)."""
    for _ in range(50):
        player = open_game(stack, rng, moves)
        if player.active:
            return player
    raise AssertionError("no game left active in 50 tries")


def some_games(stack: Stack, rng: random.Random, n: int) -> list[Player]:
    """n games: some just claimed, some a few moves in, a third played to the end."""
    return [open_game(stack, rng, 10_000 if rng.random() < 1 / 3 else rng.randint(0, 3)) for _ in range(n)]


# --- the operator's attacks ------------------------------------------------------------

class Scratch:
    """The operator's scratch service: games played with the victims' seats, whose keys are
    then copied over the victims'."""

    def __init__(self):
        self.client = _kit.fake_client()
        self.service = _kit.make_service(self.client, MemoryJobs())

    def donor(self, rng: random.Random) -> str:
        session = self.service.create(GAME, OPTIONS, SEATS, seed=f"{rng.getrandbits(256):064x}")
        self.service.claim(session.game_id, 0, "p0")
        if rng.random() < 0.5:
            _kit.play_out(self.service, self.service.jobs, session.game_id, rng)
        else:
            self.service.jobs.drain(self.service)
        return session.game_id


def rewrite(stack: Stack, scratch: Scratch, victim: str, rng: random.Random) -> None:
    """The victim's stream, meta and idempotency keys replaced by the donor's (bodies name no
    game id, so nothing inside needs rewriting); the victim seat's token kept."""
    donor = scratch.donor(rng)
    src, dst = game_keys(donor), game_keys(victim)
    entries = scratch.client.xrange(src["events"])
    meta = {k: v for k, v in scratch.client.hgetall(src["meta"]).items() if not k.startswith(b"token:")}
    meta.update({k: v for k, v in stack.client.hgetall(dst["meta"]).items() if k.startswith(b"token:")})
    idem = scratch.client.hgetall(src["idem"])
    pipe = stack.client.pipeline(transaction=True)
    pipe.delete(dst["events"], dst["meta"], dst["idem"], dst["snap"])
    for entry_id, fields in entries:
        pipe.xadd(dst["events"], fields, id=entry_id)
    pipe.hset(dst["meta"], mapping=meta)
    if idem:
        pipe.hset(dst["idem"], mapping=idem)
    pipe.execute()


def delete(stack: Stack, victim: str) -> None:
    stack.client.delete(*game_keys(victim).values())


def drop_leaves(stack: Stack, drop: set[int]) -> None:
    """The log rebuilt without the leaves `drop`: every batch after the first dropped leaf
    re-hashed and its head re-signed (with its old timestamp) at its new size, all the {tlog}
    keys rewritten in one transaction."""
    client, sign = stack.client, stack.core.keys.sign
    entries = [json.loads(e) for e in client.lrange(TLOG_KEYS["leaves"], 0, -1)]
    heads = [json.loads(h) for h in client.lrange(TLOG_KEYS["heads"], 0, -1)]
    tree = merkle.MerkleTree()
    new_entries, new_heads, checkpointed, game_leaves = [], [], {}, {}
    start = 0
    for head in heads:
        batch = [entries[i] for i in range(start, head["tree_size"]) if i not in drop]
        start = head["tree_size"]
        if not batch:
            continue
        for entry in batch:
            leaf = entry["leaf"]
            game_leaves.setdefault(leaf["game"], []).append(len(tree))
            checkpointed[leaf["game"]] = leaf["version"]
            tree.append(Checkpoint.of(leaf).leaf_hash())
        size = len(tree)
        new_entries += [{**entry, "tree_size": size} for entry in batch]
        new_heads.append(sign(tree_head_payload(size, tree.root(), head["timestamp"])))
    dump = lambda obj: json.dumps(obj, sort_keys=True, separators=(",", ":"))
    pipe = client.pipeline(transaction=True)
    pipe.delete(*(TLOG_KEYS[k] for k in ("hashes", "leaves", "heads", "head-at", "checkpointed", "game-leaves")))
    if new_entries:
        pipe.rpush(TLOG_KEYS["hashes"], *tree.leaves())
        pipe.rpush(TLOG_KEYS["leaves"], *(dump(e) for e in new_entries))
        pipe.rpush(TLOG_KEYS["heads"], *(dump(h) for h in new_heads))
        pipe.hset(TLOG_KEYS["head-at"], mapping={str(h["tree_size"]): dump(h) for h in new_heads})
        pipe.hset(TLOG_KEYS["checkpointed"], mapping=checkpointed)
        pipe.hset(TLOG_KEYS["game-leaves"], mapping={g: json.dumps(ix) for g, ix in game_leaves.items()})
    pipe.execute()


class ForkedView:
    """The API as the operator shows it to one monitor: the log without leaf `drop` (the
    leaves after it re-indexed, every head re-signed with the service's key at the timestamp
    of its last leaf), everything else the real API's answers."""

    def __init__(self, stack: Stack, drop: int):
        self.stack = stack
        tlog = stack.core.transparency
        real = tlog.entries(0, tlog.size())
        self.entries = [{**e, "index": i} for i, e in enumerate(x for x in real if x["index"] != drop)]
        self.tree = merkle.MerkleTree(Checkpoint.of(e["leaf"]).leaf_hash() for e in self.entries)
        self.latest = self._head(len(self.entries))

    def _head(self, size: int) -> dict:
        at = self.entries[size - 1]["sequenced_at"]
        return self.stack.core.keys.sign(tree_head_payload(size, self.tree.root(size), at))

    def get(self, path: str):
        parts = urlsplit(path)
        query = {k: int(v[0]) for k, v in parse_qs(parts.query).items() if v[0].isdigit()}
        size = len(self.entries)
        if parts.path == "/v1/log/tree-head":
            return 200, self.latest
        if parts.path == "/v1/log/tree-heads":
            return (200, self._head(query["size"])) if 1 <= query.get("size", 0) <= size else (404, None)
        if parts.path == "/v1/log/consistency":
            first, second = query["first"], query["second"]
            if not 1 <= first <= second <= size:
                return 422, {"error": {"code": "beyond_tree"}}
            return 200, {"first": first, "second": second,
                         "proof": [h.hex() for h in self.tree.consistency_proof(first, second)]}
        if parts.path == "/v1/log/entries":
            start, end = query["start"], min(query["end"], size)
            if start >= size:
                return 422, {"error": {"code": "beyond_tree"}}
            return 200, {"entries": self.entries[start:end]}
        return self.stack.get(path)


# --- checks ----------------------------------------------------------------------------

def bundle_failures(stack: Stack, player: Player, keys: list, known: list) -> Optional[set[str]]:
    """The failures of the player's seat bundle checked offline with the keys and heads the
    player kept (None: no bundle to check: the game is gone, or the service has no bundles)."""
    from projections.audit_verify import verify_bundle

    if not stack.has_bundles or stack.get(f"/v1/games/{player.game}")[0] == 404:
        return None        # (a deleted game's token is still in the token index: its bundle is a 403)
    sizes = ",".join(str(h["tree_size"]) for h in known)      # proofs from the heads the player kept
    status, bundle = stack.get(f"/v1/games/{player.game}/bundle?known={sizes}", player.token)
    if status != 200:
        raise AssertionError(f"GET bundle of {player.game}: {status} {bundle}")
    return set(verify_bundle(bundle, keys, known_heads=known, kept=player.receipts).failures)


@dataclass
class Tally:
    """One kind's figures: attempts, catches per channel, false findings."""

    attempts: int = 0
    caught: int = 0
    caught_by: Counter = field(default_factory=Counter)
    missed: list = field(default_factory=list)
    false_findings: list = field(default_factory=list)
    games: int = 0
    bundles_checked: int = 0

    def judge(self, attempt: str, channels: set[str]) -> None:
        self.attempts += 1
        self.caught_by.update(channels)
        if channels:
            self.caught += 1
        elif len(self.missed) < 10:
            self.missed.append(attempt)

    def false(self, where: str, findings: Iterable) -> None:
        for finding in findings:
            self.false_findings.append(f"{where}: {finding.kind} ({finding.check}) {finding.message}"[:300])

    def as_dict(self) -> dict:
        return {"attempts": self.attempts, "caught": self.caught,
                "rate": round(self.caught / self.attempts, 4) if self.attempts else None,
                "caught_by": dict(sorted(self.caught_by.items())), "missed": self.missed,
                "false_findings": len(self.false_findings), "false_examples": self.false_findings[:5],
                "games": self.games, "bundles_checked": self.bundles_checked}


def _by_game(report, victims: set[str], where: str, tally: Tally) -> dict[str, set[str]]:
    """{victim: {where:check}} of a report's findings; the rest counted false."""
    out: dict[str, set[str]] = {}
    for finding in report.findings:
        if finding.game in victims:
            out.setdefault(finding.game, set()).add(f"{where}:{finding.kind}:{finding.check}")
        else:
            tally.false(where, [finding])
    return out


def _merge(*maps: dict) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for found in maps:
        for game, channels in found.items():
            out.setdefault(game, set()).update(channels)
    return out


def _wait_past(receipts: Iterable[dict]) -> None:
    """Sleep until the wall clock is past every receipt's include_by."""
    due = max((r["include_by"] for r in receipts), default=0)
    while time.time() * 1000 <= due + 5:
        time.sleep(max(0.005, (due + 6) / 1000 - time.time()))


def _all_receipts(players: Iterable[Player]) -> list[dict]:
    return [r for p in players for r in p.receipts]


# --- the rounds --------------------------------------------------------------------------

def round_rewrite_or_delete(stack: Stack, kind: str, n: int, rng: random.Random, tally: Tally,
                            scratch: Scratch) -> None:
    victims = some_games(stack, rng, n)
    bystanders = some_games(stack, rng, max(2, n // 4))
    tally.games += len(victims) + len(bystanders)
    monitor = stack.monitor(seed=rng.getrandbits(32))
    fresh, settled = victims[: n // 2], victims[n // 2:]
    attack = (lambda v: rewrite(stack, scratch, v.game, rng)) if kind == "rewritten" else (lambda v: delete(stack, v.game))
    for victim in fresh:                 # after the log holds it, before the monitor's next run
        attack(victim)
    stack.restart()
    ids = {v.game for v in victims}
    first = _by_game(monitor.run(), ids, "monitor", tally)
    keys, known = copy.deepcopy(monitor.state["keys"]), [copy.deepcopy(monitor.state["tree_head"])]
    for victim in settled:               # after the monitor checked it
        attack(victim)
    stack.restart()
    for player in bystanders:            # the service goes on: new leaves for the next run
        act(stack, player, rng, 1)
    second = _by_game(monitor.run(), ids, "monitor", tally)
    own = stack.monitor(sample=0)        # the players' own check: their receipts
    players = _by_game(own.run(receipts=_all_receipts(victims + bystanders)), ids, "player", tally)
    found = _merge(first, second, players)
    for victim in victims:
        channels = set(found.get(victim.game, set()))
        failures = bundle_failures(stack, victim, keys, known)
        if failures is not None:
            tally.bundles_checked += 1
            channels |= {f"bundle:{f}" for f in failures & BUNDLE_CATCHES}
        timing = "fresh" if victim in fresh else "settled"
        tally.judge(f"{kind} {timing} {victim.game}", {f"{timing}/{c}" for c in channels})
    for player in bystanders:
        failures = bundle_failures(stack, player, keys, known)
        if failures is not None:
            tally.bundles_checked += 1
            if failures:
                tally.false_findings.append(f"bundle of bystander {player.game}: {sorted(failures)}")


def round_fork(stack: Stack, n: int, rng: random.Random, tally: Tally) -> None:
    some_games(stack, rng, 3)
    honest = stack.monitor(sample=0)
    _by_game(honest.run(), set(), "monitor B", tally)
    before = copy.deepcopy(honest.state)
    size_before = before["tree_head"]["tree_size"]
    tally.games += 3 + max(3, n // 5)
    some_games(stack, rng, max(3, n // 5))            # new leaves, not seen by A yet
    forks = []
    for k in range(n):
        size = stack.core.transparency.size()
        blatant = rng.random() < 0.1
        # A leaf with another after it: the tree without the last leaf is the real tree's
        # prefix, a late view rather than a fork (A's next run simply reads the leaf).
        drop = rng.randrange(0, size_before) if blatant else rng.randrange(size_before, size - 1)
        view = ForkedView(stack, drop)
        a = Monitor(view.get, copy.deepcopy(before), sample=0)
        on_fork = a.run()
        channels = set()
        if any(f.kind == FORK for f in on_fork.findings):
            channels.add("A's own run on the fork")
        tally.false("monitor A on the fork", [f for f in on_fork.findings if f.kind != FORK])
        forks.append((drop, blatant, a, channels))
    _by_game(honest.run(), set(), "monitor B", tally)
    for drop, blatant, a, channels in forks:
        compared = stack.monitor(copy.deepcopy(honest.state), sample=0).run(peers=[a.state])
        if any(f.kind == FORK and f.check == "peer" for f in compared.findings):
            channels.add("B compares A's head")
        tally.false("B compares", [f for f in compared.findings if f.kind != FORK])
        later = Monitor(stack.get, a.state, sample=0).run()
        if any(f.kind == FORK for f in later.findings):
            channels.add("A's next run on the real log")
        tally.false("A's next run", [f for f in later.findings if f.kind != FORK])
        tally.judge(f"fork without leaf {drop}" + (" (seen by A)" if blatant else ""), channels)


def round_drop(stack: Stack, n: int, rng: random.Random, tally: Tally) -> None:
    hidden = [playable_game(stack, rng, rng.randint(0, 2)) for _ in range(n - n // 2)]
    rebuilt = [playable_game(stack, rng, rng.randint(0, 2)) for _ in range(n // 2)]
    bystanders = some_games(stack, rng, max(2, n // 4))
    tally.games += n + len(bystanders)
    monitor = stack.monitor(seed=rng.getrandbits(32))
    _by_game(monitor.run(), set(), "monitor", tally)
    # The rebuilt victims move and are logged; the monitor sees the head that holds them.
    for victim in rebuilt:
        act(stack, victim, rng, 1)
    _by_game(monitor.run(), set(), "monitor", tally)
    keys, known = copy.deepcopy(monitor.state["keys"]), [copy.deepcopy(monitor.state["tree_head"])]
    dropped = {stack.core.transparency.leaf_indexes(v.game)[-1] for v in rebuilt}
    stack.index.hidden |= {v.game for v in hidden + rebuilt}
    for victim in hidden:                # the operator's sequencer skips them from now on
        act(stack, victim, rng, 1)
    drop_leaves(stack, dropped)
    stack.restart()
    victims = hidden + rebuilt
    _wait_past(_all_receipts(victims + bystanders))
    for player in bystanders:            # the service goes on: a head past every include_by
        act(stack, player, rng, 1)
    open_game(stack, rng, 0)
    ids = {v.game for v in victims}
    after = monitor.run()
    fork = any(f.kind == FORK for f in after.findings)
    tally.false("monitor", [f for f in after.findings if f.kind != FORK and f.game not in ids])
    own = stack.monitor(sample=0)
    players = _by_game(own.run(receipts=_all_receipts(victims + bystanders)), ids, "player", tally)
    for victim in victims:
        channels = {c for c in players.get(victim.game, set()) if MISSED_PROMISE in c}
        if fork and victim in rebuilt:
            channels.add("monitor:fork (it held a head with the leaf)")
        failures = bundle_failures(stack, victim, keys, known)
        if failures is not None:
            tally.bundles_checked += 1
            channels |= {f"bundle:{f}" for f in failures & BUNDLE_CATCHES}
        way = "hidden from the sequencer" if victim in hidden else "leaf deleted, heads rebuilt"
        tally.judge(f"{way} {victim.game}", {f"{way}/{c}" for c in channels})
    for player in bystanders:
        failures = bundle_failures(stack, player, keys, known)
        if failures is not None:
            tally.bundles_checked += 1
            # The rebuilt log does not extend the head the player kept: a fork (`fork`), or,
            # when the log is now shorter than that head, `known_heads` (it is later than the
            # bundle's). Both true: the operator did rebuild the log.
            if failures - {"fork", "known_heads"}:
                tally.false_findings.append(f"bundle of bystander {player.game}: {sorted(failures)}")


def round_control(stack: Stack, n: int, rng: random.Random, tally: Tally) -> None:
    players = some_games(stack, rng, n)
    tally.games += n
    monitor = stack.monitor(seed=rng.getrandbits(32))
    tally.false("monitor", monitor.run().findings)
    for player in players:
        act(stack, player, rng, 1)
    tally.false("monitor", monitor.run().findings)
    _wait_past(_all_receipts(players))
    open_game(stack, rng, 0)           # a head past every include_by: the promises are due
    tally.false("monitor", monitor.run().findings)
    own = stack.monitor(sample=0)
    report = own.run(receipts=_all_receipts(players), peers=[monitor.state])
    tally.false("player", report.findings)
    if report.receipts["due"] != report.receipts["checked"]:
        tally.false_findings.append(f"control: {report.receipts} (every receipt should be due)")
    keys, known = monitor.state["keys"], [monitor.state["tree_head"]]
    for player in players:
        failures = bundle_failures(stack, player, keys, known)
        if failures is not None:
            tally.bundles_checked += 1
            if failures:
                tally.false_findings.append(f"bundle of {player.game}: {sorted(failures)}")
    for player in players:
        tally.judge("control", {"no finding"})


# --- the drill ---------------------------------------------------------------------------

class _Counted(logging.Handler):
    """Counts the sequencer's own complaints (a game whose store is behind its last logged
    version: a rewrite to a shorter game) instead of printing one line per attempt."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.count = 0

    def emit(self, record) -> None:
        self.count += 1


@contextlib.contextmanager
def sequencer_complaints():
    logger = logging.getLogger("events.transparency")
    handler, propagate = _Counted(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


@contextlib.contextmanager
def redis_clients(kind: str):
    """A fresh, empty Redis client per round: a new fakeredis server, or our private
    redis-server flushed (never the shared one)."""
    if kind == "fake":
        yield _kit.fake_client
        return
    with _kit.private_redis() as server:
        client = _kit.redis_client(server.url)

        def fresh():
            client.flushdb()
            return client
        yield fresh
        client.close()


def run(attempts: int = 1000, seed: int = 1, redis: str = "real", kinds: Iterable[str] = KINDS,
        round_size: int = ROUND, echo: Callable[[str], None] = lambda m: None) -> dict:
    rng = random.Random(seed)
    scratch = Scratch()
    out: dict = {"attempts_per_kind": attempts, "redis": redis, "round_size": round_size,
                 "include_within_ms": INCLUDE_WITHIN_MS, "kinds": {}}
    with redis_clients(redis) as fresh, sequencer_complaints() as complaints:
        for kind in kinds:
            tally, started = Tally(), time.monotonic()
            while tally.attempts < attempts:
                n = min(round_size, attempts - tally.attempts)
                stack = Stack(fresh())
                if kind in ("rewritten", "deleted"):
                    round_rewrite_or_delete(stack, kind, max(n, 2), rng, tally, scratch)
                elif kind == "forked_head":
                    round_fork(stack, n, rng, tally)
                elif kind == "dropped_checkpoint":
                    round_drop(stack, max(n, 2), rng, tally)
                else:
                    round_control(stack, n, rng, tally)
                echo(f"{kind}: {tally.caught}/{tally.attempts} caught, {len(tally.false_findings)} false "
                     f"({time.monotonic() - started:.1f} s)")
            figures = tally.as_dict()
            figures["seconds"] = round(time.monotonic() - started, 1)
            out["kinds"][kind] = figures
    out["store_behind_log_logged"] = complaints.count
    out["bundles"] = Stack(_kit.fake_client()).has_bundles
    out["false_findings"] = sum(k["false_findings"] for k in out["kinds"].values())
    out["ok"] = out["false_findings"] == 0 and all(k["caught"] == k["attempts"] for k in out["kinds"].values())
    return out


def summary(fig: dict) -> str:
    rows = [f"{kind} {k['caught']}/{k['attempts']}" for kind, k in fig["kinds"].items()]
    return (f"caught: {', '.join(rows)}; false findings {fig['false_findings']} "
            f"({fig['redis']} Redis, {fig['seconds']} s)")


def main(argv=None) -> None:
    p = _kit.parser(__doc__, 1000, "unused (see --attempts)")
    p.add_argument("--attempts", type=int, default=1000, help="attempts per kind of attack (and control games)")
    p.add_argument("--redis", choices=("real", "fake"), default="real",
                   help="a private redis-server (real) or fakeredis (fake)")
    p.add_argument("--kinds", default=",".join(KINDS), help="the kinds to run, comma-separated")
    p.add_argument("--round", type=int, default=ROUND, help="attempts per round (each round on a fresh Redis)")
    args = p.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        p.error(f"unknown kinds: {', '.join(sorted(unknown))} (known: {', '.join(KINDS)})")

    def measure() -> dict:
        fig = run(args.attempts, args.seed, args.redis, kinds, args.round,
                  echo=lambda m: print(m, file=sys.stderr, flush=True))
        for kind, k in fig["kinds"].items():
            print(f"  {kind}: {k['caught']}/{k['attempts']} caught ({k['seconds']} s), false findings "
                  f"{k['false_findings']}, bundles checked {k['bundles_checked']}; by: "
                  + ", ".join(f"{c} {n}" for c, n in k["caught_by"].items()))
        return fig

    _kit.conclude("audit_attacks", args, measure, summary)


if __name__ == "__main__":
    main()
