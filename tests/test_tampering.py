"""Tampering: random edits, deletions, reorderings and insertions of the stored events of
every registered game are all caught by verify, which names the first bad event; the same
through the API on a real Redis stream."""

import json
import random

import pytest

from events.envelope import canonical, chain_hash
from ops.drills import _kit, tampering
from projections.verify import verify_log


@pytest.fixture(scope="module")
def logs():
    return tampering.finished_logs(games_per_type=1, seed=7)


def _reseal(raw, index, change):
    """The log with event `index` (0-based) changed by `change(body)` and its hash re-chained."""
    log = list(raw)
    body = json.loads(log[index][0])
    change(body)
    new = canonical(body)
    log[index] = (new, chain_hash(log[index - 1][1] if index else "0" * 64, new))
    return log


def test_every_registered_game_is_covered(logs):
    assert {t for t, *_ in logs} == set(_kit.game_names())


@pytest.mark.parametrize("kind", tampering.KINDS)
def test_each_kind_of_tampering_is_caught_and_names_the_first_bad_event(logs, kind):
    rng = random.Random(kind)
    done = 0
    while done < 25:
        game_type, game_id, seed, raw = rng.choice(logs)
        made = tampering.tamper(raw, kind, rng, seed)
        if made is None:
            continue
        log, first_bad = made
        verdict = tampering.judge(log, first_bad, seed, game_id)
        assert verdict in ("exact", "forgery"), (game_type, kind, first_bad, verdict)
        if kind != "insert":
            assert verdict == "exact", (game_type, kind, first_bad)
        done += 1


@pytest.mark.parametrize("bad_seed", ["x", " ", "0", "zz"])
def test_a_malformed_revealed_seed_is_a_divergence_not_a_crash(logs, bad_seed):
    """Regression: bytes.fromhex accepted a seed with spaces and raised on one with a non-hex
    character, so a tampered game.scored crashed verify (a 500 on GET /verify)."""
    game_type, game_id, seed, raw = next(log for log in logs if log[0] == "secret-duel")
    last = len(raw) - 1
    assert json.loads(raw[last][0])["t"] == "game.scored"

    def change(body):
        body["d"]["seed"] += bad_seed

    log = _reseal(raw, last, change)
    for known in (seed, None):
        report = verify_log(log, known, game_id)
        assert not report.ok and report.first_divergence["version"] == last + 1, report.as_dict()
        assert report.first_divergence["check"] == "seed"


def test_a_second_game_scored_is_caught(logs):
    """Regression: a copy of game.scored appended after the first one passed verify."""
    game_type, game_id, seed, raw = next(log for log in logs if log[0] == "secret-duel")
    body = json.loads(raw[-1][0])
    body["v"] = len(raw) + 1
    from events.randomness import event_nonce

    body["n"] = event_nonce(seed, body["v"])
    new = canonical(body)
    log = raw + [(new, chain_hash(raw[-1][1], new))]
    report = verify_log(log, seed, game_id)
    assert not report.ok and report.first_divergence["version"] == len(raw) + 1


def test_a_forged_well_chained_event_is_named_not_its_successor(logs):
    """Regression: verify checked the whole chain before replaying, so a forged event whose
    hash chains from its predecessor was reported as the next event's chain break."""
    game_type, game_id, seed, raw = next(log for log in logs if log[0] == "secret-duel")
    index = next(i for i, (body, _) in enumerate(raw) if json.loads(body).get("c"))

    def change(body):
        body["c"]["action"]["amount"] = (body["c"]["action"]["amount"] + 1) % 4

    report = verify_log(_reseal(raw, index, change), seed, game_id)
    assert report.first_divergence["version"] == index + 1, report.as_dict()
    assert report.first_divergence["check"] == "decide"


@pytest.mark.parametrize("how", ["delete", "swap"])
def test_tampering_in_redis_is_caught_by_get_verify(redis_client, how):
    """The stored stream itself rewritten behind the store's back (whatever the store's
    encoding of an entry): GET /verify names the first bad event."""
    app = _kit.make_app(redis_client)
    service = app.extensions["games"]
    game_id, _ = _kit.create_open_game(service, "secret-duel", options={"rounds": 2})
    _kit.play_out(service, service.jobs, game_id, random.Random(3))
    http = app.test_client()
    assert http.get(f"/v1/games/{game_id}/verify").json["ok"] is True
    stream = f"game:{{g:{game_id}}}:events"
    entries = [fields for _, fields in redis_client.xrange(stream)]
    if how == "delete":
        del entries[4]
    else:
        entries[4], entries[5] = entries[5], entries[4]
    redis_client.delete(stream)
    for version, fields in enumerate(entries, start=1):
        redis_client.xadd(stream, fields, id=f"{version}-0")
    service.sessions.forget_all()
    response = http.get(f"/v1/games/{game_id}/verify")
    assert response.status_code == 200, response.json
    report = response.json
    assert report["ok"] is False and report["first_divergence"]["version"] == 5, report


@pytest.mark.slow
def test_drill_short_form():
    figures = tampering.run(size=120, seed=11, games_per_type=1)
    assert figures["ok"], figures
    assert figures["detected"] == figures["tamperings"] == 120
    assert figures["named_first_bad"] + figures["forged_legal_moves"] == 120
