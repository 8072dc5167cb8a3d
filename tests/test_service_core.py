"""The command handler and read side, through the test-only game (secrets + simultaneous bets)."""

import json
import random

import pytest

from projections.ledger import asset_totals
from projections.session import fold
from projections.verify import verify_log
from service.core.errors import CoreError
from service.errors import status_of
from service_kit import make_service

pytestmark = pytest.mark.quick

SEED = "ab" * 32


@pytest.fixture
def svc(redis_client):
    return make_service(redis_client)


def new_game(service, seats=3, rounds=2):
    session = service.create("secret-duel", {"rounds": rounds}, [{}] * seats, seed=SEED)
    tokens = [service.claim(session.game_id, s, f"p{s}")[1] for s in range(seats)]
    return session.game_id, tokens


def play_out(service, game_id, rng):
    while True:
        session = service.load(game_id)
        if session.status != "active":
            return session
        seat = rng.choice(session.to_act())
        view = service.view(game_id, seat)
        template = rng.choice(view["legal_actions"])
        action = {k: rng.randint(v["min"], v["max"]) if isinstance(v, dict) else v for k, v in template.items()}
        service.act(game_id, seat, action, idempotency_key=f"k{session.version}-{seat}")


def test_game_starts_when_every_seat_is_claimed(svc):
    service, _ = svc
    session = service.create("secret-duel", {}, [{}, {}], seed=SEED)
    assert session.status == "open" and session.version == 1
    after, token = service.claim(session.game_id, 0, "ann")
    assert after.status == "open" and service.authenticate(session.game_id, token) == 0
    after, _ = service.claim(session.game_id, 1, "bob")
    assert after.status == "active" and after.to_act() == [0, 1]
    with pytest.raises(CoreError) as err:
        service.claim(session.game_id, 1, "eve")
    assert status_of(err.value) == 409


def test_simultaneous_secret_choice_is_hidden_until_all_committed(svc):
    service, _ = svc
    game_id, _ = new_game(service, seats=3)
    receipt, session, shown = service.act(game_id, 0, {"type": "bet", "amount": 3}, idempotency_key="a")
    assert shown[0]["data"] == {"seat": 0, "amount": 3}
    assert session.to_act() == [1, 2]
    for viewer in (1, 2, None):
        shown, _ = service.events(game_id, viewer)
        blob = json.dumps([e for e in shown if e["type"] == "bet"])
        assert '"amount"' not in blob
        assert service.view(game_id, viewer)["state"].get("my_bet") is None
    mine, _ = service.events(game_id, 0)
    assert any(e["type"] == "bet" and e["data"]["amount"] == 3 for e in mine)


def test_secret_cards_only_seen_by_their_owner(svc):
    service, _ = svc
    game_id, _ = new_game(service, seats=3)
    session = service.load(game_id)
    cards = session.state.cards
    for seat in range(3):
        assert service.view(game_id, seat)["state"]["my_card"] == cards[seat]
        shown, _ = service.events(game_id, seat)
        dealt = [e for e in shown if e["type"] == "dealt"]
        assert dealt and all(list(e["data"]) == ["my_card"] for e in dealt)
    assert "my_card" not in service.view(game_id, None)["state"]


def test_idempotent_retry_and_conflicts(svc):
    service, _ = svc
    game_id, _ = new_game(service)
    first, _, first_events = service.act(game_id, 0, {"type": "bet", "amount": 1}, idempotency_key="same")
    again, _, again_events = service.act(game_id, 0, {"type": "bet", "amount": 1}, idempotency_key="same")
    assert again.duplicate and again.as_dict() == first.as_dict() and again_events == first_events
    assert service.load(game_id).version == first.version
    with pytest.raises(CoreError) as err:
        service.act(game_id, 0, {"type": "bet", "amount": 2}, idempotency_key="same")
    assert status_of(err.value) == 409 and err.value.code == "idempotency_conflict"
    with pytest.raises(CoreError) as err:
        service.act(game_id, 1, {"type": "bet", "amount": 1}, expected_version=2, idempotency_key="x")
    assert status_of(err.value) == 409 and err.value.details["version"] == first.version
    with pytest.raises(CoreError) as err:
        service.act(game_id, 0, {"type": "bet", "amount": 1}, idempotency_key="other")
    assert status_of(err.value) == 422
    assert service.load(game_id).version == first.version


def test_full_game_scores_verifies_and_balances(svc):
    service, jobs = svc
    game_id, _ = new_game(service, seats=4, rounds=3)
    session = play_out(service, game_id, random.Random(1))
    assert session.status == "ended"
    assert ("score", game_id) in jobs.pending
    jobs.drain(service)
    session = service.load(game_id)
    assert session.status == "scored" and session.seed == SEED
    report = service.verify(game_id)
    assert report["ok"], report
    ledger = service.ledger(game_id, None)
    assert set(asset_totals(ledger).values()) == {0}
    for seat in range(4):
        assert ledger["balances"][f"seat:{seat}"]["chips"] == session.state.chips[seat]
    offline = service.export(game_id, None)
    assert offline[0]["complete"] and verify_log([(r["body"], r["hash"]) for r in offline[1:]]).ok


def test_replay_equals_fold_at_every_version(svc):
    service, jobs = svc
    game_id, _ = new_game(service)
    play_out(service, game_id, random.Random(2))
    jobs.drain(service)
    events = service.store.read(game_id)
    for at in range(1, len(events) + 1):
        replay = service.replay(game_id, at, None)
        past = fold(events[:at], game_id)
        assert replay["version"] == at
        assert replay["seats"][0]["state"] == past.game.view(past.state, 0)


def test_state_from_snapshot_equals_fold_of_all_events(redis_client):
    service, _ = make_service(redis_client, snapshot_every=5)
    game_id, _ = new_game(service, rounds=4)
    play_out(service, game_id, random.Random(3))
    events = service.store.read(game_id)
    fresh, _ = make_service(redis_client, snapshot_every=5)
    snap = fresh.store.load_snapshot(game_id)
    assert snap is not None and snap[0] < len(events)
    from_snapshot = fresh.load(game_id)
    assert from_snapshot == fold(events, game_id)


def test_tampering_is_detected_and_named(svc):
    service, jobs = svc
    game_id, _ = new_game(service)
    play_out(service, game_id, random.Random(4))
    jobs.drain(service)
    raw = service.store.read_raw(game_id)
    body, hash_ = raw[4]
    edited = body.replace('"amount":', '"amount":1', 1) if '"amount":' in body else body.replace("}", ',"x":1}', 1)
    tampered = raw[:4] + [(edited, hash_)] + raw[5:]
    report = verify_log(tampered, SEED)
    assert not report.ok and report.first_divergence["version"] == 5
    report = verify_log(raw[:3] + raw[4:], SEED)
    assert not report.ok and report.first_divergence["version"] == 4
