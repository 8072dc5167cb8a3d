"""Abandoned games: an active game without a clock that nobody moved for ABANDON_AFTER while a
person was to act ends as `abandoned` (a platform event, once; verify checks it), takes no
more actions (409 game_abandoned), leaves the lobby's live list, is never rated; the pass
reads only the index's idle games. The lobby's live list holds the games that moved within
LIVE_WITHIN."""

import dataclasses
import time
from functools import partial

import pytest

from events.envelope import NewEvent
from events.randomness import event_nonce
from ops.drills import _kit
from projections.verify import verify_log
from tests.service_kit import make_service as rated_service, rated_game
from workers import jobs as job_functions

IDLE = 60   # seconds


def _idle_game(service, bots=(1,), **kw):
    """secret-duel: seat 0 a person's, seat 1 a bot's (its turn left queued): both to act."""
    game_id, tokens = _kit.create_open_game(service, "secret-duel", options={"rounds": 1}, bots=bots, **kw)
    return game_id, tokens, service.load(game_id)


@pytest.fixture(params=["fake_redis", "real_redis"])
def service(request):
    return _kit.make_service(request.getfixturevalue(request.param))


def test_an_idle_game_waiting_on_a_person_is_abandoned_once_and_takes_no_more_actions(service):
    game_id, _, session = _idle_game(service)
    assert game_id in service.index.live(None, 0)[0]
    now = session.moved_at + IDLE * 1000 + 1
    assert service.abandon_idle(IDLE, now_ms=now) == [game_id]
    over = service.load(game_id)
    assert over.status == "abandoned" and over.to_act() == []
    last = service.store.read(game_id, over.version - 1, over.version)[0]
    assert (last.type, last.data) == ("game.abandoned", {"idle_since": session.moved_at, "to_act": [0]})
    assert service.verify(game_id)["ok"]
    assert service.abandon_idle(IDLE, now_ms=now + 1) == []                 # once
    assert service.abandon_game(game_id, IDLE, now_ms=now + 2).version == over.version
    # the lobby: out of the live list, among the abandoned; the summary says since when
    assert game_id not in service.index.live(None, 0)[0]
    assert game_id in service.index.list(status="abandoned")[0]
    assert game_id not in service.index.list(status="active")[0]
    assert service.summary(over)["abandoned"] == {"idle_since": session.moved_at, "to_act": [0]}
    # no more actions: the person's (409 game_abandoned), the bot's and the timeout's (stale)
    from service.core.errors import Conflict

    with pytest.raises(Conflict) as refused:
        service.act(game_id, 0, {"type": "bet", "amount": 1}, idempotency_key="late")
    assert refused.value.code == "game_abandoned"
    assert job_functions.bot_turn(service, game_id, 1, session.version) == "stale"
    assert service.timed_out_turn(game_id, 0, session.version) is None
    assert service.waits(over) == ""
    assert service.load(game_id).version == over.version


def test_the_answer_to_an_action_on_an_abandoned_game_is_a_409_naming_it(fake_redis):
    app = _kit.make_app(fake_redis)
    service = app.extensions["games"]
    game_id, tokens, session = _idle_game(service)
    # a minute past the limit: the index lists the game by when its move was written, a few
    # ms after the event's own time (the limit's exact edge is abandon_game's test above)
    assert service.abandon_idle(IDLE, now_ms=session.moved_at + IDLE * 1000 + 60_000) == [game_id]
    answer = app.test_client().post(f"/v1/games/{game_id}/actions", json={"action": {"type": "bet", "amount": 1}},
                                    headers={**_kit.auth(tokens[0]), "Idempotency-Key": "after-the-end-1"})
    assert answer.status_code == 409, answer.json
    assert answer.json["error"]["code"] == "game_abandoned"
    assert answer.json["error"]["details"]["status"] == "abandoned"
    summary = app.test_client().get(f"/v1/games/{game_id}").json
    assert summary["status"] == "abandoned" and summary["view"]["status"] == "abandoned"


def test_games_that_moved_have_a_clock_or_wait_on_bots_are_left_alone(service):
    recent, _, recent_session = _idle_game(service)
    clocked, _, _ = _idle_game(service, turn_timeout=30)
    bots, _, _ = _idle_game(service)
    service.act(bots, 0, {"type": "bet", "amount": 0}, idempotency_key="b")   # only the bot is to act now
    assert clocked not in service.index.idle_before(int(time.time() * 1000) + 10 ** 9)
    now = int(time.time() * 1000) + IDLE * 1000 + 1
    # `recent` moved within the time as this pass sees it: only the bots' game is idle past it
    assert service.abandon_idle(IDLE, now_ms=recent_session.moved_at + IDLE * 1000 - 1) == []
    assert service.abandon_idle(IDLE, now_ms=now) == [recent]
    assert service.load(clocked).status == "active" and service.load(bots).status == "active"
    # the bots' game, looked at, is not read again before another IDLE has passed (a pass at
    # time T reads the games idle since before T - IDLE)
    assert bots not in service.index.idle_before(now + 1000 - IDLE * 1000)
    assert bots in service.index.idle_before(now + 1)


