"""The reconciler heals every write that follows an append, incrementally (workers/reconciler.py):
a lost lobby write, a lost token-directory write, a lost enqueue, a lost rating;
games far past the 1,000 oldest; and a pass reads only what was touched. On fakeredis and a
real Redis (the `redis_client` fixture)."""

import time

from events.index import GameIndex
from events.store import RedisEventStore
from service.core.game_service import GameService
from service.core.jobs import NoJobs
from service.core.tokens import token_hash
from service_kit import make_service, rated_game, rated_rows
from workers.reconciler import LOOKBACK, reconcile_pass

SEED = "ab" * 32


def crashed(client) -> GameService:
    """A service whose process dies right after each append: nothing after it is written."""
    class LostIndex(GameIndex):
        def record(self, *args, **kwargs):
            pass

        def record_token(self, *args, **kwargs):
            pass

        def record_result(self, *args, **kwargs):
            return False

    return GameService(RedisEventStore(client), LostIndex(client), NoJobs(), allow_seed=True)


def test_a_lost_lobby_write_and_a_lost_token_write_are_healed(redis_client):
    lost = crashed(redis_client)
    game = lost.create("speculation", {}, [{}, {}, {}], seed=SEED)
    _, token = lost.claim(game.game_id, 0, "ann")
    service, _ = make_service(redis_client)
    assert service.index.list()[1] == 0 and service.index.token_owner(token_hash(token)) is None
    reconcile_pass(service)
    assert service.index.list() == ([game.game_id], 1)
    assert service.index.list(status="open") == ([game.game_id], 1)
    assert service.index.token_owner(token_hash(token)) == (game.game_id, 0)


def test_a_lost_enqueue_and_a_lost_rating_are_healed_until_the_game_is_scored(redis_client):
    lost = crashed(redis_client)
    game = rated_game(lost, "big-shot", [{"bot": "random"}, {"bot": "baseline"}], SEED)
    assert lost.load(game.game_id).status == "active"
    service, jobs = make_service(redis_client, rated=True)
    assert jobs.pending == []
    done = reconcile_pass(service)
    assert done.repaired == 1 and jobs.pending[0][0] == "bot_turn"
    assert [g for g, _ in service.index.waiting_on_jobs()] == [game.game_id]
    # The bots play with the healthy service; scoring "crashes" after its append.
    while jobs.pending:
        name, *args = jobs.pending.pop(0)
        if name == "score":
            lost.score(args[0])
        else:
            jobs.pending.insert(0, (name, *args))
            jobs.drain(service, limit=1)
    assert service.load(game.game_id).status == "scored"
    assert rated_rows(service, "big-shot") == {}            # the scoring's process died before rating it
    reconcile_pass(service)
    board = rated_rows(service, "big-shot")
    assert {name: row["games"] for name, row in board.items()} == {"random": 1, "baseline": 1}
    reconcile_pass(service)
    assert rated_rows(service, "big-shot") == board          # rated once
    assert service.store.head("ratings/big-shot")[0] == 1
    assert service.index.waiting_on_jobs() == []
    assert service.index.list(status="scored") == ([game.game_id], 1)


def test_a_game_behind_a_thousand_parked_ones_is_still_healed(redis_client):
    service, _ = make_service(redis_client)
    for n in range(1100):
        service.create("speculation", {}, [{}, {}, {}], seed=f"{n:064x}")
    lost = crashed(redis_client)
    newest = lost.create("speculation", {}, [{}, {}, {}], seed="ff" * 32)
    assert newest.game_id not in service.index.list("speculation", "open", 0, 2000)[0]
    reconcile_pass(service)
    assert newest.game_id in service.index.list("speculation", "open", 0, 2000)[0]


def test_a_pass_reads_what_was_touched_since_the_last_one(redis_client):
    service, _ = make_service(redis_client)
    for n in range(5):
        service.create("speculation", {}, [{}, {}, {}], seed=f"{n:064x}")
    now = time.time()
    assert reconcile_pass(service, now=now).touched == 5
    assert reconcile_pass(service, now=now + 1).touched == 5      # within the look-back: again
    later = now + LOOKBACK + 2
    assert reconcile_pass(service, now=later).touched == 5        # the window starts before the mark
    assert reconcile_pass(service, now=later + 1).touched == 0    # past it: nothing new, nothing read
    service.index.touch("fresh-one", at=later + 1.5)
    assert reconcile_pass(service, now=later + 2).touched == 1


def test_a_full_batch_carries_the_rest_to_the_next_pass(redis_client, monkeypatch):
    service, _ = make_service(redis_client)
    read = []
    monkeypatch.setattr(service, "repair", lambda game_id: read.append(game_id))
    for n in range(7):
        service.index.touch(f"g{n}", at=1000.0 + n)     # a burst: all within one look-back
    first = reconcile_pass(service, now=1010.0, batch=4)
    assert first.touched == 4 and read == ["g0", "g1", "g2", "g3"]
    read.clear()
    second = reconcile_pass(service, now=1011.0, batch=4)
    assert second.touched == 4 and read == ["g3", "g4", "g5", "g6"]   # on from where the batch ended
    read.clear()
    third = reconcile_pass(service, now=1012.0, batch=4)               # a full batch again: read on
    assert third.touched == 1 and read == ["g6"]
    assert service.index.watermark() == 1012.0                         # that pass read up to now
