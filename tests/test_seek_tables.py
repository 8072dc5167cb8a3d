"""ops/drills/seek_tables.py in its short form: against gunicorn (gevent, two API processes)
and a private redis-server, 20 accounts with their account streams open seek 4-player games
at once, three rounds: five tables a round, every account at exactly one, every account told
`seek.matched` on its stream (after its seat's `game.joined`), p99 under 1 s from the game's
creation (the p99 from the table's last seek sent is reported: it adds that request's wait)."""

import pytest

from ops.drills.redis_server import redis_server_path

pytestmark = [pytest.mark.timing, pytest.mark.skipif(redis_server_path() is None,
                                                     reason="redis-server is not installed")]


def test_twenty_accounts_seeking_at_once_are_told_their_one_table_within_a_second():
    from ops.drills import seek_tables

    figures = seek_tables.run(size=20, rounds=3, seed=2, processes=2)
    assert figures["ok"], figures
    assert figures["tables"] == 15 and figures["told"] == 60, figures
    assert figures["joined_before_matched_rounds"] == 3, figures
    assert figures["from_created_ms"]["p99"] < seek_tables.GOAL_S * 1000, figures
