"""Tampering drill: random edits, deletions, reorderings and insertions of stored events;
`verify` must catch every one and name the first bad event.

The threat: someone with write access to Redis rewrites a game's stored log. The kinds:
  edit      bytes of one body changed, its stored hash kept
  reseal    a field the rules determine changed in one body (an action, a drawn card, a
            result, the seed commitment...) and that event's hash recomputed to chain
  delete    one event removed (not the last: a shorter log is a valid shorter game, which
            only the client's receipts or the stored head can tell; see docs/reliability.md)
  swap      two events exchanged
  move      one event moved elsewhere
  insert    a forged event (a re-versioned copy of another) inserted, its hash chained
The first bad event is the first position where the tampered log differs from the stored
one; verify (server side, with the game's seed) must report exactly that version, except
for an inserted forged event that is itself a legal move: no replay can tell a forged legal
action from a real one, so there verify names the next event, whose chain the forgery broke
(only a client's receipts can name the forgery itself).

    python -m ops.drills.tampering --size 1000
"""

from __future__ import annotations

import json
import random
from collections import Counter

from events.envelope import canonical, chain_hash
from events.randomness import event_nonce
from projections.verify import verify_log
from workers.memory_jobs import MemoryJobs

from . import _kit

KINDS = ("edit", "reseal", "delete", "swap", "move", "insert")
# Fields the rules (or the seed) determine: changing one must show in the replay.
PLATFORM_CHECKED = {"game.created": ("commitment",), "game.scored": ("result", "seed")}


def finished_logs(games_per_type: int = 2, seed: int = 1) -> list[tuple[str, str, str, list]]:
    """[(game type, game id, seed, raw log)] of scored games of every registered type."""
    out = []
    rng = random.Random(seed)
    for name in _kit.game_names():
        for k in range(games_per_type):
            client = _kit.fake_client()
            jobs = MemoryJobs()
            service = _kit.make_service(client, jobs)
            game_seed = f"{rng.getrandbits(256):064x}"
            game_id, _ = _kit.create_open_game(service, name, seed=game_seed)
            _kit.play_out(service, jobs, game_id, random.Random(rng.random()))
            raw = service.store.read_raw(game_id)
            assert verify_log(raw, game_seed, game_id).ok, f"{name}: an untouched log fails verify"
            out.append((name, game_id, game_seed, raw))
    return out


def _leaves(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaves(v, path + (i,))
    else:
        yield path, obj


def _changed(value, rng: random.Random):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice([-2, -1, 1, 2, 7])
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str):
        return value + rng.choice(["x", "0", " "]) if value else "x"
    if value is None:
        return 0
    return "x"


def _set(obj, path, value):
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


def _reseal_candidates(body: dict) -> list[tuple]:
    kind = body["t"]
    if kind in PLATFORM_CHECKED:
        return [("d",) + p for p, _ in _leaves(body["d"]) if p and p[0] in PLATFORM_CHECKED[kind]]
    if kind in ("seat.claimed", "game.started"):
        return []
    paths = [("d",) + p for p, _ in _leaves(body["d"])]
    if body.get("c"):
        paths += [("c", "action") + p for p, _ in _leaves(body["c"].get("action", {}))]
    paths.append(("t",))
    return paths


def tamper(raw: list, kind: str, rng: random.Random, seed: str):
    """(tampered log, first bad position) or None when this log offers no such tampering."""
    log = list(raw)
    n = len(log)
    if kind == "edit":
        i = rng.randrange(n)
        body = json.loads(log[i][0])
        path, value = rng.choice(list(_leaves(body)))
        _set(body, path, _changed(value, rng))
        new = canonical(body)
        if new == log[i][0]:
            return None
        log[i] = (new, log[i][1])
        return log, i + 1
    if kind == "reseal":
        candidates = [(i, p) for i in range(n) for p in _reseal_candidates(json.loads(log[i][0]))]
        if not candidates:
            return None
        i, path = rng.choice(candidates)
        body = json.loads(log[i][0])
        value = body
        for key in path:
            value = value[key]
        _set(body, path, _changed(value, rng))
        prev = log[i - 1][1] if i else "0" * 64
        new = canonical(body)
        log[i] = (new, chain_hash(prev, new))
        return log, i + 1
    if kind == "delete":
        i = rng.randrange(n - 1)
        del log[i]
        return log, i + 1
    if kind == "swap":
        i, j = sorted(rng.sample(range(n), 2))
        if log[i][0] == log[j][0]:
            return None
        log[i], log[j] = log[j], log[i]
        return log, i + 1
    if kind == "move":
        i, j = rng.sample(range(n), 2)
        event = log.pop(i)
        log.insert(j, event)
        return log, min(i, j) + 1
    if kind == "insert":
        i = rng.randrange(1, n + 1)          # position (0-based) of the forged event
        body = json.loads(log[rng.randrange(n)][0])
        body["v"] = i + 1
        if "n" in body:
            body["n"] = event_nonce(seed, i + 1)
        new = canonical(body)
        log.insert(i, (new, chain_hash(log[i - 1][1], new)))
        return log, i + 1
    raise ValueError(kind)


def judge(log: list, first_bad: int, seed: str, game_id: str) -> str:
    """How verify did on one tampered log: "exact" (it named the first tampered event),
    "forgery" (the tampered event is itself a legal move, a forged action no replay can tell
    from a real one, and verify named the next event, the first that breaks the chain),
    "misnamed" or "missed"."""
    report = verify_log(log, seed, game_id)
    if report.ok:
        return "missed"
    named = report.first_divergence["version"]
    if named == first_bad:
        return "exact"
    if named == first_bad + 1:
        prefix = verify_log(log[:first_bad], seed, game_id)
        if prefix.ok or prefix.first_divergence["version"] > first_bad:
            return "forgery"
    return "misnamed"


def run(size: int = 1000, seed: int = 1, games_per_type: int = 2) -> dict:
    rng = random.Random(seed)
    logs = finished_logs(games_per_type, seed)
    tried = Counter()
    verdicts = Counter()
    bad = []
    while sum(tried.values()) < size:
        game_type, game_id, game_seed, raw = rng.choice(logs)
        kind = KINDS[sum(tried.values()) % len(KINDS)]
        made = tamper(raw, kind, rng, game_seed)
        if made is None:
            continue
        log, first_bad = made
        tried[kind] += 1
        verdict = judge(log, first_bad, game_seed, game_id)
        verdicts[verdict] += 1
        if verdict in ("missed", "misnamed"):
            bad.append({"type": game_type, "kind": kind, "first_bad": first_bad, "verdict": verdict})
    total = sum(tried.values())
    return {"tamperings": total, "detected": total - verdicts["missed"],
            "named_first_bad": verdicts["exact"], "forged_legal_moves": verdicts["forgery"],
            "misnamed": verdicts["misnamed"], "failures": bad[:20], "by_kind": dict(tried),
            "games": dict(Counter(t for t, *_ in logs)), "ok": not bad}


def main(argv=None) -> None:
    args = _kit.parser(__doc__, 1000, "how many tamperings").parse_args(argv)
    _kit.conclude("tampering", args, lambda: run(args.size, args.seed), lambda fig: (
        f"{fig['tamperings']} tamperings, {fig['detected']} detected; the first bad "
        f"event named for {fig['named_first_bad']}, and for {fig['forged_legal_moves']} forged legal "
        f"moves the event after them (the first that breaks the chain) ({fig['seconds']} s)"))


if __name__ == "__main__":
    main()