def test_the_reconciler_abandons_games_past_the_setting(fake_redis):
    service = _kit.make_service(fake_redis)
    game_id, _, _ = _idle_game(service)
    job_functions.reconcile(service)
    assert service.load(game_id).status == "active"          # abandon_after 0: never
    service.abandon_after = 0.2
    assert _kit.wait_until(lambda: (job_functions.reconcile(service), service.load(game_id).status)[1]
                           == "abandoned", 5, every=0.1)


def test_verify_catches_a_forged_abandonment_and_an_event_after_one(fake_redis):
    service = _kit.make_service(fake_redis)
    timed, _ = _kit.create_open_game(service, "secret-duel", options={"rounds": 1}, turn_timeout=30)
    session = service.load(timed)
    seed = service.sessions.seed(timed)
    service.store.append(timed, [NewEvent("game.abandoned", {"idle_since": session.moved_at, "to_act": [0, 1]})],
                         base_version=session.version, base_head=session.head, nonce=partial(event_nonce, seed))
    report = service.verify(timed)
    assert not report["ok"] and report["first_divergence"]["version"] == session.version + 1
    assert "clock" in report["first_divergence"]["message"]
    game_id, _, idle = _idle_game(service)
    over = service.abandon_game(game_id, IDLE, now_ms=idle.moved_at + IDLE * 1000 + 1)
    raw = service.store.read_raw(game_id, 0, over.version)
    assert verify_log(raw, service.sessions.seed(game_id), game_id).ok
    seed = service.sessions.seed(game_id)
    service.store.append(game_id, [NewEvent("bet", {"seat": 0, "amount": 1},
                                            cmd={"seat": 0, "action": {"type": "bet", "amount": 1}, "by": "player"})],
                         base_version=over.version, base_head=over.head, nonce=partial(event_nonce, seed))
    report = service.verify(game_id)
    assert not report["ok"] and report["first_divergence"]["version"] == over.version + 1
    assert "abandoned" in report["first_divergence"]["message"]


def test_a_rated_game_has_a_clock_so_it_is_never_abandoned_and_an_abandoned_one_is_never_rated(fake_redis):
    service, _ = rated_service(fake_redis, rated=True)
    alice = service.accounts.sign_up("alice", "a long passphrase 1")[0].id
    made = rated_game(service, "secret-duel", [{}, {"bot": "random"}], _kit.SEED, {"rounds": 1})
    service.claim_seat(made.game_id, 0, None, account=alice)
    session = service.load(made.game_id)
    assert session.status == "active" and session.turn_timeout
    assert service.abandon_idle(IDLE, now_ms=session.moved_at + 10 ** 9) == []
    assert service.load(made.game_id).status == "active"
    # an abandoned session, were it marked rated, changes no rating
    idle, _, idle_session = _idle_game(service)
    over = service.abandon_game(idle, IDLE, now_ms=idle_session.moved_at + IDLE * 1000 + 1)
    service.ratings.record(dataclasses.replace(over, platform={**over.platform, "rated": True}))
    assert service.ratings.leaderboard("secret-duel", 0, 10)["rows"] == []
    assert service.store.head("ratings/secret-duel")[0] == 0


def test_the_lobby_lists_as_live_only_the_games_that_moved_recently(fake_redis):
    app = _kit.make_app(fake_redis, LIVE_WITHIN=1)
    service = app.extensions["games"]
    http = app.test_client()
    stale, _, _ = _idle_game(service, bots=())
    fresh, _, _ = _idle_game(service, bots=())      # two persons: one to act after the other's move
    time.sleep(1.1)
    service.act(fresh, 0, {"type": "bet", "amount": 1}, idempotency_key="moves")
    live = http.get("/v1/games?live=true").json
    assert [g["game_id"] for g in live["games"]] == [fresh] and live["total"] == 1
    assert live["games"][0]["moved_at"] >= int(time.time() * 1000) - 1000
    assert {stale, fresh} <= {g["game_id"] for g in http.get("/v1/games?status=active").json["games"]}
    assert [g["game_id"] for g in http.get("/v1/games?live=true&type=secret-duel").json["games"]] == [fresh]
    assert http.get("/v1/games?live=true&type=big-shot").json["games"] == []
    refused = http.get("/v1/games?live=true&status=open")
    assert refused.status_code == 422 and "live" in refused.json["error"]["message"]
    # abandoned (as a pass far in the future sees it), the game leaves the live list at once
    service.abandon_idle(IDLE, now_ms=int(time.time() * 1000) + IDLE * 1000 + 1)
    assert http.get("/v1/games?live=true").json["games"] == []
    shown = http.get("/v1/games?status=abandoned").json["games"]
    assert {g["game_id"] for g in shown} == {stale, fresh} and {g["status"] for g in shown} == {"abandoned"}


