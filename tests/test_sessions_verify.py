"""Seeded bot-only sessions of every registered game through the command path and the store:
every session ends and is scored, verify passes with the revealed seed, the ledger's assets
all sum to zero, and tampering with any stored event is caught at that event.
SESSIONS=N scales it (CI runs the default)."""

import os
import random

import pytest

from projections.ledger import asset_totals
from projections.registry import all_games
from projections.verify import verify_log
from service_kit import make_service

SESSIONS = int(os.environ.get("SESSIONS", "8"))   # SESSIONS=20 and more by hand: random play is the conformance suite's too
GAMES = sorted(name for name in all_games() if name != "secret-duel")


def seed_of(n: int) -> str:
    return f"{n:064x}"


@pytest.mark.parametrize("game_type", GAMES)
def test_bot_sessions_end_verify_and_balance(game_type, fake_redis):
    service, jobs = make_service(fake_redis)
    game = all_games()[game_type]
    rng = random.Random(game_type)
    for n in range(SESSIONS):
        players = rng.randint(game.MIN_PLAYERS, game.MAX_PLAYERS)
        seats = [{"bot": rng.choice(["random", "heuristic"])} for _ in range(players)]
        options = {"deals": 2} if game_type == "speculation" else {}   # two deals: one passes to the next
        session = service.create(game_type, options, seats, seed=seed_of(n))
        jobs.drain(service)
        session = service.load(session.game_id)
        assert session.status == "scored", (game_type, n, session.status)
        report = service.verify(session.game_id)
        assert report["ok"] and report["seed_checked"], report
        ledger = service.ledger(session.game_id, None)
        assert not {a: q for a, q in asset_totals(ledger).items() if q}
        if game_type == "speculation":
            chips = [ledger["balances"].get(f"seat:{s}", {}).get("chips", 0) for s in range(players)]
            assert chips == session.result["scores"]


@pytest.mark.parametrize("game_type", GAMES)
def test_every_kind_of_tampering_is_named(game_type, fake_redis):
    service, jobs = make_service(fake_redis)
    game = all_games()[game_type]
    session = service.create(game_type, {}, [{"bot": "random"}] * game.MIN_PLAYERS, seed=seed_of(99))
    jobs.drain(service)
    raw = service.store.read_raw(session.game_id)
    assert verify_log(raw).ok
    rng = random.Random(7)
    for _ in range(20):
        i = rng.randrange(1, len(raw) - 1)
        body, hash_ = raw[i]
        edited = body.replace('"at":', '"at":9', 1)
        cases = {
            "edit": (raw[:i] + [(edited, hash_)] + raw[i + 1:], i + 1),
            "delete": (raw[:i] + raw[i + 1:], i + 1),
            "reorder": (raw[:i] + [raw[i + 1], raw[i]] + raw[i + 2:], i + 1),
            "insert": (raw[:i] + [raw[i - 1]] + raw[i:], i + 1),
        }
        for kind, (tampered, first_bad) in cases.items():
            report = verify_log(tampered)
            assert not report.ok, kind
            assert report.first_divergence["version"] == first_bad, (kind, report.first_divergence)


def test_receipts_and_the_stored_head_catch_truncation_and_wholesale_rewrites(fake_redis):
    from events.envelope import GENESIS, chain_hash

    service, jobs = make_service(fake_redis)
    session = service.create("speculation", {"deals": 3}, [{"bot": "random"}] * 3, seed=seed_of(5))
    jobs.drain(service)
    raw = service.store.read_raw(session.game_id)
    receipts = {12: raw[11][1], len(raw): raw[-1][1]}
    assert verify_log(raw, receipts=receipts, head=(len(raw), raw[-1][1])).ok
    # Cut short: every remaining event is intact, but the receipt of the last one is gone.
    cut = verify_log(raw[:-3], receipts={len(raw): raw[-1][1]})
    assert not cut.ok and cut.first_divergence["version"] <= len(raw) - 2
    assert not verify_log(raw[:-3], head=(len(raw), raw[-1][1])).ok
    # Rewritten wholesale: one event edited and the whole chain recomputed from it.
    forged, prev = [], GENESIS
    for i, (body, _) in enumerate(raw):
        if i == 11:
            body = body.replace('"at":', '"at":1', 1)
        prev = chain_hash(prev, body)
        forged.append((body, prev))
    report = verify_log(forged, receipts=receipts)
    assert not report.ok and report.first_divergence == {"version": 12, "check": "receipt",
                                                         "message": report.first_divergence["message"]}
