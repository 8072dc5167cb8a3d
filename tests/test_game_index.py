"""The game index contract (lobby, token directory, stream tickets), run on the
in-memory index, fakeredis and a real redis-server."""

import pytest

from ops.drills._kit import wait_until

pytestmark = pytest.mark.quick


class TestGameIndexContract:
    def test_lobby_lists_newest_first_with_the_total(self, index):
        for n, game in enumerate(["a", "b", "c", "d"]):
            index.record(game, "speculation" if n % 2 else "big-shot", "open", 1000 + n)
        assert index.list() == (["d", "c", "b", "a"], 4)
        assert index.list(offset=1, limit=2) == (["c", "b"], 4)
        assert index.list(offset=4, limit=2) == ([], 4)
        assert index.list("speculation") == (["d", "b"], 2)
        assert index.list(status="open") == (["d", "c", "b", "a"], 4)
        assert index.list("big-shot", "active") == ([], 0)

    def test_a_game_moves_between_statuses_and_stays_listed_once(self, index):
        index.record("g1", "speculation", "open", 10)
        index.record("g1", "speculation", "active", 10)
        index.record("g1", "speculation", "active", 10)      # idempotent
        assert index.list() == (["g1"], 1)
        assert index.list(status="open") == ([], 0)
        assert index.list("speculation", "active") == (["g1"], 1)
        index.record("g1", "speculation", "scored", 10)
        assert index.list(status="active") == ([], 0)
        assert index.list("speculation", "scored") == (["g1"], 1)

    def test_open_games_expire_out_of_every_lobby_list(self, index):
        index.record("old", "big-shot", "open", 100)
        index.record("new", "big-shot", "open", 300)
        index.record("busy", "big-shot", "active", 50)
        assert index.open_before(200) == ["old"]
        index.expire("old", "big-shot")
        assert index.list() == (["new", "busy"], 2)
        assert index.list("big-shot", "open") == (["new"], 1)
        assert index.open_before(200) == []
        index.record("old", "big-shot", "active", 100)        # joined after all: listed again
        assert index.list(status="active") == (["old", "busy"], 2)

    def test_same_creation_time_orders_by_id(self, index):
        for game in ["m", "z", "a"]:
            index.record(game, "speculation", "active", 5)
        assert index.list() == (["z", "m", "a"], 3)
        assert index.games_waiting("active") == ["a", "m", "z"]

    def test_games_waiting_oldest_first_up_to_the_limit(self, index):
        index.record("new", "speculation", "ended", 30)
        index.record("old", "speculate", "ended", 10)
        index.record("mid", "speculation", "ended", 20)
        index.record("other", "speculation", "active", 1)
        assert index.games_waiting("ended") == ["old", "mid", "new"]
        assert index.games_waiting("ended", limit=2) == ["old", "mid"]
        assert index.games_waiting("scored") == []

    def test_token_directory(self, index):
        assert index.token_owner("t1") is None
        index.record_token("t1", "game:with:colons", 3)
        assert index.token_owner("t1") == ("game:with:colons", 3)

    def test_stream_tickets_expire(self, index):
        assert index.ticket("h1") is None
        index.record_ticket("h1", "game1:-", ttl=60)
        index.record_ticket("h2", "game1:2", ttl=1)
        assert index.ticket("h1") == "game1:-" and index.ticket("h2") == "game1:2"
        assert wait_until(lambda: index.ticket("h2") is None, 3)      # its TTL runs out
        assert index.ticket("h1") == "game1:-"

    def test_touched_games_by_time_window_oldest_first_and_trimmed(self, index):
        index.touch("b", at=20.0)
        index.touch("a", at=10.0)
        index.touch("c", at=30.0)
        index.touch("a", at=25.0)                       # touched again: moves on
        assert index.touched(0.0, 100.0, 10) == [("b", 20.0), ("a", 25.0), ("c", 30.0)]
        assert index.touched(21.0, 30.0, 10) == [("a", 25.0), ("c", 30.0)]
        assert index.touched(0.0, 100.0, 2) == [("b", 20.0), ("a", 25.0)]
        index.forget_touched(25.0)                      # strictly older ones go
        assert index.touched(0.0, 100.0, 10) == [("a", 25.0), ("c", 30.0)]

    def test_the_watermark_starts_at_zero_and_keeps_what_is_set(self, index):
        assert index.watermark() == 0.0
        index.set_watermark(1796000000.123456)
        assert index.watermark() == 1796000000.123456

    def test_games_waiting_on_jobs_keep_when_they_began_to_wait(self, index):
        index.mark_waiting("g2", 50.0)
        index.mark_waiting("g1", 40.0)
        index.mark_waiting("g2", 60.0)                  # still the first time
        assert index.waiting_on_jobs() == [("g1", 40.0), ("g2", 50.0)]
        index.clear_waiting("g1")
        index.clear_waiting("nope")
        assert index.waiting_on_jobs() == [("g2", 50.0)]