class TestMovedIndexContract:
    """The index's live and idle lists, on the in-memory index, fakeredis and a real redis-server."""

    def test_live_lists_latest_move_first_by_type_with_the_total(self, index):
        index.record("a", "speculation", "active", 1, moved_at=500)
        index.record("b", "big-shot", "active", 2, moved_at=900)
        index.record("c", "speculation", "active", 3, moved_at=700, clocked=True)
        index.record("d", "speculation", "open", 4)
        assert index.live(None, 0) == (["b", "c", "a"], 3)
        assert index.live(None, 600) == (["b", "c"], 2)
        assert index.live("speculation", 0, offset=1, limit=5) == (["a"], 2)
        assert index.idle_before(10 ** 6) == ["a", "b"]            # the clocked game is never idle
        assert index.idle_before(800) == ["a"]

    def test_leaving_active_leaves_the_live_and_idle_lists(self, index):
        index.record("a", "speculation", "active", 1, moved_at=500)
        index.record("a", "speculation", "abandoned", 1)
        assert index.live(None, 0) == ([], 0) and index.idle_before(10 ** 6) == []
        assert index.list(status="abandoned") == (["a"], 1)
        index.record("b", "big-shot", "active", 2, moved_at=500)
        index.record("b", "big-shot", "ended", 2)
        assert index.live("big-shot", 0) == ([], 0) and index.idle_before(10 ** 6) == []

    def test_the_walk_over_active_games_reads_by_creation_and_keeps_its_cursor(self, index):
        for n, game in enumerate(["a", "b", "c"]):
            index.record(game, "speculation", "active", 100 + n)
        index.record("d", "speculation", "scored", 50)
        assert index.backfill_cursor() == 0
        assert index.active_from(0, 2) == [("a", 100), ("b", 101)]
        assert index.active_from(101, 5) == [("b", 101), ("c", 102)]
        index.set_backfill_cursor(101)
        assert index.backfill_cursor() == 101
        index.set_backfill_cursor(None)
        assert index.backfill_cursor() is None

    def test_a_looked_at_idle_game_waits_its_turn_again(self, index):
        index.record("a", "speculation", "active", 1, moved_at=500)
        index.idle_checked("a", 5000)
        assert index.idle_before(1000) == [] and index.idle_before(6000) == ["a"]
        assert index.live(None, 0) == (["a"], 1) and index.live(None, 600) == ([], 0)   # its move stays
        index.idle_checked("a", None)
        index.idle_checked("gone", 7000)                 # not listed: not added
        assert index.idle_before(10 ** 6) == []


def test_the_abandonment_is_a_batch_of_its_own_so_every_seats_receipts_stand(fake_redis):
    from service.audit.bundle import seat_receipts
    from service.audit.receipts import split_batches

    service = _kit.make_service(fake_redis)
    game_id, _, session = _idle_game(service, bots=())
    receipt, _, _ = service.act(game_id, 0, {"type": "bet", "amount": 2}, idempotency_key="last-move")
    kept = service.signed_receipt(game_id, receipt)
    over = service.abandon_game(game_id, IDLE, now_ms=service.load(game_id).moved_at + IDLE * 1000 + 1)
    raw = service.store.read_raw(game_id)
    assert split_batches(raw)[-1][0] == over.version          # the abandonment starts its own batch
    assert service.receipt_through(game_id, over.version)["first_version"] == over.version
    # seat 0's last move keeps the receipt its answer carried: the log still holds it as it was
    assert seat_receipts(service, game_id, raw, 0)[-1] == kept


def test_the_abandonment_in_words(fake_redis, monkeypatch):
    from events import store as store_module
    from service import render

    app = _kit.make_app(fake_redis)
    service = app.extensions["games"]
    game_id, _, session = _idle_game(service)
    later = session.moved_at + 3 * 3600 * 1000 + 5000
    monkeypatch.setattr(store_module, "_now_ms", lambda: later)     # the pass runs three hours on
    service.abandon_game(game_id, IDLE, now_ms=later)
    summary = app.test_client().get(f"/v1/games/{game_id}").json
    event = app.test_client().get(f"/v1/games/{game_id}/events").json["events"][-1]
    words = render.describe_event("secret-duel", event, summary["seats"], None)
    assert words.startswith("Nobody moved for 3 h while p0 was to act"), words
    assert "the game is abandoned" in words and "unscored and unrated" in words


def test_games_from_before_the_moved_lists_are_walked_once_and_found(service):
    from events import index as keys

    old = [_idle_game(service)[0] for _ in range(5)]
    redis = service.index.redis
    redis.delete(keys.MOVED, keys.IDLE, "lobby:type:secret-duel:moved", keys.BACKFILL)   # as before them
    assert service.index.live(None, 0) == ([], 0)
    steps = [service.backfill_moved(limit=2) for _ in range(8)]   # on from the last creation time read
    assert steps[-1] == 0 and 0 in steps[:6] and service.index.backfill_cursor() is None
    assert service.backfill_moved() == 0                           # done: nothing read again
    assert set(service.index.live(None, 0)[0]) == set(old)
    moved = max(service.load(g).moved_at for g in old)
    assert sorted(service.abandon_idle(IDLE, now_ms=moved + IDLE * 1000 + 1)) == sorted(old)
