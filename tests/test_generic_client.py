"""A client that knows only the API contract finishes games of every registered type, every
player count and every option combination, by picking among `legal_actions` with all seats
held by that client; each finished game balances its ledger and verifies.

Options are read from /v1/game-types: booleans and enumerated choices are combined; a few
numeric options get an extra value below. The default suite plays a pairwise cover of the
combinations (every pair of option values meets in one game) once each, player counts rotating;
FULL_MATRIX=1 (make test-full) plays every combination at every count.
"""

import itertools
import os
import random

import uuid

import pytest

from service.app import create_app
from service.bootstrap import Backend
from workers.memory_jobs import MemoryJobs

EXTRA_VALUES = {"speculation": {"price_cap": [2]}}
# The default suite shortens long sessions in the option sweep (the rules are the same; a
# speculation session is just fewer deals, two still pass from one deal to the next); every
# player count still plays a full default game.
SHORT_SESSION = {"speculation": {"deals": 2}}
FULL = os.environ.get("FULL_MATRIX") == "1"


def option_matrix(game_type: dict) -> list[dict]:
    axes = {}
    for name, spec in game_type["options"].items():
        if spec["type"] == "boolean":
            axes[name] = [False, True]
        elif "choices" in spec:
            axes[name] = list(spec["choices"])
        if name in EXTRA_VALUES.get(game_type["name"], {}):
            axes[name] = [spec["default"]] + EXTRA_VALUES[game_type["name"]][name]
    names = sorted(axes)
    return [dict(zip(names, values)) for values in itertools.product(*(axes[n] for n in names))]


def pairwise(combos: list[dict]) -> list[dict]:
    """A few combinations in which every pair of option values (and so every value) still
    meets: greedily the one that covers most pairs not yet covered, until none is left."""
    def pairs(combo: dict) -> set:
        items = sorted(combo.items())
        return {(a, b) for i, a in enumerate(items) for b in items[i + 1:]} | {(a,) for a in items}

    wanted, chosen = set().union(*map(pairs, combos)) if combos else set(), []
    while wanted:
        best = max(combos, key=lambda c: len(pairs(c) & wanted))
        chosen.append(best)
        wanted -= pairs(best)
    return chosen


def cases():
    app = create_app({"RATE_LIMIT": None})
    out = []
    for game_type in app.test_client().get("/v1/game-types").json["game_types"]:
        if game_type["name"] == "secret-duel":
            continue
        counts = list(range(game_type["min_players"], game_type["max_players"] + 1))
        matrix = option_matrix(game_type)
        for i, options in enumerate(matrix if FULL else pairwise(matrix)):
            if not FULL:
                options = {**options, **SHORT_SESSION.get(game_type["name"], {})}
            for players in (counts if FULL else [counts[i % len(counts)]]):
                out.append(pytest.param(game_type["name"], players, options,
                                        id=f"{game_type['name']}-{players}p-{i}"))
        if not FULL:  # every player count at least once: the defaults at the smallest, the short options beyond
            for players in counts:
                options = {} if players == counts[0] else SHORT_SESSION.get(game_type["name"], {})
                out.append(pytest.param(game_type["name"], players, options,
                                        id=f"{game_type['name']}-{players}p-{'default' if not options else 'short'}"))
    return out


def pick(template: dict, rng: random.Random) -> dict:
    return {k: rng.randint(v["min"], v["max"]) if isinstance(v, dict) and set(v) == {"min", "max"} else v
            for k, v in template.items()}


@pytest.mark.parametrize("game_type, players, options", cases())
def test_generic_client_finishes_the_game(game_type, players, options, fake_redis):
    jobs = MemoryJobs()
    app = create_app({"RATE_LIMIT": None}, backend=Backend(fake_redis, fake_redis, False), jobs=jobs)
    http = app.test_client()
    # Create and claim as a careful client does: with an Idempotency-Key, sent again as if
    # the first reply had been lost; the retry's answer (the same game, the same token) is used.
    body = {"type": game_type, "options": options, "seats": [{}] * players}
    run = uuid.uuid4().hex   # a fresh random key per request, as the contract asks
    created = http.post("/v1/games", json=body, headers={"Idempotency-Key": f"{run}-create"})
    assert created.status_code == 201, created.json
    retried = http.post("/v1/games", json=body, headers={"Idempotency-Key": f"{run}-create"})
    assert retried.json == created.json and retried.headers["Idempotent-Replayed"] == "true"
    game_id = retried.json["game_id"]
    tokens = []
    for s in range(players):
        claim = dict(json={"name": f"client{s}"}, headers={"Idempotency-Key": f"{run}-seat-{s}"})
        first = http.post(f"/v1/games/{game_id}/seats/{s}", **claim)
        assert first.status_code == 201, first.json
        tokens.append(http.post(f"/v1/games/{game_id}/seats/{s}", **claim).json["token"])
        assert tokens[-1] == first.json["token"]
    headers = [{"Authorization": f"Bearer {t}"} for t in tokens]
    rng = random.Random(f"{game_type}{players}{sorted(options.items())}")
    # Who is to act and whether the game goes on come from the last answer: the first view,
    # then each action's reply (its `to_act` and `status`), as a client saves a request.
    turn = http.get(f"/v1/games/{game_id}/view", headers=headers[0]).json
    for n in range(30_000):
        if turn["status"] != "active":
            break
        seat = rng.choice(turn["to_act"])
        seat_view = http.get(f"/v1/games/{game_id}/view", headers=headers[seat]).json
        assert seat_view["legal_actions"], f"seat {seat} is to act with no legal action"
        action = pick(rng.choice(seat_view["legal_actions"]), rng)
        response = http.post(f"/v1/games/{game_id}/actions", json={"action": action, "expected_version": seat_view["version"]},
                             headers={**headers[seat], "Idempotency-Key": f"a{n}"})
        assert response.status_code == 200, (action, response.json)
        turn = response.json
    else:
        pytest.fail("the game did not end")
    jobs.drain(app.extensions["games"])
    summary = http.get(f"/v1/games/{game_id}").json
    assert summary["status"] == "scored"
    report = http.get(f"/v1/games/{game_id}/verify").json
    assert report["ok"] and report["seed_checked"], report
    ledger = http.get(f"/v1/games/{game_id}/ledger").json
    totals = {}
    for assets in ledger["balances"].values():
        for asset, quantity in assets.items():
            totals[asset] = totals.get(asset, 0) + quantity
    assert not {a: q for a, q in totals.items() if q}, "an asset is not conserved"
