"""Fuzzing: schemathesis against /openapi.json — every operation, valid and invalid inputs,
real game ids and seat tokens mixed in — no 5xx and no response breaking its schema;
bodies over the size limit get 413. Plus the regressions the fuzzer found."""

import random

import pytest

from ops.drills import _kit, fuzz


def test_ledger_entries_carry_their_from_account(fake_redis):
    """Regression (found by the fuzzer): the ledger schema's `from_` field read attribute
    `from_`, so every entry of GET /ledger was served without its "from" account."""
    app = _kit.make_app(fake_redis)
    service = app.extensions["games"]
    game_id, _ = _kit.create_playable(service, "secret-duel", random.Random(1))
    ledger = app.test_client().get(f"/v1/games/{game_id}/ledger").json
    assert ledger["entries"]
    assert all(entry["from"] == "bank" for entry in ledger["entries"][:2]), ledger["entries"][:2]


def test_oversized_bodies_get_413(fake_redis):
    app = _kit.make_app(fake_redis)
    rng = random.Random(2)
    service = app.extensions["games"]
    game_id, tokens = _kit.create_playable(service, "secret-duel", rng)
    result = fuzz._too_large(app, {"games": [game_id, game_id], "tokens": tokens})
    assert result["ok"], result


@pytest.mark.slow
def test_schemathesis_every_operation_no_5xx_no_schema_break():
    figures = fuzz.run(size=5, seed=3)
    assert figures["requests_fuzzed"] > 100
    assert figures["5xx"] == 0, figures["failures"]
    assert figures["schema_failures"] == 0, figures["failures"]
    assert figures["ok"], figures


def test_the_json_events_answer_is_documented(fake_redis):
    """Regression (found by the fuzzer): the doc of GET /events listed only the streams, so
    its default JSON answer had an undocumented content type."""
    spec = _kit.make_app(fake_redis).test_client().get("/openapi.json").json
    content = spec["paths"]["/v1/games/{game_id}/events"]["get"]["responses"]["200"]["content"]
    assert content["application/json"]["schema"] == {"$ref": "#/components/schemas/Events"}
    assert {"text/event-stream", "application/x-ndjson"} <= set(content)
