"""Golden games: complete recorded games that pin what every rules version does, forever.

In the spirit of OpenSpiel's playthroughs: each golden game is the complete export of an
ended game (header with the seed, then the exact stored bodies and hashes), played through
the real command path with a human seat and bots, plus a record beside it of what every
seat and the spectator saw at evenly spaced versions and at the end. The test replays each
one from its stored bytes, verifies it, and compares the result, the views and digests of
every viewer's live event stream and ledger byte for byte. Any change to the rules, the
disclosure or the fold that alters a recorded game fails it.

Record the cases that have no recording yet (an existing recording is never overwritten:
a change meant to alter new games is a new rules version, recorded as new cases beside the
old ones, which keep passing as they are):

    make golden        # python -m tests.golden_games [NAME ...]

A case is recorded at its game's current RULES_VERSION; `-v2-` in a name marks version 2.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
from typing import Iterable, Optional

from events.envelope import canonical, decode_body
from events.upcast import UPCASTERS
from projections import disclosure
from projections.ledger import ledger_for
from projections.session import fold

GOLDEN_DIR = os.path.join(os.path.dirname(__file__), "golden")
VIEW_POINTS = 12        # evenly spaced versions recorded, the last version besides

# name: (options, seat plan). A name starts with its game's type (`game_of`). Seat plan:
# "human" (played by seeded random choices through claim and act) or a bot level. Each
# combination of note appears once.
CASES: dict[str, tuple[dict, tuple[str, ...]]] = {
    "speculation-3p-hand3": ({}, ("human", "heuristic", "random")),
    "speculation-4p-hand4": ({"hand_size": 4, "deals": 6}, ("human", "heuristic", "heuristic", "random")),
    "speculation-5p-hand5-ante": ({"hand_size": 5, "ante": 2, "deals": 5},
                                  ("human", "heuristic", "random", "heuristic", "random")),
    "speculation-6p-chips": ({"starting_chips": 40, "dealer_ante": 3, "deals": 4},
                             ("human", "heuristic", "random", "heuristic", "random", "heuristic")),
    "spekulation-dice-plain": ({"edition": "dice", "board": "plain"},
                               ("human", "heuristic", "random")),
    "spekulation-dice-star": ({"edition": "dice", "board": "star"},
                              ("human", "heuristic", "heuristic", "random")),
    "spekulation-tiles-plain": ({"edition": "tiles", "board": "plain"},
                                ("human", "heuristic", "random", "heuristic")),
    "spekulation-tiles-star": ({"edition": "tiles", "board": "star"},
                               ("human", "random", "heuristic", "heuristic", "random")),
    "speculate-3p": ({}, ("human", "heuristic", "random")),
    "speculate-4p-rounds": ({"rounds": 4}, ("human", "heuristic", "random", "heuristic")),
    "speculate-6p": ({"rounds": 3}, ("human", "heuristic", "random", "heuristic", "random", "heuristic")),
    "big-shot-2p": ({}, ("human", "heuristic")),
    "big-shot-3p": ({}, ("human", "heuristic", "random")),
    "big-shot-4p": ({}, ("human", "heuristic", "random", "heuristic")),
    # rules version 2 (recorded after the change; the cases above stay version 1 forever),
    # at every point where the versions differ
    "speculation-v2-4p-hand4": ({"hand_size": 4}, ("human", "heuristic", "random", "heuristic")),
    "speculation-v2-5p-hand5": ({"hand_size": 5},
                                ("human", "heuristic", "random", "heuristic", "random")),
    "speculation-v2-4p-ante-alone": ({"ante": 3, "deals": 6},
                                     ("human", "random", "heuristic", "heuristic")),
    "spekulation-v2-dice-plain": ({"edition": "dice", "board": "plain"},
                                  ("human", "heuristic", "random")),
    "spekulation-v2-dice-star": ({"edition": "dice", "board": "star"},
                                 ("human", "heuristic", "heuristic", "random", "heuristic")),
    "spekulation-v2-tiles-plain": ({"edition": "tiles", "board": "plain"},
                                   ("human", "random", "heuristic", "heuristic")),
    "speculate-v2-5p": ({}, ("human", "heuristic", "random", "heuristic", "heuristic")),
    "speculate-v2-6p": ({}, ("human", "heuristic", "heuristic", "random", "heuristic", "heuristic")),
    "big-shot-v2-3p": ({}, ("human", "heuristic", "random")),
    "big-shot-v2-4p": ({}, ("human", "random", "heuristic", "random")),
}


def game_of(case: str) -> str:
    """The game type of a case: the declared game its name starts with (`<type>-…`)."""
    from projections.registry import game_types

    types = [t.name for t in game_types() if case.startswith(t.name + "-")]
    if not types:
        raise ValueError(f"golden case {case}: its name starts with no declared game's type")
    return max(types, key=len)


def _digest(obj) -> str:
    return hashlib.sha256(canonical(obj).encode("utf-8")).hexdigest()


def decode_export(records: list[dict]):
    """(header, raw [(body, hash)], upcast events) of a complete export."""
    header, rows = records[0], records[1:]
    raw = [(row["body"], row["hash"]) for row in rows]
    events, prev = [], ""
    for body, hash_ in raw:
        events.append(UPCASTERS.upcast(decode_body(body, prev, hash_)))
        prev = hash_
    return header, raw, events


def view_points(last: int) -> list[int]:
    points = {max(1, round(last * k / VIEW_POINTS)) for k in range(1, VIEW_POINTS + 1)}
    return sorted(points | {last})


def observe(header: dict, events: list) -> dict:
    """What every viewer saw: views at the view points, digests of each viewer's live event
    stream and ledger, and the result. Pure: only the fold and the disclosure."""
    game_id = header["game_id"]
    final = fold(events, game_id)
    viewers: list[Optional[int]] = [None] + list(range(len(final.seats)))
    views = {}
    for version in view_points(len(events)):
        past = fold(events[:version], game_id)
        views[str(version)] = {("spectator" if v is None else str(v)): disclosure.view_for(past, v)
                               for v in viewers}
    live_events, live_ledgers = {}, {}
    for v in viewers:
        name = "spectator" if v is None else str(v)
        shown, _ = disclosure.events_for(events, None, v, False, game_id)
        live_events[name] = _digest(shown)
        live_ledgers[name] = _digest(ledger_for(events, v, False, game_id))
    return {"game_id": game_id, "type": final.game_type, "rules_version": final.rules_version,
            "version": final.version, "head": final.head, "status": final.status,
            "result": final.result, "views": views, "live_event_digests": live_events,
            "live_ledger_digests": live_ledgers,
            "full_ledger_digest": _digest(ledger_for(events, None, True, game_id)),
            "replay_digests": {str(v): _digest(disclosure.full_state(fold(events[:v], game_id).state))
                               for v in view_points(len(events))}}


def load_case(name: str) -> tuple[list[dict], dict]:
    with open(os.path.join(GOLDEN_DIR, f"{name}.ndjson"), encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    with open(os.path.join(GOLDEN_DIR, f"{name}.observed.json"), encoding="utf-8") as f:
        observed = json.load(f)
    return records, observed


def golden_names() -> list[str]:
    return sorted(f[:-len(".ndjson")] for f in os.listdir(GOLDEN_DIR) if f.endswith(".ndjson"))


# --- recording (through the real command path) ----------------------------------------------

def _play_case(service, jobs, game_type: str, options: dict, plan: Iterable[str], seed: str,
               rng: random.Random) -> str:
    from projections.templates import fill_template

    plan = list(plan)
    seats = [{} if kind == "human" else {"bot": kind} for kind in plan]
    session = service.create(game_type, options, seats, seed=seed)
    game_id = session.game_id
    tokens = {}
    for seat, kind in enumerate(plan):
        if kind == "human":
            _, tokens[seat] = service.claim(game_id, seat, f"player{seat}")
    for _ in range(200_000):
        jobs.drain(service)
        session = service.load(game_id)
        if session.status == "scored":
            return game_id
        humans = [s for s in session.to_act() if s in tokens]
        assert humans, f"{game_type}: nobody to act at version {session.version}"
        seat = humans[0]
        legal = session.game.legal_actions(session.state, seat)
        action = fill_template(rng.choice(legal), rng)
        service.act(game_id, seat, action, expected_version=session.version,
                    idempotency_key=f"golden-{session.version}")
    raise AssertionError(f"{game_type} did not end")


def record(names: Optional[list[str]] = None) -> list[str]:
    """Play and write every case (or those named) that has no recording yet; an existing one
    is kept as it is. Returns the names written."""
    import fakeredis

    from tests.service_kit import make_service

    os.makedirs(GOLDEN_DIR, exist_ok=True)
    written = []
    for name in names or sorted(CASES):
        if os.path.exists(os.path.join(GOLDEN_DIR, f"{name}.ndjson")):
            print(f"{name}: kept (recordings are never re-recorded)", file=sys.stderr)
            continue
        options, plan = CASES[name]
        game_type = game_of(name)
        service, jobs = make_service(fakeredis.FakeRedis())
        seed = hashlib.sha256(f"golden/{name}".encode()).hexdigest()
        game_id = _play_case(service, jobs, game_type, options, plan, seed, random.Random(name))
        records = service.export(game_id, None)
        header, _, events = decode_export(records)
        observed = observe(header, events)
        with open(os.path.join(GOLDEN_DIR, f"{name}.ndjson"), "w", encoding="utf-8") as f:
            for rec in records:
                f.write(json.dumps(rec, sort_keys=True, ensure_ascii=False) + "\n")
        with open(os.path.join(GOLDEN_DIR, f"{name}.observed.json"), "w", encoding="utf-8") as f:
            json.dump(observed, f, sort_keys=True, indent=1, ensure_ascii=False)
            f.write("\n")
        written.append(name)
        print(f"{name}: {header['type']} {len(events)} events", file=sys.stderr)
    return written


if __name__ == "__main__":
    record(sys.argv[1:] or None)
